"""The rules extractor on example_kb sources and small notes: no server, no model."""

from __future__ import annotations

import datetime as dt

from ingest_agent.extract.note import clean_title, split_source
from ingest_agent.extract.rules import RulesExtractor
from ingest_agent.extract.text import resolve_date
from ingest_agent.records import Source
from memserver.kb.page import Page, validate_page
from memserver.kb.schema import load_schema
from memserver.kb.translit import transliterate
from tests.fixtures.kb import EXAMPLE_KB

SCHEMA = load_schema(EXAMPLE_KB)
RULES = RulesExtractor(SCHEMA)


def source(path: str, day: dt.date = dt.date(2026, 9, 1)) -> Source:
    text = (EXAMPLE_KB / "source" / path).read_text(encoding="utf-8")
    return Source(path, text, "0" * 64, day)


def drafts(
    src: Source, known: dict[str, tuple[str, str]] | None = None
) -> dict[tuple[str, str], Page]:
    extraction = RULES.extract(src, (), known or {})
    assert extraction.extractor == "rules"
    for draft in extraction.drafts:
        assert validate_page(draft.page, SCHEMA.folder(draft.folder)) == [], draft
    return {(d.folder, d.title): d.page for d in extraction.drafts}


def test_a_meeting_note_with_frontmatter_becomes_a_meeting_page() -> None:
    pages = drafts(source("meetings/2026/2026-06-18-globex-intro-call.md"))
    meeting = pages[("meetings", "Globex intro call")]
    assert meeting.fields["date"] == "2026-06-18"
    assert meeting.fields["attendees"] == ("Bob Martinez", "Alex Kim", "Alice Chen")
    assert meeting.fields["company"] == "Globex"
    assert "Summary" in meeting.sections
    # "Bob Martinez ... reports to Karen Lee, their COO" (link_verbs)
    assert pages[("people", "Bob Martinez")].fields["reports_to"] == "Karen Lee"


def test_no_frontmatter_title_date_and_attendees_come_from_the_note() -> None:
    pages = drafts(source("meetings/2026/2026-07-22-globex-demo.md"))
    meeting = pages[("meetings", "Globex demo")]
    assert meeting.fields["date"] == "2026-07-22"
    assert meeting.fields["attendees"] == (
        "Bob Martinez",
        "Karen Lee",
        "Alex Kim",
        "Alice Chen",
        "Tom Becker",
    )


def test_updates_chats_and_briefs_are_not_meetings() -> None:
    for path in (
        "updates/2026-08-28-weekly-update.md",
        "slack/sales/2026-10-20.md",
        "slack/general/2026-10-08.md",
        "team/2026-06-03-team-changes.md",
    ):
        assert "meetings" not in {folder for folder, _ in drafts(source(path))}, path
    pages = drafts(source("projects/usage-metering.md"))
    project = pages[("projects", "Usage Metering")]
    assert project.fields["due_date"] == "2026-11-30"
    assert project.fields["team"] == ("Tom Becker", "Sofia Rossi")


def test_decision_frontmatter_and_sections_map_to_the_schema() -> None:
    pages = drafts(source("decisions/2026-07-15-pricing-per-seat.md"))
    decision = pages[("decisions", "Per-seat pricing for Acme Track")]
    assert decision.fields["status"] == "accepted"
    assert decision.fields["decided_by"] == ("Maria Lopez", "Alex Kim", "Alice Chen")
    assert set(decision.sections) == {"Context", "Decision", "Consequences"}
    assert "Why per-seat" in decision.sections["Decision"]  # unmapped heading kept
    assert any(e.date == dt.date(2026, 7, 1) for e in decision.timeline)


def test_labelled_lines_fill_fields_and_quoted_names_become_aliases() -> None:
    pages = drafts(source("projects/mongolian-localization.md"))
    project = pages[("projects", "Mongolian Localization")]
    assert project.fields["owner"] == "Batbayar Dorj"
    assert project.fields["start_date"] == "2026-09-15"
    assert "Монгол хэлний хувилбар" in project.aliases
    team = drafts(source("team/2026-06-03-team-changes.md"))
    bataa = team[("people", "Batbayar Dorj")]
    assert bataa.aliases == ("Bataa",)
    assert bataa.fields["reports_to"] == "Alex Kim"
    assert team[("people", "Alice Chen")].fields["reports_to"] == "Maria Lopez"


def test_a_name_with_its_other_script_spelling_in_brackets_is_an_alias() -> None:
    text = (
        "# Weekly update\n\n- Bataa has a first lead, Nomin Trade (Номин Трейд), a distributor.\n"
        "- The call with Globex (Номин Трейд) is not a second spelling of Globex.\n"
    )
    known = {
        "номин трейд": ("companies", "Номин Трейд"),
        "globex": ("companies", "Globex"),
    }
    pages = drafts(Source("updates/w.md", text, "0" * 64, dt.date(2026, 6, 26)), known)
    assert pages[("companies", "Номин Трейд")].aliases == ("Nomin Trade",)
    assert ("companies", "Globex") not in pages or pages[("companies", "Globex")].aliases == ()


def test_dated_sentences_land_on_known_pages_with_the_source_date_for_relative_days() -> None:
    known = {"globex": ("companies", "Globex"), "номин трейд": ("companies", "Номин Трейд")}
    note = Source(
        "slack/x.md",
        "# #deals\n\nGlobex signed this morning.\n\nNomin: Номин Трейд confirmed yesterday.\n"
        "Unrelated line about 2026-01-05 and nothing known.\n",
        "0" * 64,
        dt.date(2026, 11, 19),
    )
    pages = drafts(note, known)
    globex = pages[("companies", "Globex")]
    nomin = pages[("companies", "Номин Трейд")]
    assert [(e.date, e.source) for e in globex.timeline] == [(dt.date(2026, 11, 19), "slack/x.md")]
    assert [e.date for e in nomin.timeline] == [dt.date(2026, 11, 18)]
    assert len(pages) == 2


def test_private_text_never_becomes_a_timeline_entry() -> None:
    known = {"globex": ("companies", "Globex")}
    note = Source("a.md", "Globex paid [redacted] on 2026-10-01.\n", "0" * 64, dt.date(2026, 10, 2))
    assert drafts(note, known) == {}


def test_helpers() -> None:
    assert clean_title("Globex demo — 2026-07-22") == "Globex demo"
    assert clean_title("Initech — quarterly check-in (Q2)") == "Initech — quarterly check-in (Q2)"
    assert transliterate("Батбаяр Дорж") == "Batbayar Dorj"
    assert transliterate("Alex Kim") is None
    tz = SCHEMA.tz
    assert resolve_date("yesterday", dt.date(2026, 11, 19), tz) == dt.date(2026, 11, 18)
    assert resolve_date("2026-09-21", dt.date(2030, 1, 1), tz) == dt.date(2026, 9, 21)
    assert resolve_date("in March", dt.date(2026, 11, 19), tz) is None


def test_a_hint_is_asked_for_only_when_it_could_change_the_folder() -> None:
    hints = [(), *((f.name,) for f in SCHEMA.folders)]
    hints += [(a.name, b.name) for a in SCHEMA.folders for b in SCHEMA.folders if a != b]
    notes = sorted(p.relative_to(EXAMPLE_KB / "source") for p in EXAMPLE_KB.rglob("source/**/*.md"))
    unclear = Source(
        "notes/a.md", "---\nstatus: active\n---\n\nSome text.\n", "0" * 64, dt.date(2026, 9, 1)
    )
    tied = Source("people/projects/a.md", "Some text.\n", "0" * 64, dt.date(2026, 9, 1))
    sources = [source(p.as_posix()) for p in notes] + [unclear, tied]
    asked = 0
    for src in sources:
        body = split_source(src.content)
        labels = RULES._labels(body.lines)
        chosen = {RULES.choose_folder(src.path, body, labels, hint) for hint in hints}
        if RULES.needs_hint(src):
            asked += 1
        else:
            assert len(chosen) == 1, src.path  # no hint could change it
    assert not RULES.needs_hint(source("meetings/2026/2026-06-18-globex-intro-call.md"))
    assert RULES.needs_hint(tied) and RULES.needs_hint(unclear)
    assert asked < len(sources)


def test_a_title_heading_after_an_export_s_banner_is_the_note_s_title() -> None:
    text = (
        "---\nauthor: Daniel Kim\n---\n\n[WIKI: policy_doc] Architecture Decision Records, "
        "published 2024-03-21\n\n---\n\n# ADR Process Charter v1.0\n\nOwner: Daniel Kim\n"
    )
    body = split_source(text)
    assert body.heading == "ADR Process Charter v1.0"
    assert "# ADR Process Charter v1.0" not in body.lines
    prose = "First line.\nSecond line.\nThird line.\n\n# A section far down\n"
    assert split_source(prose).heading is None  # a heading after the text is a section
