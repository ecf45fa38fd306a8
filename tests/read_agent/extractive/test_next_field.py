"""A question asking when something next happens, that no page dated after today
answers, is answered by the date field its words name on the page it names ("when does
the Initech contract come up for renewal?": its renewal date); with no such field it
says nothing is dated after today."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_next_day_a_date_field_names_answers(example: IngestServer) -> None:
    first = lines(ask(example, "When does the Initech agreement come up for renewal?"))[0]
    assert first.startswith("Initech — renewal date: 2027-01-31"), first
    nothing = lines(ask(example, "When is the next meeting with Initech?"))[0]
    assert nothing.startswith("Nothing is dated after 2026-11-20"), nothing
