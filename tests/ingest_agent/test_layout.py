"""The ingest agent's parts import one way: each imports its own part and the parts
below it (``ingest_agent/__init__.py`` draws the order), never one above nor a sibling."""

from __future__ import annotations

from tests.test_layers import REPO, imports, modules

# Bottom to top, a floor a tuple; parts on one floor never import each other.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("errors", "names"),
    ("records",),
    ("memory",),
    ("extract", "pages"),
    ("llm",),
    ("agent",),
    ("heartbeat",),
    ("cli",),
)


def part(module: str) -> str:
    return module.split(".")[1]


def floor(module: str) -> int:
    return next(n for n, parts in enumerate(FLOORS) if part(module) in parts)


def test_every_module_of_the_ingest_agent_is_in_a_part() -> None:
    loose = [
        name
        for name in modules("ingest_agent")
        if name != "ingest_agent" and not any(part(name) in parts for parts in FLOORS)
    ]
    assert loose == []


def test_the_parts_import_only_their_own_part_or_lower_floors() -> None:
    known = modules("ingest_agent")
    wrong = [
        f"{path.relative_to(REPO)}:{line} imports {target}"
        for name, path in known.items()
        if name != "ingest_agent"
        for target, line in imports(path, known)
        if target in known and target != "ingest_agent" and part(target) != part(name)
        if floor(target) >= floor(name)
    ]
    assert wrong == []
