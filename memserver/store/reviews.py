"""What waits for a person: changes flagged for review, facts in conflict, open questions.

A *flagged change* is a page version written with ``put_page(..., review=<why>)``: it is
the page's content (nothing waits or is lost) and it is listed in ``page_reviews`` until
someone decides (``accepted``, ``rejected`` or ``edited``; the web console writes the
page for the last two, through the same guarded put, and records the result version).
*Conflicts* are the ``conflicts`` rows the ingest merge recorded (``unresolved``: two
sources disagree; ``superseded``: a newer fact replaced an older one); resolving one
marks it ``resolved``. *Open questions* are read off the pages' ``## Open Questions``.

Scope: every read takes ``folders`` (None = all) and an out-of-scope row behaves exactly
like a missing one. Database errors become StoreError here.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg

from memserver.errors import NotFoundError, UserError
from memserver.kb.page import parse_page

if TYPE_CHECKING:
    from memserver.db.database import Database
    from memserver.store.records import PageWrite

DECISIONS = ("accepted", "rejected", "edited")
HELD_NOTE = "review:"  # a held change's note (memserver.store.held): only a person settles it
REVIEW_COLUMNS = (
    "r.id, r.page_id, r.folder, r.version, r.base_version, r.reason, r.flagged_by,"
    " r.created_at, r.status, r.decided_by, r.decided_at, r.result_version,"
    " coalesce(p.title, r.page_id), p.version"
)  # a Review, from page_reviews r LEFT JOIN pages p
CONFLICT_COLUMNS = (
    "c.id, c.page_id, c.folder, c.field, c.old_value, c.new_value, c.old_source,"
    " c.new_source, c.status, c.created_at, coalesce(p.title, c.page_id), c.note, p.version"
)  # a Conflict, from conflicts c LEFT JOIN pages p


@dataclass(frozen=True)
class Review:
    """One flagged change and, once decided, what was decided."""

    id: int
    page_id: str
    folder: str
    version: int  # the flagged version
    base_version: int | None  # the version it replaced (None: it created the page)
    reason: str
    flagged_by: str
    created_at: dt.datetime
    status: str  # pending, accepted, rejected, edited
    decided_by: str | None
    decided_at: dt.datetime | None
    result_version: int | None
    title: str
    current_version: int | None  # the page's version now (None: not in the index)

    @property
    def stale(self) -> bool:
        """The page changed again after the flagged version."""
        return self.current_version != self.version


@dataclass(frozen=True)
class Conflict:
    id: int
    page_id: str
    folder: str
    field: str
    old_value: Any
    new_value: Any
    old_source: str | None
    new_source: str | None
    status: str
    created_at: dt.datetime
    title: str
    note: str | None = None  # why (e.g. the change the ingest agent held back for review)
    page_version: int | None = None  # the page's version now (None: not in the index)


@dataclass(frozen=True)
class OpenQuestions:
    page_id: str
    folder: str
    title: str
    version: int
    questions: tuple[str, ...]


def flag_for_review(
    conn: psycopg.Connection[Any],
    page_id: str,
    folder: str,
    version: int,
    base_version: int | None,
    write: PageWrite,
) -> None:
    """List a version just written for review (inside the write's transaction)."""
    conn.execute(
        "INSERT INTO page_reviews (page_id, folder, version, base_version, reason, flagged_by)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        (page_id, folder, version, base_version, write.review, write.written_by),
    )


def pending_reviews(
    conn: psycopg.Connection[Any], folders: Collection[str] | None, limit: int = 100
) -> list[Review]:
    """Flagged changes nobody has decided yet in ``folders``, oldest first."""
    rows = conn.execute(
        f"SELECT {REVIEW_COLUMNS} FROM page_reviews r LEFT JOIN pages p ON p.id = r.page_id"
        " WHERE r.status = 'pending'"
        " AND (%(scope)s::text[] IS NULL OR r.folder = ANY(%(scope)s))"
        " ORDER BY r.created_at, r.id LIMIT %(limit)s",
        {"scope": scope_list(folders), "limit": limit},
    ).fetchall()
    return [Review(*row) for row in rows]


def conflicts_in(
    conn: psycopg.Connection[Any],
    folders: Collection[str] | None,
    status: Sequence[str] = ("unresolved",),
    limit: int = 100,
) -> list[Conflict]:
    """Conflicts with these statuses in ``folders``, newest first."""
    rows = conn.execute(
        f"SELECT {CONFLICT_COLUMNS} FROM conflicts c LEFT JOIN pages p ON p.id = c.page_id"
        " WHERE c.status = ANY(%(status)s)"
        " AND (%(scope)s::text[] IS NULL OR c.folder = ANY(%(scope)s))"
        " ORDER BY c.created_at DESC, c.id DESC LIMIT %(limit)s",
        {"status": list(status), "scope": scope_list(folders), "limit": limit},
    ).fetchall()
    return [Conflict(*row) for row in rows]


def conflicts_with_ids(conn: psycopg.Connection[Any], ids: Collection[int]) -> list[Conflict]:
    """These conflicts rows (whatever their status), by id; the caller scoped the ids."""
    rows = conn.execute(
        f"SELECT {CONFLICT_COLUMNS} FROM conflicts c LEFT JOIN pages p ON p.id = c.page_id"
        " WHERE c.id = ANY(%s) ORDER BY c.id",
        (sorted(ids),),
    ).fetchall()
    return [Conflict(*row) for row in rows]


def reviews_with_ids(conn: psycopg.Connection[Any], ids: Collection[int]) -> list[Review]:
    """These flagged changes (whatever their status), by id; the caller scoped the ids."""
    rows = conn.execute(
        f"SELECT {REVIEW_COLUMNS} FROM page_reviews r LEFT JOIN pages p ON p.id = r.page_id"
        " WHERE r.id = ANY(%s) ORDER BY r.id",
        (sorted(ids),),
    ).fetchall()
    return [Review(*row) for row in rows]


def settle_open(
    conn: psycopg.Connection[Any], page_id: str, field: str, source: str | None, value: Any
) -> None:
    """Close the field's open conflicts (not a change held for review): a later source
    stated its value (inside the write's transaction). The rows stay, as history."""
    shown = json.dumps(value, ensure_ascii=False, default=str)
    conn.execute(
        "UPDATE conflicts SET status = 'resolved', resolved_at = now(),"
        " note = coalesce(note, '') || %(why)s"
        " WHERE page_id = %(page)s AND field = %(field)s AND status = 'unresolved'"
        " AND coalesce(note, '') NOT LIKE %(held)s",
        {
            "page": page_id,
            "field": field,
            "why": f" [settled by {source or 'a later source'}: {shown}]",
            "held": f"{HELD_NOTE}%",
        },
    )


class Reviews:
    """The review queue, conflicts and open questions of one knowledge base's index."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- flagged changes ------------------------------------------------------------

    def pending(self, folders: Collection[str] | None, limit: int = 100) -> list[Review]:
        """Flagged changes nobody has decided yet, oldest first."""
        with self.db.checked("read the review lists") as conn:
            return pending_reviews(conn, folders, limit)

    def get(self, review_id: int, folders: Collection[str] | None) -> Review:
        rows = self._run(
            f"SELECT {REVIEW_COLUMNS} FROM page_reviews r LEFT JOIN pages p ON p.id = r.page_id"
            " WHERE r.id = %(id)s AND (%(scope)s::text[] IS NULL OR r.folder = ANY(%(scope)s))",
            {"id": review_id, "scope": scope_list(folders)},
        )
        if not rows:
            raise NotFoundError(f"no flagged change {review_id}", "open the review list again")
        return Review(*rows[0])

    def decide(
        self,
        review_id: int,
        status: str,
        *,
        by: str,
        folders: Collection[str] | None,
        result_version: int | None = None,
    ) -> Review:
        """Record a decision on a pending change (UserError if it was already decided)."""
        if status not in DECISIONS:
            raise UserError(f"{status!r} is not a decision", f"use one of {', '.join(DECISIONS)}")
        current = self.get(review_id, folders)
        rows = self._run(
            "UPDATE page_reviews SET status = %s, decided_by = %s, decided_at = now(),"
            " result_version = %s WHERE id = %s AND status = 'pending' RETURNING id",
            (status, by, result_version, review_id),
        )
        if not rows:
            raise UserError(
                f"the change to {current.page_id} (version {current.version}) was already "
                f"{current.status} by {current.decided_by or 'someone'}",
                "reload the review list",
            )
        return self.get(review_id, folders)

    # -- conflicts ------------------------------------------------------------------

    def conflicts(
        self,
        folders: Collection[str] | None,
        status: Sequence[str] = ("unresolved",),
        limit: int = 100,
    ) -> list[Conflict]:
        """Conflicts with these statuses, newest first."""
        with self.db.checked("read the review lists") as conn:
            return conflicts_in(conn, folders, status, limit)

    def resolve_conflict(
        self, conflict_id: int, *, note: str, folders: Collection[str] | None
    ) -> None:
        rows = self._run(
            "UPDATE conflicts SET status = 'resolved', note = %(note)s, resolved_at = now()"
            " WHERE id = %(id)s AND status <> 'resolved'"
            " AND (%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s)) RETURNING id",
            {"id": conflict_id, "note": note, "scope": scope_list(folders)},
        )
        if not rows:
            raise NotFoundError(
                f"no open conflict {conflict_id}", "it may have been resolved; reload the list"
            )

    def conflict(self, conflict_id: int, folders: Collection[str] | None) -> Conflict:
        """One conflicts row, whatever its status (NotFoundError if missing or out of scope)."""
        rows = self._run(
            f"SELECT {CONFLICT_COLUMNS} FROM conflicts c LEFT JOIN pages p ON p.id = c.page_id"
            " WHERE c.id = %(id)s"
            " AND (%(scope)s::text[] IS NULL OR c.folder = ANY(%(scope)s))",
            {"id": conflict_id, "scope": scope_list(folders)},
        )
        if not rows:
            raise NotFoundError(f"no conflict {conflict_id}", "open the review list again")
        return Conflict(*rows[0])

    def open_notes(self, page_id: str, *, besides: int) -> set[str]:
        """The notes of the page's other unresolved rows (held changes share questions)."""
        rows = self._run(
            "SELECT note FROM conflicts WHERE page_id = %s AND status = 'unresolved'"
            " AND id <> %s AND note IS NOT NULL",
            (page_id, besides),
        )
        return {str(row[0]) for row in rows}

    def settle_held(
        self,
        conflict_id: int,
        decision: str,
        *,
        by: str,
        folders: Collection[str] | None,
        version: int | None = None,
    ) -> None:
        """Mark a held change resolved, its note saying who ``decision`` (accepted or
        rejected) it and the version that records it; UserError if already decided."""
        where = f" in version {version}" if version is not None else ""
        rows = self._run(
            "UPDATE conflicts SET status = 'resolved', resolved_at = now(),"
            " note = coalesce(note, '') || %(why)s"
            " WHERE id = %(id)s AND status = 'unresolved'"
            " AND (%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s)) RETURNING id",
            {
                "id": conflict_id,
                "why": f" [{decision} by {by}{where}]",
                "scope": scope_list(folders),
            },
        )
        if not rows:
            raise UserError(
                f"the held change {conflict_id} was already decided", "reload the review list"
            )

    # -- open questions -------------------------------------------------------------

    def open_questions(
        self, folders: Collection[str] | None, limit: int = 100
    ) -> list[OpenQuestions]:
        """Pages with an ``## Open Questions`` section, most recently updated first."""
        rows = self._run(
            "SELECT id, folder, title, version, body FROM pages"
            " WHERE body LIKE %(marker)s"
            " AND (%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s))"
            " ORDER BY updated_at DESC, id LIMIT %(limit)s",
            {"marker": "%\n## Open Questions\n%", "scope": scope_list(folders), "limit": limit},
        )
        out = []
        for page_id, folder, title, version, body in rows:
            questions = parse_page(body, source=page_id).open_questions
            if questions:
                out.append(OpenQuestions(page_id, folder, title, version, tuple(questions)))
        return out

    # -- internals ------------------------------------------------------------------

    def _run(self, query: str, params: Any) -> list[tuple[Any, ...]]:
        with self.db.checked("read or update the review lists") as conn:
            return conn.execute(query, params).fetchall()


def scope_list(folders: Collection[str] | None) -> list[str] | None:
    """``folders`` as a query parameter (None: every folder)."""
    return None if folders is None else sorted(folders)
