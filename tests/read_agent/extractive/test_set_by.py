""" "When did X start?": the sentence giving the day leads; the decision about X taken
before that day which named it holds the terms X started on, and the meeting it was
taken at shows them all, first among the other lines."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_decision_that_set_a_start_day_shows_its_terms(example: IngestServer) -> None:
    answer = lines(ask(example, "When did the Nomin Trade pilot start?"))
    assert answer[0].startswith("2026-10-12 · "), answer[0]
    fee = next(i for i, line in enumerate(answer) if "1,500,000" in line)
    drivers = next(i for i, line in enumerate(answer) if "15 жолооч" in line)
    planned = next(i for i, line in enumerate(answer) if "pilot start planned" in line)
    assert fee < planned and drivers < planned, answer
    assert "meetings/2026-10-05-" in answer[fee]  # cited to the meeting it was taken at


def test_a_contract_start_day_shows_what_was_decided_with_it(example: IngestServer) -> None:
    answer = lines(ask(example, "When does the Globex contract start?"))
    assert "2026-12-01" in answer[0], answer[0]
    assert any("Go-live for all eight Globex warehouses on 2026-12-01." in x for x in answer)


def test_the_decision_is_taken_at_a_meeting_not_at_a_person_s_page(
    example: IngestServer,
) -> None:
    # a person's page changed the same day from the same note is no event: the
    # contract's terms are the meeting's decided items (under a bold heading)
    answer = lines(ask(example, "When does the Nomin Trade contract begin?"))
    assert "2026-12-01" in answer[0], answer[0]
    price = next(x for x in answer if "900 төгрөг" in x)
    assert "[meetings/2026-11-18-" in price, price
