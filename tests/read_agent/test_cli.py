"""``read-agent ask`` and ``read-agent chat`` against the real memory server."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from read_agent.cli import main
from tests.fixtures.llm_server import LLMServer, Reply, tool_call
from tests.fixtures.server import RunningServer
from tests.read_agent.conftest import NOW, Seeded


@pytest.fixture
def reader_env(
    monkeypatch: pytest.MonkeyPatch, mcp_server: RunningServer, llm_server: LLMServer
) -> str:
    """MEMORY_URL/MEMORY_TOKEN for a people+meetings token and the scripted model."""
    _, secret = mcp_server.token("people,meetings", name="cli")
    for name in ("MEMORY_CONFIG", "LLM_API_KEY", "MEMORY_BUDGET_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORY_URL", mcp_server.url)
    monkeypatch.setenv("MEMORY_TOKEN", secret)
    monkeypatch.setenv("LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("LLM_MODEL", llm_server.model)
    return secret


def test_ask_json_has_answer_citations_tool_calls_and_mode(
    reader_env: str, llm_server: LLMServer, seeded: Seeded, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.enqueue(
        Reply(tool_calls=[tool_call("kb_get_page", {"id": seeded.person})]),
        f"{seeded.person_title} is Head of Testing since 2026-09-21 [{seeded.person}] "
        f"[{seeded.company}].",
    )
    code = main(["ask", "--json", "--now", NOW, "Who", "is", "Zora?"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert data["question"] == "Who is Zora?"
    assert data["mode"] == "agent" and data["degraded"] == []
    [citation] = data["citations"]
    assert (citation["id"], citation["folder"]) == (seeded.person, "people")
    assert citation["title"] == seeded.person_title
    assert data["removed_citations"] == [seeded.company]  # outside the token's folders
    assert data["tool_calls"][0]["name"] == "kb_get_page" and data["tool_calls"][0]["ok"]
    assert seeded.company not in data["answer"]


def test_ask_plain_prints_answer_and_sources(
    reader_env: str, llm_server: LLMServer, seeded: Seeded, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.enqueue(
        Reply(tool_calls=[tool_call("kb_get_page", {"id": seeded.meeting})]),
        f"A December trial was approved on 2026-11-12 [{seeded.meeting}].",
    )
    assert main(["ask", "What was decided?"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"A December trial was approved on 2026-11-12 [{seeded.meeting}].")
    assert f"  [{seeded.meeting}] {seeded.meeting_title} (2026-11-12)" in out


def test_ask_without_llm_is_extractive(
    reader_env: str, seeded: Seeded, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--no-llm", "ask", "--json", f"Quillworks vendor review {seeded.tag}"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["mode"] == "extractive" and "no_llm" in data["degraded"]
    assert seeded.meeting in [c["id"] for c in data["citations"]]


def test_chat_keeps_history_resets_and_lists_sources(
    reader_env: str,
    llm_server: LLMServer,
    seeded: Seeded,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    llm_server.enqueue(
        Reply(tool_calls=[tool_call("kb_get_page", {"id": seeded.person})]),
        f"Head of Testing [{seeded.person}].",
        # the follow-up cites the page verified in the first turn, without a new lookup
        f"Since 2026-09-21 [{seeded.person}].",
        "The knowledge base has no answer to this question.",
    )
    script = "Who is Zora?\nSince when?\n/sources\n/reset\nAnd now?\n/bogus\n/quit\nignored\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    assert main(["chat"]) == 0
    out = capsys.readouterr().out
    assert f"Since 2026-09-21 [{seeded.person}]." in out
    assert out.count(f"  [{seeded.person}] {seeded.person_title}") >= 2  # answer + /sources
    assert "(conversation reset)" in out and "unknown command /bogus" in out
    *_, third, fourth = llm_server.requests
    assert len(llm_server.requests) == 4
    assert [m["content"] for m in third["messages"] if m["role"] == "user"] == [
        "Who is Zora?",
        "Since when?",
    ]
    assert [m["content"] for m in fourth["messages"] if m["role"] != "system"] == ["And now?"]
    assert llm_server.pending == 0


def test_no_memory_server_configured_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("MEMORY_URL", "MEMORY_TOKEN", "MEMORY_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    assert main(["ask", "anything"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("read-agent: error: no memory server to ask")
    assert "MEMORY_URL" in err and len(err.strip().splitlines()) == 1


def test_bad_now_is_a_user_error(reader_env: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--now", "tomorrow-ish", "x"]) == 2
    assert "--now" in capsys.readouterr().err


def test_kb_flag_spawns_a_local_stdio_server(
    monkeypatch: pytest.MonkeyPatch,
    mcp_server: RunningServer,
    seeded: Seeded,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n", encoding="utf-8")
    for name in ("MEMORY_URL", "MEMORY_TOKEN", "LLM_BASE_URL", "LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", mcp_server.database_url)
    code = main(
        [
            "--config",
            str(config),
            "--kb",
            str(mcp_server.kb_dir),
            "ask",
            "--json",
            f"Quillworks vendor review {seeded.tag}",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert data["mode"] == "extractive"  # no LLM configured
    assert seeded.meeting in [c["id"] for c in data["citations"]]
