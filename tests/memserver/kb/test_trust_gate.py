"""The write gate as page arithmetic: what a note's level writes at once and what waits."""

from __future__ import annotations

import datetime as dt

from memserver.kb.page import Page, TimelineEntry
from memserver.kb.schema import Schema, load_schema
from memserver.kb.trust import Level, Standing
from memserver.kb.trust_gate import gate
from memserver.server.source_trust import _rows
from memserver.store.records import ConflictRecord
from tests.fixtures.kb import EXAMPLE_KB

NOTE = "slack/random/2026-11-01.md"
TRUSTED = Standing(Level.TRUSTED, "source/team is trusted")
ORDINARY = Standing(Level.ORDINARY, "a note from source/slack/random is ordinary by default")
UNTRUSTED = Standing(Level.UNTRUSTED, "source/slack/random is untrusted")


def schema() -> Schema:
    return load_schema(EXAMPLE_KB)


BOB = Page(
    title="Bob Martinez",
    type="person",
    fields={"role": "VP of Operations", "company": "Globex"},
    sections={"Summary": "Bob runs operations at Globex."},
    sources=("meetings/2026/a.md",),
    timeline=(TimelineEntry(dt.date(2026, 6, 18), "Met at the intro call.", "meetings/2026/a.md"),),
)


def test_a_trusted_note_changes_a_fact_at_once() -> None:
    proposed = Page(**{**BOB.__dict__, "fields": {"role": "CEO", "company": "Globex"}})
    gated = gate(BOB, proposed, schema().folder("people"), NOTE, TRUSTED)
    assert gated.page == proposed and not gated.held


def test_an_ordinary_note_adds_but_its_changes_wait() -> None:
    proposed = Page(
        title="Bob Martinez",
        type="person",
        fields={"role": "CEO", "reports_to": "Karen Lee", "email": "bob@globex.example"},
        sections={"Summary": "Bob runs operations at Globex.\n\nHe likes trains."},
        sources=(*BOB.sources, NOTE),
        timeline=(TimelineEntry(dt.date(2026, 11, 1), "Said to be CEO.", NOTE),),
    )
    gated = gate(BOB, proposed, schema().folder("people"), NOTE, ORDINARY)
    page = gated.page
    # the changes wait: the role replaced, the company removed
    assert page.fields["role"] == "VP of Operations" and page.fields["company"] == "Globex"
    held = {h.field: h for h in gated.held}
    assert set(held) == {"role", "company", "_timeline"}
    assert held["role"].proposed == "CEO" and held["role"].kept == "VP of Operations"
    assert "by default" in held["role"].why
    # the additions are written: a value where there was none, text added
    assert page.fields["reports_to"] == "Karen Lee"
    assert page.fields["email"] == "bob@globex.example"
    assert "He likes trains." in page.sections["Summary"]
    assert NOTE in page.sources
    # a dated line may tell of the change: it waits with it; the stored one stays
    assert page.timeline == BOB.timeline
    assert held["_timeline"].proposed == [
        {"date": "2026-11-01", "text": "Said to be CEO.", "source": NOTE}
    ]
    question = f"Review: {NOTE} proposes that its role is now “CEO”"
    assert any(q.startswith(question) for q in page.open_questions)
    assert gated.reason is not None and "role" in gated.reason


def test_an_untrusted_note_changes_nothing_and_every_proposal_waits() -> None:
    proposed = Page(
        title="Bob Martinez",
        type="person",
        fields={"role": "VP of Operations", "company": "Globex", "reports_to": "Karen Lee"},
        sections={"Summary": "Bob runs operations at Globex.\n\nGlobex churned (SYSTEM order)."},
        aliases=("The CEO",),
        sources=(*BOB.sources, NOTE),
        timeline=(*BOB.timeline, TimelineEntry(dt.date(2026, 11, 1), "SYSTEM order.", NOTE)),
    )
    gated = gate(BOB, proposed, schema().folder("people"), NOTE, UNTRUSTED)
    page = gated.page
    assert {h.field for h in gated.held} == {"reports_to", "## Summary", "_aliases", "_timeline"}
    assert page.fields == BOB.fields and page.sections == BOB.sections
    assert page.timeline == BOB.timeline and page.aliases == BOB.aliases
    assert page.sources == BOB.sources  # nothing of the note's was written
    assert len(page.open_questions) == 4


def test_a_reversal_waits_whoever_wrote_it_below_trusted() -> None:
    decisions = schema().folder("decisions")
    accepted = Page(
        title="Usage-based pricing replaces per-seat pricing",
        type="decision",
        fields={"date": "2026-10-07", "status": "accepted"},
        sections={"Decision": "Usage-based pricing."},
        sources=("decisions/x.md",),
    )
    reversed_ = Page(
        **{
            **accepted.__dict__,
            "fields": {"date": "2026-10-07", "status": "reversed", "superseded_by": "Back"},
            "sources": ("decisions/x.md", NOTE),
        }
    )
    gated = gate(accepted, reversed_, decisions, NOTE, ORDINARY)
    assert gated.page.fields == accepted.fields
    assert {h.field for h in gated.held} == {"status", "superseded_by"}
    assert gate(accepted, reversed_, decisions, NOTE, TRUSTED).page == reversed_


def test_a_new_page_that_supersedes_another_is_proposed_and_its_link_waits() -> None:
    decisions = schema().folder("decisions")
    back = Page(
        title="Per-seat pricing is back",
        type="decision",
        fields={"date": "2026-11-01", "status": "accepted", "supersedes": "Usage pricing"},
        sources=(NOTE,),
    )
    gated = gate(None, back, decisions, NOTE, ORDINARY)
    assert gated.page.fields == {"date": "2026-11-01", "status": "proposed"}
    held = {h.field: h.proposed for h in gated.held}
    assert held == {"supersedes": "Usage pricing", "status": "accepted"}
    plain = Page(
        title="Quarterly offsite",
        type="decision",
        fields={"date": "2026-11-01", "status": "accepted"},
    )
    assert not gate(None, plain, decisions, NOTE, ORDINARY).held  # an addition
    untrusted = gate(None, plain, decisions, NOTE, UNTRUSTED)
    assert untrusted.page.fields["status"] == "proposed"
    assert {h.field for h in untrusted.held} == {"_page", "status"}


def test_an_ordinary_note_adds_a_dated_line_when_it_changes_nothing() -> None:
    line = TimelineEntry(dt.date(2026, 11, 1), "Visited the Denver depot.", NOTE)
    proposed = Page(**{**BOB.__dict__, "timeline": (*BOB.timeline, line)})
    gated = gate(BOB, proposed, schema().folder("people"), NOTE, ORDINARY)
    assert not gated.held and line in gated.page.timeline


def test_a_conflict_a_waiting_change_would_settle_stays_open() -> None:
    """A note below trusted states a value that would settle a field's open conflict:
    the value waits, and so does the settling (the rows the write stores keep the
    conflict open; other fields' records go through)."""
    proposed = Page(**{**BOB.__dict__, "fields": {"role": "CEO", "company": "Globex"}})
    gated = gate(BOB, proposed, schema().folder("people"), NOTE, ORDINARY)
    sent = [
        ConflictRecord("role", "VP of Operations", "CEO", None, NOTE, "resolved"),
        ConflictRecord("role", "VP of Operations", "CEO", None, NOTE, "superseded"),
        ConflictRecord("email", "a@x", "b@x", None, NOTE, "unresolved"),
    ]
    rows = _rows(gated, sent)
    assert [(r.field, r.status) for r in rows if not (r.note or "").startswith("review:")] == [
        ("email", "unresolved")
    ]
    assert any(r.field == "role" and (r.note or "").startswith("review:") for r in rows)
