"""Of the sentences holding every word asked, one whose subject is what the question
asks ("A tracked shipment is ...") leads before one that only mentions it."""

from __future__ import annotations

from read_agent.extractive.answer import opens_with
from read_agent.reading import read
from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_sentence_opening_with_the_words_asked_is_about_them() -> None:
    reading = read("What is a tracked shipment, for billing?")
    assert opens_with("A **tracked shipment** is a shipment that was dispatched", reading)
    assert not opens_with("The pricing review moved us to $0.45 per tracked shipment", reading)
    assert not opens_with("Tracked by Sofia.", reading)  # one word asked is no subject


def test_the_sentence_about_the_thing_asked_leads(example: IngestServer) -> None:
    # the brief's "Why" section says "$0.45 per tracked shipment" and billing too
    first = lines(ask(example, "What is a tracked shipment, for billing?"))[0]
    assert first.startswith("A tracked shipment is"), first
