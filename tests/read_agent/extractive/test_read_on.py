"""A piece of a record or a list is read on into what follows it in its block: the
ticket's "Issue" line brings its "Root cause" and "Resolution" lines, each shown as a
line of its own with the piece's date, page and label; nothing past its block."""

from __future__ import annotations

from memserver.timeparse.mentions import mention_reader
from read_agent.extractive.evidence import READ_ON, from_page
from read_agent.extractive.source_evidence import from_source
from read_agent.tools.wire import Hit, Page

RECORD = (
    "- Issue: Batch uploads fail with 401 after 3 attempts.\n"
    "- Root cause: The token endpoint returned 500 during a database lock.\n"
    "- Resolution: Ethan Park rolled back the schema change.\n"
    "- Follow-up: Aisha Khan sends the post-mortem.\n"
)
PROSE = (
    "The batch uploads failed on 18 July. The token endpoint returned 500 during a lock. "
    "Ethan Park rolled back the schema change. Aisha Khan sent the post-mortem."
)


def test_a_section_piece_carries_the_pieces_after_it_under_its_heading() -> None:
    page = {
        "id": "incidents/ticket-4573",
        "title": "Ticket 4573",
        "effective_date": "2021-07-18",
        "sources": ["tickets/4573.md"],
        "sections": {"Summary": RECORD, "Other": "A different section."},
    }
    issue, *_ = (p for p in from_page(Page.parse(page), 0, True) if p.text.startswith("Issue"))
    assert len(issue.after) == READ_ON == 2
    assert issue.after[0].startswith("Root cause:") and issue.after[1].startswith("Resolution:")
    last = next(p for p in from_page(Page.parse(page), 0, True) if p.text.startswith("Follow-up"))
    assert last.after == ()  # the end of its section: nothing from the next one
    lines = issue.read_on()
    assert [x.date for x in lines] == ["2021-07-18"] * 2
    assert all(
        x.cited == ("incidents/ticket-4573",) and x.label == issue.line().label for x in lines
    )


def test_a_source_sentence_carries_the_sentences_after_it_in_its_turn() -> None:
    result = {"id": "source/tickets/4573.md", "date": "2021-07-18", "snippet": PROSE}
    failed, *rest = from_source(Hit.parse(result), 0, mention_reader("UTC"))
    assert len(rest) == 3 and failed.after == tuple(p.text for p in rest[:READ_ON])
    assert rest[-1].after == ()
