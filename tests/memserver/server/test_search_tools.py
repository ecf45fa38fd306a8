"""kb_query, kb_timeline and kb_latest over real Streamable HTTP with scoped tokens."""

from __future__ import annotations

import contextlib
import datetime as dt
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from memserver.clients.config import Settings, load_settings
from memserver.clients.embed import HashEmbedder
from memserver.clients.mcp import MemoryClient, open_http
from memserver.db.database import create_database, drop_database, with_database
from memserver.errors import ToolCallError
from memserver.kb.page import Page, TimelineEntry
from memserver.server.audit import AuditLog
from memserver.server.tokens import TokenStore
from memserver.server.tools.base import Services
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.llm_server import LLMServer
from tests.fixtures.server import RunningServer, copy_example_kb, serve_memory

TIMEOUT = 30
NOW = "2026-11-20T12:00:00+08:00"
RESULT_FIELDS = {"id", "title", "folder", "date", "score", "snippet", "ranks", "labels", "timeline"}


def run(server: RunningServer, secret: str, body: Callable[[MemoryClient], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        with anyio.fail_after(TIMEOUT):
            async with open_http(server.url, secret) as memory:
                return await body(memory)

    return anyio.run(main)


@pytest.fixture(scope="module")
def people(mcp_server: RunningServer) -> dict[str, str]:
    """A person with two meetings, a newer meeting without her, and a decision (unique names)."""
    tag = uuid.uuid4().hex[:6]
    kb = mcp_server.kb()
    name = f"Quilla Zorander {tag}"
    other = f"Orrin Vale {tag}"
    ids = {"name": name, "tag": tag}
    ids["person"] = kb.put_page(
        "people",
        Page(
            title=name,
            type="person",
            fields={"role": "Dispatcher"},
            sections={"Summary": f"{name} dispatches trucks in Darkhan ({tag})."},
            timeline=(TimelineEntry(dt.date(2026, 11, 12), f"Moved shifts {tag}."),),
        ),
        None,
    ).id
    ids["other"] = kb.put_page(
        "people", Page(title=other, type="person", sections={"Summary": f"Driver {tag}."}), None
    ).id
    for day, attendees, key in (
        ("2026-08-03", [name], "old"),
        ("2026-10-06", [name], "new"),
        ("2026-11-16", [other], "without"),
    ):
        ids[key] = kb.put_page(
            "meetings",
            Page(
                title=f"Dispatch sync {tag}",
                type="meeting",
                fields={"date": day, "attendees": attendees},
                sections={"Summary": f"Dispatch sync {tag}; {name} was discussed."},
            ),
            None,
        ).id
    ids["decision"] = kb.put_page(
        "decisions",
        Page(
            title=f"Night shifts {tag}",
            type="decision",
            fields={"date": "2026-11-10", "status": "accepted", "decided_by": [name]},
            sections={"Decision": f"Night shifts for {name} ({tag})."},
        ),
        None,
    ).id
    return ids


def test_kb_query_stays_in_the_token_scope(
    mcp_server: RunningServer, people: dict[str, str]
) -> None:
    _, secret = mcp_server.token("people,meetings")

    async def body(memory: MemoryClient) -> dict[str, Any]:
        return await memory.call(
            "kb_query", {"query": f"{people['name']} night shifts", "now": NOW}
        )

    data = run(mcp_server, secret, body)
    assert data["results"], data
    assert {r["folder"] for r in data["results"]} <= {"people", "meetings"}
    assert people["decision"] not in {r["id"] for r in data["results"]}
    assert data["results"] and all(set(r) == RESULT_FIELDS for r in data["results"])
    assert data["time"]["order"] is None and isinstance(data["degraded"], list)


def test_kb_query_latest_meeting_and_tolerant_arguments(
    mcp_server: RunningServer, people: dict[str, str]
) -> None:
    _, secret = mcp_server.token("*")

    async def body(memory: MemoryClient) -> dict[str, Any]:
        return await memory.call(
            "kb_query",
            {
                "q": f"latest meeting with {people['name']}",
                "folders": "meetings, people",
                "mode": "Conservative",
                "now": "2026-11-20",
                "include_sources": True,
            },
        )

    data = run(mcp_server, secret, body)
    assert data["mode"] == "conservative" and data["time"]["order"] == "newest"
    assert data["results"][0]["id"] == people["new"]  # not the newer one without her
    assert "date_ordered" in data["results"][0]["labels"]


def test_kb_query_sources_need_source_access(
    mcp_server: RunningServer, people: dict[str, str]
) -> None:
    _, secret = mcp_server.token("people")

    async def body(memory: MemoryClient) -> dict[str, Any]:
        return await memory.call(
            "kb_query", {"question": people["name"], "include_sources": True, "now": NOW}
        )

    data = run(mcp_server, secret, body)
    assert "sources_not_in_scope" in data["degraded"]
    assert data["results"] and all(r["folder"] == "people" for r in data["results"])


def test_kb_query_bad_arguments_say_how_to_fix(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("*")

    async def body(memory: MemoryClient) -> None:
        with pytest.raises(ToolCallError, match="conservative, balanced, tokenmax"):
            await memory.call("kb_query", {"question": "x", "mode": "fast"})
        with pytest.raises(ToolCallError, match="ISO date"):
            await memory.call("kb_query", {"question": "x", "now": "next tuesday"})
        with pytest.raises(ToolCallError, match="empty"):
            await memory.call("kb_query", {"question": "  "})

    run(mcp_server, secret, body)


def test_kb_latest_follows_the_entity_and_lists_a_folder(
    mcp_server: RunningServer, people: dict[str, str]
) -> None:
    _, secret = mcp_server.token("people,meetings")

    async def body(memory: MemoryClient) -> tuple[dict[str, Any], dict[str, Any]]:
        latest = await memory.call(
            "kb_latest", {"folder": "meetings", "about": people["name"], "now": NOW}
        )
        first = await memory.call(
            "kb_latest",
            {"folder": "meetings", "entity": people["name"], "order": "first", "limit": 1},
        )
        return latest, first

    latest, first = run(mcp_server, secret, body)
    assert [r["id"] for r in latest["results"][:2]] == [people["new"], people["old"]]
    assert [r["id"] for r in first["results"]] == [people["old"]]

    async def refused(memory: MemoryClient) -> None:
        with pytest.raises(ToolCallError, match="decisions"):
            await memory.call("kb_latest", {"folder": "decisions"})

    run(mcp_server, secret, refused)


def test_kb_timeline_window_and_page_history_in_scope(
    mcp_server: RunningServer, people: dict[str, str]
) -> None:
    _, secret = mcp_server.token("people,meetings")

    async def body(memory: MemoryClient) -> tuple[dict[str, Any], dict[str, Any]]:
        week = await memory.call("kb_timeline", {"period": "last week", "now": NOW})
        page = await memory.call("kb_timeline", {"page_id": people["person"], "now": NOW})
        return week, page

    week, page = run(mcp_server, secret, body)
    week_ids = {e["id"] for e in week["events"]}
    assert people["person"] in week_ids and people["decision"] not in week_ids
    assert week["events"] and all("2026-11-09" <= e["date"] < "2026-11-16" for e in week["events"])
    assert [e["date"] for e in page["events"]] == ["2026-11-12"]

    async def hidden(memory: MemoryClient) -> None:
        with pytest.raises(ToolCallError, match="no page"):
            await memory.call("kb_timeline", {"page": people["decision"]})

    run(mcp_server, secret, hidden)


def test_kb_timeline_gives_one_day_of_a_page_in_the_page_s_order(mcp_server: RunningServer) -> None:
    tag = uuid.uuid4().hex[:6]
    day = dt.date(2026, 3, 4)
    said = [f"{word} step {tag}." for word in ("Zulu", "Alpha", "Mike", "Bravo", "Yankee")]
    pid = (
        mcp_server.kb()
        .put_page(
            "people",
            Page(
                title=f"Tamsin Oke {tag}",
                type="person",
                fields={"role": "Planner"},
                timeline=tuple(TimelineEntry(day, text) for text in said),
            ),
            None,
        )
        .id
    )
    _, secret = mcp_server.token("people")

    async def body(memory: MemoryClient) -> dict[str, Any]:
        return await memory.call("kb_timeline", {"period": "on 2026-03-04", "now": NOW})

    events = run(mcp_server, secret, body)["events"]
    assert [e["text"] for e in events if e["id"] == pid and e["kind"] == "timeline"] == said


@contextlib.contextmanager
def served_with(
    tmp_path: Path, pg_url: str, settings: Settings | None
) -> Iterator[tuple[str, str]]:
    """A fresh example knowledge base with one page, served with ``settings``; yields
    (MCP URL, read token)."""
    db_name = f"searchcfg_{uuid.uuid4().hex[:12]}"
    create_database(pg_url, db_name)
    kb = KnowledgeBase.open(
        copy_example_kb(tmp_path / "kb"),
        embedder=HashEmbedder(),
        database_url=with_database(pg_url, db_name),
    )
    try:
        kb.put_page(
            "people",
            Page(
                title="Ysolde Marr",
                type="person",
                fields={"role": "Fleet planner"},
                sections={"Summary": "Ysolde Marr plans the fleet routes for the northern depot."},
            ),
            None,
        )
        secret = TokenStore(kb.db).create(f"cfg-{uuid.uuid4().hex[:6]}", "*").secret
        services = Services(paths=kb.paths, kb_opener=lambda: kb, settings=settings)
        with serve_memory(services, TokenStore(kb.db), AuditLog(kb.db)) as (base_url, _):
            yield f"{base_url}/mcp", secret
    finally:
        kb.close()
        drop_database(pg_url, db_name)


def query(url: str, secret: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT):
            async with open_http(url, secret) as memory:
                result: dict[str, Any] = await memory.call("kb_query", arguments)
                return result

    return anyio.run(main)


def test_kb_query_reranks_with_the_reranker_in_the_servers_config_file(
    tmp_path: Path, pg_url: str, llm_server: LLMServer
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"rerank:\n  base_url: {llm_server.base_url}\n  model: test-reranker\n",
        encoding="utf-8",
    )
    settings = load_settings(config, env={})  # the file alone: nothing from the environment
    assert settings.rerank is not None and settings.llm is None
    with served_with(tmp_path, pg_url, settings) as (url, secret):
        data = query(url, secret, {"question": "fleet routes northern depot", "now": NOW})
    reranks = [c for c in llm_server.calls if c.path == "/v1/rerank"]
    assert reranks and reranks[0].body["model"] == "test-reranker"
    assert data["results"][0]["ranks"].get("rerank") == 1
    assert "reranker_unavailable" not in data["degraded"]


def test_kb_query_does_not_read_llm_settings_from_the_environment_per_call(
    tmp_path: Path, pg_url: str, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("LLM_MODEL", "env-model")
    with served_with(tmp_path, pg_url, None) as (url, secret):  # a server without settings
        data = query(
            url, secret, {"question": "who plans the fleet routes", "mode": "tokenmax", "now": NOW}
        )
    assert data["results"] and data["mode"] == "tokenmax"
    assert llm_server.calls == []  # no query expansion, no rerank: the server has neither
