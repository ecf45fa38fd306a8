"""Shaping: the fused candidates of one pass of the arms made into a response's results.

Boosts and recency (:mod:`memserver.search.fusion`), the window filter, the optional
rerank (:mod:`memserver.search.model_steps`), date order for latest/first or promotion
of a relation's pages, exact-name pinning, autocut, the mode's result count, snippets
(timeline lines, a raw source's sentences, a page's lead) and the token budget.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memserver.clients.llm import Reranker
from memserver.db.database import Database
from memserver.graph.resolve import dated_folders
from memserver.kb.page import drop_field_lines
from memserver.kb.schema import Schema
from memserver.search import arms, kinds, parts, source_arms
from memserver.search import fusion as fz
from memserver.search import model_steps as search_models
from memserver.search.fusion import Candidate, Hit
from memserver.search.intent import Intent
from memserver.search.note_lines import more_lines
from memserver.search.page_details import lead_snippets, page_info
from memserver.search.settings import FUSION
from memserver.search.text_query import TextQuery
from memserver.search.types import Mode, SearchRequest, SearchResult, window_dates
from memserver.timeparse.window import NEWEST, TimeQuery, order_bounds


@dataclass
class ArmRun:
    """What one pass of the arms over a set of folders produced."""

    cands: list[Candidate]
    arms: dict[str, list[Hit]]
    relevant: set[str]
    exact: set[str]
    vector: np.ndarray | None = None  # the question's embedding, when there is one


def shape(
    conn: Any,
    db: Database,
    schema: Schema,
    run: ArmRun,
    mode: Mode,
    req: SearchRequest,
    tq: TimeQuery,
    intent: Intent,
    today: dt.date,
    degraded: list[str],
    *,
    reranker: Reranker | None = None,
) -> tuple[list[SearchResult], int]:
    """The fused candidates of ``run`` made into the response's results: boosts and
    recency, the window, rerank, date order or relation promotion, exact-name pinning,
    autocut, the mode's limit, snippets and labels, and the token budget."""
    start, end = window_dates(tq.window)
    cands = run.cands
    info = page_info(conn, [c.id for c in cands], start, end)
    cands = [c for c in cands if c.id in info]  # deleted meanwhile
    for cand in cands:
        meta = info[cand.id]
        cand.title, cand.folder, cand.date = meta.title, meta.folder, meta.date
        cand.window_match = meta.window_match
    boosts = {f.name: f.source_boost for f in schema.folders}
    cands = fz.apply_boosts(cands, boosts, intent.folders)
    if tq.soft_recency:
        halflife = {f.name: f.recency_halflife_days for f in schema.folders}
        cands = fz.apply_recency(cands, halflife, today)
    if tq.window is not None:
        cands = fz.filter_window(cands, start, end, dated_folders(schema))
        if intent.folders and tq.order is None:
            # "meetings in October": the named folder's pages dated in the window lead.
            cands = fz.promote(cands, {c.id for c in cands if _in(c, start, end, intent.folders)})
    if mode.rerank and reranker is not None and cands:
        query = tq.query or req.question
        cands = search_models.rerank(conn, db, reranker, cands, query, run.vector, degraded)
    if tq.order is not None:
        after, through = order_bounds(tq.order, today)
        cands = fz.order_by_date(
            cands, run.relevant, newest=tq.order == NEWEST, after=after, through=through
        )
    elif intent.relation is not None and run.arms.get("graph"):
        cands = fz.promote(cands, {h.id for h in run.arms["graph"]})
    cands = fz.pin_exact(cands, run.exact)
    cands = by_kind(cands, run.arms, result_limit(req, mode), mode.autocut and tq.order is None)
    ids = [c.id for c in cands]
    text = TextQuery.of(intent)
    lines = arms.timeline_lines(conn, ids, text, start, end)
    leads = lead_snippets(conn, [c.id for c in cands if not c.snippet])
    matched = {c.id: c.snippet for c in cands if c.folder == "source" and c.snippet}
    context = source_arms.sentence_context(conn, matched)
    context |= more_lines(conn, text, matched, context, mode.snippet_chars)
    terms = [*intent.terms, *(i.lower() for i in intent.identifiers)]
    results = []
    for cand in cands:
        cand.timeline = lines.get(cand.id, [])
        fz.label(cand, ("keyword", "source_keyword"))
        best = context.get(cand.id) or cand.snippet or leads.get(cand.id, "")
        snippet = visible_snippet(schema, cand, best, req)
        results.append(
            SearchResult(
                id=cand.id,
                title=cand.title,
                folder=cand.folder,
                date=cand.date.isoformat() if cand.date else None,
                score=round(cand.score, 4),
                snippet=fz.trim_snippet(snippet, mode.snippet_chars, terms),
                ranks=dict(cand.ranks),
                labels=tuple(cand.labels),
                timeline=tuple(cand.timeline),
            )
        )

    return kinds.split_budget(results, result_tokens, mode.budget, result_id)


def by_kind(
    cands: list[Candidate], found: Mapping[str, Sequence[Hit]], limit: int, cut: bool
) -> list[Candidate]:
    """The shaped candidates cut to the response, pages and notes each on their own
    (:mod:`memserver.search.kinds`): autocut (with ``cut``) within each kind, each kind
    within its quota of ``limit``, each keeping its arms' first results; in their order."""
    pages = [c for c in cands if not kinds.is_note(c.id)]
    notes = [c for c in cands if kinds.is_note(c.id)]

    def guarded(pool: list[Candidate], arms_of_kind: Sequence[str], quota: int) -> list[str]:
        ids = {c.id for c in pool}
        reserve = kinds.reserve_of(quota, len(arms_of_kind))
        return [i for i in kinds.guarded_ids(found, arms_of_kind, reserve) if i in ids]

    page_cut = fz.autocut(pages) if cut else pages
    note_cut = fz.autocut(notes) if cut else notes
    page_quota, note_quota = kinds.quotas(
        len({c.id for c in page_cut} | set(guarded(pages, FUSION.page_guard_arms, limit))),
        len({c.id for c in note_cut} | set(guarded(notes, FUSION.note_guard_arms, limit))),
        limit,
    )
    page_guard = guarded(pages, FUSION.page_guard_arms, page_quota)
    note_guard = guarded(notes, FUSION.note_guard_arms, note_quota)
    chosen = {
        c.id
        for cut_, pool, guard, quota in (
            (page_cut, pages, page_guard, page_quota),
            (note_cut, notes, note_guard, note_quota),
        )
        for c in kinds.keep_arms_best(cut_, pool, guard, quota, _id, _fixed)
    }
    return [c for c in cands if c.id in chosen]


def _id(cand: Candidate) -> str:
    return cand.id


def _fixed(cand: Candidate) -> bool:
    """A result the shaping put where it is for a reason the arms do not know of."""
    return cand.pinned or cand.ordered or cand.promoted


def result_id(result: SearchResult) -> str:
    return result.id


def _in(cand: Candidate, start: dt.date | None, end: dt.date | None, folders: Any) -> bool:
    day = cand.date
    if day is None or cand.folder not in folders:
        return False
    return (start is None or day >= start) and (end is None or day < end)


OUTSIDE_WINDOW = parts.OUTSIDE_WINDOW


def result_limit(req: SearchRequest, mode: Mode) -> int:
    """How many results a response holds at most: the request's limit, else the mode's."""
    return max(1, min(int(req.limit), 100)) if req.limit else mode.limit


def result_tokens(result: SearchResult) -> int:
    return fz.text_tokens(result.title, result.snippet, *(t.text for t in result.timeline)) + 8


def nearness(date: str | None, start: dt.date | None, end: dt.date | None) -> float:
    """0-1: how near a result's ISO ``date`` is to the window ``[start, end)`` (1 inside,
    0 undated or without a window)."""
    if date is None or (start is None and end is None):
        return 0.0
    try:
        day = dt.date.fromisoformat(date[:10])
    except ValueError:
        return 0.0
    if start is not None and day < start:
        days = (start - day).days
    elif end is not None and day >= end:
        days = (day - end).days + 1
    else:
        return 1.0
    return FUSION.near_window_days / (FUSION.near_window_days + days)


def short_of_quota(results: Sequence[SearchResult], limit: int, sources: bool) -> bool:
    """Whether a response holds fewer than ``limit`` results, or (with ``sources``) fewer
    notes or pages than their share of it: a windowed search then fills up from outside
    the window (:func:`fill_outside_window`)."""
    if len(results) < limit:
        return True
    notes = sum(1 for r in results if kinds.is_note(r.id))
    page_quota, note_quota = kinds.quotas(limit, limit, limit)
    return sources and (notes < note_quota or len(results) - notes < page_quota)


def fill_outside_window(
    inside: list[SearchResult],
    wider: list[SearchResult],
    limit: int,
    mode: Mode,
    window: tuple[dt.date | None, dt.date | None] = (None, None),
) -> tuple[list[SearchResult], int, int]:
    """A windowed search's results, then those of the same search without the window
    that it lacks (label ``outside_window``), those dated nearer the ``window`` first
    among close scores (``FUSION.near_window``), pages and notes each up to their quota
    of ``limit`` (the window's own first) and their share of the mode's budget:
    ``(results, tokens, how many were filled)``."""
    seen = {r.id for r in inside}
    lacking = [r for r in wider if r.id not in seen]
    near = [r.score * (1 + FUSION.near_window * nearness(r.date, *window)) for r in lacking]
    order = sorted(range(len(lacking)), key=lambda i: -near[i])  # stable: ties keep their order
    extra = [replace(lacking[i], labels=(*lacking[i].labels, OUTSIDE_WINDOW)) for i in order]
    both = [*inside, *extra]
    notes = [r for r in both if kinds.is_note(r.id)]
    pages = [r for r in both if not kinds.is_note(r.id)]
    page_quota, note_quota = kinds.quotas(len(pages), len(notes), limit)
    chosen = {r.id for r in [*pages[:page_quota], *notes[:note_quota]]}
    kept, tokens = kinds.split_budget(
        [r for r in both if r.id in chosen], result_tokens, mode.budget, result_id
    )
    return kept, tokens, sum(1 for r in kept if r.id not in seen)


def visible_snippet(schema: Schema, cand: Candidate, snippet: str, req: SearchRequest) -> str:
    """The snippet without link-field values that point outside the caller's scope
    (the same rule as kb_get_page): the page is visible, its hidden links are not."""
    if req.scope is None or cand.folder not in schema.folder_names:
        return snippet
    visible = set(req.scope)
    hidden = schema.folder(cand.folder).hidden_link_fields(visible.__contains__)
    return drop_field_lines(snippet, hidden)
