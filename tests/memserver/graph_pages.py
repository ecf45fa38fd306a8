"""Test helper for the graph tests: a schema with links, and a small page writer.

``PageWriter.put`` stores a page the way the write path does (pages row, aliases, then
``linker.link_page`` in the same transaction).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from memserver.db import Database, normalize_name
from memserver.embed import Embedder
from memserver.linker import link_page, page_names, unwire
from memserver.page import (
    Page,
    TimelineEntry,
    chunk_page,
    content_hash,
    effective_date,
    page_slug,
    render_page,
)
from memserver.schema import Schema, parse_schema

SCHEMA = parse_schema(
    """\
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
      - {verb: reports_to, to: people, patterns: ["reports to", "reporting to"]}
      - {verb: works_at, to: companies, patterns: ["works at", "joined"]}
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
)


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
    """Writes pages into ``db`` like the kb write path: row, aliases, links, one transaction."""

    def __init__(self, db: Database, schema: Schema = SCHEMA) -> None:
        self.db = db
        self.schema = schema

    def put(self, folder: str, page: Page) -> str:
        spec = self.schema.folder(folder)
        slug = page_slug(page, spec)
        page_id = f"{folder}/{slug}"
        markdown = render_page(page, spec)
        with self.db.transaction() as conn:
            previous = page_names(conn, page_id)
            conn.execute(
                "INSERT INTO pages (id, folder, slug, title, type, effective_date,"
                " content_hash, body) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title,"
                " effective_date = EXCLUDED.effective_date, body = EXCLUDED.body,"
                " content_hash = EXCLUDED.content_hash, version = pages.version + 1",
                (
                    page_id,
                    folder,
                    slug,
                    page.title,
                    page.type,
                    effective_date(page, spec, slug),
                    content_hash(markdown),
                    markdown,
                ),
            )
            conn.execute("DELETE FROM page_aliases WHERE page_id = %s", (page_id,))
            for alias in page.aliases:
                conn.execute(
                    "INSERT INTO page_aliases (page_id, folder, alias, alias_norm)"
                    " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (page_id, folder, alias, normalize_name(alias)),
                )
            conn.execute("DELETE FROM chunks WHERE page_id = %s", (page_id,))
            day = effective_date(page, spec, slug)
            for chunk in chunk_page(page):
                conn.execute(
                    "INSERT INTO chunks (page_id, folder, ordinal, section, text, effective_date)"
                    " VALUES (%s, %s, %s, %s, %s, %s)",
                    (page_id, folder, chunk.ordinal, chunk.section, chunk.text, chunk.date or day),
                )
            link_page(conn, page_id, page, spec, self.schema, slug, previous)
        return page_id

    def embed(self, embedder: Embedder) -> None:
        """Embed every stale chunk (what reindex does)."""
        self.db.ensure_embedding(embedder.name, embedder.dims)
        with self.db.transaction() as conn:
            rows = conn.execute("SELECT id, text FROM chunks WHERE stale").fetchall()
            vectors = embedder.embed_passages([text for _, text in rows])
            with conn.cursor() as cur:
                cur.executemany(
                    "UPDATE chunks SET embedding = %s, stale = false WHERE id = %s",
                    [(v, i) for (i, _), v in zip(rows, vectors, strict=True)],
                )

    def delete(self, page_id: str) -> None:
        with self.db.transaction() as conn:
            unwire(conn, page_id)
            conn.execute("DELETE FROM pages WHERE id = %s", (page_id,))

    def edges(self) -> list[tuple[str, str, str | None, str, str]]:
        """Every stored edge as (from_id, verb, to_id, to_ref, origin), sorted."""
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT from_id, verb, to_id, to_ref, origin FROM links"
                " ORDER BY from_id, verb, to_ref, origin"
            ).fetchall()
        return [tuple(r) for r in rows]
