"""``memserver up``'s ingest progress: the memory server's ``IngestProgress`` drawn with
the terminal's ``NoteProgress``, and the background embedder's vectors with its
``EmbeddingProgress`` (``memserver.terminal.progress``)."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable

from memserver.server.ingest_progress import IngestEvent, IngestProgress
from memserver.terminal.progress import EmbeddingProgress, NoteDone, NoteProgress

EMBEDDING_READ_SECONDS = 5.0  # how often the index's waiting vectors are counted
EMBEDDING_LINE_SECONDS = 15.0  # how often a line says how embedding goes


class UpProgress:
    """``memserver up``'s view of the ingest agent at work, in its own process.

    The pipeline tools feed ``IngestProgress`` (``memserver.server.ingest_progress``) in
    the server's threads; its events wait in a queue until the supervisor's loop calls
    ``poll`` (every half second), which draws them with a ``NoteProgress``. While the
    background embedder has work, ``embedding_counts`` (vectors written, vectors waiting)
    is read every ``EMBEDDING_READ_SECONDS`` and a line says how it goes (vectors done /
    total, rate, time left) every ``EMBEDDING_LINE_SECONDS``. A line also says when the
    background embedder has caught up (every text has its vector), once while no ingest
    run is going on and then after each run.
    """

    def __init__(
        self,
        ingest: IngestProgress,
        display: NoteProgress,
        embedding_pending: Callable[[], bool] = lambda: False,
        embedding_counts: Callable[[], tuple[int, int] | None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.display = display
        self.ingest = ingest
        self._events: queue.SimpleQueue[IngestEvent] = queue.SimpleQueue()
        self._unsubscribe = ingest.subscribe(self._events.put)
        self._embedding_pending = embedding_pending
        self._embedding_counts = embedding_counts
        self.vectors = EmbeddingProgress(
            display.out, say=display.say, every=EMBEDDING_LINE_SECONDS, clock=clock
        )
        self._clock = clock
        self._counted: float | None = None
        self._announce = True  # the next time nothing is pending, say so
        self._started = clock()

    def poll(self) -> None:
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            self._show(event)
        pending = self._embedding_pending()
        if pending:
            self._count_vectors()
        if self._announce and not self.ingest.status().running and not pending:
            self._announce = False
            seconds = self._clock() - self._started
            self.display.say(
                f"search vectors: every text embedded ({seconds:.0f}s after start)",
                event="vectors_done",
                seconds=round(seconds, 3),
            )

    def _count_vectors(self) -> None:
        now = self._clock()
        if self._counted is not None and now - self._counted < EMBEDDING_READ_SECONDS:
            return
        self._counted = now
        counts = self._embedding_counts()
        if counts is not None:
            self.vectors.update(*counts)

    def _show(self, event: IngestEvent) -> None:
        status = event.status
        if event.kind == "listed":
            self.display.start(status.waiting + self.display.done, self.display.done)
        elif event.kind == "reading" and event.path is not None:
            if not self.display.running:
                self.display.start(status.waiting, 0)
            self.display.reading(event.path)
        elif event.kind == "finished" and event.path is not None:
            outcome = event.outcome or "ingested"
            self.display.finished(NoteDone(event.path, outcome, len(event.pages), event.error))
        elif event.kind == "done":
            self.display.end(f" ({status.summary(named=True)})", failures=status.failures)
            self._announce = True

    def close(self) -> None:
        self._unsubscribe()
        self.display.close()
