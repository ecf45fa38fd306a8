"""A figure asked for in words no field says, whose sentence gives a value the subject's
page records as disputed: the disagreement leads, the sentence after it; a figure no
page disputes is answered as it is."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_disputed_figure_leads_with_the_disagreement(example: IngestServer) -> None:
    said = lines(ask(example, "How much revenue does the Initech account bring in per year?"))
    assert said[0].startswith("The sources disagree: Initech — contract value"), said[0]
    assert "120000" in said[0] and "96000" in said[0], said[0]
    assert any("$120,000" in x for x in said[2:4]), said  # the sentence that gave it


def test_a_figure_no_page_disputes_is_answered_as_it_is(example: IngestServer) -> None:
    first = lines(ask(example, "How much did the Globex pilot cost?"))[0]
    assert "$18,400" in first and "disagree" not in first, first
