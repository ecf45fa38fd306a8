"""The append-only audit log of tool calls.

Every MCP tool call appends one row to the ``audit_log`` table of the index database:
the time, the token's name, the tool, a SHA-256 digest of the canonical JSON arguments
(the arguments themselves may be private, the digest still lets an admin match repeated
calls), the outcome (``ok`` or ``error:<kind>``) and the duration. A row is one INSERT on
the pool, committed asynchronously (see ``append``), so several server processes (an HTTP
server and stdio servers) share the log and a call waits ~0.1 ms for its row.
There is no UPDATE or DELETE here, and the database refuses both (migration 002).

A token's *last used* time is the newest row with its name: ``max(created_at)`` over
the ``(token_name, created_at)`` index. Database errors become StoreError here.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

if TYPE_CHECKING:
    from memserver.db.database import Database

_COLUMNS = "created_at, token_name, tool, args_digest, outcome, duration_ms"


@dataclass(frozen=True)
class AuditEntry:
    """One tool call."""

    time: dt.datetime
    token: str
    tool: str
    args_sha256: str
    outcome: str  # "ok" or "error:<kind>"
    duration_ms: float

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": self.time.isoformat(),
            "token": self.token,
            "tool": self.tool,
            "args_sha256": self.args_sha256,
            "outcome": self.outcome,
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass(frozen=True)
class UseWindow:
    """A token's lifetime, for :meth:`AuditLog.last_used_during` (``end`` None = open)."""

    name: str
    start: dt.datetime
    end: dt.datetime | None = None


def digest_arguments(arguments: Mapping[str, Any] | None) -> str:
    """SHA-256 of the arguments as canonical JSON (sorted keys, no spaces, UTF-8)."""
    canonical = json.dumps(
        dict(arguments or {}),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def make_entry(
    token: str,
    tool: str,
    arguments: Mapping[str, Any] | None,
    outcome: str,
    duration_ms: float,
    *,
    time: dt.datetime | None = None,
) -> AuditEntry:
    """The row of a finished tool call (its arguments kept only as a digest)."""
    return AuditEntry(
        time=time or dt.datetime.now(dt.UTC),
        token=token,
        tool=tool,
        args_sha256=digest_arguments(arguments),
        outcome=outcome,
        duration_ms=duration_ms,
    )


class AuditLog:
    """Append to and query the audit log in a knowledge base's index database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self,
        token: str,
        tool: str,
        arguments: Mapping[str, Any] | None,
        outcome: str,
        duration_ms: float,
        *,
        time: dt.datetime | None = None,
    ) -> AuditEntry:
        """Append one row for a finished tool call and return it."""
        entry = make_entry(token, tool, arguments, outcome, duration_ms, time=time)
        self.append(entry)
        return entry

    def append(self, entry: AuditEntry) -> None:
        self.append_many([entry])

    def append_many(self, entries: Sequence[AuditEntry]) -> None:
        """Rows in one transaction, sent with one round trip (a pipeline: the SET, the
        INSERTs and the commit; ``memserver.server.audit_writer`` gathers concurrent
        calls' rows into one such batch)."""
        with self._connection() as conn, conn.pipeline():
            # Waiting for the WAL flush would add ~4 ms to every tool call (measured); an
            # asynchronous commit returns at once and loses a row only if PostgreSQL
            # itself crashes within ~0.6 s (wal_writer_delay x 3), never on our crash.
            conn.execute("SET LOCAL synchronous_commit = off")
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO audit_log ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)",
                    [
                        (e.time, e.token, e.tool, e.args_sha256, e.outcome, e.duration_ms)
                        for e in entries
                    ],
                )
            conn.commit()

    def query(
        self,
        *,
        since: dt.datetime | None = None,
        token: str | None = None,
        tool: str | None = None,
        outcome: str | None = None,
        until: dt.datetime | None = None,
        limit: int | None = None,
    ) -> list[AuditEntry]:
        """Rows matching the filters, oldest first; ``limit`` keeps the newest ones.

        ``outcome`` is ``ok``, ``error`` (any error) or one ``error:<kind>``; ``until``
        is exclusive."""
        errors = outcome == "error"
        filters = (
            ("created_at >= %(since)s", since),
            ("created_at < %(until)s", until),
            ("token_name = %(token)s", token),
            ("tool = %(tool)s", tool),
            ("outcome LIKE 'error:%%'" if errors else "outcome = %(outcome)s", outcome),
        )
        where = [sql.SQL(text) for text, value in filters if value is not None]
        params = {
            "since": since,
            "until": until,
            "token": token,
            "tool": tool,
            "outcome": outcome,
            "limit": limit,
        }
        rows = self._run(
            sql.SQL(
                "SELECT {} FROM audit_log WHERE {} ORDER BY created_at DESC, id DESC"
                " LIMIT %(limit)s"
            ).format(sql.SQL(_COLUMNS), sql.SQL(" AND ").join(where or [sql.SQL("true")])),
            params,
        )
        return [_entry_from_row(row) for row in reversed(rows)]

    def entries(self) -> Iterator[AuditEntry]:
        """Every row, oldest first."""
        yield from self.query()

    def last_used(self) -> dict[str, dt.datetime]:
        """Token name -> time of its newest call."""
        rows = self._run(
            "SELECT token_name, max(created_at) FROM audit_log"
            " WHERE token_name IS NOT NULL GROUP BY token_name"
        )
        return {name: _utc(time) for name, time in rows}

    def last_used_during(self, windows: Sequence[UseWindow]) -> list[dt.datetime | None]:
        """For each window, the newest call by its token name within it (or None).

        A revoked token's name can be given to a new token, so ``token list`` asks per
        token lifetime. One index probe per window (``audit_log_token``).
        """
        if not windows:
            return []
        rows = self._run(
            "SELECT (SELECT max(a.created_at) FROM audit_log a"
            "        WHERE a.token_name = w.name AND a.created_at >= w.start"
            "        AND (w.stop IS NULL OR a.created_at <= w.stop))"
            " FROM unnest(%s::text[], %s::timestamptz[], %s::timestamptz[])"
            " WITH ORDINALITY AS w(name, start, stop, n) ORDER BY w.n",
            (
                [w.name for w in windows],
                [w.start for w in windows],
                [w.end for w in windows],
            ),
        )
        return [_utc(time) if time is not None else None for (time,) in rows]

    def _run(
        self, query: str | sql.Composed, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[tuple[Any, ...]]:
        with self._connection() as conn:
            return conn.execute(query, params).fetchall()

    def _connection(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A pooled connection (committed on success); database errors become StoreError."""
        return self.db.checked("use the audit log")


def _utc(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.UTC)


def _entry_from_row(row: Sequence[Any]) -> AuditEntry:
    time, token, tool, digest, outcome, duration_ms = row
    return AuditEntry(
        time=_utc(time),
        token=token or "",
        tool=tool,
        args_sha256=digest,
        outcome=outcome,
        duration_ms=float(duration_ms),
    )
