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
from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines

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


def test_the_words_no_sentence_of_the_question_s_script_says_are_compared() -> None:
    # "pilot" is said by the English line: only "drivers took part" is left to the meaning
    asked: list[str] = []

    def embed(query: str, texts: Sequence[str]) -> tuple[np.ndarray, Sequence[np.ndarray]]:
        asked.append(query)
        return _near(lambda t: "жолооч" in t)(query, texts)

    assert _across(QUESTION, [DELIVERIES, DRIVERS], embed) is DRIVERS
    assert asked == ["drivers took part"], asked


def test_the_other_script_s_sentence_leads_though_its_heading_holds_half_the_words(
    example: IngestServer,
) -> None:
    # "пилотод оролцох 12 машины жагсаалт" is read under its meeting's title ("пилот"):
    # it holds half the words itself, and no sentence of the question's script does
    # (with "took part" read as one meaning, "оролцох" says it: the sentence answers)
    said = lines(
        ask(
            example,
            "How many trucks took part in the Nomin Trade pilot?",
            embed=_near(lambda t: "машин" in t),
        )
    )
    assert "12 машины" in said[0], said
