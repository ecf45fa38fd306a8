"""Reading pages back: a page, a listing, titles, a page's versions, the index's sizes.

Scope
    Readers pass ``folders`` (None = all folders). A page outside them behaves exactly
    like a missing page: the same NotFoundError.

:class:`PageReads` is the read side of :class:`~memserver.store.knowledge_base.KnowledgeBase`.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from typing import Any

from memserver.clients.embed import Embedder
from memserver.db.database import Database, redact_url
from memserver.errors import NotFoundError
from memserver.index.embedding import stale_counts
from memserver.kb.layout import KBPaths
from memserver.kb.page import parse_page
from memserver.store.records import PageSummary, StoredPage, VersionInfo, not_found, visible_id


class PageReads:
    """Reads of pages and their versions, within a reader's folders (see the module
    docstring)."""

    paths: KBPaths
    db: Database
    embedder: Embedder

    def get_page(self, page_id: str, folders: Collection[str] | None = None) -> StoredPage:
        folder, slug = visible_id(page_id, folders)
        with self.db.reading() as conn:
            row = conn.execute(
                "SELECT version, body, effective_date, updated_at FROM pages WHERE id = %s",
                (page_id,),
            ).fetchone()
        if row is None:
            raise not_found(page_id)
        version, body, day, updated = row
        page = parse_page(body, source=page_id)
        return StoredPage(page_id, folder, slug, version, page, body, day, updated)

    def list_pages(
        self,
        folders: Collection[str] | None = None,
        *,
        folder: str | None = None,
        start: datetime.date | None = None,
        end: datetime.date | None = None,
        limit: int = 50,
        offset: int = 0,
        where_field: tuple[str, str] | None = None,
    ) -> tuple[list[PageSummary], int]:
        """Pages newest effective date first (undated last), in ``[start, end)``, whose
        frontmatter field holds a value (``where_field``: name, value; any case; a list
        field holding it among its items), and the total number matching."""
        where = ["TRUE"]
        params: dict[str, Any] = {"limit": max(0, limit), "offset": max(0, offset)}
        if folders is not None:
            where.append("folder = ANY(%(folders)s)")
            params["folders"] = sorted(folders)
        if folder is not None:
            where.append("folder = %(folder)s")
            params["folder"] = folder
        if start is not None:
            where.append("effective_date >= %(start)s")
            params["start"] = start
        if end is not None:
            where.append("effective_date < %(end)s")
            params["end"] = end
        if where_field is not None:
            where.append(
                "EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE"
                " WHEN jsonb_typeof(fields -> %(field)s) = 'array' THEN fields -> %(field)s"
                " ELSE jsonb_build_array(fields ->> %(field)s) END) AS item"
                " WHERE lower(item) = lower(%(value)s))"
            )
            params["field"], params["value"] = where_field
        clause = " AND ".join(where)
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT id, folder, slug, title, type, effective_date, version, updated_at"
                f" FROM pages WHERE {clause}"
                " ORDER BY effective_date DESC NULLS LAST, title, id"
                " LIMIT %(limit)s OFFSET %(offset)s",
                params,
            ).fetchall()
            total_row = conn.execute(
                f"SELECT count(*) FROM pages WHERE {clause}", params
            ).fetchone()
        total = int(total_row[0]) if total_row else 0
        return [PageSummary(*row) for row in rows], total

    def titles(self, page_ids: Collection[str]) -> dict[str, str]:
        """``{id: title}`` of the given ids that are pages (any folder; for redaction)."""
        if not page_ids:
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT id, title FROM pages WHERE id = ANY(%s)", (list(page_ids),)
            ).fetchall()
        return {str(page_id): str(title) for page_id, title in rows}

    def pages_titled(self, names: Collection[str], folders: Collection[str]) -> dict[str, str]:
        """``{id: title}`` of the pages of ``folders`` titled one of ``names`` now or
        before a rename (any case; for redacting ``[[Title]]`` links)."""
        if not names or not folders:
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT p.id, p.title FROM page_titles t JOIN pages p ON p.id = t.page_id"
                " WHERE t.folder = ANY(%s) AND t.title_norm = ANY(%s)",
                (list(folders), sorted({n.lower() for n in names})),
            ).fetchall()
        return {str(page_id): str(title) for page_id, title in rows}

    def former_titles(self, page_ids: Collection[str]) -> dict[str, list[str]]:
        """``{id: [titles]}``: the titles these pages had before a rename."""
        if not page_ids:
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT t.page_id, t.title FROM page_titles t JOIN pages p ON p.id = t.page_id"
                " WHERE t.page_id = ANY(%s) AND t.title_norm <> lower(p.title)"
                " ORDER BY t.page_id, t.title",
                (list(page_ids),),
            ).fetchall()
        found: dict[str, list[str]] = {}
        for page_id, title in rows:
            found.setdefault(str(page_id), []).append(str(title))
        return found

    def pages_slugged(self, slugs: Collection[str], folders: Collection[str]) -> dict[str, str]:
        """``{id: title}`` of the pages of ``folders`` whose slug is one of ``slugs``
        (for redacting a slug written without its folder)."""
        if not slugs or not folders:
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT id, title FROM pages WHERE folder = ANY(%s) AND slug = ANY(%s)",
                (list(folders), sorted({s.lower() for s in slugs})),
            ).fetchall()
        return {str(page_id): str(title) for page_id, title in rows}

    def history(self, page_id: str, folders: Collection[str] | None = None) -> list[VersionInfo]:
        """Every stored version of a page, newest first (also for a deleted page)."""
        visible_id(page_id, folders)
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT version, created_at, coalesce(written_by, ''), content_hash"
                " FROM page_versions WHERE page_id = %s ORDER BY version DESC",
                (page_id,),
            ).fetchall()
        if not rows:
            raise not_found(page_id)
        return [VersionInfo(*row) for row in rows]

    def get_version(
        self, page_id: str, version: int, folders: Collection[str] | None = None
    ) -> str:
        """The markdown of one stored version."""
        visible_id(page_id, folders)
        with self.db.reading() as conn:
            row = conn.execute(
                "SELECT markdown FROM page_versions WHERE page_id = %s AND version = %s",
                (page_id, version),
            ).fetchone()
        if row is None:
            raise NotFoundError(
                f"page {page_id!r} has no version {version}", "list its versions with history"
            )
        return str(row[0])

    def stats(self) -> dict[str, Any]:
        """Sizes of the index: pages per folder, rows per table, stale rows, model."""
        info = self.db.embedding_info()
        with self.db.connection() as conn:
            folders = dict(
                conn.execute(
                    "SELECT folder, count(*) FROM pages GROUP BY folder ORDER BY folder"
                ).fetchall()
            )
            stale = stale_counts(conn)
            (versions,) = conn.execute("SELECT count(*) FROM page_versions").fetchone() or (0,)
            (open_conflicts,) = conn.execute(
                "SELECT count(*) FROM conflicts WHERE status = 'unresolved'"
            ).fetchone() or (0,)
        return {
            "kb": str(self.paths.root),
            "database": redact_url(self.db.url),
            "embedding": {
                "model": info[0] if info else None,
                "dims": info[1] if info else None,
                "embedder": self.embedder.name,
            },
            "pages": sum(folders.values()),
            "folders": {name: int(n) for name, n in folders.items()},
            "tables": self.db.counts(),
            "stale": stale,
            "page_versions": int(versions),
            "open_conflicts": int(open_conflicts),
        }
