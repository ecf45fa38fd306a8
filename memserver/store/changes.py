"""What changed since a cursor or a time: the change feed (migration 017), in a reader's folders.

Every page version written, conflict recorded or closed and change flagged for review
or decided is a ``changes`` row, written by a trigger in the writer's own transaction
and stamped with that transaction's id (``xid``). A :class:`Cursor` is the snapshot a
read ran under: the next read from it takes exactly the rows of the transactions that
snapshot did not see and the new one does. A transaction still running when the cursor
was taken is listed in the snapshot as in progress, so its rows arrive with the next
read whatever order the writers commit in: a cursor misses nothing and repeats nothing,
with no lock and no sequence number that could commit out of order.

:func:`reading` opens the one read-only, repeatable-read transaction a reader uses, so
every query of a wake-up (the changes, the open conflicts, the titles, the new cursor)
sees the same moment. Everything is filtered to the reader's folders in SQL: a row of
another folder is never read, let alone counted. Database errors become StoreError.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg

from memserver.errors import StoreError, UserError
from memserver.store.reviews import scope_list

if TYPE_CHECKING:
    from memserver.db.database import Database

CURSOR_PREFIX = "c1:"
MAX_CURSOR_CHARS = 20_000
_XID = r"\d{1,20}"
_CURSOR_RE = re.compile(rf"^({_XID}):({_XID}):((?:{_XID})(?:,{_XID})*)?$")
CONFLICT_KINDS = ("conflict_unresolved", "conflict_superseded", "conflict_resolved")
REVIEW_KINDS = ("review_pending", "review_accepted", "review_rejected", "review_edited")


class CursorError(UserError):
    """A ``since`` cursor that is not one this database gave out."""


@dataclass(frozen=True)
class Cursor:
    """A position in the change feed: the snapshot (``xmin:xmax:xip,...``) a read ran under."""

    snapshot: str

    @property
    def text(self) -> str:
        return CURSOR_PREFIX + self.snapshot

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """A cursor as ``kb_wakeup`` returned it; CursorError for anything else."""
        body = text.strip().removeprefix(CURSOR_PREFIX)
        match = _CURSOR_RE.match(body) if len(body) <= MAX_CURSOR_CHARS else None
        if match is None or not text.strip().startswith(CURSOR_PREFIX):
            raise CursorError(
                f"{text[:60]!r} is not a change cursor",
                "pass the `cursor` a previous kb_wakeup returned, a date such as "
                "2026-09-01, or nothing for the last week",
            )
        xmin, xmax = int(match.group(1)), int(match.group(2))
        running = [int(x) for x in (match.group(3) or "").split(",") if x]
        if xmin > xmax or any(not xmin <= x < xmax for x in running):
            raise CursorError(
                "this change cursor is damaged", "call again without it, or with a date"
            )
        return cls(body)


@dataclass(frozen=True)
class Since:
    """Where a read starts: after a cursor, or at a time."""

    cursor: Cursor | None = None
    at: dt.datetime | None = None

    def where(self) -> tuple[str, dict[str, Any]]:
        """The SQL condition (on ``changes``) and its parameters."""
        if self.cursor is not None:
            return (
                "xid >= pg_snapshot_xmin(%(since)s::pg_snapshot)"
                " AND NOT pg_visible_in_snapshot(xid, %(since)s::pg_snapshot)",
                {"since": self.cursor.snapshot},
            )
        return "at >= %(since)s", {"since": self.at}


@dataclass(frozen=True)
class PageChange:
    """The writes to one page in the window: from ``first`` to ``last`` version."""

    page_id: str
    folder: str
    title: str  # the page id when the page is no longer in the index
    first: int
    last: int
    writes: int
    at: dt.datetime  # the latest write
    effective_date: dt.date | None
    note: str | None  # what the latest write says caused it (a source note, a restore)
    value: Any = None  # the page's value of the field asked for (its status), now

    @property
    def created(self) -> bool:
        return self.first == 1


@dataclass(frozen=True)
class EventChange:
    """A conflict or review row that changed in the window (``kind``: its new state)."""

    kind: str
    at: dt.datetime
    ref: int
    page_id: str


@dataclass(frozen=True)
class Subject:
    """A page that saw activity: its own writes, and links to it from pages written."""

    page_id: str
    folder: str
    title: str
    writes: int
    mentions: int


@contextmanager
def reading(db: Database) -> Iterator[psycopg.Connection[Any]]:
    """One read-only transaction whose statements all see the same snapshot."""
    try:
        with db.transaction() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn
    except psycopg.Error as exc:
        raise StoreError(
            f"could not read the change feed in the index database: {str(exc).strip()}",
            "check that PostgreSQL is running and migrated (`memserver migrate`)",
        ) from exc


def current(conn: psycopg.Connection[Any], since: Cursor | None = None) -> Cursor:
    """The cursor of this transaction's snapshot. A ``since`` cursor this database has
    not reached yet (taken on another database) is refused, not read as "nothing new"."""
    row = conn.execute(
        "SELECT pg_current_snapshot()::text, %(since)s::pg_snapshot IS NOT NULL"
        " AND pg_snapshot_xmax(%(since)s::pg_snapshot) > pg_snapshot_xmax(pg_current_snapshot())",
        {"since": since.snapshot if since is not None else None},
    ).fetchone()
    assert row is not None
    if row[1]:
        raise CursorError(
            "this change cursor was not given out by this memory's database",
            "call kb_wakeup without `since` (or with a date) to start again",
        )
    return Cursor(str(row[0]))


def counts(
    conn: psycopg.Connection[Any], since: Since, folders: Collection[str] | None
) -> dict[str, int]:
    """How many changes of each kind in the window; for pages, how many pages were
    written (``page``) and how many of them were new (``page_created``)."""
    where, params = since.where()
    scoped = {**params, "scope": scope_list(folders)}
    in_scope = "(%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s))"
    row = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE first = 1) FROM ("
        f" SELECT page_id, min(version) AS first FROM changes WHERE {where} AND kind = 'page'"
        f" AND {in_scope} GROUP BY page_id) written",
        scoped,
    ).fetchone()
    assert row is not None
    rows = conn.execute(
        f"SELECT kind, count(*) FROM changes WHERE {where} AND kind <> 'page' AND {in_scope}"
        " GROUP BY kind",
        scoped,
    ).fetchall()
    return {"page": int(row[0]), "page_created": int(row[1]), **{str(k): int(n) for k, n in rows}}


def page_changes(
    conn: psycopg.Connection[Any],
    since: Since,
    folders: Collection[str] | None,
    *,
    first_folders: Sequence[str] = (),
    limit: int = 200,
    field: str = "status",
) -> list[PageChange]:
    """The pages written in the window, one entry a page: ``first_folders`` first, then
    the most recently written; each with its current value of ``field``."""
    where, params = since.where()
    rows = conn.execute(
        "WITH w AS (SELECT page_id, folder, min(version) AS first, max(version) AS last,"
        "   count(*) AS writes, max(at) AS at FROM changes"
        f"  WHERE {where} AND kind = 'page'"
        "   AND (%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s))"
        "  GROUP BY page_id, folder"
        "  ORDER BY folder = ANY(%(first)s) DESC, max(at) DESC, page_id LIMIT %(limit)s)"
        " SELECT w.page_id, w.folder, coalesce(p.title, w.page_id), w.first, w.last, w.writes,"
        "   w.at, p.effective_date, v.note, p.fields -> %(field)s"
        " FROM w LEFT JOIN pages p ON p.id = w.page_id"
        " LEFT JOIN page_versions v ON v.page_id = w.page_id AND v.version = w.last"
        " ORDER BY w.folder = ANY(%(first)s) DESC, w.at DESC, w.page_id",
        {
            **params,
            "scope": scope_list(folders),
            "first": list(first_folders),
            "limit": limit,
            "field": field,
        },
    ).fetchall()
    return [PageChange(*row) for row in rows]


def events(
    conn: psycopg.Connection[Any],
    since: Since,
    folders: Collection[str] | None,
    kinds: Sequence[str],
    limit: int = 100,
) -> list[EventChange]:
    """Conflict or review rows whose state changed in the window, newest first."""
    where, params = since.where()
    rows = conn.execute(
        f"SELECT kind, at, ref, page_id FROM changes WHERE {where} AND kind = ANY(%(kinds)s)"
        " AND (%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s))"
        " ORDER BY id DESC LIMIT %(limit)s",
        {**params, "kinds": list(kinds), "scope": scope_list(folders), "limit": limit},
    ).fetchall()
    return [EventChange(*row) for row in rows]


def active_subjects(
    conn: psycopg.Connection[Any], since: Since, folders: Collection[str] | None, limit: int = 5
) -> list[Subject]:
    """The pages with the most activity in the window: their own writes plus the links
    to them from the pages written (both ends in ``folders``; a page linking twice, as
    attendee and decider, counts twice)."""
    where, params = since.where()
    rows = conn.execute(
        "WITH changed AS (SELECT page_id, count(*) AS n FROM changes"
        f"  WHERE {where} AND kind = 'page'"
        "   AND (%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s)) GROUP BY page_id),"
        " mentioned AS (SELECT l.to_id AS page_id, count(*) AS n"
        "  FROM links l JOIN changed c ON c.page_id = l.from_id"
        "  WHERE l.to_id IS NOT NULL AND l.to_id <> l.from_id AND (%(scope)s::text[] IS NULL"
        "   OR split_part(l.to_id, '/', 1) = ANY(%(scope)s)) GROUP BY l.to_id),"
        " top AS (SELECT page_id, sum(w) AS writes, sum(m) AS mentions FROM ("
        "   SELECT page_id, n AS w, 0 AS m FROM changed"
        "   UNION ALL SELECT page_id, 0, n FROM mentioned) a GROUP BY page_id"
        "  HAVING sum(w) + sum(m) > 1"
        "  ORDER BY sum(m) + sum(w) DESC, sum(m) DESC, page_id LIMIT %(limit)s)"
        " SELECT t.page_id, p.folder, p.title, t.writes, t.mentions"
        " FROM top t JOIN pages p ON p.id = t.page_id"
        " ORDER BY t.mentions + t.writes DESC, t.mentions DESC, t.page_id",
        {**params, "scope": scope_list(folders), "limit": limit},
    ).fetchall()
    return [Subject(str(p), str(f), str(t), int(w), int(m)) for p, f, t, w, m in rows]


def waiting(conn: psycopg.Connection[Any], folders: Collection[str] | None) -> dict[str, int]:
    """How many conflicts are open and how many flagged changes wait, in ``folders``."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM conflicts WHERE status = 'unresolved'"
        "   AND (%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s))),"
        " (SELECT count(*) FROM page_reviews WHERE status = 'pending'"
        "   AND (%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s)))",
        {"scope": scope_list(folders)},
    ).fetchone()
    assert row is not None
    return {"open_conflicts": int(row[0]), "waiting_review": int(row[1])}
