"""A raw source sentence is indexed with its context (the sentence with its neighbours,
``memserver.kb.chunks.source_context``): both embedded, each distinct text once, on the
first index, after an embedding outage, and by the reindex of an index made before
contexts were."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memserver.clients.embed import HashEmbedder
from memserver.errors import EmbeddingError
from memserver.index.indexer import SOURCE_CHUNKS
from memserver.kb.chunks import source_context, source_units
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.kb import MakeKB
from tests.memserver.index.test_embedding import Counting

TURNS = (
    "Caroline: I wanted to tell you about my school event last week.",
    "Caroline: I talked about my journey and the students listened closely.",
    "Melanie: That sounds like a wonderful afternoon for everyone there.",
)
NOTE = "---\ndate: 2026-05-04\n---\n" + "\n".join(TURNS) + "\n"
UNITS = source_units(NOTE)  # the turns (the first with the frontmatter's words)


class DownEmbedder(HashEmbedder):
    """The hash model with its backend unreachable."""

    def embed_passages(self, texts: Sequence[str]) -> list[np.ndarray]:
        raise EmbeddingError("embedding endpoint http://127.0.0.1:9 failed: connection refused")


Row = tuple[str, str | None, np.ndarray | None, np.ndarray | None]


def stored(kb: KnowledgeBase) -> list[Row]:
    """talk.md's rows: text, context and their vectors."""
    query = (
        "SELECT text, context, embedding, context_embedding FROM source_chunks"
        " WHERE path = 'talk.md' ORDER BY ordinal"
    )
    with kb.db.connection() as conn:
        return list(conn.execute(query))


def assert_embedded_with_context(kb: KnowledgeBase) -> None:
    rows = stored(kb)
    assert [text for text, *_ in rows] == UNITS and UNITS[1:] == list(TURNS[1:])
    model = HashEmbedder()
    for i, (text, context, own, around) in enumerate(rows):
        assert context == source_context(UNITS, i)
        assert own is not None and around is not None
        assert np.allclose(own, model.embed_passages([text])[0], atol=1e-6)
        assert np.allclose(around, model.embed_passages([context])[0], atol=1e-6)
        assert not np.allclose(own, around, atol=1e-3)


def test_each_sentence_and_each_context_is_embedded_once(
    make_kb: MakeKB, database_url: str
) -> None:
    """A note that is not a conversation has no contexts; its sentence the other note
    holds too is embedded once, like every distinct text."""
    paths = make_kb(sources={"talk.md": NOTE, "one.md": f"{TURNS[1]}\n"})
    embedder = Counting()
    with KnowledgeBase.open(paths.root, embedder=embedder, database_url=database_url) as kb:
        kb.reindex()
        assert_embedded_with_context(kb)
        with kb.db.connection() as conn:
            lone = conn.execute(
                "SELECT context, context_hash, context_embedding, context_stale, embedding"
                " FROM source_chunks WHERE path = 'one.md'"
            ).fetchall()
        assert [row[:4] for row in lone] == [(None, None, None, False)] and lone[0][4] is not None
    contexts = [source_context(UNITS, i) for i in range(3)]
    assert sorted(embedder.passages) == sorted({*UNITS, *contexts})


def test_a_source_embedded_while_the_model_was_down_gets_both_vectors_later(
    make_kb: MakeKB, database_url: str
) -> None:
    paths = make_kb(sources={"talk.md": NOTE})
    with KnowledgeBase.open(paths.root, embedder=DownEmbedder(), database_url=database_url) as kb:
        assert kb.reindex().degraded == ("embedding_unavailable",)
        assert kb.stats()["stale"]["source_chunks"] == 6  # 3 sentences, 3 contexts
        rows = stored(kb)
        assert rows and all(own is None and around is None for _, _, own, around in rows)
    with KnowledgeBase.open(paths.root, embedder=HashEmbedder(), database_url=database_url) as kb:
        assert kb.reindex().embedded == 6  # vectors written: 3 sentences, 3 contexts (one text)
        assert_embedded_with_context(kb)
        assert kb.stats()["stale"]["source_chunks"] == 0


def test_an_index_made_before_contexts_gets_them_on_reindex(
    make_kb: MakeKB, database_url: str
) -> None:
    """Rows as migration 012 leaves an older index (no context, not stale, the old
    chunk format recorded): the reindex re-cuts the notes and embeds only the contexts."""
    paths = make_kb(sources={"talk.md": NOTE})
    embedder = Counting()
    with KnowledgeBase.open(paths.root, embedder=embedder, database_url=database_url) as kb:
        kb.reindex()
        with kb.db.connection() as conn:
            conn.execute(
                "UPDATE source_chunks SET context = NULL, context_hash = NULL,"
                " context_embedding = NULL, context_stale = false"
            )
            conn.execute(
                "UPDATE index_meta SET value = 'source-sentences-2' WHERE key = %s",
                (SOURCE_CHUNKS,),
            )
        embedder.passages.clear()
        report = kb.reindex()
        assert report.sources_indexed == 1
        assert embedder.passages == [source_context(UNITS, 0)]  # the three share it
        assert_embedded_with_context(kb)
