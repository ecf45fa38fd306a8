"""Whether an ingest run is going on, as the server sees it through the pipeline tools.

The ledger (``manifest.json``) says what is done; this says whether someone is doing
the rest. A run is *in progress* while the ledger has notes waiting (pending or
updated) and a pipeline client (the ingest agent) has called ``source_pending``,
``source_read`` or ``source_mark`` within ``IDLE_SECONDS``: a server without an ingest
agent, or whose agent died, is not "ingesting" however many notes wait. Search results
say so while it is (``degraded: ["ingest_in_progress"]`` and the counts, see
``memserver.server.tools.search``), so "no pages" during the first minutes of ``up``
reads "12/28 notes ingested" instead.

Listeners (``memserver up``'s progress display) get an ``IngestEvent`` for every note
read and finished, and one when the ledger has nothing left waiting. They are called in
the tool's thread and must only hand the event on (a queue).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memserver.terminal.progress import failure_line

IDLE_SECONDS = 300.0  # longer than one note takes with a slow model (extraction, merge)
INGEST_IN_PROGRESS = "ingest_in_progress"
_WAITING = ("pending", "updated")


@dataclass(frozen=True)
class IngestStatus:
    """The ledger's counts, and whether a run is going on."""

    running: bool = False
    ingested: int = 0
    failed: int = 0
    waiting: int = 0
    total: int = 0  # every source not removed
    current: str | None = None  # the note being read last
    failures: tuple[tuple[str, str], ...] = ()  # (path, why) of every failed note

    def as_dict(self) -> dict[str, Any]:
        return {
            "running": self.running,
            "ingested": self.ingested,
            "failed": self.failed,
            "waiting": self.waiting,
            "total": self.total,
            "current": self.current,
            "failures": [{"path": p, "error": e} for p, e in self.failures],
        }

    def summary(self, named: bool = False) -> str:
        """``12/28 notes ingested`` (with the failures, when there are any; ``named``: each
        failed note with its reason, as ``up`` ends a pass)."""
        failed = f", {self.failed} failed" if self.failed else ""
        if named and self.failures:
            failed += ": " + "; ".join(failure_line(p, e) for p, e in self.failures)
        return f"{self.ingested}/{self.total} notes ingested{failed}"


@dataclass(frozen=True)
class IngestEvent:
    """``listed`` (a scan found notes waiting), ``reading`` a note, ``finished`` one
    (``outcome`` ingested, failed or reset), or ``done`` (nothing waits any more); with
    the ledger's counts after it."""

    kind: str
    status: IngestStatus
    path: str | None = None
    outcome: str | None = None  # finished: "ingested" or "failed"
    pages: tuple[str, ...] = ()
    error: str | None = None


Listener = Callable[[IngestEvent], None]


@dataclass
class IngestProgress:
    """Fed by the pipeline tools, read by searches and ``up`` (see the module docstring)."""

    idle_seconds: float = IDLE_SECONDS
    clock: Callable[[], float] = time.monotonic
    _counts: dict[str, int] = field(default_factory=dict)
    _current: str | None = None
    _failures: dict[str, str] = field(default_factory=dict)
    _active_at: float | None = None
    _listeners: list[Listener] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every event from now on; returns the unsubscribe."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    # -- fed by the pipeline tools -----------------------------------------------------

    def listed(self, counts: Mapping[str, int], failures: Mapping[str, str] | None = None) -> None:
        """``source_pending`` scanned the ledger: ``counts`` by status and the failed notes
        with their reasons (an event when notes wait)."""
        if failures is not None:
            with self._lock:
                self._failures = dict(failures)
        drained = self._update(counts)
        status = self.status()
        if status.waiting:
            self._emit(IngestEvent("listed", status))
        self._done(drained)

    def reading(self, path: str, counts: Mapping[str, int] | None = None) -> None:
        drained = self._update(counts, current=path)
        self._emit(IngestEvent("reading", self.status(), path=path))
        self._done(drained)

    def finished(
        self,
        path: str,
        outcome: str,
        counts: Mapping[str, int],
        *,
        pages: tuple[str, ...] = (),
        error: str | None = None,
    ) -> None:
        """``source_mark`` recorded a note as ingested or failed (or reset it)."""
        with self._lock:
            if outcome == "failed":
                self._failures[path] = error or "failed without a message"
            else:
                self._failures.pop(path, None)
        drained = self._update(counts)
        status = self.status()
        self._emit(
            IngestEvent("finished", status, path=path, outcome=outcome, pages=pages, error=error)
        )
        self._done(drained)

    # -- read by searches and up --------------------------------------------------------

    def status(self) -> IngestStatus:
        with self._lock:
            counts = dict(self._counts)
            current = self._current
            failures = tuple(sorted(self._failures.items()))
            active = self._active_at is not None and (
                self.clock() - self._active_at < self.idle_seconds
            )
        waiting = sum(counts.get(s, 0) for s in _WAITING)
        total = sum(n for s, n in counts.items() if s != "removed")
        return IngestStatus(
            running=active and waiting > 0,
            ingested=counts.get("ingested", 0),
            failed=counts.get("failed", 0),
            waiting=waiting,
            total=total,
            current=current if active and waiting > 0 else None,
            failures=failures,
        )

    # -- internals -----------------------------------------------------------------------

    def _update(self, counts: Mapping[str, int] | None, current: str | None = None) -> bool:
        """Record a call; whether it left nothing waiting where something waited."""
        with self._lock:
            was_waiting = sum(self._counts.get(s, 0) for s in _WAITING) > 0
            if counts is not None:
                self._counts = dict(counts)
            if current is not None:
                self._current = current
            self._active_at = self.clock()
            now_waiting = sum(self._counts.get(s, 0) for s in _WAITING) > 0
            if not now_waiting:
                self._current = None
        return was_waiting and not now_waiting

    def _done(self, drained: bool) -> None:
        if drained:
            self._emit(IngestEvent("done", self.status()))

    def _emit(self, event: IngestEvent) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(event)
