"""The append-only audit log of tool calls.

Every MCP tool call appends one JSON line to ``<kb>/.memserver/audit.jsonl``: the time,
the token's name, the tool, a SHA-256 digest of the canonical JSON arguments (the
arguments themselves may be private, the digest still lets an admin match repeated
calls), the outcome (``ok`` or ``error:<kind>``) and the duration. Each line is
written with a single ``write`` on a file opened with ``O_APPEND``, so several server
processes (an HTTP server and stdio servers) can share the log without interleaving.
A token's *last used* time is read from here.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AUDIT_FILE = "audit.jsonl"


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

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> AuditEntry:
        return cls(
            time=dt.datetime.fromisoformat(item["time"]),
            token=str(item["token"]),
            tool=str(item["tool"]),
            args_sha256=str(item["args_sha256"]),
            outcome=str(item["outcome"]),
            duration_ms=float(item["duration_ms"]),
        )


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


class AuditLog:
    """Append and query the audit log of one knowledge base."""

    def __init__(self, state_dir: Path | str) -> None:
        self.path = Path(state_dir) / AUDIT_FILE
        self._lock = threading.Lock()
        self._fd: int | None = None

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
        entry = AuditEntry(
            time=time or dt.datetime.now(dt.UTC),
            token=token,
            tool=tool,
            args_sha256=digest_arguments(arguments),
            outcome=outcome,
            duration_ms=duration_ms,
        )
        self.append(entry)
        return entry

    def append(self, entry: AuditEntry) -> None:
        line = (json.dumps(entry.as_dict(), ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(self._fd, line)

    def entries(self) -> Iterator[AuditEntry]:
        """Every row, oldest first; a torn or foreign line is skipped."""
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    yield AuditEntry.from_dict(json.loads(line))
                except (ValueError, KeyError, TypeError):
                    continue

    def query(
        self,
        *,
        since: dt.datetime | None = None,
        token: str | None = None,
        tool: str | None = None,
        limit: int | None = None,
    ) -> list[AuditEntry]:
        """Rows matching the filters, oldest first; ``limit`` keeps the newest ones."""
        rows = [
            e
            for e in self.entries()
            if (since is None or e.time >= since)
            and (token is None or e.token == token)
            and (tool is None or e.tool == tool)
        ]
        return rows[max(len(rows) - limit, 0) :] if limit is not None else rows

    def last_used(self) -> dict[str, dt.datetime]:
        """Token name -> time of its newest call."""
        last: dict[str, dt.datetime] = {}
        for entry in self.entries():
            seen = last.get(entry.token)
            if seen is None or entry.time > seen:
                last[entry.token] = entry.time
        return last

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
