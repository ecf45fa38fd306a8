"""Background embedding: new texts embedded off the write path.

A server calls ``start_background_embedding``: with an embedder that runs a model
(``Embedder.background``), puts, source scans (``index_sources``) and reindexes then
write new texts stale, keyword-searchable at once, say ``degraded: ["embedding_pending"]``,
and wake the ``BackgroundEmbedder`` (:mod:`memserver.index.embedding`), which embeds them
off the write path; ``embedding_pending()`` says whether it still has work.

:class:`BackgroundEmbedding` is the part of
:class:`~memserver.store.knowledge_base.KnowledgeBase` that runs it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memserver.clients.embed import Embedder
from memserver.db.database import Database
from memserver.index.embedding import BackgroundEmbedder, stale_counts


class BackgroundEmbedding:
    """Starts the background embedder and says how far it is (see the module docstring)."""

    db: Database
    embedder: Embedder
    background: BackgroundEmbedder | None

    def start_background_embedding(self) -> bool:
        """Leave new texts to a background embedder from now on (servers call this); a
        no-op for an embedder that needs none (``Embedder.background``). Stale rows left
        by an earlier process are filled first. Returns whether one runs."""
        if self.background is None and self.embedder.background:
            self.background = BackgroundEmbedder(self.db, self.embedder).start()
        return self.background is not None

    @property
    def defers_embedding(self) -> bool:
        return self.background is not None and self.background.running

    def embedding_pending(self) -> bool:
        """Whether the background embedder still has texts to embed."""
        return self.defers_embedding and self.background is not None and self.background.pending

    def embedding_counts(self) -> tuple[int, int] | None:
        """(vectors the background embedder has written since it started, vectors still
        waiting in the index), for progress; None when no background embedder runs."""
        if self.background is None:
            return None
        with self.db.reading() as conn:
            waiting = sum(stale_counts(conn).values())
        return self.background.filled, waiting

    def embed_in_background(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Passages for ingest-side work that must wait for them (``kb_route``), embedded
        at the background embedder's low priority when one runs (so questions come
        first), else directly."""
        if self.background is not None and self.background.running:
            return self.background.embed(texts)
        return self.embedder.embed_passages(texts)

    def _embedding_left(self) -> None:
        if self.background is not None:
            self.background.notify()
