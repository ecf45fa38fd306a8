"""The tool registry: every module's ``@tool`` functions, registered on the server with
the same names, titles, descriptions, input and output schemas, annotations, access and
aliases as before the tools were top-level functions (``tools.json``; descriptions are
the docstrings without their indentation).

After a deliberate change of a tool, write the file again with
``python -m tests.memserver.server.tools.test_base > tests/memserver/server/tools/tools.json``.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any, Unpack

import pytest

from memserver.kb.layout import KBPaths
from memserver.server.mcp_server import MemoryServer, build_server
from memserver.server.scope import Scope
from memserver.server.tools import TOOL_MODULES
from memserver.server.tools.base import (
    Access,
    CallContext,
    Services,
    ToolOptions,
    calling,
    current,
    register,
    tool,
    tools_of,
)
from tests.fixtures.server import EXAMPLE_KB

SNAPSHOT = Path(__file__).with_name("tools.json")


def described(server: MemoryServer) -> list[dict[str, Any]]:
    """Every registered tool as a client and the server's checks see it."""
    out = []
    for info in server._tool_manager.list_tools():
        spec = server.spec(info.name)
        assert spec is not None and info.annotations is not None
        out.append(
            {
                "name": info.name,
                "title": info.title,
                "description": info.description,
                "input_schema": info.parameters,
                "output_schema": info.output_schema,
                "annotations": info.annotations.model_dump(mode="json", exclude_none=True),
                "access": str(spec.access),
                "aliases": dict(spec.aliases),
            }
        )
    return out


def example_server() -> MemoryServer:
    return build_server(Services(paths=KBPaths.of(EXAMPLE_KB)), fixed_scope=Scope.trusted())


def test_the_registered_tools_and_their_schemas_are_unchanged() -> None:
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    now = json.loads(json.dumps(described(example_server()), sort_keys=True))
    assert [t["name"] for t in now] == [t["name"] for t in recorded]
    for got, expected in zip(now, recorded, strict=True):
        # recorded from closures: the same docstrings, indented deeper
        expected["description"] = inspect.cleandoc(expected["description"])
        assert got == expected, got["name"]


def test_every_tool_module_defines_its_tools_as_top_level_functions() -> None:
    import importlib

    for name in TOOL_MODULES:
        module = importlib.import_module(f"memserver.server.tools.{name}")
        defined = tools_of(module.__name__)
        assert defined, name
        for definition in defined:
            assert getattr(module, definition.name) is definition.fn
            assert definition.fn.__qualname__ == definition.name  # not a closure


class Host:
    """A ToolHost that records what it is asked to register."""

    def __init__(self) -> None:
        self.added: list[tuple[str, Access, str, ToolOptions]] = []

    def memory_tool(self, *, access: Access, title: str, **options: Unpack[ToolOptions]) -> Any:
        def decorator(fn: Any) -> Any:
            self.added.append((fn.__name__, access, title, options))
            return fn

        return decorator


@tool(access=Access.READ, title="First")
def first_tool() -> dict[str, str]:
    """Says who calls."""
    return {"caller": current().scope.token_name}


@tool(access=Access.WRITE, title="Second", aliases={"q": "query"})
def second_tool(query: str = "") -> dict[str, str]:
    """Echoes."""
    return {"query": query}


def test_register_adds_a_module_tools_in_order_with_their_options() -> None:
    host = Host()
    register(host, __name__)
    assert host.added == [
        ("first_tool", Access.READ, "First", {}),
        ("second_tool", Access.WRITE, "Second", {"aliases": {"q": "query"}}),
    ]


def test_a_tool_function_runs_directly_for_the_caller_made_current(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="only available inside"):
        first_tool()
    services = Services(paths=KBPaths.of(tmp_path))
    with calling(CallContext("first_tool", Scope.trusted("someone"), services)):
        assert first_tool() == {"caller": "someone"}
    with pytest.raises(RuntimeError):
        current()


if __name__ == "__main__":
    print(json.dumps(described(example_server()), indent=1, sort_keys=True, ensure_ascii=False))
