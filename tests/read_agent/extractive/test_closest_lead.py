"""The first line answers: when no sentence holds every word of the question, the one
that holds most of them (at least half) leads, said to be the closest; below half, the
answer says plainly that no sentence answers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memserver.kb.schema import load_schema
from read_agent.extractive.answer import compared_words
from read_agent.reading import Context, read
from tests.fixtures.server import EXAMPLE_KB
from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_sentence_holding_most_of_the_words_leads_as_the_closest(
    example: IngestServer,
) -> None:
    # "agreement" is in no sentence that gives the minimum, nor in its heading or its
    # page's title: the closest one leads
    first = lines(ask(example, "What is the monthly minimum in the Nomin Trade agreement?"))[0]
    assert first.startswith("Closest: ") and "3,000,000₮ monthly minimum" in first, first


def test_a_sentence_said_under_a_title_holding_the_rest_answers(example: IngestServer) -> None:
    # "contract" is the title of the meeting whose sentence gives the minimum
    first = lines(ask(example, "What is the monthly minimum in the Nomin Trade contract?"))[0]
    assert first.startswith("2026-11-18 · ") and "3,000,000" in first, first
    assert "[meetings/2026-11-18-" in first


def test_the_closest_sentence_is_not_repeated_below(example: IngestServer) -> None:
    rest = lines(ask(example, "What is the monthly minimum in the Nomin Trade agreement?"))[1:]
    assert not any("3,000,000₮ monthly minimum" in x for x in rest), rest


def test_a_sentence_holding_under_half_the_words_does_not_lead(example: IngestServer) -> None:
    first = lines(ask(example, "What is Dana Whitfield's favourite colour and shoe size?"))[0]
    assert first.startswith("The knowledge base has no sentence that answers"), first


def test_a_sentence_about_someone_else_is_not_the_closest(example: IngestServer) -> None:
    # "mobile" is said of a delivery route, not of Karen Lee: no sentence answers
    said = lines(ask(example, "What is Karen Lee's mobile number?"))
    assert said[0].startswith("The knowledge base has no sentence that answers"), said
    assert "Karen Lee" in said[0], said  # what was searched for


def test_of_the_closest_holding_as_many_words_the_embedder_s_nearest_leads(
    example: IngestServer,
) -> None:
    asked = "What is the monthly minimum in the Nomin Trade contract talks?"
    compared: list[tuple[str, list[str]]] = []

    def embed(query: str, texts: Sequence[str]) -> tuple[np.ndarray, Sequence[np.ndarray]]:
        # near in meaning: the contract meeting's sentence, whatever its words
        compared.append((query, list(texts)))
        near, far = np.array([1.0, 0.0]), np.array([0.0, 1.0])
        return near, [near if "Contract meeting" in t else far for t in texts]

    first = lines(ask(example, asked, embed=embed))[0]
    assert first.startswith("Closest: ") and "Contract meeting" in first, first
    # the words asked and the folders meant, not the subject's name, are compared; only
    # sentences holding as many of them as the closest one holds
    closest = [(q, t) for q, t in compared if any("Contract meeting" in x for x in t)]
    assert closest and all("nomin" not in q.lower() for q, _ in closest), compared
    assert closest and all("monthly minimum" in " ".join(t) for _, t in closest), compared


def test_a_sentence_holding_every_word_said_of_someone_else_does_not_lead(
    example: IngestServer,
) -> None:
    # Alice worried about unpredictable bills at the pricing review; nobody at Initech
    said = lines(ask(example, "Is Initech worried about unpredictable bills?"))
    assert said[0].startswith("The knowledge base has no sentence that answers"), said


def test_the_folder_a_question_means_is_compared_with_its_words() -> None:
    # "the meeting with ...": of equally close sentences, the one nearest a meeting
    schema = load_schema(EXAMPLE_KB / "schema.yaml")
    reading = read("When is the meeting with the logistics company in Darkhan?", Context(schema))
    assert {"logistics", "darkhan"} <= set(compared_words(reading).split())
    assert "meetings" in compared_words(reading).split()
