"""The source vector arm scores a sentence by the better of its own cosine and its
context's (``source_arms.with_context``): a turn that leans on its neighbours is found
through them, a lone fact keeps its own score, and a sentence without a context (not a
conversation's, or indexed before contexts were) scores by its own vector."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from memserver.clients.embed import HashEmbedder
from memserver.search import source_arms
from memserver.search.types import SOURCE_PREFIX
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.kb import MakeKB

TALK = (
    "Caroline: I wanted to tell you about my school event last week.\n"
    "Caroline: I talked about my journey and the students listened closely.\n"
    "Melanie: That sounds like a wonderful afternoon for everyone there.\n"
)
FACT = (
    "Nadia: The canteen menu changes every second Tuesday of the month.\n"
    "Oskar: The reefer door alarm at the Gdansk depot went off four times overnight.\n"
    "Nadia: Parking behind the office is free for visitors after six in the evening.\n"
)
PROSE = (  # not a conversation: no context vectors
    "The school event last week went well for everyone.\n"
    "Caroline talked about her journey and the students listened closely.\n"
)


@pytest.fixture
def kb(make_kb: MakeKB, database_url: str) -> Iterator[KnowledgeBase]:
    paths = make_kb(sources={"talk.md": TALK, "fact.md": FACT, "prose.md": PROSE})
    with KnowledgeBase.open(paths.root, embedder=HashEmbedder(), database_url=database_url) as kb:
        kb.reindex()
        yield kb


def cosines(kb: KnowledgeBase, question: str, path: str) -> tuple[list[float], list[float]]:
    """The question's cosine to each sentence of ``path`` and to each one's context."""
    q = kb.embedder.embed_query(question)
    with kb.db.connection() as conn:
        rows = conn.execute(
            "SELECT embedding, context_embedding FROM source_chunks WHERE path = %s",
            (path,),
        ).fetchall()

    def cos(v: np.ndarray | None) -> float:
        return float("nan") if v is None else float(v @ q / np.linalg.norm(v) / np.linalg.norm(q))

    return [cos(own) for own, _ in rows], [cos(around) for _, around in rows]


def arm(kb: KnowledgeBase, question: str) -> dict[str, float]:
    """The vector arm's score per note (the pool is too small to damp hubs: raw cosines)."""
    with kb.db.connection() as conn:
        near = source_arms.nearest_sentences(conn, kb.db, kb.embedder.embed_query(question))
        assert not near.active
        return {h.id.removeprefix(SOURCE_PREFIX): h.score for h in near.hits}


def test_with_context_takes_the_better_vector_and_skips_a_missing_one() -> None:
    nan = float("nan")
    own = np.array([0.8, 0.5, nan, 0.4])
    context = np.array([0.6, 0.7, 0.3, nan])
    assert source_arms.with_context(own, context).tolist() == [0.8, 0.7, 0.3, 0.4]


def test_a_turn_that_leans_on_its_neighbours_is_found_through_its_context(
    kb: KnowledgeBase,
) -> None:
    question = "the school event where she talked about her journey"
    own, around = cosines(kb, question, "talk.md")
    assert max(around) > max(own)  # no turn alone holds both halves of the question
    assert arm(kb, question)["talk.md"] == pytest.approx(max(around), abs=1e-5)


def test_a_lone_fact_keeps_its_own_score(kb: KnowledgeBase) -> None:
    question = "reefer door alarm at the Gdansk depot overnight"
    own, around = cosines(kb, question, "fact.md")
    assert max(own) > max(around)  # its neighbours dilute it
    assert arm(kb, question)["fact.md"] == pytest.approx(max(own), abs=1e-5)


def test_a_note_that_is_no_conversation_scores_by_its_sentences(kb: KnowledgeBase) -> None:
    question = "the school event where she talked about her journey"
    own, around = cosines(kb, question, "prose.md")
    assert np.isnan(around).all()
    assert arm(kb, question)["prose.md"] == pytest.approx(max(own), abs=1e-5)


def test_sentences_indexed_before_contexts_score_by_their_own_vector(kb: KnowledgeBase) -> None:
    question = "the school event where she talked about her journey"
    with kb.db.connection() as conn:
        conn.execute("UPDATE source_chunks SET context = NULL, context_embedding = NULL")
    own, _ = cosines(kb, question, "talk.md")
    assert arm(kb, question)["talk.md"] == pytest.approx(max(own), abs=1e-5)
    with kb.db.connection() as conn:
        vector = kb.embedder.embed_query(question)
        beyond = source_arms.source_cosines(conn, kb.db, vector, ["talk.md"])
        closest = source_arms.closest_sentences(conn, kb.db, vector, ["source/talk.md"])
    assert [h.score for h in beyond] == pytest.approx([max(own)], abs=1e-5)
    assert len(closest["source/talk.md"]) == 3


def test_files_beyond_the_pool_are_scored_with_their_contexts_too(kb: KnowledgeBase) -> None:
    question = "the school event where she talked about her journey"
    vector = kb.embedder.embed_query(question)
    with kb.db.connection() as conn:
        beyond = source_arms.source_cosines(conn, kb.db, vector, ["talk.md", "fact.md", "prose.md"])
    scores = {h.id.removeprefix(SOURCE_PREFIX): h.score for h in beyond}
    assert scores == pytest.approx(arm(kb, question), abs=1e-5)
    assert scores["talk.md"] == pytest.approx(max(cosines(kb, question, "talk.md")[1]), abs=1e-5)
