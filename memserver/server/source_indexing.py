"""The source index follows each scan of ``source/``, large notes off the calling thread.

``source_pending`` rescans ``source/`` and the source index must follow (a new note is
searchable with ``include_sources``). Chunking and indexing a small note takes
milliseconds and is done in the call; a note of megabytes (tens of thousands of
sentences) took a minute, so when a waiting note is larger than ``BACKGROUND_BYTES``, or
an indexing run is already going on, the scan is indexed by one background thread and
the call returns at once, saying so. Scans that arrive meanwhile are coalesced: the
thread indexes the newest one next (each scan lists every source, so nothing is lost).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from memserver.kb.manifest import Manifest, SourceEntry

logger = logging.getLogger(__name__)

BACKGROUND_BYTES = 256 * 1024

Index = Callable[[Sequence[SourceEntry]], None]


class SourceIndexer:
    """Indexes scans in the call or in one background thread (module docstring)."""

    def __init__(self, background_bytes: int = BACKGROUND_BYTES) -> None:
        self.background_bytes = background_bytes
        self._lock = threading.Lock()
        self._next: Sequence[SourceEntry] | None = None
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()
        self._idle.set()

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    def follow(self, entries: Sequence[SourceEntry], index: Index) -> bool:
        """Index ``entries`` (a whole scan); True when that goes on in the background."""
        large = any(e.size > self.background_bytes for e in Manifest.waiting(entries))
        with self._lock:
            if not large and self._thread is None:
                inline = True
            else:
                inline = False
                self._next = entries
                if self._thread is None:
                    self._idle.clear()
                    self._thread = threading.Thread(
                        target=self._run, args=(index,), name="source-index", daemon=True
                    )
                    self._thread.start()
        if inline:
            index(entries)
        return not inline

    def wait(self, timeout: float) -> bool:
        """Block until no background run is left, at most ``timeout`` s; whether it ended."""
        return self._idle.wait(timeout)

    def _run(self, index: Index) -> None:
        while True:
            with self._lock:
                entries, self._next = self._next, None
                if entries is None:
                    self._thread = None
                    self._idle.set()
                    return
            try:
                index(entries)
            except Exception:  # the thread must go on to the next scan and end cleanly
                logger.exception("indexing the scanned sources failed")
