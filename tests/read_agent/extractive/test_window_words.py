"""A window with other words: its listing answers only when no sentence answers and none
of the closest is dated in the window (then those words say no topic); a long question
whose words a sentence in the window holds keeps its sentences."""

from __future__ import annotations

from read_agent.extractive.answer import _none_within
from read_agent.extractive.line import Line
from read_agent.extractive.reply import NO_SENTENCE, Reply

YEAR = {"start": "2026-01-01T00:00:00+08:00", "end": "2027-01-01T00:00:00+08:00"}


def test_a_sentence_dated_in_the_window_keeps_the_quoted_answer() -> None:
    closest = Reply(Line(NO_SENTENCE), [Line("Globex signed the pilot.", "2026-08-25")])
    assert not _none_within(closest, YEAR)


def test_nothing_in_the_window_lets_the_window_answer() -> None:
    assert _none_within(None, YEAR)
    assert _none_within(Reply(Line(NO_SENTENCE)), YEAR)
    elsewhere = Reply(Line(NO_SENTENCE), [Line("A later note.", "2027-02-01")])
    assert _none_within(elsewhere, YEAR)


def test_an_answer_that_answers_is_kept() -> None:
    answered = Reply(Line("The pilot cost $18,400."), [])
    assert not _none_within(answered, YEAR)
