"""The packages import one way: a module may import its own package and the packages
below it, never one above, and no set of modules imports itself in a circle (counting
imports inside functions and under ``TYPE_CHECKING``, which are circles all the same)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Bottom to top. The root modules (``memserver.errors``, ``memserver.__version__``) are
# below everything; ``cli`` is the ``memserver`` program itself.
LAYERS = (
    "kb",
    "clients",
    "db",
    "graph",
    "index",
    "routing",
    "search",
    "store",
    "server",
    "console",
    "up",
    "commands",
    "cli",
)
ROOT_MODULES = {"memserver", "memserver.errors"}
AGENTS = ("ingest_agent", "read_agent")


def modules(package: str) -> dict[str, Path]:
    out = {}
    for path in (REPO / package).rglob("*.py"):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def imports(path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import of a project module in ``path``."""
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                yield (full if full in known else node.module), node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno


def layer(module: str) -> int:
    """-1 for the root modules, else the index of the module's package in LAYERS."""
    if module in ROOT_MODULES:
        return -1
    return LAYERS.index(module.split(".")[1])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_memserver_module_lives_in_a_layer_package() -> None:
    loose = [
        name
        for name in modules("memserver")
        if name not in ROOT_MODULES and name.split(".")[1] not in LAYERS
    ]
    assert loose == []


def test_memserver_packages_import_only_their_own_layer_or_below() -> None:
    known = modules("memserver")
    upward = []
    for name, path in known.items():
        for target, line in imports(path, known):
            if target in known and layer(target) > layer(name):
                upward.append(f"{path.relative_to(REPO)}:{line} imports {target}")
    assert upward == []


def test_no_module_imports_itself_in_a_circle() -> None:
    known = {**modules("memserver"), **{k: v for a in AGENTS for k, v in modules(a).items()}}
    graph = {
        name: {t for t, _ in imports(path, known) if t in known and t != name}
        for name, path in known.items()
    }
    assert cycles(graph) == []


def test_the_memory_server_never_imports_the_agents() -> None:
    known = modules("memserver")
    bad = [
        f"{path.relative_to(REPO)}:{line}"
        for path in known.values()
        for target, line in imports(path, known)
        if target.split(".")[0] in AGENTS
    ]
    assert bad == []


def test_the_cycle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
