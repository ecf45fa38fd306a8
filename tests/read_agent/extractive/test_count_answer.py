"""A question for how many of something is answered by a sentence that gives a count
(digits or a number word), not by one that gives a price."""

from __future__ import annotations

from read_agent.extractive.ranking import COUNT
from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_count_leads_not_a_price(example: IngestServer) -> None:
    first = lines(ask(example, "How many drivers joined the app in wave one?"))[0]
    assert "112 new drivers" in first, first


def test_a_count_is_digits_or_a_number_word_of_two_or_more() -> None:
    assert COUNT.search("112 new drivers on the app")
    assert COUNT.search("all eight Globex warehouses")
    assert COUNT.search("Бүх долоон машин")
    assert not COUNT.search("a driver app, one dispatcher per warehouse")
