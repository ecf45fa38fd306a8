"""The read agent's parts import one way, as their ``__init__.py`` docstrings say: the
reading of a question at the bottom, the read tools on it, the extractive answer on
them, the model's part on both, and the agent, its connection, the HTTP API and the CLI
above, each on its own floor."""

from __future__ import annotations

from tests.test_layers import REPO, imports, modules

# Bottom to top, a floor a line; parts on one floor never import each other.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("errors", "mcp_sessions"),
    ("reading",),
    ("tools",),
    ("extractive",),
    ("model",),
    ("agent",),
    ("connection",),
    ("serve",),
    ("cli",),
)


def part(module: str) -> str | None:
    """``tools`` for ``read_agent.tools.citations``, ``agent`` for ``read_agent.agent``;
    None for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def floor(name: str) -> int:
    return next(n for n, parts in enumerate(FLOORS) if name in parts)


def test_every_read_agent_module_stands_on_a_floor() -> None:
    loose = [
        m
        for m in modules("read_agent")
        if (p := part(m)) is not None and not any(p in parts for parts in FLOORS)
    ]
    assert loose == []


def test_read_agent_parts_import_only_their_own_part_or_lower_floors() -> None:
    known = modules("read_agent")
    upward = []
    for name, path in known.items():
        here = part(name)
        for target, line in imports(path, known):
            there = part(target) if target in known else None
            if here is None or there is None or there == here:
                continue
            if floor(there) >= floor(here):
                upward.append(f"{path.relative_to(REPO)}:{line} imports {target}")
    assert upward == []
