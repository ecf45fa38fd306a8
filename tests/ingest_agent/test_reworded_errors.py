"""The ingest agent acts on the kind of a tool error, never on its words: with every
message of the server reworded (``reworded_errors``), a version conflict is still
re-read and merged, a page problem repaired from the problems listed, a database outage
leaves the note pending, and a missing page is still missing."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio

from ingest_agent.agent import IngestAgent
from ingest_agent.memory import Memory
from memserver.clients.embed import HashEmbedder
from memserver.clients.mcp import MemoryClient, open_http
from memserver.db.database import Database
from memserver.errors import ToolErrorKind
from memserver.kb.layout import KBPaths
from memserver.kb.page import TimelineEntry
from memserver.server.audit import AuditLog
from memserver.server.tokens import TokenStore
from memserver.server.tools.base import Services
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.own_database import stop_postgres
from tests.fixtures.server import serve_memory
from tests.ingest_agent.conftest import IngestServer, small_kb
from tests.ingest_agent.test_agent_loop import RacingClient

TIMEOUT = 120


class StaleWriteClient(RacingClient):
    """A real MCP session; just before the agent's first write of ``page_id``, another
    writer updates that page on the server, so the agent's base_version is stale."""

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        mine = name == "kb_put_page" and (arguments or {}).get("id") == self.page_id
        if mine and not self.raced:
            self.raced = True
            await anyio.to_thread.run_sync(self._write_elsewhere)
        return await MemoryClient.call(self, name, arguments)

    def _write_elsewhere(self) -> None:
        kb = self.server.kb()
        stored = kb.get_page(self.page_id)
        entry = TimelineEntry(dt.date(2026, 9, 30), "Written by someone else.", "other.md")
        page = dataclasses.replace(stored.page, timeline=(*stored.page.timeline, entry))
        kb.put_page("people", page, stored.version, written_by="other")


@contextlib.asynccontextmanager
async def agent_memory(server: IngestServer) -> AsyncIterator[Memory]:
    """The agent's view of ``server`` over a real MCP session (bounded)."""
    with anyio.fail_after(TIMEOUT):
        async with open_http(server.url, server.write_token) as client:
            yield Memory(client)


def test_a_version_conflict_is_re_read_and_merged_whatever_its_words(
    small_server: IngestServer, reworded_errors: list[ToolErrorKind]
) -> None:
    async def run() -> Any:
        with anyio.fail_after(TIMEOUT):
            async with open_http(small_server.url, small_server.write_token) as inner:
                memory = Memory(inner)
                await IngestAgent(memory, await memory.start()).run(["a.md"])
                memory = Memory(StaleWriteClient(inner, small_server, "people/alice-chen"))
                return await IngestAgent(memory, await memory.start()).run(["b.md"])

    [outcome] = anyio.run(run).sources
    assert ToolErrorKind.CONFLICT in reworded_errors
    assert outcome.status == "ingested" and "people/alice-chen" in outcome.changed
    texts = {e.text for e in small_server.kb().get_page("people/alice-chen").page.timeline}
    assert "Written by someone else." in texts and any("Sync b" in t for t in texts)


def test_a_page_problem_is_repaired_from_the_problems_listed_not_the_message(
    small_server: IngestServer, reworded_errors: list[ToolErrorKind]
) -> None:
    schema = small_server.paths.schema

    async def run() -> Any:
        async with agent_memory(small_server) as memory:
            known = await memory.start()
            # The server's schema changes under the running agent: attendees are now a
            # number, so the meeting the agent validated is refused by the server.
            text = schema.read_text(encoding="utf-8")
            old = "{name: attendees, type: links, folder: people, verb: attended}"
            schema.write_text(text.replace(old, "{name: attendees, type: number}"))
            return await IngestAgent(memory, known).run(["a.md"])

    [outcome] = anyio.run(run).sources
    assert ToolErrorKind.VALIDATION in reworded_errors
    assert outcome.status == "ingested", outcome.error
    meeting = small_server.kb().get_page("meetings/2026-09-01-sync-a").page
    assert "attendees" not in meeting.fields  # the field the problems named was dropped


def test_a_missing_page_is_missing_whatever_its_words(
    small_server: IngestServer, reworded_errors: list[ToolErrorKind]
) -> None:
    async def run() -> Any:
        async with agent_memory(small_server) as memory:
            await memory.start()
            return await memory.get("people/nobody-at-all")

    assert anyio.run(run) is None
    assert reworded_errors == [ToolErrorKind.NOT_FOUND]


@contextlib.contextmanager
def served_on_own_database(scratch: Path) -> Iterator[tuple[IngestServer, Database]]:
    """``small_kb`` served on its own embedded PostgreSQL, which a test may stop."""
    kb_dir = small_kb(scratch)
    paths = KBPaths.of(kb_dir)
    db = Database.open(paths, None, max_size=4, env={})
    kb = KnowledgeBase.open(kb_dir, embedder=HashEmbedder(), database_url=db.url)
    tokens = TokenStore(db)
    secret = tokens.create(f"ingest-{uuid.uuid4().hex[:6]}", "*", write=True).secret
    services = Services(paths=paths, kb_opener=lambda: kb)
    try:
        with serve_memory(services, tokens, AuditLog(db)) as (base_url, server):
            yield IngestServer(base_url, kb_dir, server, secret), db
    finally:
        services.close()
        kb.close()
        db.close()


def test_an_unavailable_database_leaves_the_note_pending_whatever_its_words(
    pg_scratch: Path, reworded_errors: list[ToolErrorKind]
) -> None:
    with served_on_own_database(pg_scratch) as (server, db):

        async def run() -> tuple[Any, Any]:
            async with agent_memory(server) as memory:
                agent = IngestAgent(memory, await memory.start())
                stop_postgres(db)
                paused = await agent.run(["a.md"])
                assert db.server is not None
                await anyio.to_thread.run_sync(db.server.restart)
                return paused, await agent.run(["a.md"])

        paused, resumed = anyio.run(run)
    assert ToolErrorKind.UNAVAILABLE in reworded_errors
    assert paused.paused and paused.sources == []  # nothing marked failed: still pending
    [outcome] = resumed.sources
    assert outcome.status == "ingested", outcome.error
