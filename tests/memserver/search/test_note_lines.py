"""A found note's snippet also shows its other sentences that hold the question's rarer
words (``memserver.search.note_lines``), after a gap, while it stays within the mode's
characters; a note with no such sentence shows its best sentence and neighbours only."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from memserver.clients.embed import HashEmbedder
from memserver.kb.chunks import GAP
from memserver.search.pipeline import Searcher
from memserver.search.types import SearchRequest
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.kb import MakeKB

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
CALL = (
    "---\ndate: '2022-03-10'\n---\n"
    "Maya: Good morning, team, let us dive into the QuickHaul partnership.\n"
    "Maya: We signed the partnership agreement with QuickHaul Logistics today.\n"
    "Aisha: Thanks, the contract is signed and the pilot starts in Chicago.\n"
    "John: The carrier network they bring is solid.\n"
    "Sarah: Their data feeds will reach our platform next month.\n"
    "Maya: Right, a twelve month pilot with a 55/45 revenue share.\n"
    "John: We need a new endpoint for the dashboard.\n"
)
OTHER = (
    "---\ndate: '2022-04-02'\n---\n"
    "Omar: The canteen menu changes every second Tuesday.\n"
    "Nadia: Parking behind the office is free after six.\n"
)


@pytest.fixture
def kb(make_kb: MakeKB, database_url: str) -> Iterator[KnowledgeBase]:
    paths = make_kb(sources={"call.md": CALL, "other.md": OTHER})
    with KnowledgeBase.open(paths.root, embedder=HashEmbedder(), database_url=database_url) as kb:
        kb.reindex()
        yield kb


def snippet(kb: KnowledgeBase, question: str, mode: str = "balanced") -> str:
    searcher = Searcher(kb.db, kb.schema, kb.embedder)
    found = searcher.search(SearchRequest(question, include_sources=True, now=NOW, mode=mode))
    return next(r.snippet for r in found.results if r.id == "source/call.md")


def test_a_later_sentence_holding_the_rarer_words_follows_the_snippet(kb: KnowledgeBase) -> None:
    shown = snippet(kb, "What revenue share did we agree in the QuickHaul partnership agreement?")
    best, _, later = shown.partition(GAP)
    assert "partnership agreement with QuickHaul" in best and "55/45" not in best
    assert later == "Maya: Right, a twelve month pilot with a 55/45 revenue share."


def test_a_note_says_nothing_more_when_no_other_sentence_holds_the_words(
    kb: KnowledgeBase,
) -> None:
    assert GAP not in snippet(kb, "When did we sign the QuickHaul partnership agreement?")


def test_what_is_added_stays_within_the_mode_s_characters(kb: KnowledgeBase) -> None:
    question = "What revenue share did we agree in the QuickHaul partnership agreement?"
    shown = snippet(kb, question, mode="conservative")
    assert len(shown) <= 320
