"""Slow and broken models never kill an ingest run (issue: a 1.5B model on a 2-core box).

- the server's model is slower than the agent's MCP request timeout: that note fails
  with a ledger error naming the tool and the fix, the other notes ingest, no traceback;
- the server's model is slow but inside its own deadline (half the MCP timeout): kb_route
  gives up on it and routes lexically, so the tool answers in time;
- the agent's model answers HTTP 500 or JSON that is not the asked shape, twice: the
  rules extractor reads the note and the ledger says why (``degraded``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memserver.clients.config import load_settings
from memserver.kb.manifest import Manifest
from tests.fixtures.llm_server import HTTPError, LLMServer, Stall
from tests.ingest_agent.conftest import Ingest, IngestServer, serve_kb, small_kb
from tests.ingest_agent.test_route_tool import route

ROUTED = '{"folders": {"meetings": 0.9}}'


def server_settings(tmp_path: Path, llm_server: LLMServer, mcp_timeout: float) -> Path:
    config = tmp_path / "server.yaml"
    config.write_text(
        f"llm:\n  base_url: {llm_server.base_url}\n  model: {llm_server.model}\n"
        f"  timeout: 60\nmcp:\n  timeout: {mcp_timeout}\nembedding:\n  provider: hash\n",
        encoding="utf-8",
    )
    return config


def test_a_tool_call_past_the_mcp_timeout_fails_its_note_and_the_run_goes_on(
    tmp_path: Path,
    pg_url: str,
    llm_server: LLMServer,
    ingest: Ingest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The server may wait 30 s for its model (half its 60 s MCP timeout); the agent
    # waits 1 s for a tool: the first kb_route is too slow for the agent.
    settings = load_settings(server_settings(tmp_path, llm_server, 60), env={})
    llm_server.enqueue(Stall(4.0, then=ROUTED))
    llm_server.default = ROUTED
    agent_config = tmp_path / "agent.yaml"
    agent_config.write_text("mcp:\n  timeout: 1\n", encoding="utf-8")
    kb_dir = small_kb(tmp_path)
    # Frontmatter that several folders share: the rules ask the router which it is.
    (kb_dir / "source" / "a.md").write_text(
        "---\ntitle: Sync a\ndate: 2026-09-01\nstatus: active\n---\n\nNotes of sync a.\n",
        encoding="utf-8",
    )
    with serve_kb(kb_dir, pg_url, settings) as server:
        status, summary = ingest(server, "--config", str(agent_config), "--rules")
        manifest = {e.path: e for e in Manifest(server.paths).entries()}
    assert status == 1  # a failed note
    outcome = {s["path"]: s for s in summary["sources"]}
    assert [outcome[p]["status"] for p in ("a.md", "b.md", "c.md", "d.md")] == [
        "failed",
        "ingested",
        "ingested",
        "ingested",
    ]
    error = manifest["a.md"].error or ""
    assert "kb_route did not answer within the MCP request timeout" in error
    assert "raise mcp.timeout" in error
    assert "Traceback" not in capsys.readouterr().err


def test_kb_route_gives_up_on_a_slow_model_before_the_mcp_timeout(
    tmp_path: Path, pg_url: str, llm_server: LLMServer
) -> None:
    # MCP timeout 4 s: the model may take 2 s; it takes 10, so routing falls through.
    settings = load_settings(server_settings(tmp_path, llm_server, 4), env={})
    llm_server.enqueue(Stall(10.0, then=ROUTED), ROUTED)
    with serve_kb(small_kb(tmp_path), pg_url, settings) as server:
        slow = route(server, text="Meeting minutes: attendees and action items")
        quick = route(server, text="Meeting minutes: attendees and action items")
    assert slow["stage"] == "lexical" and "llm_timeout" in slow["degraded"]
    assert slow["folders"][0]["folder"] == "meetings"
    assert quick["stage"] == "llm"
    assert len(llm_server.requests) == 2  # no retry past the deadline


def test_a_small_model_is_not_asked_to_route(
    tmp_path: Path, pg_url: str, llm_server: LLMServer
) -> None:
    llm_server.model = "qwen2.5:1.5b"
    settings = load_settings(server_settings(tmp_path, llm_server, 60), env={})
    with serve_kb(small_kb(tmp_path), pg_url, settings) as server:
        result = route(server, text="Meeting minutes: attendees and action items")
    assert result["stage"] == "lexical" and llm_server.requests == []


def test_a_model_failing_twice_leaves_the_note_to_the_rules_with_the_reason(
    small_server: IngestServer, ingest: Ingest, llm_server: LLMServer, tmp_path: Path
) -> None:
    answers = {
        # the answer the 1.5B model gave: title and type among the fields
        "a.md": json.dumps(
            {"pages": [{"folder": "meetings", "fields": {"title": "Sync a", "type": "meeting"}}]}
        ),
        "b.md": HTTPError(500, "Value is not callable: null"),
    }

    def answer(body: dict[str, object]) -> object:
        prompt = json.dumps(body["messages"])
        for path, reply in answers.items():
            if f"Source: {path}" in prompt:
                return reply
        return '{"pages": []}'

    llm_server.default = answer
    status, summary = ingest(small_server, llm=llm_server)
    assert status == 0
    outcome = {s["path"]: s for s in summary["sources"]}
    assert {o["status"] for o in outcome.values()} == {"ingested"}
    assert (outcome["a.md"]["extractor"], outcome["a.md"]["degraded"]) == (
        "rules",
        ["llm_unusable"],
    )
    assert (outcome["b.md"]["extractor"], outcome["b.md"]["degraded"]) == (
        "rules",
        ["llm_unavailable"],
    )
    assert outcome["c.md"]["degraded"] == []
    manifest = {e.path: e for e in Manifest(small_server.paths).entries()}
    assert manifest["a.md"].degraded == ("llm_unusable",)
    assert manifest["a.md"].pages == ("people/alice-chen", "meetings/2026-09-01-sync-a")
