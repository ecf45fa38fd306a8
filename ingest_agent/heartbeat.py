"""``ingest-agent --watch --heartbeat FILE``: a file touched while the agent works.

Touched when a pass starts and ends and when each note finishes, so a container's
healthcheck can tell a live watch loop from a stuck one by the file's age (the compose
stack's ``ingest-agent`` service does). It wraps the run's other observer, if any.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ingest_agent.agent import RunObserver
    from ingest_agent.records import SourceOutcome


class Heartbeat:
    """A ``RunObserver`` touching ``path`` on every event, then telling ``inner``."""

    def __init__(self, path: Path, inner: RunObserver | None = None) -> None:
        self.path = path
        self.inner = inner

    def beat(self) -> None:
        with contextlib.suppress(OSError):  # a full or read-only disk must not stop ingestion
            self.path.touch()

    def started(self, total: int) -> None:
        self.beat()
        if self.inner is not None:
            self.inner.started(total)

    def reading(self, path: str) -> None:
        if self.inner is not None:
            self.inner.reading(path)

    def finished(self, outcome: SourceOutcome) -> None:
        self.beat()
        if self.inner is not None:
            self.inner.finished(outcome)
