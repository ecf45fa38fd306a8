"""Retrieval arms over raw sources (``include_sources``): keyword and vector over
``source_chunks``, one hit per source file (its best chunk), id ``source/<path>``.

Conversation notes of one person share most of their words, so the keyword arm weighs
each word by its rarity among source chunks (BM25 idf) and marks the files holding a
name almost no chunk holds (``rare_term``: a ticket id, an amount, a place); the vector
arm scores a sentence by the better of its own vector and its context's (the sentence
with its neighbours: :func:`with_context`), each damped when it sits close to many
others of its kind in the pool (:func:`nearest_sentences`: recurring phrases outrank
nothing on nearness alone); and both arms can score files the other found beyond its
pool (:func:`source_cosines`, :func:`source_text_ranks`).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memserver.db.database import Database
from memserver.db.vectors import vector_scan
from memserver.search.fusion import Hit
from memserver.search.settings import ARMS, SOURCES
from memserver.search.source_notes import note_keyword, source_window_sql, window_params
from memserver.search.text_query import Conn, TextQuery, best_per_key, staged
from memserver.search.types import SOURCE_PREFIX


@dataclass(frozen=True)
class SourceRank:
    """How :func:`source_rank_sql` ranks source chunks for one question: ``rank`` and
    ``matched`` are SQL over a chunk's ``tsv`` (``matched``: the summed rarity of the
    question's words the chunk holds), ``idf_total`` the rarity of all of them."""

    rank: str
    matched: str
    idf_total: float
    params: dict[str, Any]

    def share(self, matched: float) -> float:
        """The part of the question's rarity a chunk holds (0-1)."""
        return min(1.0, matched / self.idf_total) if self.idf_total > 0 else 1.0


def source_rank_sql(conn: Conn, query: TextQuery) -> SourceRank:
    """A rank for source chunks that weighs each word by its rarity among them: the sum of
    the BM25 inverse document frequency ``ln(1 + (N - df + 0.5) / (df + 0.5))`` of the
    words a chunk holds, plus ``ts_rank_cd`` to order chunks holding the same words.

    Conversation notes of one person share most of their words, so plain ``ts_rank_cd``
    (no rarity) ranks two common words above one rare word (a ticket id, a figure, a
    place) that only the right note holds. ``df`` is counted up to ``ARMS.match_cap`` chunks (a
    word on more is common either way)."""
    counts = ", ".join(
        f"(SELECT count(*) FROM (SELECT 1 FROM source_chunks WHERE tsv @@ ({query._term(i)})"
        " LIMIT %(cap)s) m)"
        for i in range(len(query.terms))
    )
    params = {**query.params(), "cap": ARMS.match_cap}
    row = conn.execute(f"SELECT (SELECT count(*) FROM source_chunks), {counts}", params).fetchone()
    total = float(row[0]) if row else 0.0
    matched: list[str] = []
    idf_total = 0.0
    rare: list[int] = []
    for i, df in enumerate(row[1:] if row else ()):
        idf = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        params[f"idf{i}"] = idf
        idf_total += idf
        matched.append(f"(CASE WHEN tsv @@ ({query._term(i)}) THEN %(idf{i})s ELSE 0 END)")
        if 0 < df <= SOURCES.rare_df and total >= SOURCES.rare_min_chunks and i in query.naming:
            rare.append(i)
    params["rare_terms"] = rare  # not a placeholder: read by source_keyword
    matched_sql = "(" + (" + ".join(matched) or "0") + ")"
    rank = f"ts_rank_cd(tsv, {query.any_sql()}, 1) + {matched_sql}"
    return SourceRank(rank, matched_sql, idf_total, params)


def source_keyword(
    conn: Conn,
    query: TextQuery,
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    limit: int = ARMS.pool,
) -> list[Hit]:
    """Raw source chunks matching the words (staged like :func:`keyword`), ranked by
    :func:`source_rank_sql`, best chunk per source file. A file holding a name that at most
    ``SOURCES.rare_df`` source chunks hold has detail ``rare_term``."""
    if query.empty:
        return []
    ranking = source_rank_sql(conn, query)
    params = ranking.params

    def build(match: str) -> str:
        return (
            f"SELECT path, text, doc_date, {ranking.rank} AS r, {ranking.matched} AS m FROM ("
            f" SELECT s.path, s.text, s.doc_date, s.ordinal, s.tsv FROM source_chunks s"
            f" WHERE s.tsv @@ ({match})"
            + source_window_sql(start, end, "s.path", "s.doc_date")
            + " LIMIT %(cap)s) m ORDER BY r DESC, path, ordinal LIMIT %(pool)s"
        )

    params.update({**window_params(start, end), "pool": limit * 4})
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
            share=ranking.share(float(m)),
        )
        for detail, (path, text, day, r, m) in rows
    ]


def hubness(vectors: np.ndarray, pool: np.ndarray, *, within: bool) -> np.ndarray:
    """The mean cosine of each of ``vectors`` to its ``SOURCES.hub_neighbours`` most similar vectors of
    ``pool`` (``within``: ``vectors`` is the pool; a vector is not its own neighbour).
    Zeros when the pool is too small to tell."""
    k = SOURCES.hub_neighbours
    if len(vectors) == 0 or len(pool) <= k + int(within):
        return np.zeros(len(vectors))

    def unit(m: np.ndarray) -> np.ndarray:
        m = np.asarray(m, dtype=np.float32)
        return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)

    sims = unit(vectors) @ unit(pool).T
    if within:
        np.fill_diagonal(sims, -np.inf)
    return np.asarray(np.partition(sims, -k, axis=1)[:, -k:].mean(axis=1), dtype=np.float64)


@dataclass(frozen=True)
class Hubs:
    """The hubness of one kind of vector (the sentences' own, or their contexts') in the
    vector arm's pool, to damp any sentence's cosine of that kind by the same measure."""

    vectors: np.ndarray
    hubs: Mapping[tuple[str, str], float]  # (path, sentence) -> its hubness in the pool
    mean: float
    active: bool  # False when the pool was too small to measure hubness in

    @classmethod
    def of(cls, keys: Sequence[tuple[str, str]], vectors: np.ndarray) -> Hubs:
        hub = hubness(vectors, vectors, within=True)
        mean = float(hub.mean()) if len(hub) else 0.0
        return cls(vectors, dict(zip(keys, hub.tolist(), strict=True)), mean, bool(hub.any()))

    def damp(
        self, keys: Sequence[tuple[str, str]], cosines: np.ndarray, vectors: np.ndarray
    ) -> np.ndarray:
        """``cosines`` of the sentences ``keys`` ((path, text)) lowered by
        ``SOURCES.hub_weight x (hubness - the pool's mean hubness)``: a sentence of the pool by its
        hubness there, another by its closeness to the pool."""
        if not self.active:
            return cosines
        near = hubness(vectors, self.vectors, within=False)
        hub = np.array([self.hubs.get(key, float(h)) for key, h in zip(keys, near, strict=True)])
        return cosines - SOURCES.hub_weight * (hub - self.mean)


_NO_HUBS = Hubs(np.zeros((0, 0)), {}, 0.0, False)


@dataclass(frozen=True)
class NearestSentences:
    """The source sentences nearest a question (the vector arm's pool): the best per
    file as hits, and the hubness of the pool's own and context vectors, to damp the
    sentences of other files by the same measure (:func:`source_cosines`)."""

    hits: list[Hit]
    own: Hubs = _NO_HUBS
    context: Hubs = _NO_HUBS

    @property
    def active(self) -> bool:
        return self.own.active or self.context.active


def nearest_sentences(
    conn: Conn,
    db: Database,
    query_vector: np.ndarray,
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    limit: int = ARMS.pool,
) -> NearestSentences:
    """The nearest raw source sentences by their own vector and by their context's (the
    ``limit x SOURCES.sentences_per_file`` nearest of each), scored by :func:`sentence_scores`:
    each cosine damped by its hubness in the pool, so a sentence of a family that sits
    near any question on its topic loses to one as near standing alone, and the better
    of a sentence's own and its context's counts. Best sentence per file, best first."""
    window = source_window_sql(start, end, "source_chunks.path", "doc_date")
    own, around = db.distance_sql(), db.distance_sql(column="context_embedding")

    def nearest(column: str, distance: str) -> str:
        return (
            f"SELECT id FROM source_chunks WHERE {column} IS NOT NULL{window}"
            f" ORDER BY {distance} LIMIT %(pool)s"
        )

    sql = (
        f"WITH own AS MATERIALIZED ({nearest('embedding', own)}),"
        f" around AS MATERIALIZED ({nearest('context_embedding', around)})"
        f" SELECT path, text, doc_date, {own}, embedding, {around}, context_embedding"
        " FROM source_chunks WHERE id IN (SELECT id FROM own UNION SELECT id FROM around)"
        " ORDER BY path, ordinal"
    )
    pool = limit * SOURCES.sentences_per_file
    params = {"q": query_vector, **window_params(start, end), "pool": pool}
    with vector_scan(conn, ef_search=max(SOURCES.ef_search, pool), max_scan_tuples=40_000):
        # Binary: 300 vectors read as text cost ~30 ms to parse, as binary ~5.
        rows = conn.execute(sql, params, binary=True).fetchall()
    if not rows:
        return NearestSentences([])
    keys = _keys(rows)
    hubs = [Hubs.of([keys[i] for i in at], vectors) for at, vectors in _kinds(rows)]
    found = NearestSentences([], *hubs)
    return replace(found, hits=_best_per_file(rows, sentence_scores(rows, found), limit))


def source_cosines(
    conn: Conn,
    db: Database,
    query_vector: np.ndarray,
    paths: Sequence[str],
    near: NearestSentences | None = None,
) -> list[Hit]:
    """The score of each source file's best sentence (exact, no index), best first: the
    vector evidence for files the keyword arm found beyond the vector arm's pool. With
    ``near`` each file's ``SOURCES.sentences_per_file`` closest sentences by their own vector and by
    their context's are scored like the arm's own (:func:`sentence_scores`), else its
    closest of each, undamped."""
    if not paths:
        return []
    own, around = db.distance_sql(), db.distance_sql(column="context_embedding")
    per_file = SOURCES.sentences_per_file if near is not None and near.active else 1
    rows = conn.execute(
        "SELECT path, text, doc_date, d, embedding, dc, context_embedding FROM (SELECT path,"
        f" text, doc_date, {own} AS d, embedding, {around} AS dc, context_embedding,"
        f" row_number() OVER (PARTITION BY path ORDER BY {own}, ordinal) AS n,"
        f" row_number() OVER (PARTITION BY path ORDER BY {around}, ordinal) AS nc"
        " FROM source_chunks WHERE path = ANY(%(paths)s)"
        " AND (embedding IS NOT NULL OR context_embedding IS NOT NULL)) s"
        " WHERE (n <= %(k)s AND d IS NOT NULL) OR (nc <= %(k)s AND dc IS NOT NULL)",
        {"q": query_vector, "paths": list(paths), "k": per_file},
        binary=True,
    ).fetchall()
    if not rows:
        return []
    scores = sentence_scores(rows, near if per_file > 1 else None)
    return _best_per_file(rows, scores, len(rows))


# Rows of the vector queries: (path, text, doc_date, cosine distance, embedding, the
# context's cosine distance, the context's embedding); a vector not written yet is NULL.
_OWN, _CONTEXT = 3, 5


def sentence_scores(rows: Sequence[tuple[Any, ...]], near: NearestSentences | None) -> np.ndarray:
    """The vector arm's score of each sentence: its own cosine and its context's, each
    damped by its hubness in ``near``'s pool (when given), combined by
    :func:`with_context`."""
    keys = _keys(rows)
    hubs = (near.own, near.context) if near is not None else (_NO_HUBS, _NO_HUBS)
    cosines = []
    for (at, vectors), kind, column in zip(_kinds(rows), hubs, (_OWN, _CONTEXT), strict=True):
        scored = np.full(len(rows), np.nan)
        if at:
            raw = np.array([1.0 - float(rows[i][column]) for i in at])
            scored[at] = kind.damp([keys[i] for i in at], raw, vectors)
        cosines.append(scored)
    return with_context(*cosines)


def with_context(own: np.ndarray, context: np.ndarray) -> np.ndarray:
    """A sentence's score from its own (damped) cosine and its context's: the better of
    the two, so a turn that leans on its neighbours is found through them while a lone
    fact among unrelated sentences keeps its own score. NaN = no such vector (a
    sentence indexed before contexts were, or whose vector is not written yet)."""
    return np.fmax(own, context)


def _keys(rows: Sequence[tuple[Any, ...]]) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in rows]


def _kinds(rows: Sequence[tuple[Any, ...]]) -> list[tuple[list[int], np.ndarray]]:
    """For the own and the context vectors: the rows holding one, and those vectors."""
    out = []
    for column in (_OWN, _CONTEXT):
        at = [i for i, r in enumerate(rows) if r[column] is not None]
        vectors = (
            np.stack([np.asarray(rows[i][column + 1], dtype=np.float32) for i in at])
            if at
            else np.zeros((0, 0), dtype=np.float32)
        )
        out.append((at, vectors))
    return out


def _best_per_file(rows: Sequence[tuple[Any, ...]], scores: np.ndarray, limit: int) -> list[Hit]:
    """Each file's best-scoring sentence as a hit, best first (ties by path)."""
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], rows[i][0]))
    best = best_per_key([(rows[i][0], rows[i][1], rows[i][2], scores[i]) for i in order], limit)
    return [Hit(SOURCE_PREFIX + p, "source", float(sc), text, day) for p, text, day, sc in best]


def source_text_ranks(conn: Conn, query: TextQuery, paths: Sequence[str]) -> list[Hit]:
    """The best chunk of each source file holding any of the words (source_rank_sql), best
    first: the keyword evidence for files the vector arm found beyond the keyword pool.
    Detail ``all_terms`` when that chunk holds every word, else ``some_terms``."""
    if query.empty or not paths:
        return []
    ranking = source_rank_sql(conn, query)
    sql = (
        f"SELECT DISTINCT ON (path) path, text, doc_date, {ranking.rank} AS r,"
        f" {ranking.matched} AS m, tsv @@ ({query.all_sql()}) FROM source_chunks"
        f" WHERE path = ANY(%(paths)s) AND tsv @@ ({query.any_sql()})"
        " ORDER BY path, r DESC, ordinal"
    )
    rows = conn.execute(sql, {**ranking.params, "paths": list(paths)}).fetchall()
    rows.sort(key=lambda r: (-r[3], r[0]))
    return [
        Hit(
            SOURCE_PREFIX + p,
            "source",
            float(r),
            text,
            day,
            "all_terms" if every else "some_terms",
            share=ranking.share(float(m)),
        )
        for p, text, day, r, m, every in rows
    ]


def closest_sentences(
    conn: Conn, db: Database, query_vector: np.ndarray, ids: Sequence[str], per_file: int = 3
) -> dict[str, list[str]]:
    """For source results (``source/<path>``), the ``per_file`` sentences of each file
    closest to the question by their own vector or their context's, closest first
    (exact, no index): what a reranker reads of a note."""
    if not ids:
        return {}
    # least() skips NULL: a sentence without a context vector is placed by its own.
    distance = f"least({db.distance_sql()}, {db.distance_sql(column='context_embedding')})"
    rows = conn.execute(
        "SELECT path, text FROM (SELECT path, text, row_number() OVER"
        f" (PARTITION BY path ORDER BY {distance}, ordinal) AS n FROM source_chunks"
        " WHERE (embedding IS NOT NULL OR context_embedding IS NOT NULL)"
        " AND path = ANY(%(paths)s)) s"
        " WHERE n <= %(k)s ORDER BY path, n",
        {"q": query_vector, "paths": [i.removeprefix(SOURCE_PREFIX) for i in ids], "k": per_file},
    ).fetchall()
    out: dict[str, list[str]] = {}
    for path, text in rows:
        out.setdefault(SOURCE_PREFIX + path, []).append(text)
    return out


# SQL: ``hit`` (path, ordinal), the sentence each source result matched, found again by
# its text; parameters from :func:`matched_params`.
LIST_AFTER = 4  # the items of a list a shown sentence opens that its snippet shows at most
MATCHED_SENTENCE = (
    "WITH hit AS (SELECT DISTINCT ON (s.path) s.path, s.ordinal FROM source_chunks s"
    " JOIN unnest(%(paths)s::text[], %(texts)s::text[]) AS h(path, text)"
    " ON s.path = h.path AND s.text = h.text ORDER BY s.path, s.ordinal)"
)


def matched_params(snippets: Mapping[str, str]) -> dict[str, list[str]]:
    """:data:`MATCHED_SENTENCE`'s parameters for source results (id -> the sentence)."""
    paths = [i.removeprefix(SOURCE_PREFIX) for i in snippets]
    return {"paths": paths, "texts": list(snippets.values())}


def sentence_context(conn: Conn, snippets: Mapping[str, str]) -> dict[str, str]:
    """For source results (id -> the sentence that matched), that sentence with the one
    before and the one after it in its file: a sentence alone often leans on its
    neighbours ("He agreed.", "That was Tuesday."). One of them that opens a list ("As
    Technical Lead, Daniel Kim holds:") brings the list's items too, up to
    :data:`LIST_AFTER` of them."""
    if not snippets:
        return {}
    rows = conn.execute(
        f"{MATCHED_SENTENCE} SELECT hit.path, c.ordinal - hit.ordinal, c.text"
        " FROM hit JOIN source_chunks c ON c.path = hit.path"
        " AND c.ordinal BETWEEN hit.ordinal - 1 AND hit.ordinal + 1 + %(after)s"
        " ORDER BY hit.path, c.ordinal",
        {**matched_params(snippets), "after": LIST_AFTER},
    ).fetchall()
    around: dict[str, list[tuple[int, str]]] = {}
    for path, offset, text in rows:
        around.setdefault(path, []).append((int(offset), str(text)))
    return {SOURCE_PREFIX + path: " ".join(with_list(units)) for path, units in around.items()}


def with_list(units: Sequence[tuple[int, str]]) -> list[str]:
    """The sentences at offsets -1 to 1 of (offset, text), and after the last of them
    that ends with a colon the sentences that follow it, up to :data:`LIST_AFTER` and
    the next that ends with one."""
    near = [(at, text) for at, text in units if at <= 1]
    label = max((at for at, text in near if text.rstrip().endswith(":")), default=None)
    if label is None:
        return [text for _, text in near]
    out = [text for at, text in near if at <= label]
    for at, text in units:
        if at <= label:
            continue
        if at > label + LIST_AFTER or (at > 1 and text.rstrip().endswith(":")):
            break
        out.append(text)
    return out


def search_sources(
    conn: Conn,
    db: Database,
    text: TextQuery,
    vector: np.ndarray | None,
    on: Callable[[str], bool],
    *,
    question: str = "",
    start: dt.date | None = None,
    end: dt.date | None = None,
    embed: Callable[[str], np.ndarray | None] | None = None,
) -> dict[str, list[Hit]]:
    """The source arms ``on(arm)`` allows (the vector arm only with a query vector; the
    note arm, BM25 over whole notes, with the words of ``question``).

    With both sentence arms, each weighs in on every file either found: a file one arm
    found beyond the other's pool gets the other arm's score too (its closest sentence's
    cosine, its best sentence's text rank), ranked after that arm's own hits. Without it
    such a file would lack the other arm's evidence altogether, and a file only the
    keyword arm found would even escape the cosine blend of the fusion."""
    found: dict[str, list[Hit]] = {}
    if on("source_note") and question:
        notes = note_keyword(conn, question, start=start, end=end, embed=embed)
        # A note's snippet is its sentence holding most of the question's rare words.
        best = {
            h.id: h
            for h in source_text_ranks(
                conn, text, [n.id.removeprefix(SOURCE_PREFIX) for n in notes]
            )
        }
        found["source_note"] = [
            replace(n, snippet=best[n.id].snippet) if n.id in best else n for n in notes
        ]
    if on("source_keyword"):
        found["source_keyword"] = source_keyword(conn, text, start=start, end=end)
    near = None
    if vector is not None and on("source_vector"):
        near = nearest_sentences(conn, db, vector, start=start, end=end)
        found["source_vector"] = near.hits
    keyword, nearest = found.get("source_keyword"), found.get("source_vector")
    if vector is None or keyword is None or nearest is None:
        return found

    def beyond(hits: list[Hit], pool: list[Hit]) -> list[str]:
        seen = {h.id for h in pool}
        return [h.id.removeprefix(SOURCE_PREFIX) for h in hits if h.id not in seen]

    found["source_vector"] = nearest + source_cosines(
        conn, db, vector, beyond(keyword, nearest), near
    )

    found["source_keyword"] = keyword + source_text_ranks(conn, text, beyond(nearest, keyword))
    return found
