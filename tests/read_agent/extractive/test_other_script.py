"""A question answered only in the other script: "how many drivers" is written
"15 жолооч" in the Mongolian kickoff note. No word of the question matches it, so the
embedder's nearest sentence giving a count leads, said to be the closest; a sentence in
the question's own script that the embedder puts nearest does not (its words were read
and did not answer), nor a note's own sentence, nor one that gives no count."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from read_agent.extractive.evidence import Evidence
from read_agent.extractive.other_script import in_other_script
from read_agent.reading import Context, read
from read_agent.reading.fields import Embed

QUESTION = "How many drivers took part in the pilot?"
DRIVERS = Evidence("12 машин, 15 жолооч оролцоно.", "meetings/kickoff", "", None, "section")
DELIVERIES = Evidence("Pilot week one is done, 312 deliveries tracked.", "a", "", None, "timeline")
NOTE = Evidence("15 жолооч оролцоно.", "source/kickoff", "", None, "source")


def _near(chosen: Callable[[str], bool]) -> Embed:
    def embed(query: str, texts: Sequence[str]) -> tuple[np.ndarray, Sequence[np.ndarray]]:
        near, far = np.array([1.0, 0.0]), np.array([0.0, 1.0])
        return near, [near if chosen(t) else far for t in texts]

    return embed


def _across(question: str, pieces: Sequence[Evidence], embed: Embed | None) -> Evidence | None:
    return in_other_script(read(question, Context()), pieces, lambda _: True, embed)


def test_the_nearest_sentence_in_the_other_script_is_the_closest() -> None:
    near_drivers = _near(lambda t: "жолооч" in t)
    assert _across(QUESTION, [DELIVERIES, DRIVERS], near_drivers) is DRIVERS


def test_a_sentence_in_the_question_s_script_is_not_put_forward_by_meaning() -> None:
    near_deliveries = _near(lambda t: "deliveries" in t)
    assert _across(QUESTION, [DELIVERIES, DRIVERS], near_deliveries) is None


def test_a_note_s_sentence_or_an_untyped_question_is_never_put_forward() -> None:
    near_drivers = _near(lambda t: "жолооч" in t)
    assert _across(QUESTION, [DELIVERIES, NOTE], near_drivers) is None
    assert _across("Who took part in the pilot?", [DRIVERS], near_drivers) is None
    assert _across(QUESTION, [DRIVERS], None) is None  # no embedder, no meaning
