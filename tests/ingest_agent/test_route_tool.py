"""kb_route, the routing hint the agent asks for (memserver/server/tools/route.py), over HTTP."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from memserver.clients.mcp import open_http
from memserver.errors import ToolCallError
from tests.fixtures.llm_server import LLMServer
from tests.ingest_agent.conftest import IngestServer


def route(server: IngestServer, **arguments: Any) -> dict[str, Any]:
    async def call() -> dict[str, Any] | ToolCallError:
        async with open_http(server.url, server.write_token) as memory:
            try:
                return await memory.call("kb_route", arguments)
            except ToolCallError as exc:  # raised here, not from inside the session's tasks
                return exc

    result = anyio.run(call)
    if isinstance(result, ToolCallError):
        raise result
    return result


def test_kb_route_scores_every_folder_lexically_without_a_model(small_server: IngestServer) -> None:
    result = route(
        small_server, text="Meeting minutes: call with the customer, attendees and action items"
    )
    assert result["stage"] == "lexical"
    assert result["folders"][0]["folder"] == "meetings"
    assert {s["folder"] for s in result["scores"]} == {
        "people",
        "companies",
        "meetings",
        "decisions",
        "projects",
    }
    only = route(small_server, text="Who reports to Alex Kim?", folders=["people", "projects"])
    assert {s["folder"] for s in only["scores"]} == {"people", "projects"}


def test_kb_route_says_how_to_fix_a_bad_call(small_server: IngestServer) -> None:
    with pytest.raises(ToolCallError, match="no folder 'invoices'"):
        route(small_server, text="an invoice", folders=["invoices"])
    with pytest.raises(ToolCallError, match="text is empty"):
        route(small_server, text="  ")


def test_kb_route_uses_the_servers_settings_not_the_environment(
    small_server: IngestServer, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test server runs without settings: an LLM named only in the environment of
    the call is not the server's, so routing stays lexical and the LLM is never asked."""
    monkeypatch.setenv("LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("LLM_MODEL", "env-model")
    result = route(small_server, text="Meeting minutes with the customer and action items")
    assert result["stage"] == "lexical"
    assert llm_server.calls == []
