"""Pages: exact round trip, deterministic render, validation, slugs, dates, timeline, chunks."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memserver.errors import PageValidationError, UserError
from memserver.kb.page import (
    Page,
    TimelineEntry,
    add_timeline_entries,
    check_page,
    chunk_page,
    content_hash,
    effective_date,
    folder_json_schema,
    page_slug,
    parse_page,
    render_page,
    validate_page,
)
from memserver.kb.schema import FolderSpec, parse_schema

SCHEMA = parse_schema(
    """\
timezone: Asia/Ulaanbaatar
folders:
  - name: people
    type: person
    description: People.
    fields:
      - {name: role, type: string}
      - {name: company, type: link, folder: companies, verb: works_at}
      - {name: tags, type: list}
      - {name: bio, type: text}
    sections: [Summary, Role]
  - name: companies
    type: company
    description: Companies.
    fields:
      - {name: status, type: enum, values: [prospect, customer], required: true}
      - {name: value, type: number}
      - {name: active, type: bool}
      - {name: renewal, type: date}
    sections: [Summary]
  - name: meetings
    type: meeting
    description: Meetings.
    slug: "{date}-{title}"
    date_field: date
    fields:
      - {name: attendees, type: links, folder: people, verb: attended}
    sections: [Summary, Decisions]
    timeline: false
"""
)
PEOPLE = SCHEMA.folder("people")
COMPANIES = SCHEMA.folder("companies")
MEETINGS = SCHEMA.folder("meetings")

BOB = Page(
    title="Bob Martinez",
    type="person",
    fields={"role": "VP of Operations", "company": "Globex", "tags": ["ops", "logistics"]},
    aliases=("Bob",),
    sources=("2026-09-08-globex-kickoff.md", "2026-09-23-globex-update.md"),
    sections={"Summary": "Bob is VP of Operations at Globex.\n\n- runs 40 trucks", "Role": "VP."},
    timeline=(
        TimelineEntry(dt.date(2026, 9, 8), "Kickoff call.", "2026-09-08-globex-kickoff.md"),
        TimelineEntry(dt.date(2026, 9, 23), "Promoted to VP of Operations."),
    ),
    open_questions=("Start date: 2026-09-01 or 2026-09-15?",),
)

BOB_TEXT = """\
---
title: Bob Martinez
type: person
role: VP of Operations
company: Globex
tags: [ops, logistics]
aliases: [Bob]
sources: [2026-09-08-globex-kickoff.md, 2026-09-23-globex-update.md]
---

## Summary
Bob is VP of Operations at Globex.

- runs 40 trucks

## Role
VP.

## Timeline
- **2026-09-23** | Promoted to VP of Operations.
- **2026-09-08** | Kickoff call. [source: 2026-09-08-globex-kickoff.md]

## Open Questions
- Start date: 2026-09-01 or 2026-09-15?
"""


def test_render_matches_the_documented_page_format() -> None:
    assert render_page(BOB, PEOPLE) == BOB_TEXT
    assert parse_page(BOB_TEXT) == BOB


def test_render_is_deterministic_whatever_the_mapping_order() -> None:
    shuffled = Page(
        title=BOB.title,
        type=BOB.type,
        fields=dict(reversed(list(BOB.fields.items()))),
        aliases=BOB.aliases,
        sources=BOB.sources,
        sections=dict(reversed(list(BOB.sections.items()))),
        timeline=tuple(reversed(BOB.timeline)),
        open_questions=BOB.open_questions,
    )
    assert shuffled == BOB
    assert render_page(shuffled, PEOPLE).encode() == render_page(BOB, PEOPLE).encode()


def test_unknown_fields_and_sections_render_after_schema_ones_sorted() -> None:
    page = Page(
        "X", "person", {"zeta": 1, "alpha": 2, "role": "r"}, sections={"Zed": "z", "Summary": "s"}
    )
    text = render_page(page, PEOPLE)
    assert text.index("role:") < text.index("alpha:") < text.index("zeta:")
    assert text.index("## Summary") < text.index("## Zed")


# --- property: parse(render(p)) == p ---------------------------------------------------

_chars = st.characters(exclude_categories=["Cs"])
one_line = st.text(_chars, min_size=1, max_size=30).map(lambda s: s.replace("\n", " "))
multi_line = st.lists(
    st.one_of(
        st.text(_chars, max_size=40),
        st.sampled_from(
            ["## not a heading", "\\## escaped", "##", "key: value", "- 'quoted' \"x\""]
        ),
    ),
    max_size=6,
).map("\n".join)
values = st.one_of(
    one_line,
    multi_line,
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.dates().map(dt.date.isoformat),
    st.lists(one_line, max_size=4),
    st.sampled_from(["yes", "null", "~", "2026-02-30", "1e3", "a: b", "'q'", '"dq"', "- x", "---"]),
)
field_names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: n not in ("title", "type", "aliases", "sources")
)
headings = one_line.filter(lambda h: " ".join(h.split()) not in ("", "Timeline", "Open Questions"))
entries = st.builds(
    TimelineEntry,
    st.dates(),
    one_line,
    st.one_of(st.none(), one_line.filter(lambda s: "]" not in s)),
)
pages = st.builds(
    Page,
    title=one_line.filter(str.strip),
    type=one_line.filter(str.strip),
    fields=st.dictionaries(field_names, values, max_size=5),
    aliases=st.lists(one_line, max_size=3).map(tuple),
    sources=st.lists(one_line, max_size=3).map(tuple),
    sections=st.dictionaries(headings, multi_line, max_size=4),
    timeline=st.lists(entries, max_size=5).map(tuple),
    open_questions=st.lists(one_line, max_size=3).map(tuple),
)


@settings(max_examples=300, deadline=None)
@given(pages)
def test_parse_render_round_trip(page: Page) -> None:
    for entry in page.timeline:
        assume(entry.source is not None or not entry.text.endswith("]"))
    text = render_page(page)
    assert parse_page(text) == page
    assert render_page(parse_page(text)) == text


@settings(max_examples=100, deadline=None)
@given(pages)
def test_round_trip_with_a_folder(page: Page) -> None:
    for entry in page.timeline:
        assume(entry.source is not None or not entry.text.endswith("]"))
    text = render_page(page, PEOPLE)
    assert parse_page(text) == page
    assert render_page(parse_page(text), PEOPLE) == text


def test_heading_like_body_lines_survive_the_round_trip() -> None:
    body = "first\n## looks like a heading\n\\## already escaped\n##"
    page = Page("T", "person", sections={"Summary": body})
    text = render_page(page)
    assert "\n\\## looks like a heading\n\\\\## already escaped\n\\##\n" in text
    assert parse_page(text).sections["Summary"] == body


def test_normalisation_trims_what_markdown_cannot_keep() -> None:
    page = Page(
        " T ",
        "person",
        {"role": None, "tags": ["a"]},
        aliases=("  Bob ", "", "Bob"),
        sections={"Summary": "\n\n  text  \n\n", "Empty": "  \n"},
        timeline=(TimelineEntry(dt.date(2026, 1, 1), "a\n  b", " "),),
        open_questions=("q\nmore",),
    )
    assert page.title == "T" and page.fields == {"tags": ("a",)}
    assert page.aliases == ("Bob",)
    assert page.sections == {"Summary": "  text"}
    assert page.timeline == (TimelineEntry(dt.date(2026, 1, 1), "a b", None),)
    assert page.open_questions == ("q more",)


# --- parse problems ----------------------------------------------------------------------


def test_every_parse_problem_is_reported_at_once() -> None:
    text = (
        "---\ntitle: ''\nsources: {a: b}\n---\nstray text\n## Summary\nok\n## Summary\nagain\n"
        "## Timeline\n- **2026-13-01** | bad date\n- 2026-01-01 | no bold\n"
        "## Open Questions\nnot a bullet\n"
    )
    with pytest.raises(PageValidationError) as caught:
        parse_page(text, source="knowledge/people/x.md")
    found = {(p.location, p.line) for p in caught.value.problems}
    assert ("title", None) in found and ("type", None) in found and ("sources", None) in found
    assert ("body", 5) in found
    assert ("sections.Summary", 8) in found
    assert ("timeline", 11) in found and ("timeline", 12) in found
    assert ("open_questions", 14) in found
    assert str(caught.value).startswith("knowledge/people/x.md: 8 page problems")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("no frontmatter\n", "does not start with '---'"),
        ("---\ntitle: x\n", "not closed"),
        ("---\ntitle: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "not a mapping"),
    ],
)
def test_broken_frontmatter_is_a_clear_error(text: str, words: str) -> None:
    with pytest.raises(PageValidationError, match=words):
        parse_page(text)


def test_hand_written_bad_dates_do_not_crash_parsing() -> None:
    page = parse_page(
        "---\ntitle: Acme\ntype: company\nstatus: customer\nrenewal: 2026-02-30\n---\n"
    )
    assert page.fields["renewal"] == "2026-02-30"
    problems = validate_page(page, COMPANIES)
    assert [(p.location, p.message) for p in problems] == [
        ("fields.renewal", "'2026-02-30' is not a valid date")
    ]


# --- validation --------------------------------------------------------------------------


def test_every_validation_problem_is_reported_at_once() -> None:
    page = Page(
        "Acme",
        "firm",
        {"value": "a lot", "active": "yes", "renewal": "next year", "founded": "1999"},
        sections={"Summary": "ok", "History": "x"},
        timeline=(TimelineEntry(dt.date(2026, 1, 1), "", "a]b.md"),),
    )
    problems = {p.location: p for p in validate_page(page, COMPANIES)}
    assert set(problems) == {
        "type",
        "fields.status",
        "fields.value",
        "fields.active",
        "fields.renewal",
        "fields.founded",
        "sections.History",
        "timeline[0]",
    }
    assert problems["type"].fix == "set type: company"
    assert "missing required field 'status'" in problems["fields.status"].message
    assert "expected a number" in problems["fields.value"].message
    assert "unknown field 'founded'" in problems["fields.founded"].message
    assert "use one of: Summary" in problems["sections.History"].fix
    with pytest.raises(PageValidationError) as caught:
        check_page(page, COMPANIES)
    assert len(caught.value.problems) == 9  # timeline[0] has two problems


def test_enum_links_and_reserved_sections_are_checked() -> None:
    company = Page("Acme", "company", {"status": "partner"})
    [problem] = validate_page(company, COMPANIES)
    assert problem.location == "fields.status" and "prospect, customer" in problem.fix
    meeting = Page(
        "Sync",
        "meeting",
        {"date": "2026-09-08", "attendees": ["Bob", "Bob"]},
        sections={"Timeline": "x"},
        timeline=(TimelineEntry(dt.date(2026, 9, 8), "met"),),
    )
    locations = {p.location for p in validate_page(meeting, MEETINGS)}
    assert locations == {"fields.attendees", "sections.Timeline", "timeline"}
    assert validate_page(BOB, PEOPLE) == []


def test_string_fields_are_one_line_text_fields_are_not() -> None:
    page = Page("Bob", "person", {"role": "a\nb", "bio": "line 1\nline 2"})
    assert [p.location for p in validate_page(page, PEOPLE)] == ["fields.role"]


def test_folder_json_schema_is_usable_by_tools() -> None:
    schema = folder_json_schema(COMPANIES)
    assert schema["required"] == ["status"]
    assert schema["properties"]["status"]["enum"] == ["prospect", "customer"]
    assert schema["additionalProperties"] is False


# --- slugs and dates ---------------------------------------------------------------------


def test_slug_from_template_with_unicode_title() -> None:
    page = Page("Долоо хоногийн уулзалт", "meeting", {"date": "2026-09-08"})
    assert page_slug(page, MEETINGS) == "2026-09-08-долоо-хоногийн-уулзалт"
    assert page_slug(Page("Энхтуяа Ганбаатар", "person"), PEOPLE) == "энхтуяа-ганбаатар"


@pytest.mark.parametrize("title", ["../../etc/passwd", "..", "/root/.ssh", ".env", "a\x00b/c"])
def test_traversal_titles_give_safe_slugs_or_errors(title: str) -> None:
    try:
        slug = page_slug(Page(title, "person"), PEOPLE)
    except UserError:
        return
    assert "/" not in slug and ".." not in slug and not slug.startswith(".") and "\x00" not in slug


def test_slug_needs_its_placeholders() -> None:
    with pytest.raises(PageValidationError, match=r"needs \{date\}"):
        page_slug(Page("Sync", "meeting"), MEETINGS)
    with pytest.raises(PageValidationError, match="no letters or digits"):
        page_slug(Page("!!!", "person"), PEOPLE)
    problems = validate_page(Page("???", "person"), PEOPLE)
    assert [p.location for p in problems] == ["title"]


def test_effective_date_precedence() -> None:
    folder = FolderSpec("events", "event", "Events.", date_field="held_on")
    plain = FolderSpec("notes", "note", "Notes.")
    timeline = (TimelineEntry(dt.date(2026, 3, 1), "a"), TimelineEntry(dt.date(2026, 1, 1), "b"))
    both = Page("T", "event", {"held_on": "2026-05-05", "date": "2026-06-06"}, timeline=timeline)
    assert effective_date(both, folder) == dt.date(2026, 5, 5)
    generic = Page("T", "note", {"published": "2026-07-07", "event_date": "2026-06-06"})
    assert effective_date(generic, plain) == dt.date(2026, 6, 6)
    named = Page("Report 2026-04-04", "note", timeline=timeline)
    assert effective_date(named, plain) == dt.date(2026, 4, 4)
    assert effective_date(Page("T", "note"), plain, slug="2026-02-02-notes") == dt.date(2026, 2, 2)
    assert effective_date(Page("T", "note", timeline=timeline), plain) == dt.date(2026, 3, 1)
    assert effective_date(Page("T", "note"), plain) is None


# --- timeline ----------------------------------------------------------------------------


def test_timeline_appends_are_idempotent_and_newest_first() -> None:
    new = [
        TimelineEntry(dt.date(2026, 10, 1), "Left Globex.", "x.md"),
        TimelineEntry(dt.date(2026, 9, 8), "Kickoff call.", "2026-09-08-globex-kickoff.md"),
    ]
    once = add_timeline_entries(BOB, new)
    twice = add_timeline_entries(once, new)
    assert once == twice
    assert [e.date for e in once.timeline] == [
        dt.date(2026, 10, 1),
        dt.date(2026, 9, 23),
        dt.date(2026, 9, 8),
    ]
    other_source = add_timeline_entries(
        once, [TimelineEntry(dt.date(2026, 9, 8), "Kickoff call.", "other.md")]
    )
    assert len(other_source.timeline) == 4
    assert render_page(twice, PEOPLE).count("Left Globex.") == 1


# --- chunks ------------------------------------------------------------------------------


def test_chunks_carry_title_and_section_and_overlap() -> None:
    words = [f"w{i}" for i in range(700)]
    page = Page("Long Page", "person", {"role": "CEO"}, sections={"Summary": " ".join(words)})
    page = add_timeline_entries(page, [TimelineEntry(dt.date(2026, 9, 8), "Joined.", "a.md")])
    chunks = chunk_page(page, max_words=300, overlap=50)
    summary = [c for c in chunks if c.section == "Summary"]
    assert len(summary) == 3 and all(c.text.startswith("Long Page — Summary\n") for c in summary)
    first, second = (c.text.split("\n", 1)[1].split() for c in summary[:2])
    assert len(first) == 300 and first[-50:] == second[:50]
    assert summary[-1].text.split()[-1] == "w699"
    [timeline] = [c for c in chunks if c.section == "Timeline"]
    assert timeline.date == dt.date(2026, 9, 8)
    assert timeline.text == "Long Page — Timeline\n2026-09-08: Joined. [source: a.md]"
    assert chunks[0].section == "Fields" and "role: CEO" in chunks[0].text
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_each_timeline_entry_is_its_own_chunk() -> None:
    chunks = chunk_page(BOB)
    dated = [c for c in chunks if c.section == "Timeline"]
    assert [c.date for c in dated] == [dt.date(2026, 9, 23), dt.date(2026, 9, 8)]
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert chunks[-len(dated) :] == dated  # after the packed parts


def test_short_parts_of_a_page_pack_into_one_chunk_until_it_is_full() -> None:
    """Fields, sections and open questions share chunks of up to max_words words, each
    section under its heading; a part that would overflow starts the next chunk."""
    chunks = chunk_page(BOB)
    [packed] = [c for c in chunks if c.section != "Timeline"]
    assert packed.section.startswith("Fields, ") and packed.section.endswith("Open Questions")
    first_line, body = packed.text.split("\n", 1)
    assert first_line == f"{BOB.title} — {packed.section}"
    for heading, text in BOB.sections.items():
        assert f"## {heading}\n{text.strip()}" in body
    assert packed.date is None

    sections = {"A": "alpha " * 6, "B": "beta " * 6, "C": "gamma " * 6}
    page = Page("Small", "note", {}, sections=sections)
    pieces = chunk_page(page, max_words=12, overlap=2)
    assert [c.section for c in pieces] == ["A, B", "C"]
    assert pieces[1].text == "Small — C\n" + sections["C"].strip()


def test_content_hash_is_sha256_of_utf8() -> None:
    assert content_hash("Өглөө") == hashlib.sha256("Өглөө".encode()).hexdigest()


def test_drop_field_lines_removes_only_the_named_fields_lines() -> None:
    from memserver.kb.page import drop_field_lines

    text = (
        "Weekly sync — Fields\nattendees: Zed Person, Ann Lee\ndate: 2026-09-15\nattendees_note: x"
    )
    assert drop_field_lines(text, {"attendees"}) == (
        "Weekly sync — Fields\ndate: 2026-09-15\nattendees_note: x"
    )
    assert drop_field_lines(text, ()) == text


def test_hidden_link_fields_names_links_into_folders_the_caller_cannot_see() -> None:
    from memserver.kb.schema import parse_schema

    schema = parse_schema(
        "timezone: UTC\nfolders:\n"
        "  - {name: people, type: person, description: People}\n"
        "  - {name: companies, type: company, description: Companies}\n"
        "  - name: meetings\n    type: meeting\n    description: Meetings\n"
        "    fields:\n"
        "      - {name: attendees, type: links, folder: people, verb: attended}\n"
        "      - {name: company, type: link, folder: companies, verb: about}\n"
        "      - {name: status, type: string}\n"
    )
    meetings = schema.folder("meetings")
    assert meetings.hidden_link_fields({"meetings", "companies"}.__contains__) == {"attendees"}
    assert meetings.hidden_link_fields(lambda folder: True) == frozenset()
