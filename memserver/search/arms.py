"""Retrieval arms: one function per way of finding pages, each filtered to the caller's
folders *in SQL* (``folder = ANY(%(folders)s)``), so an out-of-scope page never leaves
the database. Every arm returns :class:`memserver.search.fusion.Hit` rows, one per page, best
first; ``memserver.search.pipeline`` fuses them.

==============  ===============================================================
arm             what it finds
==============  ===============================================================
keyword         chunks matching the question's words (FTS, ``simple`` config,
                ``websearch_to_tsquery``; any word matches, all words rank double;
                Mongolian stems as prefixes); best chunk per page
vector          nearest chunks by cosine (HNSW, iterative scan; exact scan for a
                short window); best chunk per page
title           pages whose title, slug or alias is a run of the question's words
                (exact), else similar titles (pg_trgm)
timeline        timeline entries dated inside the window, pointing at their page
dated           pages whose effective date is inside the window (or, for
                "latest X" with nothing else asked, a folder's newest/oldest pages)
graph           pages wired to a named entity by typed edges (``graph.entity_pages``)
graph_augment   neighbours of the best results (tokenmax)
source_*        raw source chunks (keyword / vector), one hit per source file,
                id ``source/<path>``; only with ``include_sources``
                (``memserver.search.source_arms``)
==============  ===============================================================

A window ``[start, end)`` is applied in SQL where the arm has dates: a chunk's
``effective_date`` is its own date (timeline chunk) or its page's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence

import numpy as np

from memserver.db.database import Database
from memserver.db.vectors import vector_scan
from memserver.graph import neighbors as graphs
from memserver.kb.layout import slugify
from memserver.search.fusion import Hit, TimelineLine
from memserver.search.intent import GraphPlan, Intent
from memserver.search.settings import ARMS
from memserver.search.text_query import Conn, TextQuery, best_per_key, staged, window_sql

# --------------------------------------------------------------------------- keyword


def keyword(
    conn: Conn,
    query: TextQuery,
    folders: Sequence[str],
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    limit: int = ARMS.pool,
) -> list[Hit]:
    """Pages whose chunks hold all the words, then (if too few) most of them; best chunk
    per page, ranked by ts_rank_cd within each stage (among at most ``ARMS.match_cap`` matches)."""
    if query.empty or not folders:
        return []

    def build(match: str) -> str:
        return (
            f"SELECT page_id, folder, text, effective_date, ts_rank_cd(tsv, {query.any_sql()}, 1)"
            " AS r FROM (SELECT c.page_id, c.folder, c.text, c.effective_date, c.ordinal, c.tsv"
            f" FROM chunks c WHERE c.tsv @@ ({match}) AND c.folder = ANY(%(folders)s)"
            + window_sql(start, end, "c.effective_date")
            + " LIMIT %(cap)s) m ORDER BY r DESC, page_id, ordinal LIMIT %(pool)s"
        )

    params = {**query.params(), "folders": list(folders), "start": start, "end": end}
    rows = staged(conn, query, build, {**params, "pool": limit * 4, "cap": ARMS.match_cap}, limit)
    return [
        Hit(pid, folder, float(r), text, day, detail)
        for detail, (pid, folder, text, day, r) in rows
    ]


# --------------------------------------------------------------------------- vector


def vector(
    conn: Conn,
    db: Database,
    query_vector: np.ndarray,
    folders: Sequence[str],
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    limit: int = ARMS.pool,
) -> list[Hit]:
    """Nearest chunks by cosine, best chunk per page.

    The HNSW index is scanned iteratively so the folder and date filters cannot starve
    the LIMIT; a window of at most ``ARMS.short_window_days`` is scanned exactly instead
    (few rows, and exact beats an index scan that must skip most of the graph).
    """
    if not folders:
        return []
    windowed = start is not None or end is not None
    pool = limit if windowed else limit * 2  # chunks; enough for ~limit distinct pages
    distance = db.distance_sql()
    short = start is not None and end is not None and (end - start).days <= ARMS.short_window_days
    order = f"({distance}) + 0" if short else distance  # "+ 0" keeps the index out
    sql = (
        "WITH c AS MATERIALIZED ("
        f" SELECT page_id, folder, text, effective_date, {distance} AS d FROM chunks"
        " WHERE embedding IS NOT NULL AND folder = ANY(%(folders)s)"
        + window_sql(start, end, "effective_date")
        + f" ORDER BY {order} LIMIT %(pool)s)"
        " SELECT page_id, folder, text, effective_date, d FROM c ORDER BY d, page_id"
    )
    params = {"q": query_vector, "folders": list(folders), "start": start, "end": end, "pool": pool}
    # A window admits few of the graph's tuples: bound the scan rather than walk it all
    # (the dated and timeline arms enumerate the window anyway).
    budget = ARMS.window_scan_tuples if windowed else ARMS.scan_tuples
    with vector_scan(conn, ef_search=max(pool, ARMS.page_ef_search), max_scan_tuples=budget):
        rows = conn.execute(sql, params).fetchall()
    return [
        Hit(pid, folder, 1.0 - float(d), text, day)
        for pid, folder, text, day, d in best_per_key(rows, limit)
    ]


# --------------------------------------------------------------------------- title


_EXACT = """
SELECT p.id, p.folder, m.kind, m.gram, p.effective_date FROM (
    SELECT id, 'title' AS kind, lower(title) AS gram FROM pages WHERE lower(title) = ANY(%(grams)s)
    UNION ALL
    SELECT id, 'slug', slug FROM pages WHERE slug = ANY(%(slugs)s)
    UNION ALL
    SELECT page_id, 'alias', alias_norm FROM page_aliases WHERE alias_norm = ANY(%(grams)s)
) m JOIN pages p ON p.id = m.id
WHERE p.folder = ANY(%(folders)s)
"""

_KIND_ORDER = {"title": 3, "alias": 2, "slug": 1}  # equal scores: the title form wins

_FUZZY = """
SELECT p.id, p.folder, greatest(similarity(p.title, %(q)s), coalesce(a.sim, 0)) AS sim,
       p.effective_date
FROM pages p
LEFT JOIN LATERAL (
    SELECT max(similarity(alias_norm, %(q)s)) AS sim FROM page_aliases WHERE page_id = p.id
) a ON true
WHERE p.id IN (
    SELECT id FROM pages WHERE title %% %(q)s
    UNION SELECT page_id FROM page_aliases WHERE alias_norm %% %(q)s
) AND p.folder = ANY(%(folders)s)
ORDER BY sim DESC, p.id LIMIT %(limit)s
"""


def title(
    conn: Conn,
    intent: Intent,
    folders: Sequence[str],
    *,
    fuzzy: bool = True,
    limit: int = ARMS.pool,
) -> list[Hit]:
    """Pages named by a run of the question's words (exact), else by a similar name.

    Exact hits score ``0.5 + 0.5 x (words covered / words asked)``; naming the whole
    question scores 1.0 with detail ``exact_title``/``exact_alias``/``exact_slug``
    (pinned by the search). Fuzzy hits (pg_trgm similarity of the question with a title
    or alias, short questions only) score their similarity.
    """
    if not folders or not intent.words:
        return []
    grams = list(intent.ngrams)
    slugs: list[str] = []
    for gram in grams:
        try:
            slugs.append(slugify(gram))
        except Exception:  # a gram slugify refuses (nothing sluggable) names no page
            continue
    total = len(intent.words)
    full = " ".join(intent.words)
    rows = conn.execute(
        _EXACT, {"grams": grams, "slugs": sorted(set(slugs)), "folders": list(folders)}
    ).fetchall()
    best: dict[str, Hit] = {}
    for pid, folder, kind, gram, day in rows:
        gram_words = len(gram.replace("-", " ").split())
        whole = gram == full or (kind == "slug" and gram == slugify(full))
        score = 1.0 if whole else 0.5 + 0.5 * min(1.0, gram_words / total)
        detail = f"exact_{kind}" if whole else f"{kind}_in_question"
        name = " ".join(gram.replace("-", " ").split())  # a slug names the same words
        hit = Hit(pid, folder, score, None, day, detail, name)
        if pid not in best or (score, _KIND_ORDER[kind]) > (
            best[pid].score,
            _KIND_ORDER[(best[pid].detail or "").removeprefix("exact_").split("_")[0]],
        ):
            best[pid] = hit
    hits = sorted(best.values(), key=lambda h: (-h.score, h.id))
    if fuzzy and not hits and intent.terms and total <= ARMS.fuzzy_max_words:
        rows = conn.execute(
            _FUZZY, {"q": full, "folders": list(folders), "limit": limit}
        ).fetchall()
        for pid, folder, sim, day in rows:
            if pid not in best and sim >= ARMS.fuzzy_min:
                hits.append(Hit(pid, folder, float(sim) * 0.5, None, day, "fuzzy_title", full))
    return hits[:limit]


# --------------------------------------------------------------------------- timeline


def timeline(
    conn: Conn,
    query: TextQuery,
    folders: Sequence[str],
    start: dt.date | None,
    end: dt.date | None,
    *,
    newest: bool = True,
    limit: int = ARMS.pool,
) -> list[Hit]:
    """Timeline entries inside the window, newest first; with words in the question, only
    the entries naming them (in the entry, or in its page's title), best match first."""
    if not folders or (start is None and end is None):
        return []
    direction = "DESC" if newest else "ASC"
    if query.empty:
        rank, match = "0", ""
    else:
        # Two index-driven halves: entries with all the words (GIN on the entries), and
        # entries of pages whose title has them (GIN on titles, then page_id + date).
        rank = f"ts_rank_cd(t.tsv, {query.any_sql()}, 1) + 0.1"
        every = query.all_sql()
        match = (
            f" AND t.id IN (SELECT id FROM timeline_entries WHERE tsv @@ ({every})"
            f" UNION SELECT e.id FROM timeline_entries e JOIN pages p ON p.id = e.page_id"
            f" WHERE p.title_tsv @@ ({every}))"
        )
    sql = (
        f"SELECT t.page_id, t.folder, t.date, t.text, {rank} AS r"
        " FROM timeline_entries t WHERE t.folder = ANY(%(folders)s)"
        + window_sql(start, end, "t.date")
        + match
        + f" ORDER BY r DESC, t.date {direction}, t.page_id LIMIT %(pool)s"
    )
    params = {**query.params(), "folders": list(folders), "start": start, "end": end}
    rows = conn.execute(sql, {**params, "pool": limit * 4}).fetchall()
    return [
        Hit(pid, folder, float(r), f"{day.isoformat()}: {text}", day)
        for pid, folder, day, text, r in best_per_key(rows, limit)
    ]


def timeline_lines(
    conn: Conn,
    ids: Sequence[str],
    query: TextQuery,
    start: dt.date | None,
    end: dt.date | None,
    per_page: int = 3,
) -> dict[str, list[TimelineLine]]:
    """Timeline lines to attach to results: inside the window, else naming the words."""
    if not ids:
        return {}
    if start is not None or end is not None:
        where = window_sql(start, end, "date")
        rank = "0"
    elif not query.empty:
        where = f" AND tsv @@ ({query.any_sql()})"
        rank = f"ts_rank_cd(tsv, {query.any_sql()}, 1)"
    else:
        return {}
    sql = (
        "SELECT page_id, date, text FROM ("
        f" SELECT page_id, date, text, row_number() OVER"
        f"  (PARTITION BY page_id ORDER BY {rank} DESC, date DESC, ordinal) AS n"
        f" FROM timeline_entries WHERE page_id = ANY(%(ids)s){where}) s"
        " WHERE n <= %(per)s ORDER BY page_id, date DESC"
    )
    params = {**query.params(), "ids": list(ids), "start": start, "end": end, "per": per_page}
    out: dict[str, list[TimelineLine]] = {}
    for pid, day, text in conn.execute(sql, params).fetchall():
        out.setdefault(pid, []).append(TimelineLine(day, text))
    return out


# --------------------------------------------------------------------------- dated


def dated(
    conn: Conn,
    folders: Sequence[str],
    start: dt.date | None,
    end: dt.date | None,
    *,
    newest: bool = True,
    limit: int = ARMS.pool,
) -> list[Hit]:
    """Pages by effective date inside ``[start, end)`` (either end open), newest first."""
    if not folders:
        return []
    direction = "DESC" if newest else "ASC"
    sql = (
        "SELECT id, folder, effective_date FROM pages"
        " WHERE folder = ANY(%(folders)s) AND effective_date IS NOT NULL"
        + window_sql(start, end, "effective_date")
        + f" ORDER BY effective_date {direction}, id LIMIT %(limit)s"
    )
    rows = conn.execute(
        sql, {"folders": list(folders), "start": start, "end": end, "limit": limit}
    ).fetchall()
    n = len(rows)
    return [
        Hit(pid, folder, 1.0 - i / (n + 1), None, day) for i, (pid, folder, day) in enumerate(rows)
    ]


# --------------------------------------------------------------------------- graph


def graph(
    conn: Conn,
    plans: Sequence[GraphPlan],
    folders: Collection[str],
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    newest: bool = True,
    limit: int = ARMS.pool,
) -> list[Hit]:
    """Pages reached by the planned paths, ordered by date (newest first by default)."""
    hits: list[Hit] = []
    seen: set[str] = set()
    for plan in plans:
        ids = graphs.entity_pages(
            conn,
            plan.entity,
            plan.into,
            list(plan.verbs) if plan.verbs else None,
            folders,
            direction=plan.direction,
            start=start,
            end=end,
            newest_first=newest,
            limit=limit,
        )
        if not ids and plan.verbs and plan.direction == "both":
            ids = graphs.entity_pages(
                conn, plan.entity, plan.into, None, folders, start=start, end=end,
                newest_first=newest, limit=limit,
            )  # fmt: skip
        for pid in ids:
            if pid not in seen:
                seen.add(pid)
                hits.append(Hit(pid, plan.into, 1.0 / (len(hits) + 1), None, None, plan.label))
    return hits[:limit]


def graph_augment(
    conn: Conn, seeds: Sequence[str], folders: Collection[str], limit: int = ARMS.pool
) -> list[Hit]:
    """Depth-1 neighbours of the best results (tokenmax), both ends in scope."""
    hits: list[Hit] = []
    seen = set(seeds)
    for seed in seeds:
        for edge in graphs.neighbors(conn, seed, folders, depth=1):
            other = edge.to_id if edge.from_id == seed else edge.from_id
            if other in seen:
                continue
            seen.add(other)
            hits.append(Hit(other, other.partition("/")[0], 0.0, None, None, edge.verb))
            if len(hits) >= limit:
                return hits
    return hits
