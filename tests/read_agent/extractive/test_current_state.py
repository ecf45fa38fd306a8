""" "What holds now" is read from the newest event whose title says the question's topic
(half its words at least: "price per shipment" is said by "Usage-based pricing replaces
per-seat pricing"), asked with "today" as with "currently", and what that event decided
leads when no sentence of it holds every word ("model" is not written)."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines

HOLDS = "2026-10-07 · Usage-based pricing replaces per-seat pricing"


def test_a_title_saying_half_the_topic_is_the_event_that_decides(example: IngestServer) -> None:
    first = lines(ask(example, "What do we charge for each shipment right now?"))[0]
    assert first.startswith(HOLDS), first


def test_today_asks_what_holds_and_the_decision_leads_without_the_word(
    example: IngestServer,
) -> None:
    for question in ("What pricing model do we have today?", "What's our price model today?"):
        first = lines(ask(example, question))[0]
        assert first.startswith(HOLDS), (question, first)


def test_the_events_are_asked_by_the_topic_alone(example: IngestServer) -> None:
    # "ажиллаж байгаа" (are working) names the people's folder, not the topic: the
    # events are searched for the price alone, and the English decision is found
    first = lines(ask(example, "Өнөөдөр бид ямар үнээр ажиллаж байгаа вэ?"))[0]
    assert first.startswith(HOLDS), first
