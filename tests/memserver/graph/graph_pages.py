"""Test helper for the graph tests: a schema with links, and a small page writer.

``PageWriter.put`` stores a page through ``KnowledgeBase.put_page`` (the real write path:
file, pages row, aliases, chunks, then the linker in the same transaction).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import anyio

from memserver.clients.embed import HashEmbedder
from memserver.clients.mcp import open_http
from memserver.errors import ToolCallError
from memserver.index.indexer import delete_pages
from memserver.kb.page import Page, TimelineEntry, page_slug
from memserver.kb.schema import parse_schema
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.kb import MakeKB
from tests.fixtures.server import RunningServer

SCHEMA_TEXT = """\
timezone: UTC
folders:
  - name: people
    type: person
    description: People.
    fields:
      - {name: role, type: string}
      - {name: company, type: link, folder: companies, verb: works_at}
      - {name: reports_to, type: link, folder: people, verb: reports_to}
    sections: [Summary]
    link_verbs:
      - {verb: reports_to, to: people, patterns: ["reports to", "reporting to", "{name} тайлагнадаг"]}
      - {verb: works_at, to: companies, patterns: ["works at", "joined", "{name} ажилладаг"]}
  - name: companies
    type: company
    description: Companies.
    fields:
      - {name: industry, type: string}
    sections: [Summary]
  - name: meetings
    type: meeting
    description: Meetings on one date.
    slug: "{date}-{title}"
    date_field: date
    fields:
      - {name: date, type: date, required: true}
      - {name: attendees, type: links, folder: people, verb: attended}
      - {name: company, type: link, folder: companies, verb: about}
    sections: [Summary, Decisions]
    timeline: false
    link_verbs:
      - {verb: about, to: companies, patterns: ["meeting with", "call with"]}
"""
SCHEMA = parse_schema(SCHEMA_TEXT)


def person(title: str, *, aliases: tuple[str, ...] = (), summary: str = "", **fields: Any) -> Page:
    sections = {"Summary": summary} if summary else {}
    return Page(title=title, type="person", fields=fields, aliases=aliases, sections=sections)


def company(title: str, *, aliases: tuple[str, ...] = (), summary: str = "") -> Page:
    sections = {"Summary": summary} if summary else {}
    return Page(title=title, type="company", aliases=aliases, sections=sections)


def meeting(
    title: str,
    date: str,
    attendees: tuple[str, ...] = (),
    *,
    summary: str = "",
    company: str | None = None,
) -> Page:
    fields: dict[str, Any] = {"date": date}
    if attendees:
        fields["attendees"] = attendees
    if company:
        fields["company"] = company
    sections = {"Summary": summary} if summary else {}
    return Page(title=title, type="meeting", fields=fields, sections=sections)


def timeline(*entries: tuple[str, str]) -> tuple[TimelineEntry, ...]:
    return tuple(TimelineEntry(dt.date.fromisoformat(d), text) for d, text in entries)


class PageWriter:
    """Writes pages through the knowledge base service (``put_page``: file, index, links)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.db = kb.db
        self.schema = kb.schema

    def put(self, folder: str, page: Page) -> str:
        """Create the page, or update it from its current version."""
        slug = page_slug(page, self.schema.folder(folder))
        page_id = f"{folder}/{slug}"
        with self.db.connection() as conn:
            row = conn.execute("SELECT version FROM pages WHERE id = %s", (page_id,)).fetchone()
        result = self.kb.put_page(folder, page, row[0] if row else None, written_by="test")
        assert result.id == page_id
        return page_id

    def delete(self, page_id: str) -> None:
        """Remove a page's file and index rows (what reindex does for a deleted file)."""
        folder, slug = page_id.split("/", 1)
        with self.db.transaction() as conn:
            delete_pages(conn, [page_id])
        self.kb.paths.page_path(folder, slug).unlink()

    def clear(self) -> None:
        """Remove every page (files and index)."""
        with self.db.transaction() as conn:
            ids = [pid for (pid,) in conn.execute("SELECT id FROM pages").fetchall()]
            delete_pages(conn, ids)
        for page_id in ids:
            folder, slug = page_id.split("/", 1)
            self.kb.paths.page_path(folder, slug).unlink()

    def edges(self) -> list[tuple[str, str, str | None, str, str]]:
        """Every stored edge as (from_id, verb, to_id, to_ref, origin), sorted."""
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT from_id, verb, to_id, to_ref, origin FROM links"
                " ORDER BY from_id, verb, to_ref, origin"
            ).fetchall()
        return [tuple(r) for r in rows]


def open_writer(make_kb: MakeKB, database_url: str) -> Iterator[PageWriter]:
    """A knowledge base with ``SCHEMA_TEXT`` on a fresh database (hash embedder)."""
    paths = make_kb(SCHEMA_TEXT)
    kb = KnowledgeBase.open(paths.root, embedder=HashEmbedder(), database_url=database_url)
    try:
        yield PageWriter(kb)
    finally:
        kb.close()


def call_tool(server: RunningServer, secret: str, tool: str, args: dict[str, Any]) -> Any:
    """The tool's structured result, or raise its ToolCallError (outside the session)."""

    async def main() -> Any:
        with anyio.fail_after(30):
            async with open_http(server.url, secret) as memory:
                try:
                    return await memory.call(tool, args)
                except ToolCallError as exc:
                    return exc

    result = anyio.run(main)
    if isinstance(result, ToolCallError):
        raise result
    return result
