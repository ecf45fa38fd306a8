"""A found note's sentence, or a neighbour shown with it, that opens a list ("As
Technical Lead, Daniel Kim holds:") brings the list's items into the snippet, up to
``LIST_AFTER`` of them and not past the next list's label."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from memserver.clients.embed import HashEmbedder
from memserver.search.pipeline import Searcher
from memserver.search.source_arms import LIST_AFTER, with_list
from memserver.search.types import SearchRequest
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.kb import MakeKB

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
CHARTER = (
    "---\ndate: '2023-03-06'\n---\n"
    "# Technical charter\n\n"
    "Daniel Kim is hereby designated as the official technical lead of the company.\n"
    "As technical lead, Daniel Kim holds the following powers:\n\n"
    "- Final decision authority over architecture changes of medium complexity.\n"
    "- Veto authority over technology choices outside the approved stack.\n"
    "- Sign-off authority on all production infrastructure changes.\n\n"
    "Review board members meet every second Thursday of the month:\n\n"
    "- Maya Patel chairs the review board meetings.\n"
)


@pytest.fixture
def kb(make_kb: MakeKB, database_url: str) -> Iterator[KnowledgeBase]:
    paths = make_kb(sources={"charter.md": CHARTER})
    with KnowledgeBase.open(paths.root, embedder=HashEmbedder(), database_url=database_url) as kb:
        kb.reindex()
        yield kb


def test_a_list_s_label_brings_its_items_into_the_snippet(kb: KnowledgeBase) -> None:
    searcher = Searcher(kb.db, kb.schema, kb.embedder)
    question = "Who was designated the official technical lead?"
    found = searcher.search(SearchRequest(question, include_sources=True, now=NOW))
    shown = next(r.snippet for r in found.results if r.id == "source/charter.md")
    assert "designated as the official technical lead" in shown
    assert "Final decision authority" in shown and "Sign-off authority" in shown, shown
    assert "Maya Patel chairs" not in shown, shown  # the next list is another's


def test_with_list_stops_at_its_count_and_the_next_label() -> None:
    units = [(-1, "Before."), (0, "Matched."), (1, "It holds:")]
    items = [(2 + i, f"- item {i}.") for i in range(LIST_AFTER + 2)]
    assert with_list([*units, *items]) == [
        "Before.",
        "Matched.",
        "It holds:",
        *(f"- item {i}." for i in range(LIST_AFTER)),
    ]
    assert with_list([*units[:2], (1, "After."), (2, "- not shown.")]) == [
        "Before.",
        "Matched.",
        "After.",
    ]
    assert with_list([*units, (2, "- one."), (3, "Another list:"), (4, "- two.")]) == [
        "Before.",
        "Matched.",
        "It holds:",
        "- one.",
    ]
