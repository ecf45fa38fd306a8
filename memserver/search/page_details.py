"""What the pipeline reads about its candidates after fusion: a page's title, folder and
effective date (and whether a timeline entry falls in the window), and lead snippets.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from memserver.search.source_notes import mentioned_in_window
from memserver.search.text_query import Conn, window_sql
from memserver.search.types import SOURCE_PREFIX


@dataclass(frozen=True)
class PageInfo:
    title: str
    folder: str
    date: dt.date | None
    window_match: bool


def page_info(
    conn: Conn, ids: Sequence[str], start: dt.date | None, end: dt.date | None
) -> dict[str, PageInfo]:
    """Title, folder, effective date of pages, and whether a timeline entry is in the
    window (for a raw source: whether it mentions a date in it)."""
    page_ids = [i for i in ids if not i.startswith(SOURCE_PREFIX)]
    out: dict[str, PageInfo] = {}
    if page_ids:
        has_window = start is not None or end is not None
        match = (
            "EXISTS (SELECT 1 FROM timeline_entries t WHERE t.page_id = p.id"
            + window_sql(start, end, "t.date")
            + ")"
            if has_window
            else "false"
        )
        rows = conn.execute(
            f"SELECT p.id, p.title, p.folder, p.effective_date, {match} FROM pages p"
            " WHERE p.id = ANY(%(ids)s)",
            {"ids": page_ids, "start": start, "end": end},
        ).fetchall()
        out.update({pid: PageInfo(t, f, d, bool(m)) for pid, t, f, d, m in rows})
    paths = [i.removeprefix(SOURCE_PREFIX) for i in ids if i.startswith(SOURCE_PREFIX)]
    if paths:
        rows = conn.execute(
            "SELECT path, coalesce(title, path), doc_date FROM source_docs WHERE path = ANY(%s)",
            (paths,),
        ).fetchall()
        mention = mentioned_in_window(conn, paths, start, end)
        out.update({SOURCE_PREFIX + p: PageInfo(t, "source", d, p in mention) for p, t, d in rows})
    return out


def lead_snippets(conn: Conn, ids: Sequence[str]) -> dict[str, str]:
    """A page's first two chunks (its fields and the start of its first section)."""
    page_ids = [i for i in ids if not i.startswith(SOURCE_PREFIX)]
    if not page_ids:
        return {}
    rows = conn.execute(
        "SELECT page_id, string_agg(text, E'\\n' ORDER BY ordinal) FROM chunks"
        " WHERE page_id = ANY(%s) AND ordinal < 2 GROUP BY page_id",
        (page_ids,),
    ).fetchall()
    return {pid: text for pid, text in rows}
