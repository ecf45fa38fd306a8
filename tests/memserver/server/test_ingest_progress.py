"""Scanned notes are searchable at once, removed ones leave the index, and search results
say when an ingest run is going on ("12/28 notes ingested")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from memserver.clients.embed import HashEmbedder
from memserver.clients.mcp import open_http
from memserver.db.database import Database
from memserver.kb.layout import KBPaths
from memserver.server.audit import AuditLog
from memserver.server.ingest_progress import IngestEvent, IngestProgress
from memserver.server.tokens import TokenStore
from memserver.server.tools.base import Services
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.server import serve_memory

NOW = "2026-11-20T12:00:00+08:00"
NOTE = "scanned/2026-11-19-quokka.md"
NOTE_TEXT = "# Quokka sync\n\nThe Zanzibar depot tried the Quokkaberry scanner on Tuesday.\n"


Served = tuple[str, str, str, str, KBPaths]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_run_is_in_progress_while_notes_wait_and_the_agent_is_active() -> None:
    clock = Clock()
    progress = IngestProgress(idle_seconds=60, clock=clock)
    events: list[IngestEvent] = []
    progress.subscribe(events.append)
    assert not progress.status().running  # nobody has listed anything
    progress.listed({"pending": 2, "ingested": 1, "removed": 4})
    status = progress.status()
    assert status.running and (status.waiting, status.total) == (2, 3)
    assert status.summary() == "1/3 notes ingested"
    progress.reading("a.md")
    assert progress.status().current == "a.md"
    progress.finished("a.md", "ingested", {"pending": 1, "ingested": 2}, pages=("people/x",))
    clock.now += 61  # the agent went quiet (died): not "ingesting" any more
    assert not progress.status().running
    progress.reading("b.md")
    progress.finished("b.md", "failed", {"ingested": 2, "failed": 1}, error="no date")
    assert not progress.status().running
    assert progress.status().summary() == "2/3 notes ingested, 1 failed"
    kinds = [(e.kind, e.path, e.outcome) for e in events]
    assert kinds == [
        ("listed", None, None),
        ("reading", "a.md", None),
        ("finished", "a.md", "ingested"),
        ("reading", "b.md", None),
        ("finished", "b.md", "failed"),
        ("done", None, None),
    ]
    assert events[2].pages == ("people/x",) and events[4].error == "no date"


@pytest.fixture
def served(example_kb: KBPaths, database_url: str) -> Iterator[Served]:
    """A server over a fresh example_kb: (MCP URL, write, read and people-only read
    secrets, paths)."""

    def open_kb() -> KnowledgeBase:
        return KnowledgeBase.open(
            example_kb.root, embedder=HashEmbedder(), database_url=database_url
        )

    db = Database.open(None, database_url, max_size=4)
    services = Services(paths=example_kb, kb_opener=open_kb)
    try:
        tokens = TokenStore(db)
        writer = tokens.create("ingest", "*", write=True).secret
        reader = tokens.create("reader", "*").secret
        people = tokens.create("people-reader", "people").secret
        with serve_memory(services, tokens, AuditLog(db)) as (base_url, _):
            yield f"{base_url}/mcp", writer, reader, people, example_kb
    finally:
        services.close()
        db.close()


async def calls(url: str, secret: str, *steps: tuple[str, dict[str, Any]]) -> list[Any]:
    async with open_http(url, secret) as memory:
        return [await memory.call(tool, args) for tool, args in steps]


def source_ids(result: dict[str, Any]) -> list[str]:
    return [r["id"] for r in result["results"] if r["id"].startswith("source/")]


QUERY = ("kb_query", {"question": "Quokkaberry scanner", "include_sources": True, "now": NOW})


def test_a_scanned_note_is_searchable_at_once_and_a_removed_one_leaves(
    served: Served,
) -> None:
    url, writer, reader, _, paths = served
    note = paths.source / NOTE
    note.parent.mkdir(parents=True)
    note.write_text(NOTE_TEXT, encoding="utf-8")
    # One look for work (what the watch loop does each cycle), no reindex.
    (pending,) = anyio.run(calls, url, writer, ("source_pending", {"limit": 100}))
    assert NOTE in [s["path"] for s in pending["sources"]]
    (found,) = anyio.run(calls, url, reader, QUERY)
    assert f"source/{NOTE}" in source_ids(found)

    note.unlink()
    anyio.run(calls, url, writer, ("source_pending", {"limit": 100}))
    (gone,) = anyio.run(calls, url, reader, QUERY)
    assert f"source/{NOTE}" not in source_ids(gone)


def test_search_results_say_an_ingest_run_is_going_on(
    served: Served,
) -> None:
    url, writer, reader, people, _ = served
    (before,) = anyio.run(calls, url, reader, QUERY)
    assert "ingest_in_progress" not in before["degraded"] and before["ingest"] is None
    (listing,) = anyio.run(calls, url, writer, ("source_pending", {"limit": 1}))
    total = listing["total"]
    first = listing["sources"][0]
    (during,) = anyio.run(calls, url, reader, QUERY)
    assert "ingest_in_progress" in during["degraded"]
    assert during["ingest"]["summary"] == f"0/{total} notes ingested"
    anyio.run(
        calls,
        url,
        writer,
        ("source_read", {"path": first["path"]}),
        ("source_mark", {"path": first["path"], "status": "ingested", "hash": first["hash"]}),
    )
    (later,) = anyio.run(calls, url, reader, QUERY)
    assert later["ingest"]["summary"] == f"1/{total} notes ingested"
    assert later["ingest"]["waiting"] == total - 1
    (scoped,) = anyio.run(calls, url, people, ("kb_query", {"question": "Alice", "now": NOW}))
    assert "ingest_in_progress" in scoped["degraded"]
    assert scoped["ingest"] == {"running": True}  # the ledger's counts are about sources
