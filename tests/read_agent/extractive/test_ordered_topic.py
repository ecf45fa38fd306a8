""" "The latest / the first" of a topic among the pages of the folder the question's
words mean, when the search ordered nothing: "settle on" is a decision; a page about a
company the question does not name comes after one about nobody's in particular ("our
latest pricing" is not one customer's price); with no topic the newest page leads. A
page's title said in another order names the page; and a meeting asked about as a whole
shows what it decided."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_newest_decision_on_a_topic_is_ours_not_a_customer_s(example: IngestServer) -> None:
    first = lines(ask(example, "What pricing have we settled on last?"))[0]
    assert first.startswith("Latest decision: 2026-10-07 · Usage-based pricing"), first
    # no topic: the newest decision of all, whoever it is about
    newest = lines(ask(example, "What was the most recent decision?"))[0]
    assert newest.startswith("Latest decision: 2026-11-18 · Номин Трейд"), newest


def test_the_first_decision_on_a_topic_is_found_in_the_decisions(example: IngestServer) -> None:
    answer = lines(ask(example, "What did we decide on price originally?"))
    assert answer[0].startswith("First decision: 2026-07-15 · Per-seat pricing"), answer[0]


def test_a_title_said_in_another_order_names_its_page(example: IngestServer) -> None:
    first = lines(ask(example, "Who sat in on the review of the Globex pilot?"))[0]
    assert first.startswith("2026-10-14 · Globex pilot review — attendees: Bob Martinez"), first
    assert "Dana Whitfield" in first


def test_a_meeting_asked_about_as_a_whole_shows_what_it_decided(example: IngestServer) -> None:
    answer = ask(example, "Give me the most recent Globex meeting.").text
    assert answer.startswith("Latest meeting: 2026-11-12 · Globex integration review"), answer
    assert "Go-live for all eight Globex warehouses on 2026-12-01." in answer
    assert "SAP TM integration by outbound webhook" in answer


def test_the_first_line_answers_or_says_the_answer_is_not_there(example: IngestServer) -> None:
    # no sentence holds every word: the first line still speaks
    first = lines(ask(example, "Which pricing applies to our customers today?"))[0]
    assert not first.startswith("Extractive answer"), first
    assert "Usage-based pricing" in first or first.startswith(("Closest: ", "The knowledge")), first


def test_a_decision_that_leads_names_the_meeting_it_was_taken_at(example: IngestServer) -> None:
    answer = ask(example, "Which decision did we take most recently about Globex?").text
    first = answer.splitlines()[0]
    assert first.startswith("Latest decision: 2026-11-12 · "), first
    assert "— decided at: Globex integration review" in first
    # and everything that meeting decided, not only the one decision
    assert "SAP TM integration by outbound webhook" in answer
    assert "$2,000 monthly minimum" in answer


def test_with_no_customer_named_our_own_figure_comes_before_a_customer_s(
    example: IngestServer,
) -> None:
    first = lines(ask(example, "What monthly minimum do we charge at the moment?"))[0]
    assert "$1,500 monthly minimum" in first, first
