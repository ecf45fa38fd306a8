"""Errors of the ingest agent, on top of the memory system hierarchy (memserver.errors).

::

    MemoryError_
    ├── UserError
    │   └── IngestUsageError     a bad command line (--file outside source/, --watch 0s ...)
    ├── LLMError
    │   └── LLMUnusable
    │       └── ExtractionError  the model's answer is unusable after one retry
    ├── UserError
    │   └── ServerSetupError     the memory server is set up wrong (every note would fail)
    ├── ServerUnavailable        the memory server cannot reach its database right now
    └── ServerUnreachable        the memory server could not be reached, try after try
    SourceFailed                 one source cannot be ingested; the run goes on

``SourceFailed`` carries the one-line reason written to the manifest (``source_mark
failed``); it is raised for anything that stops one source (an unusable model answer, a
page the server keeps rejecting, a tool error) but never for what stops the whole run
(``BudgetExceeded``, a refused token, an unreachable server). ``ServerUnavailable``
ends a pass early and leaves its sources queued: ``--watch`` tries again next interval.
``ServerSetupError`` stops the run with the server's message and marks nothing failed.
"""

from __future__ import annotations

from memserver.errors import LLMUnusable, MemoryError_, UserError


class IngestUsageError(UserError):
    """The command line asks for something impossible; the message says what to pass."""


class ExtractionError(LLMUnusable):
    """The model's extraction or merge answer stayed unusable after one retry.

    ``problems`` lists everything wrong with the last answer (not JSON, an unknown
    folder or field, ...), so the failure reason in the manifest is specific.
    """

    def __init__(self, task: str, problems: list[str]) -> None:
        self.task = task
        self.problems = tuple(problems)
        shown = "; ".join(problems[:5]) + (
            f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        )
        super().__init__(
            f"the model's {task} answer was unusable twice: {shown}",
            "check the model (it must follow JSON instructions) or use a stronger one",
        )


class SourceFailed(MemoryError_):
    """One source could not be ingested; ``reason`` goes into the manifest."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = " ".join(reason.split())[:2000]
        super().__init__(f"{path}: {self.reason}")


class ServerUnavailable(MemoryError_):
    """The memory server answered that its database is unavailable; nothing is marked."""


class ServerSetupError(UserError):
    """The memory server is set up wrong (a ``setup`` tool error, e.g. the embedding model
    changed): every note would fail the same way, so the run stops and marks none."""

    def __init__(self, message: str) -> None:
        super().__init__(
            f"the memory server cannot ingest anything: {message}",
            "no note was marked failed; fix the server, then run the agent again",
        )


class ServerUnreachable(MemoryError_):
    """A pass could not reach the memory server (or its database), ``attempts`` times."""

    def __init__(self, where: str, reason: str, attempts: int) -> None:
        super().__init__(
            f"cannot reach the memory server at {where} after {attempts} tries ({reason})",
            "check that it is running (memserver serve, or make up) and that --url or "
            "MEMORY_URL points at it; the notes not yet ingested stay pending",
        )
