"""Time-aware hybrid search: the pipeline behind ``kb_query``, ``kb_latest`` and
``memserver search``.

For one question (and an explicit reference time ``now``):

1. **time**: ``timeparse.parse_time`` gives the window ``[start, end)``, the ordering
   (latest/first) and soft recency, and the question without those words;
2. **intent**: ``memserver.search.intent.analyze`` finds the topical words, identifiers, the
   folders the question names and a typed relation ("reports to");
3. **routing** (``kb_query`` with a token of many folders): the router narrows the
   folders searched; when that finds nothing, the whole scope is searched again;
4. **arms** (``memserver.search.arms``), each filtered to the caller's folders in SQL:
   keyword, vector, title/alias, timeline (with a window), dated pages (with a
   window, or "latest X" with nothing else asked), graph (entities named in the
   question followed along typed edges), raw sources (``include_sources``); tokenmax
   adds LLM query variants and depth-1 graph neighbours;
5. **fusion and shaping** (``memserver.search.fusion``, ``memserver.search.shaping``): RRF k=60 with per-intent arm weights,
   folder priors, recency decay, the window filter, date ordering for latest/first,
   optional cross-encoder rerank (``memserver.search.model_steps``), exact-name pinning,
   evidence labels, autocut, and the mode's result count and token budget.

Every response says how the time was read and what was ``degraded``
(``embedding_fallback_hash``, ``vector_arm_failed``, ``reranker_unavailable`` ...).
The request/response values live in :mod:`memserver.search.types` (re-exported here);
``Searcher.timeline`` (kb_timeline) is :mod:`memserver.search.timeline`.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from memserver.clients.embed import Embedder
from memserver.clients.llm import LLMClient, Reranker
from memserver.clients.profile import server_call_deadline
from memserver.db.database import Database
from memserver.errors import NotFoundError, UserError
from memserver.graph.resolve import dated_folders, resolve
from memserver.kb.schema import Schema
from memserver.kb.words import is_cyrillic
from memserver.routing.router import Router
from memserver.search import arms, parts, source_arms
from memserver.search import fusion as fz
from memserver.search import model_steps as search_models
from memserver.search.cross_script import cyrillic_names, latin_names
from memserver.search.fusion import Candidate, Hit
from memserver.search.intent import Intent, analyze, plan_graph
from memserver.search.settings import ARMS
from memserver.search.shaping import (
    ArmRun,
    fill_outside_window,
    result_limit,
    result_tokens,
    shape,
    short_of_quota,
)
from memserver.search.text_query import TextQuery
from memserver.search.timeline import timeline_events
from memserver.search.types import (
    DEFAULT_MODE,
    MODES,
    SOURCE_PREFIX,
    Mode,
    SearchRequest,
    SearchResponse,
    SearchResult,
    check_mode,
    window_dates,
)
from memserver.search.weights import arm_weights
from memserver.timeparse.parse import parse_time
from memserver.timeparse.window import NEXT, OLDEST, TimeQuery, order_bounds, reference_time

__all__ = [
    "DEFAULT_MODE",
    "MODES",
    "Mode",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "Searcher",
    "check_mode",
    "window_dates",
]

log = logging.getLogger(__name__)

SOURCE_FOLDER = "source"
ROUTE_MIN_FOLDERS = 4  # route only when the caller can read at least this many folders
ONE_DAY = dt.timedelta(days=1)
RECENT_VECTORS = 64


def known_by(results: Sequence[SearchResult], day: dt.date) -> list[SearchResult]:
    """The results a search on ``day`` could have returned: pages and notes dated after
    it are left out (undated pages stay; the tools mark their values as of then)."""
    cut = day.isoformat()
    return [r for r in results if not r.date or r.date[:10] <= cut]


def _looks_like_name(text: str) -> bool:
    """A capitalised word after the first (or any capitalised Cyrillic word)."""
    words = text.split()
    return any(w[:1].isupper() for w in words[1:]) or any(
        w[:1].isupper() and is_cyrillic(w) for w in words
    )


def _grounded(run: ArmRun) -> bool:
    """Whether an arm other than plain vector similarity found something."""
    weak = {"vector", "source_vector", "graph_augment"}
    return any(set(c.ranks) - weak for c in run.cands)


def _ordered_window(
    start: dt.date | None, end: dt.date | None, bounds: tuple[dt.date | None, dt.date | None]
) -> tuple[dt.date | None, dt.date | None]:
    """``[start, end)`` narrowed to an ordering's side of today (``order_bounds``)."""
    after, through = bounds
    if after is not None:
        start = max(start, after + ONE_DAY) if start else after + ONE_DAY
    if through is not None:
        end = min(end, through + ONE_DAY) if end else through + ONE_DAY
    return start, end


class Searcher:
    """Searches one index. Build it once and reuse it (it caches small things)."""

    def __init__(
        self,
        db: Database,
        schema: Schema | Any,
        embedder: Embedder | None,
        *,
        reranker: Reranker | None = None,
        llm: LLMClient | None = None,
        router: Router | None = None,
    ) -> None:
        self.db = db
        self._schema = schema
        self.embedder = embedder
        self.reranker = reranker
        self.llm = llm
        self.router = router
        self._vector_ready = False
        self._recent: dict[str, np.ndarray] = {}  # question -> its vector (for routing)
        self._recent_lock = threading.Lock()

    @classmethod
    def for_kb(cls, kb: Any, settings: Any = None, *, route: bool = True) -> Searcher:
        """A searcher over a ``KnowledgeBase`` with the configured reranker, LLM and router."""
        reranker = Reranker(settings.rerank) if settings is not None and settings.rerank else None
        llm = None
        if settings is not None and settings.llm:
            # Query rewrites run inside kb_query: done (or given up) before the MCP timeout.
            deadline = server_call_deadline(settings)
            llm = LLMClient(settings.llm, max_attempts=2, deadline=deadline)
        searcher = cls(kb.db, lambda: kb.schema, kb.embedder, reranker=reranker, llm=llm)
        if route:
            embed = searcher.route_embed if kb.embedder is not None else None
            if settings is not None:
                searcher.router = Router.from_settings(kb.schema, settings, embed=embed)
            else:
                searcher.router = Router(kb.schema, embed=embed)
        return searcher

    def route_embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The router's embedder: a question this searcher just embedded is not embedded
        again (folder descriptions are, once)."""
        with self._recent_lock:
            known = [self._recent.get(t) for t in texts]
        if all(v is not None for v in known):
            return [v for v in known if v is not None]
        assert self.embedder is not None
        return self.embedder.embed_passages(texts)

    def close(self) -> None:
        for client in (self.reranker, self.llm, self.router):
            if client is not None:
                client.close()

    @property
    def schema(self) -> Schema:
        value = self._schema() if callable(self._schema) else self._schema
        assert isinstance(value, Schema)
        return value

    def _event_folders(self) -> frozenset[str]:
        """Folders whose pages are events on one date (a date field or {date} slug)."""
        return dated_folders(self.schema)

    # ---------------------------------------------------------------- scope

    def scope_folders(self, req: SearchRequest) -> list[str]:
        """The schema folders this request searches (scope, then ``folders``)."""
        names = [f for f in self.schema.folder_names if req.scope is None or f in req.scope]
        if req.folders:
            wanted = [f.strip() for f in req.folders if f and f.strip()]
            wanted = [f for f in wanted if f != SOURCE_FOLDER]
            missing = [f for f in wanted if f not in names]
            if missing:
                raise NotFoundError(
                    f"no folder {missing[0]!r} in your scope",
                    f"your folders are: {', '.join(names) or 'none'}",
                )
            if wanted:
                names = [f for f in names if f in wanted]
        return names

    # ---------------------------------------------------------------- search

    def search(self, req: SearchRequest) -> SearchResponse:
        """The response to ``req``; a question that asks several things at once is
        searched whole and part by part, and the results merged
        (:mod:`memserver.search.parts`)."""
        if req.order is not None or req.focus is not None or req.arms is not None:
            return self._search_one(req)  # a tool's own reading, or one arm measured
        schema = self.schema
        now = reference_time(req.now, schema.tz)

        def core(text: str) -> str:
            return parse_time(text, now=now, tz=schema.tz).query

        mode = check_mode(req.mode)
        return parts.search_in_parts(
            req, self._search_one, core, result_limit(req, mode), mode.budget, result_tokens
        )

    def _search_one(self, req: SearchRequest) -> SearchResponse:
        began = time.perf_counter()
        mode = check_mode(req.mode)
        schema = self.schema
        now = reference_time(req.now, schema.tz)
        tq = parse_time(req.question or "", now=now, tz=schema.tz)
        if req.order is not None:
            tq = replace(tq, order=req.order)
        scope = self.scope_folders(req)
        if req.focus is not None and req.focus not in scope:
            raise NotFoundError(
                f"no folder {req.focus!r} in your scope",
                f"your folders are: {', '.join(scope) or 'none'}",
            )
        degraded: list[str] = []
        sources = req.include_sources and req.source_access
        if req.include_sources and not req.source_access:
            degraded.append("sources_not_in_scope")
        intent = analyze(tq.query, schema, scope)
        routing: dict[str, Any] | None = None
        searched = scope
        if req.focus is not None:
            searched = [req.focus]
            intent = replace(intent, folders=(req.focus,))
        allowed = set(req.arms) if req.arms is not None else None
        wants_vector = allowed is None or "vector" in allowed
        wants_vector |= sources and (allowed is None or "source_vector" in allowed)
        wants_vector &= intent.has_topic  # "what happened last week": nothing to compare
        text = tq.query or req.question
        vector = self._query_vector(text, degraded) if wants_vector else None

        def shaped(found: ArmRun, tq: TimeQuery = tq) -> tuple[list[SearchResult], int]:
            return shape(
                conn,
                self.db,
                schema,
                found,
                mode,
                req,
                tq,
                intent,
                now.date(),
                degraded,
                reranker=self.reranker,
            )

        with self.db.reading() as conn:
            wants_names = req.arms is None or bool({"title", "graph"} & set(req.arms))
            names = arms.title(conn, intent, scope) if wants_names else []
            people = [f.name for f in self.schema.folders if f.type == "person"]
            across, named_across = latin_names(conn, intent.terms, scope, people, intent.words)
            across = cyrillic_names(intent.terms, intent.names) | across
            if across:
                intent = replace(intent, across=tuple(across.items()))
                names += [h for h in named_across if h.id not in {n.id for n in names}]
            if (
                req.focus is None
                and req.route
                and self.router is not None
                and len(scope) >= ROUTE_MIN_FOLDERS
                and intent.has_topic  # "what happened last week" is about every folder
            ):
                routing, searched = self._route(tq, req, intent, names, scope, degraded)
            run = self._run(
                conn, req, mode, tq, intent, searched, scope, names, vector, sources, degraded,
                today=now.date(),
            )  # fmt: skip
            results, tokens = shaped(run)
            if routing is not None and searched != scope and (not results or not _grounded(run)):
                # Nothing, or only nearest vectors, in the routed folders: ask the whole scope.
                routing["retried"] = True
                wider = self._run(
                    conn, req, mode, tq, intent, scope, scope, names, vector, sources, degraded,
                    today=now.date(),
                )  # fmt: skip
                wide = shaped(wider)
                if wide[0] and (_grounded(wider) or not results):
                    run, (results, tokens) = wider, wide
                    searched = scope
            outside = 0
            limit = result_limit(req, mode)
            if tq.window is not None and short_of_quota(results, limit, sources):
                # A window is a preference, never a wall: a note written in 2023 tells
                # what happened in 2021. Fill up from the same search without it.
                unbounded = replace(tq, window=None, phrase=None)
                wider = self._run(
                    conn, req, mode, unbounded, intent, searched, scope, names, vector,
                    sources, degraded, today=now.date(),
                )  # fmt: skip
                results, tokens, outside = fill_outside_window(
                    results, shaped(wider, unbounded)[0], limit, mode, window_dates(tq.window)
                )
        times = tq.as_dict()
        if req.as_of is not None:
            results = known_by(results, req.as_of)
            times["as_of"] = req.as_of.isoformat()
        return SearchResponse(
            question=req.question,
            query=tq.query,
            mode=mode.name,
            now=now.isoformat(),
            time=times,
            results=tuple(results),
            degraded=tuple(dict.fromkeys(degraded)),
            folders=tuple(searched) + ((SOURCE_FOLDER,) if sources else ()),
            routing=routing,
            tokens=tokens,
            took_ms=(time.perf_counter() - began) * 1000,
            arms={name: len(hits) for name, hits in run.arms.items()},
            intent=intent.summary(),
            outside_window=outside,
        )

    def _route(
        self,
        tq: TimeQuery,
        req: SearchRequest,
        intent: Intent,
        names: list[Hit],
        scope: list[str],
        degraded: list[str],
    ) -> tuple[dict[str, Any], list[str]]:
        """The folders to search: the router's confident picks, plus the folders the
        question names (a folder word, a relation's ends, an entity's own folder)."""
        assert self.router is not None
        routed = self.router.route(tq.query or req.question, scope)
        degraded.extend(f"routing_{d}" for d in routed.degraded)
        confident = [f.folder for f in routed.folders if f.score >= self.router.threshold]
        routing = {"stage": routed.stage, "folders": confident, "retried": False}
        if not confident:
            return routing, scope
        keep = set(confident) | set(intent.folders)
        if intent.relation is not None:
            keep |= {intent.relation.from_folder, intent.relation.to_folder}
        keep |= {h.folder for h in names if h.detail and not h.detail.startswith("fuzzy")}
        return routing, [f for f in scope if f in keep]

    # ---------------------------------------------------------------- arms

    def _query_vector(self, text: str, degraded: list[str]) -> np.ndarray | None:
        if self.embedder is None or not text.strip():
            return None
        if not self._vector_ready:
            info = self.db.embedding_info()
            if info is None:
                return None  # nothing embedded yet: nothing to compare with
            if info != (self.embedder.name, self.embedder.dims):
                degraded.append("vector_arm_failed")
                log.warning(
                    "vector arm off: index has %s, embedder is %s", info, self.embedder.name
                )
                return None
            self.db.ensure_embedding(self.embedder.name, self.embedder.dims)
            self._vector_ready = True
        try:
            vector = self.embedder.embed_query(text)
        except Exception as exc:  # any embedder failure: keyword arms still answer
            log.warning("query embedding failed: %s", exc)
            degraded.append("vector_arm_failed")
            return None
        degraded.extend(self.embedder.degraded)
        with self._recent_lock:
            if len(self._recent) >= RECENT_VECTORS:
                self._recent.pop(next(iter(self._recent)))
            self._recent[text] = vector
        return vector

    def _run(
        self,
        conn: Any,
        req: SearchRequest,
        mode: Mode,
        tq: TimeQuery,
        intent: Intent,
        folders: list[str],
        scope: list[str],
        names: list[Hit],
        vector: np.ndarray | None,
        sources: bool,
        degraded: list[str],
        *,
        today: dt.date,
    ) -> ArmRun:
        start, end = window_dates(tq.window)
        newest = tq.order not in (OLDEST, NEXT)
        # Latest/next look only on their side of today in the date-ordered arms.
        o_start, o_end = _ordered_window(start, end, order_bounds(tq.order, today))
        allowed = set(req.arms) if req.arms is not None else None

        def on(name: str) -> bool:
            return allowed is None or name in allowed

        text = TextQuery.of(intent)
        found: dict[str, list[Hit]] = {}
        if on("keyword"):
            found["keyword"] = arms.keyword(conn, text, folders, start=start, end=end)
        if on("title"):
            found["title"] = [h for h in names if h.folder in folders]
        exact = {h.id for h in found.get("title", []) if h.score >= 1.0}
        if tq.window is not None and on("timeline"):
            found["timeline"] = arms.timeline(conn, text, folders, start, end, newest=newest)
        if on("dated"):
            listing = tq.order is not None and not intent.has_topic
            if tq.window is not None or listing:
                targets = [f for f in intent.folders if f in folders] or folders
                if tq.window is not None and not intent.folders:
                    # Events (meetings, decisions) are what a window asks for; entity pages
                    # come in through their timeline entries (the timeline arm).
                    targets = [f for f in targets if f in self._event_folders()] or targets
                found["dated"] = arms.dated(conn, targets, o_start, o_end, newest=newest)
        if on("graph"):
            relational = intent.relation is not None or tq.order is not None
            if relational or mode.graph_always:
                entities = self._entities(conn, names, tq, intent, scope)
                plans = plan_graph(entities, intent, self.schema, folders)
                if plans:
                    found["graph"] = arms.graph(
                        conn, plans, scope, start=o_start, end=o_end, newest=newest
                    )
        if vector is not None and on("vector"):
            try:
                # Scope is enforced in SQL; the routed narrowing is applied afterwards, so
                # the HNSW scan is not made to skip most of its graph.
                hits = arms.vector(conn, self.db, vector, scope, start=start, end=end)
                found["vector"] = [h for h in hits if h.folder in folders]
            except Exception as exc:
                log.warning("vector arm failed: %s", exc)
                degraded.append("vector_arm_failed")
                conn.rollback()
        if sources:
            found.update(
                source_arms.search_sources(
                    conn,
                    self.db,
                    text,
                    vector,
                    on,
                    question=req.question,
                    start=start,
                    end=end,
                    embed=lambda variant: self._query_vector(variant, degraded),
                )
            )
        if mode.expansion and self.llm is not None and allowed is None:
            found |= search_models.expansion_arms(
                conn,
                self.db,
                self.llm,
                self.schema,
                tq.query or req.question,
                folders,
                (start, end),
                sources=sources,
                embed=lambda variant: self._query_vector(variant, degraded),
                degraded=degraded,
            )
        weights = arm_weights(intent, tq, found)
        cands = fz.fuse(found, weights)
        if mode.augment_depth > 0 and cands and allowed is None:
            seeds = [c.id for c in cands[:5] if not c.id.startswith(SOURCE_PREFIX)]
            found["graph_augment"] = [
                h for h in arms.graph_augment(conn, seeds, scope) if h.folder in folders
            ]
            cands = fz.fuse(found, weights)
        relevant = self._relevant(cands, found, intent, tq, self._event_folders())
        return ArmRun(cands, found, relevant, exact, vector)

    def _entities(
        self, conn: Any, names: list[Hit], tq: TimeQuery, intent: Intent, scope: list[str]
    ) -> list[Hit]:
        """Pages the question names: exact title/alias runs, else resolved names."""
        named = [h for h in names if h.detail and not h.detail.startswith("fuzzy")]
        named = [h for h in named if h.folder not in intent.folders or intent.relation]
        # A longer name wins over the names inside it ("Bob Martinez" over "Bob").
        named.sort(key=lambda h: (-len((h.name or "").split()), -h.score, h.id))
        out: list[Hit] = []
        covered: list[str] = []
        for hit in named:
            name = hit.name or ""
            if any(name != c and f" {name} " in f" {c} " for c in covered):
                continue
            covered.append(name)
            out.append(hit)
            if len(out) >= ARMS.max_entities:
                break
        if out or not intent.terms or (intent.relation is None and tq.order is None):
            return out  # a misspelt name is worth a fuzzy lookup only on a graph path
        if not _looks_like_name(tq.query):
            return out  # nothing written like a name ("latest decision about billing")
        guess = " ".join(intent.terms)
        try:
            found = resolve(
                self.db, None, guess, scope, schema=self.schema, limit=ARMS.max_entities
            )
        except UserError:
            return []
        return [
            Hit(c.id, c.folder, c.score, None, c.effective_date, c.why, guess)
            for c in found.candidates
            if c.why != "semantic" and c.score >= 0.5 and c.folder not in intent.folders
        ][:1]

    @staticmethod
    def _relevant(
        cands: list[Candidate],
        found: Mapping[str, list[Hit]],
        intent: Intent,
        tq: TimeQuery,
        events: Collection[str],
    ) -> set[str]:
        """The pages a latest/first question orders by date: those of the folders it names,
        else the events (a question's subject decides the folder, its order word only
        orders it: "when did Maria Lopez first decide on pricing?" orders what happened,
        not the people it names, whose date is only their newest entry)."""
        if tq.order is None:
            return set()
        graph_ids = {h.id for h in found.get("graph", [])}
        if graph_ids:
            return graph_ids
        # Raw notes are dated events too.
        targets = set(intent.folders) or {*events, SOURCE_FOLDER}

        def topical(c: Candidate) -> bool:
            if c.details.get("keyword") == "all_terms" or "title" in c.ranks:
                return True
            if c.ranks.get("vector", 99) <= 3 or c.ranks.get("timeline", 99) <= 5:
                return True
            return not intent.has_topic and "dated" in c.ranks

        return {c.id for c in cands if (not targets or c.folder in targets) and topical(c)}

    # ---------------------------------------------------------------- timeline

    def timeline(
        self,
        *,
        window: str | None = None,
        page: str | None = None,
        scope: Collection[str] | None = None,
        folders: Sequence[str] | None = None,
        now: dt.datetime | None = None,
        limit: int = 100,
        as_of: dt.date | None = None,
    ) -> dict[str, Any]:
        """What happened in a window, or one page's dated history (see
        :func:`memserver.search.timeline.timeline_events`), within ``scope``/``folders``."""
        names = self.scope_folders(SearchRequest(question="", scope=scope, folders=folders))
        return timeline_events(
            self.db, self.schema, names, window=window, page=page, now=now, limit=limit,
            as_of=as_of,
        )  # fmt: skip
