"""kb_brief's and kb_get_page's answers read once into types: what is malformed is read
as absent, empty or as a list of one, so no answer path checks a type again."""

from __future__ import annotations

from read_agent.tools.wire import (
    AsOf,
    Brief,
    Change,
    Edge,
    Hit,
    Listed,
    Page,
    Resolved,
    Subject,
    TimelineEntry,
    edges,
    events,
    listed_pages,
)


def test_a_brief_is_read_into_its_parts() -> None:
    brief = Brief.parse(
        {
            "subjects": [
                {
                    "id": "decisions/per-seat",
                    "title": "Per-seat pricing",
                    "status": "reversed",
                    "deciders": ["Maria Lopez"],
                    "superseded_by": ["decisions/usage"],
                    "current": {"price": "$49"},
                    "earlier": [{"field": "status", "value": "accepted", "valid_to": "2026-10-07"}],
                    "changed_since": [{"field": "status", "to": "reversed", "date": "2026-10-07"}],
                }
            ],
            "evidence": [{"text": "We settle on $49.", "label": "direct", "page": "decisions/x"}],
            "conflicts": [{"field": "price", "sides": [{"value": 49, "source": "a.md"}]}],
        }
    )
    (subject,) = brief.subjects
    assert subject.superseded_by == ("decisions/usage",) and subject.deciders == ("Maria Lopez",)
    assert subject.current == {"price": "$49"}
    assert subject.earlier[0].valid_to == "2026-10-07"
    assert subject.changed_since[0].to == "reversed"
    assert brief.evidence[0].label == "direct" and brief.evidence[0].source is None
    assert brief.conflicts[0].sides[0].value == 49


def test_what_is_malformed_is_read_as_absent_or_as_a_list_of_one() -> None:
    brief = Brief.parse(
        {
            "subjects": ["not an object", {"id": "a", "superseded_by": "b", "current": "text"}],
            "evidence": None,
            "conflicts": {"field": "x"},
        }
    )
    assert brief.subjects == (Subject("a", "", superseded_by=("b",)),)
    assert brief.evidence == () and brief.conflicts[0].field == "x"
    assert Brief.parse(None) == Brief()


def test_a_page_is_read_whole() -> None:
    page = Page.parse(
        {
            "id": "people/bob-martinez",
            "folder": "people",
            "slug": "bob-martinez",
            "version": 3,
            "title": "Bob Martinez",
            "type": "person",
            "effective_date": None,
            "updated_at": "2026-09-22T10:00:00+00:00",
            "fields": {"role": "VP of Operations", "reports_to": "Dana Whitfield"},
            "aliases": ["Bob", "Боб Мартинез"],
            "sources": ["meetings/globex-update.md"],
            "sections": {"Summary": "Bob runs operations at Globex."},
            "timeline": [
                {"date": "2026-09-21", "text": "Promoted.", "source": "meetings/globex-update.md"}
            ],
            "open_questions": ["role: two sources disagree"],
            "markdown": "---\ntitle: Bob Martinez\n---\n",
            "as_of": {
                "date": "2026-09-01",
                "known": True,
                "fields": {"role": {"value": "Director", "valid_from": "2026-07-01"}},
                "changed_since": [{"field": "role", "to": "VP", "date": "2026-09-21"}],
                "current_fields": {"role": "VP of Operations"},
            },
        }
    )
    assert page == Page(
        "people/bob-martinez",
        "Bob Martinez",
        "people",
        "bob-martinez",
        3,
        "person",
        None,
        "2026-09-22T10:00:00+00:00",
        {"role": "VP of Operations", "reports_to": "Dana Whitfield"},
        ("Bob", "Боб Мартинез"),
        ("meetings/globex-update.md",),
        {"Summary": "Bob runs operations at Globex."},
        (TimelineEntry("2026-09-21", "Promoted.", "meetings/globex-update.md"),),
        ("role: two sources disagree",),
        "---\ntitle: Bob Martinez\n---\n",
        AsOf(
            "2026-09-01",
            True,
            {"role": {"value": "Director", "valid_from": "2026-07-01"}},
            (Change("role", "VP", "2026-09-21"),),
            {"role": "VP of Operations"},
        ),
    )


def test_what_is_malformed_on_a_page_is_read_as_empty() -> None:
    page = Page.parse(
        {
            "id": "people/bob",
            "version": "three",
            "fields": ["role", "VP"],
            "aliases": "Bob",
            "sources": ["a.md", None, ""],
            "sections": "Bob runs operations.",
            "timeline": ["2026-09-21: Promoted.", {"date": "2026-09-21"}],
            "open_questions": None,
            "as_of": "2026-09-01",
        }
    )
    # no title, no folder: empty, not "None"; a string where a list belongs: a list of one
    assert page.title == "" and page.folder == "" and page.version == 0
    assert page.fields == {} and page.sections == {} and page.as_of is None
    assert page.aliases == ("Bob",) and page.sources == ("a.md",)
    assert page.timeline == (TimelineEntry("2026-09-21", ""),) and page.open_questions == ()
    assert Page.parse(None) == Page("")
    # an as_of with no value history (known: null) stays unknown, not False
    assert Page.parse({"id": "x", "as_of": {"date": "2026-09-01", "known": None}}).as_of == (
        AsOf("2026-09-01")
    )


def test_a_search_result_s_timeline_lines_are_entries_too() -> None:
    hit = Hit.parse(
        {"id": "people/bob", "timeline": [{"date": "2026-09-21", "text": "Promoted."}, "junk"]}
    )
    assert hit.timeline == (TimelineEntry("2026-09-21", "Promoted."),)


def test_the_graph_the_entity_index_the_listing_and_the_timeline_are_read_into_types() -> None:
    (edge,) = edges(
        {
            "edges": [
                {
                    "from_id": "people/a",
                    "from_title": "A",
                    "to_id": "people/b",
                    "verb": "reports_to",
                },
                "x",
            ]
        }
    )
    assert edge == Edge("people/a", "A", "people/b", "reports_to", 1)  # depth 1 unless said
    found = Resolved.parse(
        {
            "candidates": [{"id": "people/a", "title": "A", "score": "0.8", "why": "fuzzy_title"}],
            "ambiguous": 1,
        }
    )
    assert found.ambiguous and found.candidates[0].score == 0.8 and found.candidates[0].folder == ""
    assert listed_pages({"pages": [{"id": "meetings/m", "title": "M"}]}) == (
        Listed("meetings/m", "M", None),
    )
    (event,) = events({"events": [{"date": "2026-10-14", "id": "meetings/m", "kind": "page"}]})
    assert (event.date, event.id, event.kind, event.text, event.source) == (
        "2026-10-14",
        "meetings/m",
        "page",
        "",
        None,
    )


def test_nothing_or_a_malformed_answer_of_those_tools_is_read_as_nothing() -> None:
    for malformed in (None, {}, {"edges": "x", "candidates": 3, "pages": None, "events": [1]}):
        assert edges(malformed) == () and listed_pages(malformed) == () and events(malformed) == ()
        assert Resolved.parse(malformed) == Resolved()
    assert Resolved.parse({"candidates": [{"score": "high"}]}).candidates[0].score == 0.0
