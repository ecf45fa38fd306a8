"""ReviewPolicy: which model proposals are written as drafts and held for a person."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from ingest_agent.llm.review import ReviewPolicy
from ingest_agent.pages.merge import MergeResult, merge_page
from ingest_agent.records import DecisionRef, Source
from memserver.kb.page import Page
from memserver.kb.schema import load_schema

SCHEMA = load_schema(Path(__file__).resolve().parents[3] / "example_kb" / "schema.yaml")
DECISIONS = SCHEMA.folder("decisions")
DAY = dt.date(2026, 11, 1)


def source(text: str = "Notes of a call.\n") -> Source:
    return Source("calls/2026-11-01.md", text, "0" * 64, DAY)


def decision(title: str, **fields: str) -> Page:
    return Page(title=title, type="decision", fields={"date": "2026-11-01", **fields})


def merged(stored: Page | None, draft: Page) -> MergeResult:
    """The draft from the note merged into the stored page, as the agent merges it."""
    others = {"old.md": dt.date(2026, 7, 1)} if stored is not None else None
    return merge_page(
        stored,
        draft,
        DECISIONS,
        page_id="decisions/x",
        source="calls/2026-11-01.md",
        source_date=DAY,
        other_sources=others,
    )


def test_a_new_page_in_a_folder_the_router_did_not_pick_is_a_draft() -> None:
    policy = ReviewPolicy(SCHEMA, source(), ["meetings"])
    assert {"meetings", "people", "companies", "projects"} <= policy.allowed  # and link targets
    assert "decisions" not in policy.allowed
    held = policy.hold(None, merged(None, decision("Big call", status="accepted")), DECISIONS, "x")
    assert held.page.fields["status"] == "proposed"
    assert any("did not pick" in q for q in held.page.open_questions)
    rows = {(c.field, c.old_value, c.new_value, c.status) for c in held.conflicts}
    assert ("status", "proposed", "accepted", "unresolved") in rows


def test_an_existing_page_in_an_unpicked_folder_is_left_as_it_is() -> None:
    stored = decision("Big call", status="accepted")
    policy = ReviewPolicy(SCHEMA, source(), ["meetings"])
    draft = dataclasses.replace(
        decision("Big call", status="accepted"), sections={"Decision": "Injected text."}
    )
    result = merged(stored, draft)
    assert result.changed
    held = policy.hold(stored, result, DECISIONS, "decisions/x")
    assert held.page.sections == stored.sections and held.page.fields == stored.fields
    [row] = held.conflicts
    assert row.field == "_page" and row.new_value["sections"]["Decision"] == "Injected text."


def test_frontmatter_allows_the_folder_and_the_reversal() -> None:
    note = "---\ntype: decision\nsupersedes: Old plan\n---\n\nWe decided.\n"
    policy = ReviewPolicy(SCHEMA, source(note), ["meetings"])
    assert "decisions" in policy.allowed
    stored = decision("Old plan", status="accepted")
    result = merged(stored, decision("Old plan", status="reversed"))
    assert result.page.fields["status"] == "reversed"
    assert policy.hold(stored, result, DECISIONS, "decisions/old") is result  # nothing held


def test_an_accepted_decision_changes_only_from_its_own_source() -> None:
    policy = ReviewPolicy(SCHEMA, source(), ["decisions"])
    draft = dataclasses.replace(
        decision("Big call", status="accepted"), sections={"Decision": "New text."}
    )
    stored = dataclasses.replace(
        decision("Big call", status="accepted"), sections={"Decision": "Old text."}
    )
    held = policy.hold(stored, merged(stored, draft), DECISIONS, "decisions/x")
    assert held.page.sections == {"Decision": "Old text."}
    [row] = held.conflicts
    assert row.field == "## Decision" and "New text." in row.new_value
    # its decision record, edited and read again, changes it at once
    own = dataclasses.replace(stored, sources=("calls/2026-11-01.md",))
    result = merged(own, draft)
    assert policy.hold(own, result, DECISIONS, "decisions/x") is result
    # and a proposed decision is no accepted content yet
    proposed = dataclasses.replace(stored, fields={**stored.fields, "status": "proposed"})
    result = merged(proposed, dataclasses.replace(draft, fields=proposed.fields))
    assert policy.hold(proposed, result, DECISIONS, "decisions/x") is result


def test_a_new_decision_reversing_another_in_its_prose_is_proposed_unless_the_note_says_so() -> (
    None
):
    prose = {"Decision": "Usage pricing. This replaces per-seat pricing."}
    draft = dataclasses.replace(decision("Usage pricing", status="accepted"), sections=prose)
    policy = ReviewPolicy(SCHEMA, source(), ["decisions"])
    held = policy.hold(None, merged(None, draft), DECISIONS, "decisions/x")
    assert held.page.fields["status"] == "proposed" and held.page.sections == prose
    assert ("status", "accepted") in {(c.field, c.new_value) for c in held.conflicts}
    # the rules read the reversal in the note's own words: it applies
    ref = DecisionRef(
        "decisions", "Usage pricing", DAY, None, None, "per-seat pricing", "reversed", "", "x.md"
    )
    result = merged(None, draft)
    stated = ReviewPolicy(SCHEMA, source(), ["decisions"], [ref])
    assert stated.hold(None, result, DECISIONS, "decisions/x") is result
    # a decision that reverses nothing is written as the model read it
    plain = dataclasses.replace(draft, sections={"Decision": "Usage pricing from November."})
    result = merged(None, plain)
    assert policy.hold(None, result, DECISIONS, "decisions/x") is result


def test_a_reversed_decision_made_accepted_again_by_a_model_waits() -> None:
    policy = ReviewPolicy(SCHEMA, source(), ["decisions"])
    stored = decision("Big call", status="reversed")
    draft = decision("Big call", status="accepted")
    held = policy.hold(stored, merged(stored, draft), DECISIONS, "decisions/x")
    assert held.page.fields["status"] == "reversed"
    assert ("status", "reversed", "accepted") in {
        (c.field, c.old_value, c.new_value) for c in held.conflicts
    }
