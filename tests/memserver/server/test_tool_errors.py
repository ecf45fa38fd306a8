"""A tool error crosses MCP with its kind: the text for a model, ``{"error": {kind,
message, problems}}`` for a program, which acts on the kind and never on the words."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from memserver.clients.mcp import MemoryClient
from memserver.errors import ToolCallError, ToolErrorKind
from tests.fixtures.server import RunningServer, run_session


async def failure(memory: MemoryClient, tool: str, arguments: dict[str, Any]) -> ToolCallError:
    with pytest.raises(ToolCallError) as info:
        await memory.call(tool, arguments)
    return info.value


def test_every_tool_error_carries_its_kind_beside_its_text(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("people", write=True)
    person = {"title": f"Kind Example {uuid.uuid4().hex[:8]}", "fields": {"role": "Analyst"}}

    async def body(memory: MemoryClient) -> dict[str, ToolCallError]:
        put = await memory.call("kb_put_page", {"folder": "people", "page": person})
        changed = {**person, "fields": {"role": "Lead Analyst"}}
        again = {"id": put["id"], "page": changed, "base_version": 1}
        await memory.call("kb_put_page", again)  # version 2: version 1 is stale now
        result = await memory.call_result("kb_get_page", {"id": "people/nobody-here"})
        assert result.is_error and result.structured_content is not None
        assert result.structured_content["error"]["message"] == result.content[0].text  # type: ignore[union-attr]
        return {
            "not_found": await failure(memory, "kb_get_page", {"id": "people/nobody-here"}),
            "conflict": await failure(memory, "kb_put_page", again),
            "arguments": await failure(memory, "kb_list_pages", {"limit": 0}),
            "unknown_tool": await failure(memory, "kb_no_such_tool", {}),
            "scope": await failure(memory, "kb_put_page", {"folder": "meetings", "page": person}),
        }

    errors = run_session(mcp_server, secret, body)
    assert {name: str(error.kind) for name, error in errors.items()} == {
        name: name for name in errors
    }
    assert errors and all(error.problems == () for error in errors.values())


def test_a_page_that_does_not_fit_lists_its_problems_as_data(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("meetings", write=True)
    page = {
        "title": "Broken sync",
        "fields": {"kind": "party", "colour": "red"},
        "timeline": [{"date": "last tuesday", "text": "x"}],
    }

    async def body(memory: MemoryClient) -> ToolCallError:
        return await failure(memory, "kb_put_page", {"folder": "meetings", "page": page})

    error = run_session(mcp_server, secret, body)
    assert error.kind is ToolErrorKind.VALIDATION
    locations = {p.location for p in error.problems}
    assert {"fields.date", "fields.kind", "timeline[0].date"} <= locations, locations
    for problem in error.problems:  # the same problems the text lists
        assert problem.message in error.server_message
