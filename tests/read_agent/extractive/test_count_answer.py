"""A question for how many of something is answered by a sentence that gives a count
(digits or a number word), not by one that gives a price."""

from __future__ import annotations

from read_agent.extractive.ranking import COUNT, counts
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
    # "few" stands for no number: "many drivers, few office users" counts nothing
    assert not COUNT.search("shared tablets, many drivers, few office users")
    # a date, a time, a year or a quarter is no count
    assert not COUNT.search("pilot start planned for 2026-10-12, call at 10:30")
    assert not COUNT.search("moved to Q2 2027, as in 2021")


def test_a_count_question_without_a_count_says_so_first(example: IngestServer) -> None:
    # the notes say how many drivers took part only in a raw note (Mongolian), so no
    # page sentence answers; the one naming "few office users" is no count
    said = lines(ask(example, "How many drivers took part in the Nomin Trade pilot?"))
    assert not said[0].startswith("Closest:"), said[0]


def test_a_count_next_to_what_is_counted_is_told_from_another_count() -> None:
    assert counts("Тэд 6 диспетчертэй ч сард 4,000 орчим хүргэлт", ["диспетчертэй"])
    assert counts("Диспетчер 6 хүн ажилладаг.", ["диспетчертэй"])
    # the contract's 35 trucks and its figures say nothing of how many dispatchers
    assert not counts("Бүх 35 машин. Монгол хэлний хувилбар (диспетчерийн апп)", ["диспетчер"])


def test_of_the_sentences_giving_a_count_one_counting_the_thing_asked_leads(
    example: IngestServer,
) -> None:
    # the newer contract meeting names the dispatcher app beside its 35 trucks
    first = lines(ask(example, "Номин Трейд хэдэн диспетчертэй вэ?"))[0]
    assert "6 диспетчер" in first or "Диспетчер 6" in first, first
