"""Each evidence line says whether a note states it (direct, with the note and its
author when known) or the memory inferred it, in the text and as JSON records."""

from __future__ import annotations

from dataclasses import replace

from memserver.timeparse.mentions import mention_reader
from read_agent.extractive.evidence import from_page, pieces
from read_agent.extractive.line import DIRECT, INFERRED, Line
from read_agent.extractive.reply import Digest
from read_agent.extractive.source_evidence import from_source
from read_agent.tools.wire import Hit, Page

RAW_PAGE = {
    "id": "companies/initech",
    "folder": "companies",
    "title": "Initech",
    "fields": {"contract_value": 96000},
    "sources": ["slack/sales/2026-10-20.md", "updates/2026-06-26-weekly-update.md"],
    "sections": {"Summary": "Initech is a logistics customer in Austin."},
    "timeline": [
        {
            "date": "2026-10-20",
            "text": "Initech's annual contract is $96,000.",
            "source": "slack/sales/2026-10-20.md",
        }
    ],
}
PAGE = Page.parse(RAW_PAGE)


def test_a_page_s_pieces_are_direct_only_where_a_note_states_them() -> None:
    by_kind = {p.kind: p for p in from_page(PAGE, 0, False)}
    # a timeline entry names its note: direct, quoted from it
    assert by_kind["timeline"].line().render() == (
        "- 2026-10-20 · Initech's annual contract is $96,000. "
        "(direct: source/slack/sales/2026-10-20.md) [companies/initech]"
    )
    # a field and the summary of a page merged from two notes: the memory's inference
    assert by_kind["field"].line().render().endswith("(inferred) [companies/initech]")
    assert by_kind["section"].line().render().endswith("(inferred) [companies/initech]")
    # a page written from one note quotes it
    one = Page.parse({**RAW_PAGE, "sources": ["meetings/2026/2026-10-07-pricing-review.md"]})
    section = next(p for p in from_page(one, 0, False) if p.kind == "section")
    assert section.direct and section.origin == "source/meetings/2026/2026-10-07-pricing-review.md"


def test_a_raw_note_s_sentence_is_direct_with_its_author() -> None:
    result = {
        "id": "source/memos/2023-10-12-vendor.md",
        "title": "Vendor memo",
        "date": "2023-10-12",
        "snippet": "---\nauthor: Priya Shah\ndate: 2023-10-12\n---\nWe chose Stripe over Adyen.",
    }
    (piece,) = from_source(Hit.parse(result), 0, mention_reader("UTC"))
    assert piece.line().render() == (
        "- 2023-10-12 · We chose Stripe over Adyen. (direct, by Priya Shah) "
        "[source/memos/2023-10-12-vendor.md]"
    )


def test_labelled_lines_become_records_and_other_lines_do_not() -> None:
    timeline = {p.kind: p for p in from_page(PAGE, 0, False)}["timeline"]
    lead = replace(timeline, author="Alex Kim").line()
    said = Line(
        "Caroline: I went.",
        "2023-05-07",
        ("source/session-01.md",),
        DIRECT,
        author="Caroline",
        said="2023-05-08",
    )
    field = Line("Initech — contract value: 96000", None, ("companies/initech",), INFERRED)
    later = Line("The review reversed it.", "2026-10-07", ("meetings/x",), INFERRED, tag="Later")
    listed = Line("Pricing review", "2026-10-07", ("meetings/x",))  # a listing: no label
    records = Digest(lead, (said, field, later, listed)).evidence()
    assert [r["label"] for r in records] == ["direct", "direct", "inferred", "inferred"]
    assert records[0] == {
        "date": "2026-10-20",
        "text": "Initech's annual contract is $96,000.",
        "label": "direct",
        "source": "source/slack/sales/2026-10-20.md",
        "author": "Alex Kim",
        "page": "companies/initech",
    }
    assert records[1]["source"] == "source/session-01.md" and records[1]["date"] == "2023-05-07"
    assert records[2]["date"] is None and records[2]["source"] is None
    assert records[3]["date"] == "2026-10-07"


def test_e_mail_header_lines_on_a_page_are_no_evidence() -> None:
    body = (
        "From: Luis Hernandez <luis@x.com>\nTo: Finance <fin@x.com>\n"
        "Date: 2023‑10‑12\nSubject: Vendor choice\n\nWe chose Stripe over Adyen."
    )
    assert [text for _, text in pieces(body)] == ["We chose Stripe over Adyen."]
