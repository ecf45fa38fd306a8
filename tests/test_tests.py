"""The tests themselves: no ``assert all(...)`` that an empty collection would pass.

``all()`` of nothing is True, so ``assert all(r.folder == "people" for r in results)``
passes when the search found nothing at all. An ``all(...)`` that is the test of an
assert, or one operand of the assert's ``and``, is accepted when

- it runs over a non-empty literal: ``all(p for p in ("a.md", "b.md"))``, ``all([a, b])``;
- or another operand of the same ``and`` checks that its collection is not empty: the
  collection itself (``assert rows and all(...)``) or a comparison on its length
  (``assert len(rows) == 3 and all(...)``).

The collection is what the first ``for`` of the generator runs over (or the argument
itself), seen through ``.items()``/``.values()``/``.keys()`` and each argument of
``zip(...)``. Other shapes, such as ``assert {r.status for r in rows} == {"done"}``,
need no ``all()`` and fail on an empty collection by themselves.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent
VIEWS = {"items", "values", "keys"}


def _same(a: ast.expr, b: ast.expr) -> bool:
    return ast.dump(a) == ast.dump(b)


def _collections(call: ast.Call) -> list[ast.expr]:
    """What ``all(...)`` runs over: the generator's first iterable, unwrapped."""
    arg = call.args[0]
    if isinstance(arg, ast.GeneratorExp | ast.ListComp | ast.SetComp):
        arg = arg.generators[0].iter
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "zip":
        return list(arg.args)
    if (
        isinstance(arg, ast.Call)
        and isinstance(arg.func, ast.Attribute)
        and arg.func.attr in VIEWS
        and not arg.args
    ):
        return [arg, arg.func.value]
    return [arg]


def _is_all(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "all"
        and len(node.args) == 1
    )


def _literal(node: ast.expr) -> bool:
    return isinstance(node, ast.List | ast.Tuple | ast.Set) and bool(node.elts)


def _checks_not_empty(check: ast.expr, collection: ast.expr) -> bool:
    if _same(check, collection):
        return True
    if not isinstance(check, ast.Compare):
        return False
    return any(
        isinstance(side, ast.Call)
        and isinstance(side.func, ast.Name)
        and side.func.id == "len"
        and len(side.args) == 1
        and _same(side.args[0], collection)
        for side in (check.left, *check.comparators)
    )


def vacuous_alls(source: str) -> list[int]:
    """The lines of asserts whose ``all(...)`` an empty collection would pass."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assert):
            continue
        test = node.test
        operands = (
            test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        )
        for operand in operands:
            if not isinstance(operand, ast.Call) or not _is_all(operand):
                continue
            collections = _collections(operand)
            if len(collections) == 1 and _literal(collections[0]):
                continue
            others = [o for o in operands if o is not operand]
            if not any(_checks_not_empty(o, c) for o in others for c in collections):
                found.append(node.lineno)
    return found


def test_the_guard_refuses_an_all_that_an_empty_collection_passes() -> None:
    bad = [
        "assert all(r.ok for r in rows)",
        "assert all(rows)",
        "assert all(r.ok for r in rows), rows",
        "assert rows == sorted(rows) and all(r.ok for r in rows)",  # true of [] too
        "assert others and all(r.ok for r in rows)",
        "assert len(others) == 2 and all(r.ok for r in rows)",
        "assert all(v for v in found.values())",
        "assert all(a == b for a, b in zip(xs, ys))",
    ]
    for line in bad:
        assert vacuous_alls(line) == [1], line


def test_the_guard_accepts_an_all_joined_with_a_non_empty_check() -> None:
    good = [
        "assert rows and all(r.ok for r in rows)",
        "assert all(r.ok for r in rows) and rows",
        "assert len(rows) == 3 and all(r.ok for r in rows)",
        "assert 0 < len(rows) <= 3 and all(r.ok for r in rows)",
        "assert data['rows'] and all(r.ok for r in data['rows'])",
        "assert found and all(v for v in found.values())",
        "assert xs and all(a == b for a, b in zip(xs, ys, strict=True))",
        "assert all(p.exists() for p in (a, b))",
        "assert all([a, b])",
        "assert {r.status for r in rows} == {'done'}",
        "assert not all(r.ok for r in rows)",
        "ok = all(r.ok for r in rows)",
    ]
    for line in good:
        assert vacuous_alls(line) == [], line


def test_no_test_asserts_all_over_a_collection_that_may_be_empty() -> None:
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 50
    found = {
        str(path.relative_to(TESTS)): lines
        for path in files
        if (lines := vacuous_alls(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "join each all(...) with a non-empty check, see tests/test_tests.py"
