"""The search steps that ask a model, both optional: tokenmax's LLM rewrites of the
question, searched as extra arms, and the cross-encoder order of the top results.

Neither is needed for an answer: a failing model leaves the plain search as it was and
says so in ``degraded`` (``expansion_unavailable``, ``reranker_unavailable``).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import psycopg

from memserver.clients.llm import LLMClient, Reranker
from memserver.db.database import Database
from memserver.kb.schema import Schema
from memserver.search import arms, source_arms
from memserver.search.fusion import Candidate, Hit
from memserver.search.intent import analyze
from memserver.search.text_query import TextQuery
from memserver.search.types import SOURCE_PREFIX

log = logging.getLogger(__name__)

EXPANSION_MIN_WORDS = 3  # a shorter question has no other wording worth asking for
RERANK_TOP = 30
RERANK_SENTENCES = 3  # what a reranker reads of a raw source

_REWRITE = (
    "Rewrite a search question for a company knowledge base into at most two alternative"
    ' phrasings with different words (synonyms, expanded names). Answer {"variants":'
    ' ["...", "..."]}.'
)


def expansion_arms(
    conn: Any,
    db: Database,
    llm: LLMClient,
    schema: Schema,
    question: str,
    folders: list[str],
    window: tuple[dt.date | None, dt.date | None],
    *,
    sources: bool,
    embed: Callable[[str], np.ndarray | None],
    degraded: list[str],
) -> dict[str, list[Hit]]:
    """tokenmax: up to two LLM rewrites of the question, each searched by the keyword and
    vector arms (and the raw sources' when they are searched): ``keyword_x1``,
    ``source_vector_x2`` ... ``embed`` gives a text's query vector (None without one)."""
    if len(question.split()) < EXPANSION_MIN_WORDS:
        return {}
    try:
        answer = llm.chat_json(
            [{"role": "system", "content": _REWRITE}, {"role": "user", "content": question}]
        )
        variants = [str(v) for v in answer.get("variants", []) if str(v).strip()][:2]
    except Exception as exc:  # expansion is optional: the plain question still runs
        log.warning("query expansion failed: %s", exc)
        degraded.append("expansion_unavailable")
        return {}
    start, end = window
    found: dict[str, list[Hit]] = {}
    for i, variant in enumerate(variants, 1):
        text = TextQuery.of(analyze(variant, schema, folders))
        found[f"keyword_x{i}"] = arms.keyword(conn, text, folders, start=start, end=end)
        vector = embed(variant)
        if vector is not None:
            found[f"vector_x{i}"] = arms.vector(conn, db, vector, folders, start=start, end=end)
        if sources:
            extra = source_arms.search_sources(
                conn, db, text, vector, lambda _: True, start=start, end=end
            )
            found.update({f"{arm}_x{i}": hits for arm, hits in extra.items()})
    return found


def rerank(
    conn: Any,
    db: Database,
    reranker: Reranker,
    cands: list[Candidate],
    query: str,
    vector: np.ndarray | None,
    degraded: list[str],
) -> list[Candidate]:
    """Cross-encoder order for the top results; on failure the order is kept. A page is
    read as its title and best chunk; a raw source as its title and its sentences closest
    to the question (source_arms.closest_sentences): the one sentence that matched may
    not be the one that answers."""
    top, rest = cands[:RERANK_TOP], cands[RERANK_TOP:]
    notes = [c.id for c in top if c.id.startswith(SOURCE_PREFIX)]
    closest: Mapping[str, list[str]] = {}
    if vector is not None and notes:
        try:
            closest = source_arms.closest_sentences(conn, db, vector, notes, RERANK_SENTENCES)
        except psycopg.Error as exc:  # a note is then read by its matched sentence alone
            log.warning("rerank: reading the sources' closest sentences failed: %s", exc)
            conn.rollback()
    docs = [_passage(c, closest.get(c.id, ())) for c in top]
    try:
        scores = reranker.rerank(query, docs)
    except Exception as exc:
        log.warning("reranker failed, keeping the fused order: %s", exc)
        degraded.append("reranker_unavailable")
        return cands
    order = sorted(range(len(top)), key=lambda i: (-scores[i], i))
    reranked = [top[i] for i in order]
    for rank, i in enumerate(order, 1):
        top[i].ranks["rerank"] = rank
        top[i].arm_scores["rerank"] = scores[i]
    return reranked + rest


def _passage(cand: Candidate, sentences: Sequence[str]) -> str:
    body = " … ".join(dict.fromkeys(t for t in (cand.snippet or "", *sentences) if t))
    return f"{cand.title}\n{body}"[:2000]
