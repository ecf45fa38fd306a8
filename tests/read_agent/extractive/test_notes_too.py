"""When the pages found name none of the kind of thing a question asks for, the raw notes
the search finds are read too: a detail the ingest agent left out is only in a note."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_kind_no_page_names_is_looked_for_in_the_notes(example: IngestServer) -> None:
    # Maria's rule is only in #finance's export; no page names an invoice numbering
    said = lines(ask(example, "What invoice numbering rule did Maria set?"))
    rule = [line for line in said if "INV-YYYY-NNN" in line]
    assert rule and rule[0].endswith("[source/slack/finance/2026-10-01.md]"), said


def test_a_kind_a_page_names_keeps_the_pages_answer(example: IngestServer) -> None:
    # the pages name the renewal date: no note is needed
    said = lines(ask(example, "What renewal date does the Initech contract have?"))
    assert said[0].startswith("Initech — renewal date: 2027-01-31"), said
    assert not any("[source/" in line for line in said)
