"""Retrieval arms over raw sources (``include_sources``): keyword and vector over
``source_chunks``, one hit per source file (its best chunk), id ``source/<path>``.

Conversation notes of one person share most of their words, so the keyword arm weighs
each word by its rarity among source chunks (BM25 idf) and marks the files holding a
word almost no chunk holds (``rare_term``: a ticket id, an amount, a place), and both
arms can score files the other found beyond its pool (:func:`source_cosines`,
:func:`source_text_ranks`).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from memserver.arms import (
    MATCH_CAP,
    POOL,
    SOURCE_PREFIX,
    Conn,
    TextQuery,
    best_per_key,
    staged,
    window_sql,
)
from memserver.db import Database, vector_scan
from memserver.fusion import Hit

# A word at most this many source chunks hold names its notes (a ticket id, a figure, a
# place): source_keyword marks the files holding one ``rare_term``.
RARE_DF = 3
RARE_MIN_CHUNKS = 30  # in fewer source chunks than this, rarity says nothing


def source_rank_sql(conn: Conn, query: TextQuery) -> tuple[str, dict[str, Any]]:
    """A rank for source chunks that weighs each word by its rarity among them: the sum of
    the BM25 inverse document frequency ``ln(1 + (N - df + 0.5) / (df + 0.5))`` of the
    words a chunk holds, plus ``ts_rank_cd`` to order chunks holding the same words.

    Conversation notes of one person share most of their words, so plain ``ts_rank_cd``
    (no rarity) ranks two common words above one rare word (a ticket id, a figure, a
    place) that only the right note holds. ``df`` is counted up to MATCH_CAP chunks (a
    word on more is common either way); returns the SQL and its parameters."""
    counts = ", ".join(
        f"(SELECT count(*) FROM (SELECT 1 FROM source_chunks WHERE tsv @@ ({query._term(i)})"
        " LIMIT %(cap)s) m)"
        for i in range(len(query.terms))
    )
    params = {**query.params(), "cap": MATCH_CAP}
    row = conn.execute(f"SELECT (SELECT count(*) FROM source_chunks), {counts}", params).fetchone()
    total = float(row[0]) if row else 0.0
    sql = f"ts_rank_cd(tsv, {query.any_sql()}, 1)"
    rare: list[int] = []
    for i, df in enumerate(row[1:] if row else ()):
        idf = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        params[f"idf{i}"] = idf
        sql += f" + (CASE WHEN tsv @@ ({query._term(i)}) THEN %(idf{i})s ELSE 0 END)"
        if 0 < df <= RARE_DF and total >= RARE_MIN_CHUNKS:
            rare.append(i)
    params["rare_terms"] = rare  # not a placeholder: read by source_keyword
    return sql, params


def source_keyword(
    conn: Conn,
    query: TextQuery,
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    limit: int = POOL,
) -> list[Hit]:
    """Raw source chunks matching the words (staged like :func:`keyword`), ranked by
    :func:`source_rank_sql`, best chunk per source file. A file holding a word that at most
    RARE_DF source chunks hold has detail ``rare_term``."""
    if query.empty:
        return []
    rank, params = source_rank_sql(conn, query)

    def build(match: str) -> str:
        return (
            f"SELECT path, text, doc_date, {rank} AS r FROM ("
            f" SELECT s.path, s.text, s.doc_date, s.ordinal, s.tsv FROM source_chunks s"
            f" WHERE s.tsv @@ ({match})"
            + window_sql(start, end, "s.doc_date")
            + " LIMIT %(cap)s) m ORDER BY r DESC, path, ordinal LIMIT %(pool)s"
        )

    params.update({"start": start, "end": end, "pool": limit * 4})
    rows = staged(conn, query, build, params, limit)
    holders: set[str] = set()
    if params["rare_terms"]:
        holding = " OR ".join(f"tsv @@ ({query._term(i)})" for i in params["rare_terms"])
        holders = {
            p for (p,) in conn.execute(f"SELECT path FROM source_chunks WHERE {holding}", params)
        }
    return [
        Hit(
            SOURCE_PREFIX + path,
            "source",
            float(r),
            text,
            day,
            "rare_term" if path in holders else detail,
        )
        for detail, (path, text, day, r) in rows
    ]


def source_vector(
    conn: Conn,
    db: Database,
    query_vector: np.ndarray,
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    limit: int = POOL,
) -> list[Hit]:
    """Nearest raw source chunks, best chunk per source file."""
    distance = db.distance_sql()
    sql = (
        "WITH c AS MATERIALIZED ("
        f" SELECT path, text, doc_date, {distance} AS d FROM source_chunks"
        " WHERE embedding IS NOT NULL"
        + window_sql(start, end, "doc_date")
        + f" ORDER BY {distance}"
        " LIMIT %(pool)s) SELECT path, text, doc_date, d FROM c ORDER BY d, path"
    )
    params = {"q": query_vector, "start": start, "end": end, "pool": limit * 3}
    with vector_scan(conn, ef_search=max(100, limit * 3), max_scan_tuples=40_000):
        rows = conn.execute(sql, params).fetchall()
    return [
        Hit(SOURCE_PREFIX + path, "source", 1.0 - float(d), text, day)
        for path, text, day, d in best_per_key(rows, limit)
    ]


def source_cosines(
    conn: Conn, db: Database, query_vector: np.ndarray, paths: Sequence[str]
) -> list[Hit]:
    """The cosine of each source file's closest chunk (exact, no index), best first:
    the vector evidence for files the keyword arm found beyond the vector arm's pool."""
    if not paths:
        return []
    distance = db.distance_sql()
    rows = conn.execute(
        f"SELECT DISTINCT ON (path) path, text, doc_date, {distance} AS d FROM source_chunks"
        " WHERE embedding IS NOT NULL AND path = ANY(%(paths)s) ORDER BY path, d, ordinal",
        {"q": query_vector, "paths": list(paths)},
    ).fetchall()
    rows.sort(key=lambda r: (r[3], r[0]))
    return [Hit(SOURCE_PREFIX + p, "source", 1.0 - float(d), text, day) for p, text, day, d in rows]


def source_text_ranks(conn: Conn, query: TextQuery, paths: Sequence[str]) -> list[Hit]:
    """The best chunk of each source file holding any of the words (source_rank_sql), best
    first: the keyword evidence for files the vector arm found beyond the keyword pool.
    Detail ``all_terms`` when that chunk holds every word, else ``some_terms``."""
    if query.empty or not paths:
        return []
    rank, params = source_rank_sql(conn, query)
    sql = (
        f"SELECT DISTINCT ON (path) path, text, doc_date, {rank}"
        f" AS r, tsv @@ ({query.all_sql()}) FROM source_chunks"
        f" WHERE path = ANY(%(paths)s) AND tsv @@ ({query.any_sql()})"
        " ORDER BY path, r DESC, ordinal"
    )
    rows = conn.execute(sql, {**params, "paths": list(paths)}).fetchall()
    rows.sort(key=lambda r: (-r[3], r[0]))
    return [
        Hit(
            SOURCE_PREFIX + p, "source", float(r), text, day, "all_terms" if every else "some_terms"
        )
        for p, text, day, r, every in rows
    ]
