"""The packages import one way: a module may import its own package and the packages
below it, never one above, and no set of modules imports itself in a circle (counting
imports inside functions and under ``TYPE_CHECKING``, which are circles all the same)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Bottom to top, a floor a line. Packages on one floor are siblings that never import
# each other (search reads the index, store writes it; neither needs the other). The root
# modules (``memserver.errors``, ``memserver.__version__``) are below everything; ``cli``
# is the ``memserver`` program itself.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("convert",),
    ("kb",),
    ("timeparse", "web", "terminal"),
    ("clients",),
    ("db",),
    ("graph",),
    ("index",),
    ("routing",),
    ("search", "store"),
    ("server",),
    ("console",),
    ("up",),
    ("commands",),
    ("cli",),
)
LAYERS = tuple(package for floor in FLOORS for package in floor)
ROOT_MODULES = {"memserver", "memserver.errors"}
AGENTS = ("ingest_agent", "read_agent")
# The floors an agent stands on: the page model and schema, the model clients, and the
# helpers every program shares. Knowledge itself the agents reach only through MCP.
AGENT_FLOORS = ("kb", "timeparse", "web", "terminal", "clients")


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


def package(module: str) -> str:
    return module.split(".")[1]


def layer(module: str) -> int:
    """-1 for the root modules, else the floor of the module's package in FLOORS."""
    if module in ROOT_MODULES:
        return -1
    return next(n for n, floor in enumerate(FLOORS) if package(module) in floor)


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
        if name not in ROOT_MODULES and package(name) not in LAYERS
    ]
    assert loose == []


def test_memserver_packages_import_only_their_own_package_or_lower_floors() -> None:
    known = modules("memserver")
    upward = []
    for name, path in known.items():
        for target, line in imports(path, known):
            if target not in known or target in ROOT_MODULES or name in ROOT_MODULES:
                continue
            if layer(target) > layer(name) or (
                layer(target) == layer(name) and package(target) != package(name)
            ):
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


def test_the_agents_import_only_the_memory_servers_low_floors() -> None:
    known = modules("memserver")
    high = [
        f"{path.relative_to(REPO)}:{line} imports {target}"
        for agent in AGENTS
        for path in modules(agent).values()
        for target, line in imports(path, known)
        if target in known and target not in ROOT_MODULES and package(target) not in AGENT_FLOORS
    ]
    assert high == []


def test_the_agents_import_each_other_never() -> None:
    crossing = [
        f"{path.relative_to(REPO)}:{line} imports {target}"
        for agent in AGENTS
        for path in modules(agent).values()
        for target, line in imports(path, {})
        if target.split(".")[0] in AGENTS and target.split(".")[0] != agent
    ]
    assert crossing == []


def test_the_cycle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
