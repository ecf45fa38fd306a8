"""Merge rules (seed section 5) on plain pages: no server needed."""

from __future__ import annotations

import datetime as dt

import pytest

from ingest_agent.errors import SourceFailed
from ingest_agent.pages.merge import MergeResult, Order, check_no_loss, merge_page, source_order
from memserver.kb.page import Page, TimelineEntry, validate_page
from memserver.kb.schema import load_schema
from tests.fixtures.kb import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB)
PEOPLE = SCHEMA.folder("people")
MEETINGS = SCHEMA.folder("meetings")
D = dt.date


def bob(**fields: object) -> Page:
    return Page(
        title="Bob Martinez",
        type="person",
        fields={"role": "Director of Operations", "reports_to": "Karen Lee", **fields},
        sources=("a.md",),
        timeline=(TimelineEntry(D(2026, 6, 18), "Intro call.", "a.md"),),
    )


def merge(
    existing: Page | None,
    draft: Page,
    source: str,
    day: dt.date,
    others: dict[str, dt.date | None],
) -> MergeResult:
    return merge_page(
        existing,
        draft,
        PEOPLE,
        page_id="people/bob-martinez",
        source=source,
        source_date=day,
        other_sources=others,
    )


def merge_initech(
    existing: Page, source: str, day: dt.date, others: dict[str, dt.date | None]
) -> MergeResult:
    """Merge a draft that puts Initech's contract value at 96000, from ``source``."""
    draft = Page(title="Initech", type="company", fields={"contract_value": 96000})
    return merge_page(
        existing,
        draft,
        SCHEMA.folder("companies"),
        page_id="companies/initech",
        source=source,
        source_date=day,
        other_sources=others,
    )


def test_source_order_compares_with_the_newest_other_source() -> None:
    assert source_order(D(2026, 9, 1), []) is Order.ONLY
    assert source_order(D(2026, 9, 1), [None]) is Order.ONLY
    assert source_order(D(2026, 9, 1), [D(2026, 6, 1), D(2026, 8, 1)]) is Order.NEWER
    assert source_order(D(2026, 7, 1), [D(2026, 6, 1), D(2026, 8, 1)]) is Order.OLDER
    assert source_order(D(2026, 8, 1), [D(2026, 8, 1)]) is Order.SAME


def test_newer_source_wins_and_the_old_claim_is_superseded() -> None:
    draft = Page(title="Bob Martinez", type="person", fields={"role": "VP of Operations"})
    result = merge(bob(), draft, "b.md", D(2026, 9, 23), {"a.md": D(2026, 6, 18)})
    assert result.page.fields["role"] == "VP of Operations"
    assert result.order is Order.NEWER
    [conflict] = result.conflicts
    assert (conflict.field, conflict.status) == ("role", "superseded")
    assert (conflict.old_value, conflict.new_value) == (
        "Director of Operations",
        "VP of Operations",
    )
    assert conflict.record()["status"] == "superseded"
    entry = next(e for e in result.page.timeline if "role" in e.text)
    assert entry.date == D(2026, 9, 23) and entry.source == "b.md"
    assert "Director of Operations" in entry.text and "VP of Operations" in entry.text
    assert not result.page.open_questions
    assert validate_page(result.page, PEOPLE) == []


def test_older_source_keeps_the_current_value_and_dates_the_old_fact() -> None:
    current = bob(role="VP of Operations")
    draft = Page(title="Bob Martinez", type="person", fields={"role": "Director of Operations"})
    result = merge(current, draft, "old.md", D(2026, 6, 1), {"a.md": D(2026, 9, 23)})
    assert result.page.fields["role"] == "VP of Operations"
    [conflict] = result.conflicts
    assert conflict.status == "superseded" and conflict.old_source == "old.md"
    entry = next(e for e in result.page.timeline if e.source == "old.md")
    assert entry.date == D(2026, 6, 1)
    assert "Director of Operations" in entry.text
    assert not result.page.open_questions


def test_same_date_disagreement_keeps_current_and_opens_a_question() -> None:
    current = Page(
        title="Initech", type="company", fields={"contract_value": 120000}, sources=("m.md",)
    )
    result = merge_initech(current, "s.md", D(2026, 10, 20), {"m.md": D(2026, 10, 20)})
    assert result.page.fields["contract_value"] == 120000
    [question] = result.page.open_questions
    assert "120000" in question and "96000" in question
    assert "m.md" in question and "s.md" in question
    [conflict] = result.conflicts
    assert conflict.status == "unresolved"
    assert conflict.record() == {
        "field": "contract_value",
        "old_value": 120000,
        "new_value": 96000,
        "old_source": "m.md",
        "new_source": "s.md",
        "status": "unresolved",
        "note": conflict.note,
    }
    # the same source again adds nothing: no second question, no second conflict
    again = merge_initech(result.page, "s.md", D(2026, 10, 20), {"m.md": D(2026, 10, 20)})
    assert not again.changed and again.conflicts == ()


def test_a_newer_source_settles_an_open_question() -> None:
    page = Page(
        title="Initech",
        type="company",
        fields={"contract_value": 120000},
        sources=("m.md",),
        open_questions=("contract_value: sources of the same date disagree",),
    )
    result = merge_initech(page, "later.md", D(2026, 11, 1), {"m.md": D(2026, 10, 20)})
    assert result.page.fields["contract_value"] == 96000
    assert result.page.open_questions == ()


def test_the_page_own_source_replaces_without_conflict() -> None:
    draft = Page(title="Bob Martinez", type="person", fields={"role": "Head of Ops"})
    result = merge(bob(), draft, "a.md", D(2026, 6, 18), {})
    assert result.page.fields["role"] == "Head of Ops"
    assert result.conflicts == ()


def test_merging_the_same_draft_twice_changes_nothing() -> None:
    draft = Page(
        title="Bob Martinez",
        type="person",
        fields={"role": "VP of Operations"},
        timeline=(TimelineEntry(D(2026, 9, 21), "Promoted.", None),),
    )
    first = merge(bob(), draft, "b.md", D(2026, 9, 23), {"a.md": D(2026, 6, 18)})
    second = merge(first.page, draft, "b.md", D(2026, 9, 23), {"a.md": D(2026, 6, 18)})
    assert not second.changed
    assert second.page == first.page
    dates = [e.date for e in second.page.timeline]
    assert dates.count(D(2026, 9, 21)) == 1


def test_list_fields_are_unions_and_timeline_only_grows() -> None:
    current = Page(
        title="Globex ETA Rollout",
        type="project",
        fields={"team": ("Priya Shah", "Tom Becker")},
        sources=("p.md",),
        timeline=(TimelineEntry(D(2026, 9, 14), "Pilot started.", "p.md"),),
    )
    draft = Page(
        title="Globex ETA Rollout", type="project", fields={"team": ["Sofia Rossi", "tom becker"]}
    )
    result = merge_page(
        current,
        draft,
        SCHEMA.folder("projects"),
        page_id="projects/globex-eta-rollout",
        source="q.md",
        source_date=D(2026, 10, 1),
        other_sources={"p.md": D(2026, 9, 10)},
    )
    assert result.page.fields["team"] == ("Priya Shah", "Tom Becker", "Sofia Rossi")
    assert result.conflicts == ()
    assert set(current.timeline) <= set(result.page.timeline)
    assert result.page.sources == ("p.md", "q.md")


def test_drafts_are_fitted_to_the_folder() -> None:
    draft = Page(
        title="Weekly sync",
        type="meeting",
        fields={"date": "2026-09-01", "mood": "good"},
        sections={"Summary": "ok", "Gossip": "no"},
        timeline=(TimelineEntry(D(2026, 9, 1), "x", None),),
    )
    result = merge_page(
        None, draft, MEETINGS, page_id="meetings/x", source="m.md", source_date=D(2026, 9, 1)
    )
    assert "mood" not in result.page.fields
    assert list(result.page.sections) == ["Summary"]
    assert result.page.timeline == ()  # meetings keep no timeline
    assert validate_page(result.page, MEETINGS) == []


def test_a_merge_that_would_drop_evidence_is_refused() -> None:
    before = bob()
    after = Page(title="Bob Martinez", type="person", sources=("a.md",))
    with pytest.raises(SourceFailed, match="drop"):
        check_no_loss(before, after, "b.md")


def test_another_spelling_of_the_title_becomes_an_alias() -> None:
    draft = Page(title="Bob", type="person")
    result = merge(bob(), draft, "b.md", D(2026, 9, 23), {"a.md": D(2026, 6, 18)})
    assert result.page.title == "Bob Martinez"
    assert "Bob" in result.page.aliases


def test_an_old_fact_already_on_record_is_not_recorded_again() -> None:
    current = bob(role="VP of Operations")
    current = Page(
        **{
            **current.__dict__,
            "timeline": (
                *current.timeline,
                TimelineEntry(
                    D(2026, 9, 23),
                    "role changed from “Director of Operations” to “VP of Operations”",
                    "b.md",
                ),
            ),
        }
    )
    draft = Page(title="Bob Martinez", type="person", fields={"role": "Director of Operations"})
    result = merge(current, draft, "a.md", D(2026, 6, 18), {"b.md": D(2026, 9, 23)})
    assert result.conflicts == ()
    assert result.page.timeline == current.timeline


def test_plain_facts_days_apart_disagree_and_a_stated_change_or_a_later_month_updates() -> None:
    companies = SCHEMA.folder("companies")
    initech = Page(
        title="Initech", type="company", fields={"contract_value": 120000}, sources=("call.md",)
    )
    draft = Page(title="Initech", type="company", fields={"contract_value": 96000})

    def merged(day: dt.date, plain: frozenset[str]) -> MergeResult:
        return merge_page(
            initech, draft, companies, page_id="companies/initech", source="chat.md",
            source_date=day, other_sources={"call.md": D(2026, 10, 20)}, plain_fields=plain,
        )  # fmt: skip

    close = merged(D(2026, 10, 23), frozenset({"contract_value"}))  # three days later, plain
    assert close.page.fields["contract_value"] == 120000  # kept until a source settles it
    [conflict] = close.conflicts
    assert (conflict.status, conflict.old_value, conflict.new_value) == (
        "unresolved",
        120000,
        96000,
    )
    assert (conflict.old_source, conflict.new_source) == ("call.md", "chat.md")
    [question] = close.page.open_questions
    assert "2026-10-20 and 2026-10-23" in question and "chat.md" in question
    for day, plain in (
        (D(2026, 10, 23), frozenset()),  # "is now $96,000": an update
        (D(2026, 11, 30), frozenset({"contract_value"})),  # weeks later: an update
    ):
        result = merged(day, plain)
        assert result.page.fields["contract_value"] == 96000
        assert [c.status for c in result.conflicts] == ["superseded"]
        assert not result.page.open_questions
