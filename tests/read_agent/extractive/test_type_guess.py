"""A field the answer's type alone picks (a company's one date field, its renewal, for a
"when") is a guess: when a sentence holds every word the question asks, that sentence
answers ("when was Initech's quarterly check-in?"); when none does, the field does
("until when does Initech's contract run?")."""

from __future__ import annotations

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
