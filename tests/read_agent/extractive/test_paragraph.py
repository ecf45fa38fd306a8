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


RENEWAL = """Account health: near churn.
AE: Jonathan Reed notes that the pilot contract expires 2022-10-31.
Action plan:
1. Jonathan to draft a revised proposal with a 25% discount (due 2022-09-05).
2. Maya to lead a value-add workshop (scheduled 2022-09-12).
Outcome: if the offer is refused, the account is marked as churned.

Why:
The competitor offered $9,500.

Renewal terms as agreed with their finance team on the call last week:
- A $12,000 annual commitment."""


def test_a_label_line_heads_the_list_after_it() -> None:
    said = list(pieces(RENEWAL))
    under = {piece[:12]: heading for heading, piece in said}
    # the plan's items are what "Action plan" names, so a question about the plan finds
    # them by their heading's words; the line itself is no piece
    assert under["Jonathan to "] == under["Maya to lead"] == "Action plan", said
    assert not any(piece.startswith("Action plan") for _, piece in said), said
    # the lines before the label are not under it
    assert under["Account heal"] == "", said
    # a paragraph right after a label is what it names too; a blank line ends it
    assert under["The competit"] == "Why", said
    # a long line ending in a colon introduces what follows: it is a sentence, not a label
    assert under["A $12,000 an"] == "", said
    assert any(piece.startswith("Renewal terms as agreed") for _, piece in said), said
