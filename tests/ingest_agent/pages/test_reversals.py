"""Which earlier decision a reversal names, and what it does to both pages: no server."""

from __future__ import annotations

import datetime as dt

from ingest_agent.pages.reversals import (
    best_match,
    pending_question,
    pending_refs,
    reversed_page,
    superseding_page,
)
from ingest_agent.records import DecisionRef
from memserver.kb.page import Page, TimelineEntry, validate_page
from memserver.kb.schema import load_schema
from tests.fixtures.kb import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB)
DECISIONS = SCHEMA.folder("decisions")
D = dt.date


def decision(title: str, day: dt.date, **fields: object) -> Page:
    return Page(
        title=title,
        type="decision",
        fields={"date": day.isoformat(), "status": "accepted", **fields},
        sources=(f"{day}.md",),
        sections={"Decision": f"{title}, as first written."},
        timeline=(TimelineEntry(day, f"Decided: {title}", f"{day}.md"),),
    )


PAGES = {
    "decisions/2026-07-15-per-seat-pricing-for-acme-track": decision(
        "Per-seat pricing for Acme Track", D(2026, 7, 15)
    ),
    "decisions/2026-07-15-support-hours-8-to-20": decision("Support hours 8 to 20", D(2026, 7, 15)),
    "decisions/2026-09-01-monthly-invoices": decision("Monthly invoices", D(2026, 9, 1)),
}


def ref(quoted: str | None = None, on: dt.date | None = None, words: str = "") -> DecisionRef:
    return DecisionRef(
        "decisions", "Usage pricing", D(2026, 10, 7), quoted, on, words, "reversed",
        "small fleets paid too little", "meetings/2026-10-07-pricing.md",
    )  # fmt: skip


def test_the_earlier_decision_is_found_by_quoted_title_by_day_and_words_or_by_words() -> None:
    per_seat = "decisions/2026-07-15-per-seat-pricing-for-acme-track"
    for said in (
        ref(quoted="Per-seat pricing for Acme Track"),
        ref(on=D(2026, 7, 15), words="per-seat pricing decision"),
        ref(words="per-seat pricing"),
        ref(words="seat pricing for Acme Track"),
    ):
        assert best_match(said, PAGES, DECISIONS) == per_seat, said
    assert best_match(ref(on=D(2026, 7, 15), words="pricing"), PAGES, DECISIONS) == per_seat
    # nothing fits, or two fit equally, or only a later decision fits: no link
    assert best_match(ref(words="office moves to Darkhan"), PAGES, DECISIONS) is None
    assert best_match(ref(on=D(2026, 7, 15)), PAGES, DECISIONS) is None
    later = {"decisions/2026-12-01-x": decision("Per-seat pricing again", D(2026, 12, 1))}
    assert best_match(ref(words="per-seat pricing"), later, DECISIONS) is None


def test_the_older_page_is_reversed_with_its_text_kept_and_the_newer_links_back() -> None:
    old = PAGES["decisions/2026-07-15-per-seat-pricing-for-acme-track"]
    said = ref(quoted="Per-seat pricing for Acme Track")
    new_id = "decisions/2026-10-07-usage-pricing"
    page = reversed_page(old, DECISIONS, said, new_id)
    assert page.fields["status"] == "reversed" and page.fields["superseded_by"] == new_id
    assert page.sections == old.sections  # the original Decision text stays
    [entry] = [e for e in page.timeline if e not in old.timeline]
    assert entry.date == D(2026, 10, 7) and entry.source == said.source
    assert "Usage pricing" in entry.text and new_id in entry.text and "small fleets" in entry.text
    assert said.source in page.sources and validate_page(page, DECISIONS) == []
    assert reversed_page(page, DECISIONS, said, new_id) == page  # once only
    waiting = Page(
        title="Usage pricing",
        type="decision",
        fields={"date": "2026-10-07", "status": "accepted"},
        open_questions=(pending_question(said),),
    )
    [back] = pending_refs("decisions/2026-10-07-usage-pricing", waiting, DECISIONS)
    assert (back.quoted, back.status, back.source) == (said.quoted, "reversed", said.source)
    linked = superseding_page(waiting, DECISIONS, "decisions/x", back)
    assert linked.fields["supersedes"] == "decisions/x" and linked.open_questions == ()
