"""Timelines: what happened in a window, or one page's dated history (kb_timeline).

Events are timeline entries and pages dated inside the window (a meeting is an event
on its date), newest first, within the caller's folders. With a page, that page's
entries (inside the window, when one is given too).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from memserver.db.database import Database
from memserver.errors import NotFoundError, UserError
from memserver.kb.schema import Schema
from memserver.search.text_query import window_sql
from memserver.search.types import window_dates
from memserver.timeparse.parse import parse_time
from memserver.timeparse.window import TimeQuery, reference_time


def timeline_events(
    db: Database,
    schema: Schema,
    folders: Sequence[str],
    *,
    window: str | None = None,
    page: str | None = None,
    now: dt.datetime | None = None,
    limit: int = 100,
    as_of: dt.date | None = None,
) -> dict[str, Any]:
    """Events in ``window`` ("last week", "2026-09", "from X to Y") across ``folders``,
    or the dated history of ``page`` ("folder/slug"; NotFoundError outside ``folders``);
    with ``as_of``, only events on or before that day (alone: everything up to it).
    """
    ref = reference_time(now, schema.tz)
    tq: TimeQuery | None = None
    if window and window.strip():
        tq = parse_time(window, now=ref, tz=schema.tz)
        if tq.window is None:
            raise UserError(
                f"cannot read a time window in {window!r}",
                "write e.g. 'last week', 'in March', '2026-09', 'from 2026-09-01 to "
                "2026-09-15', 'yesterday'",
            )
    if tq is None and not page and as_of is None:
        raise UserError(
            "give a window or a page id", "e.g. window='last week' or page='people/bob'"
        )
    start, end = window_dates(tq.window if tq else None)
    if as_of is not None:
        upto = as_of + dt.timedelta(days=1)
        end = upto if end is None else min(end, upto)
    limit = max(1, min(int(limit), 500))
    params: dict[str, Any] = {
        "folders": list(folders),
        "start": start,
        "end": end,
        "lim": limit + 1,
    }
    win_t = window_sql(start, end, "t.date")
    win_p = window_sql(start, end, "p.effective_date")
    with db.connection() as conn:
        if page:
            page_id = page.strip().strip("[]").removeprefix("knowledge/").removesuffix(".md")
            row = conn.execute(
                "SELECT folder, title FROM pages WHERE id = %s", (page_id,)
            ).fetchone()
            if row is None or row[0] not in folders:
                raise NotFoundError(
                    f"no page {page_id!r}",
                    "check the id with kb_query or kb_list_pages; ids look like 'folder/slug'",
                )
            params["page"] = page_id
            rows = conn.execute(
                "SELECT t.date, p.id, p.title, p.folder, t.text, t.source, 'timeline'"
                " FROM timeline_entries t JOIN pages p ON p.id = t.page_id"
                " WHERE t.page_id = %(page)s" + win_t + " ORDER BY t.date DESC, t.ordinal"
                " LIMIT %(lim)s",
                params,
            ).fetchall()
        else:
            rows = conn.execute(
                # one day's entries of one page in the page's order, every run the same
                "SELECT date, id, title, folder, text, source, kind FROM ("
                " SELECT t.date, p.id, p.title, p.folder, t.text, t.source, 'timeline' AS kind,"
                " t.ordinal FROM timeline_entries t JOIN pages p ON p.id = t.page_id"
                " WHERE t.folder = ANY(%(folders)s)" + win_t + " UNION ALL"
                " SELECT p.effective_date, p.id, p.title, p.folder, p.title, NULL, 'page', 0"
                " FROM pages p WHERE p.folder = ANY(%(folders)s)"
                " AND p.effective_date IS NOT NULL" + win_p + ") e"
                " ORDER BY date DESC, id, kind, ordinal LIMIT %(lim)s",
                params,
            ).fetchall()
    events = [
        {
            "date": day.isoformat(),
            "id": pid,
            "title": title,
            "folder": folder,
            "text": text,
            "source": source,
            "kind": kind,
        }
        for day, pid, title, folder, text, source, kind in rows[:limit]
    ]
    return {
        "window": tq.window.as_dict() if tq and tq.window else None,
        "phrase": tq.phrase if tq else None,
        "page": page or None,
        "now": ref.isoformat(),
        "events": events,
        "truncated": len(rows) > limit,
        "as_of": as_of.isoformat() if as_of else None,
    }
