"""Embedding progress on screen: vectors done / total, rate and time left, as a bar on a
terminal, lines in a log and JSON lines for scripts (a fake clock: no timing)."""

from __future__ import annotations

import io
import json
from typing import Any

from memserver.terminal.progress import EmbeddingMeter, EmbeddingProgress, NoteProgress


class Clock:
    """Time that moves only when a test says so."""

    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_meter_reads_the_rate_and_the_time_left_over_its_window() -> None:
    clock = Clock()
    meter = EmbeddingMeter(window=60, clock=clock)
    first = meter.read(0, 480)
    assert (first.done, first.total, first.rate, first.seconds_left) == (0, 480, None, None)
    clock.now += 10
    second = meter.read(120, 360)
    assert second.rate == 12.0 and second.seconds_left == 30.0
    clock.now += 100  # the window moves on: the rate is the last minute's or so
    third = meter.read(170, 310)
    assert third.rate == 0.5 and third.seconds_left == 620.0
    assert third.line() == "embedding: 170/480 vectors, 0.5/s, about 10 min left"
    assert meter.read(480, 0).line() == "embedding: 480/480 vectors, every text embedded"


def test_without_a_terminal_a_line_at_most_every_few_seconds_and_one_at_the_end() -> None:
    clock = Clock()
    out = io.StringIO()
    progress = EmbeddingProgress(out, terminal=False, every=10, clock=clock)
    progress.update(0, 0)  # nothing to embed: nothing said
    assert out.getvalue() == ""
    progress.update(0, 100)
    clock.now += 4
    progress.update(40, 60)  # too soon after the first line
    clock.now += 6
    progress.update(100, 0)
    progress.update(100, 0)  # said already
    assert out.getvalue().splitlines() == [
        "embedding: 0/100 vectors",
        "embedding: 100/100 vectors, every text embedded",
    ]
    clock.now += 10
    progress.update(100, 50)  # new work: lines again
    assert out.getvalue().splitlines()[-1] == "embedding: 100/150 vectors, 5.0/s, about 10s left"


def test_json_lines_for_scripts() -> None:
    clock = Clock()
    out = io.StringIO()
    progress = EmbeddingProgress(out, json_lines=True, terminal=True, every=10, clock=clock)
    progress.update(0, 90)
    clock.now += 10
    progress.update(30, 60)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert events[1] == {
        "event": "embedding",
        "done": 30,
        "total": 90,
        "waiting": 60,
        "rate": 3.0,
        "seconds_left": 20.0,
    }


def test_on_a_terminal_a_bar_with_the_rate() -> None:
    clock = Clock()
    out = io.StringIO()
    progress = EmbeddingProgress(out, terminal=True, clock=clock)
    progress.update(0, 480)
    clock.now += 10
    progress.update(120, 360)
    progress._bar.refresh()  # draw now instead of at the next tick
    drawn = out.getvalue()
    assert "120/480" in drawn and "vectors 12.0/s" in drawn and "━" in drawn
    progress.close()
    assert progress._bar is None


def test_lines_can_go_through_the_notes_display() -> None:
    out = io.StringIO()
    said: list[tuple[str, dict[str, Any]]] = []
    notes = NoteProgress(out, json_lines=True)

    def say(text: str, **fields: Any) -> None:
        said.append((text, fields))
        notes.say(text, **fields)

    progress = EmbeddingProgress(out, say=say)
    progress.update(5, 5)
    assert said[0][0] == "embedding: 5/10 vectors"
    assert json.loads(out.getvalue())["event"] == "embedding"
