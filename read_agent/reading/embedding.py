"""The embedder the reading asks when a question's words leave the field open: the one
the knowledge base's configuration names (``embedding`` in config.yaml: the local
multilingual model by default, the hash embedder in tests), loaded on first use and
kept for the process. Texts are capped as every text an embedder sees is."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from memserver.clients.config import EndpointSettings
from memserver.clients.embed import Embedder, embedder_from_settings
from memserver.clients.embed_window import cap_chars
from read_agent.reading.fields import Embed

MAX_CHARS = 2_000  # a question's words, a field's text


def reading_embedder(endpoint: EndpointSettings) -> Embed:
    """``embed(query, passages)`` over the configured embedder, built on first call."""
    lock = threading.Lock()
    made: list[Embedder] = []

    def embed(query: str, passages: Sequence[str]) -> tuple[np.ndarray, Sequence[np.ndarray]]:
        with lock:
            if not made:
                made.append(embedder_from_settings(endpoint))
        embedder = made[0]
        vectors = embedder.embed_passages([cap_chars(p, MAX_CHARS) for p in passages])
        return embedder.embed_query(cap_chars(query, MAX_CHARS)), vectors

    return embed
