"""A long paragraph of a page is cut into sentences and every one of them is evidence,
the last too: a paragraph is not cut at a piece's length before it is cut into
sentences."""

from __future__ import annotations

from read_agent.extractive.evidence import MAX_TEXT, from_page, pieces
from read_agent.tools.wire import Page

FAULT = "Issue: the nightly export to the billing system stopped with a timeout after 3 retries."
CAUSE = "Root cause: the export job ran out of memory on the 2026-10-02 volume."
FIX = "Resolution: Sofia Rossi moved the job to a larger worker and reran it the same day."
FILLER = "The account manager was told the same afternoon and thanked the team for the update."
PARAGRAPH = " ".join([FILLER, FILLER.replace("afternoon", "evening"), FAULT, CAUSE, FIX])


def test_no_sentence_of_a_long_paragraph_is_lost() -> None:
    assert len(PARAGRAPH) > MAX_TEXT
    said = [piece for _, piece in pieces(PARAGRAPH)]
    assert said[-1] == FIX, said


def test_each_sentence_of_a_page_section_is_a_piece() -> None:
    page = Page("incidents/export", "Export stopped", "incidents", sections={"Record": PARAGRAPH})
    texts = [p.text for p in from_page(page, 0, dated=False)]
    assert texts[-3:] == [FAULT, CAUSE, FIX], texts


def test_a_long_sentence_is_still_capped() -> None:
    said = [piece for _, piece in pieces("word " * 200)]
    assert said and all(len(s) <= MAX_TEXT for s in said)
