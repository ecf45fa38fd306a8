"""Self-wiring: link extraction (pure) and edge storage/resolution (real PostgreSQL)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from memserver.graph.linker import LinkRef, extract_links, find_named
from memserver.index import reindex as reindexing
from memserver.index.indexer import delete_pages
from memserver.kb.page import Page
from tests.fixtures.kb import MakeKB
from tests.memserver.graph.graph_pages import (
    SCHEMA,
    PageWriter,
    company,
    meeting,
    open_writer,
    person,
    timeline,
)

PEOPLE = SCHEMA.folder("people")


@pytest.fixture
def w(make_kb: MakeKB, database_url: str) -> Iterator[PageWriter]:
    yield from open_writer(make_kb, database_url)


MEETINGS = SCHEMA.folder("meetings")


def refs(page: Page, folder: str = "people") -> set[tuple[str, str, str | None, str]]:
    return {
        (r.verb, r.target_ref, r.to_folder, r.origin)
        for r in extract_links(page, SCHEMA.folder(folder), SCHEMA)
    }


# --------------------------------------------------------------------------- extraction


def test_link_fields_give_the_field_verb_and_folder() -> None:
    page = meeting(
        "Kickoff", "2026-09-08", ("Alice Chen", "[[bob-martinez|Bob]]"), company="Globex"
    )
    assert refs(page, "meetings") == {
        ("attended", "Alice Chen", "people", "field"),
        ("attended", "bob-martinez", "people", "field"),
        ("about", "Globex", "companies", "field"),
    }


def test_link_field_value_with_a_folder_path_keeps_the_slug() -> None:
    page = person("Bob", reports_to="people/alice-chen")
    assert refs(page) == {("reports_to", "alice-chen", "people", "field")}


def test_link_verb_patterns_in_prose_take_the_capitalised_name_after_them() -> None:
    page = person(
        "Bob Martinez",
        summary="Bob reports to Alice Chen, VP of Ops. He joined Globex Corp in 2024.",
    )
    assert refs(page) == {
        ("reports_to", "Alice Chen", "people", "prose"),
        ("works_at", "Globex Corp", "companies", "prose"),
    }


def test_link_verb_patterns_read_timeline_text_and_wikilinks_after_them() -> None:
    page = Page(
        title="Bob",
        type="person",
        timeline=timeline(("2026-09-23", "Now reporting to [[people/erin-fox|Erin]].")),
    )
    assert refs(page) == {
        ("reports_to", "erin-fox", "people", "prose"),
        ("mentions", "erin-fox", "people", "wikilink"),
    }


def test_a_name_before_a_verb_is_read_with_and_without_its_case_ending() -> None:
    """Patterns starting with {name} take the capitalised words before them; each tail
    of that run is a reading, the last word's Mongolian ending removed first."""
    page = person(
        "Тэмүүжин", summary="Тэр Бат Ганбаатарт тайлагнадаг. Одоо Номин Трейдэд ажилладаг."
    )
    found = {r.verb: r for r in extract_links(page, PEOPLE, SCHEMA)}
    boss, employer = found["reports_to"], found["works_at"]
    assert (boss.target_ref, boss.to_folder, boss.origin) == (
        "Бат Ганбаатар",  # "Тэр" (he) is a stop word, never the start of a name
        "people",
        "prose",
    )
    assert "Ганбаатар" in boss.forms and not any("Тэр" in f for f in boss.forms)
    assert employer.target_ref == "Одоо Номин Трейд"  # a sentence's first word is capitalised
    assert "Номин Трейд" in employer.forms and employer.to_folder == "companies"
    quiet = person("Тэмүүжин", summary="Тэр өдөр бүр тайлагнадаг.")  # nobody named before
    assert refs(quiet) == set()


def test_link_verb_pattern_followed_by_lower_case_words_gives_no_edge() -> None:
    page = person("Bob", summary="He reports to the board and joined forces with sales.")
    assert refs(page) == set()


def test_possessive_ends_the_name() -> None:
    page = person("Bob", summary="Reports to Alice Chen's deputy.")
    assert refs(page) == {("reports_to", "Alice Chen", "people", "prose")}


def test_wikilinks_in_every_form() -> None:
    page = person(
        "Bob",
        summary="Met [[people/alice-chen]], [[Carol Diaz]], [[dan-wu|Dan]] and "
        "[[Globex#History]]; also [[unknown/thing]].",
    )
    assert refs(page) == {
        ("mentions", "alice-chen", "people", "wikilink"),
        ("mentions", "Carol Diaz", None, "wikilink"),
        ("mentions", "dan-wu", None, "wikilink"),
        ("mentions", "Globex", None, "wikilink"),
        ("mentions", "unknown/thing", None, "wikilink"),
    }


def test_markdown_links_to_pages_but_not_urls_or_files() -> None:
    page = person(
        "Bob",
        summary="See [Alice](../people/alice-chen.md), [kick](meetings/2026-09-08-kickoff), "
        "[same](carol-diaz.md), [web](https://globex.com/people/x.md), [mail](mailto:a@b), "
        "[top](#summary), ![pic](people/photo.png) and [doc](notes/plan.pdf).",
    )
    assert refs(page) == {
        ("mentions", "alice-chen", "people", "mdlink"),
        ("mentions", "2026-09-08-kickoff", "meetings", "mdlink"),
        ("mentions", "carol-diaz", "people", "mdlink"),
    }


def test_references_are_deduplicated_by_verb_name_and_origin() -> None:
    page = person(
        "Bob",
        summary="[[Alice Chen]] and [[alice-chen]] and [[ALICE CHEN]].",
        reports_to="Alice Chen",
    )
    found = extract_links(page, PEOPLE, SCHEMA)
    assert found == [
        LinkRef("reports_to", "Alice Chen", "people", "field"),
        LinkRef("mentions", "Alice Chen", None, "wikilink"),
    ]


# --------------------------------------------------------------------------- storage


def test_references_match_pages_by_title_slug_and_alias(w: PageWriter) -> None:
    w.put("people", person("Alice Chen"))
    w.put("people", person("Bob Martinez", aliases=("Bob", "Боб")))
    w.put("companies", company("Globex"))
    w.put(
        "meetings",
        meeting(
            "Kickoff",
            "2026-09-08",
            ("alice-chen", "боб"),
            company="GLOBEX",
            summary="Call with [[Globex]]; [Bob](../people/bob-martinez.md) presented.",
        ),
    )
    assert w.edges() == [
        ("meetings/2026-09-08-kickoff", "about", "companies/globex", "GLOBEX", "field"),
        ("meetings/2026-09-08-kickoff", "about", "companies/globex", "Globex", "prose"),
        ("meetings/2026-09-08-kickoff", "attended", "people/alice-chen", "alice-chen", "field"),
        ("meetings/2026-09-08-kickoff", "attended", "people/bob-martinez", "боб", "field"),
        ("meetings/2026-09-08-kickoff", "mentions", "companies/globex", "Globex", "wikilink"),
        (
            "meetings/2026-09-08-kickoff",
            "mentions",
            "people/bob-martinez",
            "bob-martinez",
            "mdlink",
        ),
    ]


def test_title_that_differs_only_in_punctuation_matches(w: PageWriter) -> None:
    w.put("meetings", meeting("Globex Kickoff — ETA tracking", "2026-09-08"))
    w.put("people", person("Bob", summary="Ran [[globex-kickoff-eta-tracking]]."))
    assert w.edges() == [
        (
            "people/bob",
            "mentions",
            "meetings/2026-09-08-globex-kickoff-eta-tracking",
            "globex-kickoff-eta-tracking",
            "wikilink",
        )
    ]


def test_a_name_before_a_verb_points_at_its_page_in_any_write_order(w: PageWriter) -> None:
    pages = [
        ("people", person("Бат Ганбаатар")),
        ("companies", company("Номин Трейд")),
        (
            "people",
            person("Тэмүүжин", summary="Тэр Бат Ганбаатарт тайлагнадаг. Номин Трейдэд ажилладаг."),
        ),
    ]
    expected = [
        ("people/тэмүүжин", "reports_to", "people/бат-ганбаатар", "Бат Ганбаатар", "prose"),
        ("people/тэмүүжин", "works_at", "companies/номин-трейд", "Номин Трейд", "prose"),
    ]
    for order in itertools.permutations(pages):
        w.clear()
        for folder, page in order:
            w.put(folder, page)
        assert w.edges() == expected, order
    w.delete("people/бат-ганбаатар")
    assert w.edges()[0][2] is None  # unwired when its page goes


def test_the_target_folder_is_respected(w: PageWriter) -> None:
    w.put("companies", company("Alice Chen"))  # same name, wrong folder
    w.put("meetings", meeting("Sync", "2026-09-10", ("Alice Chen",)))
    assert w.edges() == [
        ("meetings/2026-09-10-sync", "attended", None, "Alice Chen", "field"),
    ]


def test_unresolved_edges_are_kept_and_wired_when_the_page_appears(w: PageWriter) -> None:
    w.put("meetings", meeting("Sync", "2026-09-10", ("Alice Chen",)))
    assert w.edges()[0][2] is None
    w.put("people", person("Alice Chen"))
    assert w.edges() == [
        ("meetings/2026-09-10-sync", "attended", "people/alice-chen", "Alice Chen", "field"),
    ]


def test_a_new_alias_wires_pending_edges(w: PageWriter) -> None:
    w.put("people", person("Bob Martinez"))
    w.put("meetings", meeting("Sync", "2026-09-10", ("Bobby",)))
    assert w.edges()[0][2] is None
    w.put("people", person("Bob Martinez", aliases=("Bobby",)))
    assert w.edges()[0][2] == "people/bob-martinez"


def _world() -> list[tuple[str, Page]]:
    return [
        ("people", person("Alice Chen", aliases=("Alice",), summary="Joined Globex in 2020.")),
        ("people", person("Bob Martinez", aliases=("Bob",), reports_to="Alice", company="Globex")),
        ("people", person("Alex Kim", aliases=("Alex",))),
        ("people", person("Alex Novak", aliases=("Alex",))),
        ("companies", company("Globex", summary="Customer since [[Kickoff]].")),
        (
            "meetings",
            meeting(
                "Kickoff",
                "2026-09-08",
                ("Alice Chen", "bob", "Alex"),
                summary="Meeting with Globex. [[alex-kim]] took notes.",
            ),
        ),
    ]


def test_write_order_never_changes_the_graph(w: PageWriter) -> None:
    world = _world()
    results = set()
    # Every order of a meeting, its attendees and their company (720 orders is too
    # many for a unit test; these cover each page first and last).
    orders = [p for i, p in enumerate(itertools.permutations(range(len(world)))) if i % 97 == 0]
    orders += [tuple(range(len(world))), tuple(reversed(range(len(world))))]
    for order in orders:
        w.clear()
        for i in order:
            w.put(*world[i])
        results.add(tuple(w.edges()))
    assert len(results) == 1
    edges = results.pop()
    assert ("meetings/2026-09-08-kickoff", "attended", None, "Alex", "field") in edges
    assert ("people/bob-martinez", "reports_to", "people/alice-chen", "Alice", "field") in edges
    assert (
        "companies/globex",
        "mentions",
        "meetings/2026-09-08-kickoff",
        "Kickoff",
        "wikilink",
    ) in edges


def test_meeting_before_or_after_its_attendees_gives_identical_edges(w: PageWriter) -> None:
    sync = meeting("Sync", "2026-09-10", ("Alice Chen", "Bob"), company="Globex")
    w.put("meetings", sync)
    w.put("people", person("Alice Chen"))
    w.put("people", person("Bob Martinez", aliases=("Bob",)))
    w.put("companies", company("Globex"))
    after = w.edges()
    w.clear()
    w.put("people", person("Alice Chen"))
    w.put("people", person("Bob Martinez", aliases=("Bob",)))
    w.put("companies", company("Globex"))
    w.put("meetings", sync)
    assert w.edges() == after
    assert after and all(to_id is not None for _, _, to_id, _, _ in after)


def test_edges_are_replaced_never_duplicated(w: PageWriter) -> None:
    w.put("people", person("Alice Chen"))
    w.put("people", person("Bob Martinez"))
    w.put("meetings", meeting("Sync", "2026-09-10", ("Alice Chen", "Bob Martinez")))
    w.put("meetings", meeting("Sync", "2026-09-10", ("Alice Chen", "Bob Martinez")))
    assert len(w.edges()) == 2
    w.put("meetings", meeting("Sync", "2026-09-10", ("Bob Martinez",)))
    assert w.edges() == [
        ("meetings/2026-09-10-sync", "attended", "people/bob-martinez", "Bob Martinez", "field"),
    ]


def test_two_pages_answering_to_a_name_leave_the_edge_unresolved(w: PageWriter) -> None:
    w.put("people", person("Alex Kim", aliases=("Alex",)))
    w.put("meetings", meeting("Sync", "2026-09-10", ("Alex",)))
    assert w.edges()[0][2] == "people/alex-kim"
    w.put("people", person("Alex Novak", aliases=("Alex",)))
    assert w.edges()[0][2] is None  # ambiguous now: never guessed
    w.put("people", person("Alex Novak"))  # the alias was a mistake
    assert w.edges()[0][2] == "people/alex-kim"


def test_title_match_beats_alias_match(w: PageWriter) -> None:
    w.put("people", person("Bob"))
    w.put("people", person("Bob Martinez", aliases=("Bob",)))
    w.put("meetings", meeting("Sync", "2026-09-10", ("Bob",)))
    assert w.edges()[0][2] == "people/bob"


def test_a_page_never_links_to_itself(w: PageWriter) -> None:
    w.put("people", person("Alice Chen", aliases=("Ali",), summary="[[Alice Chen]] aka [[Ali]]."))
    assert w.edges() == []


def test_deleting_a_page_unwires_and_rewires(w: PageWriter) -> None:
    w.put("people", person("Alex Kim", aliases=("Alex",)))
    w.put("people", person("Alex Novak", aliases=("Alex",)))
    w.put("meetings", meeting("Sync", "2026-09-10", ("Alex", "Alex Novak")))
    w.delete("people/alex-novak")
    assert w.edges() == [
        ("meetings/2026-09-10-sync", "attended", "people/alex-kim", "Alex", "field"),
        ("meetings/2026-09-10-sync", "attended", None, "Alex Novak", "field"),
    ]


def test_names_equal_only_after_case_folding_match(w: PageWriter) -> None:
    # "Straße" and "STRASSE" are one name once case-folded; neither the title pattern
    # nor the slug ("straße-works") would find the page for "STRASSE WORKS".
    w.put("companies", company("Straße Works"))
    w.put("meetings", meeting("Sync", "2026-09-10", company="STRASSE WORKS"))
    assert w.edges() == [
        ("meetings/2026-09-10-sync", "about", "companies/straße-works", "STRASSE WORKS", "field"),
    ]


@pytest.mark.parametrize("batch", [2, 64])
def test_reindex_in_batches_gives_the_edges_of_page_by_page_writes(
    w: PageWriter, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    for folder, page in _world():
        w.put(folder, page)
    expected = w.edges()
    with w.db.transaction() as conn:
        conn.execute("DELETE FROM pages")  # index only: the files stay
    monkeypatch.setattr(reindexing, "PAGE_BATCH", batch)
    report = w.kb.reindex()
    assert report.indexed == len(_world())
    assert w.edges() == expected


def test_pages_indexed_without_normalised_names_are_found_and_backfilled(w: PageWriter) -> None:
    # Rows written before migration 003 have no title_norm/slug_norm.
    w.put("people", person("Bob Martinez"))
    with w.db.transaction() as conn:
        conn.execute("UPDATE pages SET title_norm = NULL, slug_norm = NULL")
    w.put("meetings", meeting("Sync", "2026-09-10", ("bob martinez",)))
    assert w.edges()[0][2] == "people/bob-martinez"
    with w.db.connection() as conn:
        assert find_named(conn, ["bob martinez"]).keys() == {"people/bob-martinez"}
    w.kb.reindex()
    with w.db.connection() as conn:
        rows = conn.execute("SELECT id, title_norm, slug_norm FROM pages ORDER BY id").fetchall()
    assert rows == [
        ("meetings/2026-09-10-sync", "sync", "2026 09 10 sync"),
        ("people/bob-martinez", "bob martinez", "bob martinez"),
    ]


def test_deleting_pages_together_treats_them_all_as_gone(w: PageWriter) -> None:
    w.put("people", person("Alex Kim", aliases=("Alex",)))
    w.put("people", person("Alex Novak", aliases=("Alex",)))
    w.put("people", person("Alex Berg", aliases=("Alex",)))
    w.put("meetings", meeting("Sync", "2026-09-10", ("Alex",)))
    with w.db.transaction() as conn:
        delete_pages(conn, ["people/alex-kim", "people/alex-novak"])
    assert w.edges() == [
        ("meetings/2026-09-10-sync", "attended", "people/alex-berg", "Alex", "field")
    ]
