""" "The latest X" answers with the page the question names by its title, and when what
it decided is asked (not when it was), its first decision is on the first line."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_latest_page_named_by_its_title_leads(example: IngestServer) -> None:
    first = lines(ask(example, "What did the latest pricing review decide?"))[0]
    assert first.startswith("Latest meeting: 2026-10-07 · Pricing review"), first


def test_what_the_latest_meeting_decided_is_on_its_first_line(example: IngestServer) -> None:
    first = lines(ask(example, "What were the decisions of the most recent Globex meeting?"))[0]
    assert first.startswith("Latest meeting: 2026-11-12 · Globex integration review — "), first
    assert "Decisions: Go-live for all eight Globex warehouses on 2026-12-01" in first
    # when it was is asked too: the meeting and its links lead, its decisions follow
    when = lines(ask(example, "When was the latest meeting with Globex, and what was decided?"))
    assert "Decisions:" not in when[0] and "attendees:" in when[0]
