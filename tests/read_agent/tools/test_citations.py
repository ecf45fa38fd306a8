"""Citations: found in any common spelling, unknown ones removed, pages found in any result."""

from __future__ import annotations

from read_agent.tools.citations import (
    CitedPage,
    extract_citations,
    merge_pages,
    normalize_id,
    pages_in,
    verify,
)

KNOWN = {
    "meetings/2026-11-12-globex-integration-review": CitedPage(
        "meetings/2026-11-12-globex-integration-review", "Globex integration review", "2026-11-12"
    ),
    "people/bob-martinez": CitedPage("people/bob-martinez", "Bob Martinez"),
    "people/энхтуяа-ганбаатар": CitedPage("people/энхтуяа-ганбаатар", "Энхтуяа Ганбаатар"),
}


def test_extract_finds_ids_in_order_without_repeats() -> None:
    text = (
        "Go-live is 2026-12-01 [meetings/2026-11-12-globex-integration-review]. Bob "
        "[people/bob-martinez, meetings/2026-11-12-globex-integration-review] agreed "
        "[people/bob-martinez]."
    )
    assert extract_citations(text) == [
        "meetings/2026-11-12-globex-integration-review",
        "people/bob-martinez",
    ]


def test_extract_ignores_dates_links_and_prose_in_brackets() -> None:
    text = "On [2026/11/12] see [the docs](https://x.io/a/b) and [not a citation here]."
    assert extract_citations(text) == []


def test_normalize_reads_paths_wikilinks_and_cyrillic() -> None:
    assert normalize_id("knowledge/people/bob-martinez.md") == "people/bob-martinez"
    assert normalize_id("[people/bob-martinez]") == "people/bob-martinez"
    assert normalize_id("people/энхтуяа-ганбаатар") == "people/энхтуяа-ганбаатар"
    assert normalize_id("source/meetings/2026/a.md") == "source/meetings/2026/a"
    assert normalize_id("bob-martinez") is None
    assert normalize_id("2026/11") is None


def test_verify_removes_fabricated_and_keeps_known() -> None:
    text = (
        "Bob is VP of Operations [people/bob-martinez]. He likes golf [people/ghost-page]. "
        "Both [people/bob-martinez, companies/secret-co] met [[people/энхтуяа-ганбаатар]]."
    )
    checked = verify(text, KNOWN)
    assert "[people/ghost-page]" not in checked.text
    assert "companies/secret-co" not in checked.text
    assert "He likes golf." in checked.text
    assert "Both [people/bob-martinez] met" in checked.text
    assert checked.cited == ("people/bob-martinez", "people/энхтуяа-ганбаатар")
    assert checked.removed == ("people/ghost-page", "companies/secret-co")


def test_verify_rewrites_paths_to_canonical_ids() -> None:
    checked = verify("Role [knowledge/people/bob-martinez.md].", KNOWN)
    assert checked.text == "Role [people/bob-martinez]."
    assert checked.removed == ()


def test_verify_leaves_text_without_citations_untouched() -> None:
    text = "The knowledge base has no answer.\n\n- [ ] nothing  here"
    assert verify(text, KNOWN).text == text


def test_pages_in_walks_any_result_shape() -> None:
    result = {
        "results": [
            {"id": "meetings/m1", "title": "Kickoff", "date": "2026-09-08", "score": 1.0},
            {"id": "people/bob", "title": "Bob", "date": None},
        ],
        "neighbors": [{"page": "companies/globex", "title": "Globex", "effective_date": None}],
        "edges": [{"id": "2026/11", "title": "not a page"}],
    }
    found = {s.id: s for s in pages_in(result)}
    assert set(found) == {"meetings/m1", "people/bob", "companies/globex"}
    assert found["meetings/m1"].date == "2026-09-08"
    assert found["companies/globex"].title == "Globex"


def test_merge_pages_fills_missing_title_and_date() -> None:
    into: dict[str, CitedPage] = {}
    merge_pages(into, [CitedPage("people/bob", "", None)])
    merge_pages(into, [CitedPage("people/bob", "Bob Martinez", "2026-09-21")])
    assert into["people/bob"] == CitedPage("people/bob", "Bob Martinez", "2026-09-21")
