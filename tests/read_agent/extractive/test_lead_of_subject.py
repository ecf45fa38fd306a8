"""Of the sentences that hold every word asked, one said of the subject asked about, and
then one dated in the window asked about, leads: another customer's pilot, planned in
July, does not answer when this customer's pilot started in September."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_lead_is_said_of_the_subject_asked_about(example: IngestServer) -> None:
    first = lines(ask(example, "When did the Globex pilot start in mid-September 2026?"))[0]
    # Globex's pilot (its project's page, cited), not Nomin Trade's
    assert "globex" in first.lower() and "Nomin Trade" not in first, first


def test_the_lead_is_dated_in_the_window_asked_about(example: IngestServer) -> None:
    # the agreement signed in August says "starting mid-September": a line dated in
    # September leads
    first = lines(ask(example, "When did Globex start a pilot in September 2026?"))[0]
    assert first.startswith("2026-09-") and "Globex" in first, first
