"""Ingest progress people can see, for ``memserver up`` and ``ingest-agent``.

On a terminal: a ``rich`` bar (notes done / total, the note being read, elapsed time,
time left) with one line printed above it per finished note. Elsewhere (a log file, a
pipe): the same line per note, written and flushed as the note finishes, and with
``json_lines`` one JSON object per line instead (``{"event": "note", ...}``, then
``{"event": "ingest_done", ...}``), for scripts. ``memserver.up.progress.UpProgress``
feeds one from the memory server's ``IngestProgress`` inside ``memserver up``.

Embedding progress (``EmbeddingProgress``): the vectors written and still to write, the
rate and the time left (``EmbeddingMeter``), as a ``rich`` bar on a terminal
(``memserver reindex``), else a line, or a JSON object (``{"event": "embedding", ...}``),
at most every ``every`` seconds and once when everything is embedded (``memserver up``,
whose lines go through its ``NoteProgress``).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any


def failure_line(path: str, error: str, limit: int = 240) -> str:
    """``path (why)``: a failed note and its reason on one line, cut to ``limit``
    characters (what ``up`` and the ingest agent end a pass with)."""
    why = " ".join(error.split())
    return f"{path} ({why[: limit - 1] + '…' if len(why) > limit else why})"


@dataclass(frozen=True)
class NoteDone:
    """One finished note: ``outcome`` ingested, failed (with ``error``) or anything else
    the ledger records."""

    path: str
    outcome: str
    pages: int = 0
    error: str | None = None
    seconds: float | None = None


class NoteProgress:
    """See the module docstring. Not thread-safe: feed it from one thread."""

    def __init__(
        self,
        out: IO[str],
        *,
        terminal: bool | None = None,
        json_lines: bool = False,
        label: str = "ingest",
    ) -> None:
        self.out = out
        self.json_lines = json_lines
        self.terminal = (out.isatty() if terminal is None else terminal) and not json_lines
        self.label = label
        self.done = 0
        self.total = 0
        self.counts: dict[str, int] = {}
        self._started: float | None = None
        self._reading: dict[str, float] = {}
        self._bar: Any = None
        self._task: Any = None

    @property
    def running(self) -> bool:
        return self._started is not None

    def start(self, total: int, done: int = 0) -> None:
        """A run of ``total`` notes begins (``done`` of them already finished)."""
        if self.running:
            self.total = max(total, self.done)
            if self._bar is not None:
                self._bar.update(self._task, total=self.total)
            return
        self.done, self.total, self.counts = done, total, {}
        self._started = time.monotonic()
        if self.terminal:
            from rich.progress import TextColumn

            self._bar = _rich_bar(
                self.out, self.label, tail=[TextColumn("{task.fields[current]}", markup=False)]
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=total, completed=done, current="")

    def reading(self, path: str) -> None:
        """The note now being worked on."""
        self._reading[path] = time.monotonic()
        if self._bar is not None:
            self._bar.update(self._task, current=path)

    def finished(self, note: NoteDone) -> None:
        """One line for a finished note, now."""
        if not self.running:
            self.start(max(self.total, self.done + 1), self.done)
        began = self._reading.pop(note.path, None)
        seconds = note.seconds
        if seconds is None and began is not None:
            seconds = time.monotonic() - began
        self.done += 1
        self.total = max(self.total, self.done)
        self.counts[note.outcome] = self.counts.get(note.outcome, 0) + 1
        if self.json_lines:
            self._json(
                event="note",
                path=note.path,
                status=note.outcome,
                pages=note.pages,
                error=note.error,
                seconds=None if seconds is None else round(seconds, 3),
                done=self.done,
                total=self.total,
            )
            return
        self._line(self.note_line(note, seconds))
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, total=self.total, current="")

    def note_line(self, note: NoteDone, seconds: float | None) -> str:
        took = f" ({seconds:.1f}s)" if seconds is not None else ""
        count = f"{self.done}/{self.total}"
        if note.outcome == "failed":
            why = " ".join((note.error or "no reason given").split())  # one line, always
            return f"failed    {count:>7}  {note.path}: {why}{took}"
        pages = f" -> {note.pages} page(s)" if note.outcome == "ingested" else ""
        return f"{note.outcome:<9} {count:>7}  {note.path}{pages}{took}"

    def end(self, extra: str = "", failures: Sequence[tuple[str, str]] = ()) -> None:
        """The run is over: the bar goes, one summary line stays (``failures``: the failed
        notes and why, in the JSON event; the line names them in ``extra``)."""
        if not self.running:
            return
        assert self._started is not None
        seconds = time.monotonic() - self._started
        self._stop_bar()
        ingested, failed = self.counts.get("ingested", 0), self.counts.get("failed", 0)
        if self.json_lines:
            self._json(
                event="ingest_done",
                ingested=ingested,
                failed=failed,
                notes=self.done,
                seconds=round(seconds, 3),
                failures=[{"path": p, "error": e} for p, e in failures],
            )
        else:
            failures_shown = f", {failed} failed" if failed else ""
            self._line(
                f"{self.label}: {ingested} note(s) ingested{failures_shown} in {seconds:.1f}s{extra}"
            )
        self.close()

    def close(self) -> None:
        """End the run without a summary line (the caller prints its own)."""
        self._stop_bar()
        self._started = None
        self._reading.clear()

    def say(self, text: str, **fields: Any) -> None:
        """Any other line (as a JSON object ``{"event": ..., **fields}`` in JSON mode)."""
        if self.json_lines:
            self._json(**fields)
        else:
            self._line(text)

    def _stop_bar(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _line(self, text: str) -> None:
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False, soft_wrap=True)
            return
        self.out.write(text + "\n")
        self.out.flush()

    def _json(self, **fields: Any) -> None:
        self.out.write(json.dumps(fields, ensure_ascii=False, default=str) + "\n")
        self.out.flush()


# -- embedding -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EmbeddingReading:
    """Vectors written (``done``, since the count began) and waiting, with the recent
    rate (vectors a second) and the time left at that rate (None while unknown)."""

    done: int
    waiting: int
    rate: float | None = None
    seconds_left: float | None = None

    @property
    def total(self) -> int:
        return self.done + self.waiting

    def line(self, label: str = "embedding") -> str:
        if not self.waiting:
            return f"{label}: {self.done}/{self.total} vectors, every text embedded"
        rate = f", {self.rate:.1f}/s" if self.rate else ""
        left = f", about {_duration(self.seconds_left)} left" if self.seconds_left else ""
        return f"{label}: {self.done}/{self.total} vectors{rate}{left}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "done": self.done,
            "total": self.total,
            "waiting": self.waiting,
            "rate": None if self.rate is None else round(self.rate, 2),
            "seconds_left": None if self.seconds_left is None else round(self.seconds_left, 1),
        }


class EmbeddingMeter:
    """Turns counts read now and then into readings with a rate over the last ``window``
    seconds (``clock`` for tests)."""

    def __init__(self, window: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self.clock = clock
        self._seen: deque[tuple[float, int]] = deque()

    def read(self, done: int, waiting: int) -> EmbeddingReading:
        now = self.clock()
        self._seen.append((now, done))
        while len(self._seen) > 2 and now - self._seen[1][0] >= self.window:
            self._seen.popleft()  # keeps one sample at least ``window`` old
        then, before = self._seen[0]
        if now <= then or done <= before:
            return EmbeddingReading(done, waiting)
        rate = (done - before) / (now - then)
        return EmbeddingReading(done, waiting, rate, waiting / rate if waiting else 0.0)


class EmbeddingProgress:
    """Embedding progress on screen (see the module docstring); feed it ``update(done,
    waiting)`` from one thread. ``say(text, **fields)`` (a ``NoteProgress``'s) takes the
    lines instead of ``out`` when given."""

    def __init__(
        self,
        out: IO[str],
        *,
        terminal: bool | None = None,
        json_lines: bool = False,
        every: float = 10.0,
        label: str = "embedding",
        say: Callable[..., None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out = out
        self.json_lines = json_lines
        self.terminal = (out.isatty() if terminal is None else terminal) and not json_lines
        self.every = every
        self.label = label
        self._say = say
        self.clock = clock
        self.meter = EmbeddingMeter(clock=clock)
        self.last: EmbeddingReading | None = None
        self._shown_at: float | None = None
        self._bar: Any = None
        self._task: Any = None

    def update(self, done: int, waiting: int) -> EmbeddingReading:
        """New counts; drawn now on a terminal, else a line when one is due."""
        reading = self.meter.read(done, waiting)
        previous, self.last = self.last, reading
        if self.terminal and self._say is None:
            self._draw(reading)
            return reading
        now = self.clock()
        finished = not reading.waiting and reading.done > 0
        if finished and previous is not None and not previous.waiting:
            return reading  # said already
        if reading.total and (
            finished or self._shown_at is None or now - self._shown_at >= self.every
        ):
            self._shown_at = now
            self._line(reading)
        return reading

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _draw(self, reading: EmbeddingReading) -> None:
        if not reading.total:
            return
        if self._bar is None:
            from rich.progress import TextColumn

            self._bar = _rich_bar(
                self.out, self.label, counted=[TextColumn("vectors {task.fields[rate]}")]
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=reading.total, rate="")
        rate = f"{reading.rate:.1f}/s" if reading.rate else ""
        self._bar.update(self._task, completed=reading.done, total=reading.total, rate=rate)

    def _line(self, reading: EmbeddingReading) -> None:
        text = reading.line(self.label)
        fields = {"event": "embedding", **reading.as_dict()}
        if self._say is not None:
            self._say(text, **fields)
        elif self.json_lines:
            self.out.write(json.dumps(fields) + "\n")
            self.out.flush()
        else:
            self.out.write(text + "\n")
            self.out.flush()


def _rich_bar(
    out: IO[str], label: str, *, counted: Sequence[Any] = (), tail: Sequence[Any] = ()
) -> Any:
    """A transient ``rich`` bar on ``out``: the label, the bar, done / total, ``counted``,
    the time elapsed and left, ``tail``."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        *counted,
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        *tail,
        console=Console(file=out, force_terminal=True),
        transient=True,
    )


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
