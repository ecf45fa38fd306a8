"""A field the answer's type alone picks (a company's one date field, its renewal, for a
"when"), or the embedder picks among several, is a guess: when a sentence holds every
word the question asks, that sentence answers ("when was Initech's quarterly check-in?");
when none does, the field does ("until when does Initech's
contract run?")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_sentence_saying_every_word_asked_answers_before_a_guessed_field(
    example: IngestServer,
) -> None:
    first = lines(ask(example, "When was Initech's quarterly check-in?"))[0]
    assert "2026-06-25" in first and "renewal date" not in first, first
    asked = lines(ask(example, "When did Initech ask for the SOC 2 report?"))[0]
    assert "2026-10-20" in asked and "renewal date" not in asked, asked
    guessed = lines(ask(example, "Until when does Initech's contract run?"))[0]
    assert guessed.startswith("Initech — renewal date: 2027-01-31"), guessed


def test_a_sentence_saying_the_word_asked_answers_before_an_embedder_pick(
    example: IngestServer,
) -> None:
    def embed(query: str, texts: Sequence[str]) -> tuple[np.ndarray, Sequence[np.ndarray]]:
        # the embedder's pick among the project's two date fields: its start
        near, far = np.array([1.0, 0.0]), np.array([0.0, 1.0])
        return near, [near if t.startswith("start date") else far for t in texts]

    asked = "What's the target date for the Mongolian localization?"
    first = lines(ask(example, asked, embed=embed))[0]
    assert "2026-12-15" in first and "start date" not in first, first
    # no sentence says "cutoff": the embedder's pick answers
    picked = lines(ask(example, "When is the Mongolian localization's cutoff?", embed=embed))[0]
    assert picked.startswith("Mongolian Localization — start date: 2026-09-15"), picked
