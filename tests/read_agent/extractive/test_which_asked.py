""" "Which customer ...?": the sentence that answers leads, said with the page of the
kind asked for it is about; a note's sentence (no fields) is named by the page of a
sentence giving the same amount."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_page_of_the_kind_asked_for_leads_the_answer(example: IngestServer) -> None:
    first = lines(ask(example, "Which customer pays 900₮ per delivery?"))[0]
    assert first.startswith("Номин Трейд: "), first
    assert "900₮ per delivery" in first


def test_a_note_s_sentence_is_named_by_the_page_made_from_the_note(
    example: IngestServer,
) -> None:
    first = lines(ask(example, "Which project is due on 2026-11-30?"))[0]
    assert first.startswith("Mongolian Localization: 2026-11-30"), first
