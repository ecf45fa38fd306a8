"""The search API's values: modes, the request, results and the response.

``memserver.search.pipeline`` runs the pipeline; these are what callers build and read (the
tools and the CLI turn a response into JSON with ``to_dict``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memserver.errors import UserError
from memserver.search import fusion as fz
from memserver.timeparse.window import Window

SOURCE_PREFIX = "source/"  # raw source ids: "source/<path under source/>"


@dataclass(frozen=True)
class Mode:
    name: str
    limit: int
    budget: int | None  # tokens (chars / 4); None = unlimited
    rerank: bool
    expansion: bool
    graph_always: bool  # graph arm for any named entity (else only relational / ordered)
    augment_depth: int
    snippet_chars: int | None
    autocut: bool


MODES: Mapping[str, Mode] = {
    "conservative": Mode("conservative", 10, 4_000, False, False, False, 0, 320, True),
    "balanced": Mode("balanced", 20, 12_000, True, False, True, 0, 700, True),
    "tokenmax": Mode("tokenmax", 50, None, True, True, True, 1, None, False),
}
DEFAULT_MODE = "balanced"


def check_mode(mode: str | None) -> Mode:
    name = (mode or DEFAULT_MODE).strip().lower()
    if name not in MODES:
        raise UserError(f"unknown search mode {mode!r}", f"use one of: {', '.join(MODES)}")
    return MODES[name]


@dataclass(frozen=True)
class SearchRequest:
    """One search. ``scope`` is the caller's folders (None = all, trusted); ``folders``
    narrows within it (a folder outside the scope is a NotFoundError, like a missing
    one). ``source_access`` says whether the caller may read raw sources."""

    question: str
    scope: Collection[str] | None = None
    folders: Sequence[str] | None = None
    mode: str = DEFAULT_MODE
    limit: int | None = None
    include_sources: bool = False
    source_access: bool = True
    now: dt.datetime | None = None
    route: bool = False
    order: str | None = None  # force latest/first (kb_latest)
    focus: str | None = None  # return only this folder's pages; names resolve in all (kb_latest)
    arms: Collection[str] | None = None  # only these arms (evaluation: keyword-only ...)
    # What was known then: results dated after this day are left out (kb_query as_of).
    as_of: dt.date | None = None


@dataclass(frozen=True)
class SearchResult:
    id: str
    title: str
    folder: str
    date: str | None
    score: float
    snippet: str
    ranks: Mapping[str, int]
    labels: tuple[str, ...]
    timeline: tuple[fz.TimelineLine, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "folder": self.folder,
            "date": self.date,
            "score": self.score,
            "snippet": self.snippet,
            "ranks": dict(self.ranks),
            "labels": list(self.labels),
            "timeline": [line.to_dict() for line in self.timeline],
        }


@dataclass(frozen=True)
class SearchResponse:
    question: str
    query: str
    mode: str
    now: str
    time: Mapping[str, Any]
    results: tuple[SearchResult, ...]
    degraded: tuple[str, ...]
    folders: tuple[str, ...]
    routing: Mapping[str, Any] | None = None
    tokens: int = 0
    took_ms: float = 0.0
    arms: Mapping[str, int] = field(default_factory=dict)
    # How the question was read: kind, topical terms, identifiers, the folders it names
    # and a typed relation ("reports_to"), so a client can answer from the results.
    intent: Mapping[str, Any] = field(default_factory=dict)
    # Results filled in from the search without its window, after the ones inside it,
    # because fewer than the mode's results were inside (each labelled outside_window).
    outside_window: int = 0
    # A question that asks several things: the questions its parts were searched with
    # (memserver.search.parts), its results merged from theirs and the whole's.
    parts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "query": self.query,
            "mode": self.mode,
            "now": self.now,
            "time": dict(self.time),
            "folders": list(self.folders),
            "routing": dict(self.routing) if self.routing is not None else None,
            "degraded": list(self.degraded),
            "results": [r.to_dict() for r in self.results],
            "tokens": self.tokens,
            "outside_window": self.outside_window,
            "parts": list(self.parts),
            "arms": dict(self.arms),
            "took_ms": round(self.took_ms, 1),
            "intent": dict(self.intent),
        }


def window_dates(window: Window | None) -> tuple[dt.date | None, dt.date | None]:
    """A window as dates ``[start, end)`` (open ends as None)."""
    if window is None:
        return None, None
    start = None if window.open_start else window.start.date()
    end = None if window.open_end else window.end.date()
    if end is not None and (window.end.time() != dt.time()):
        end = end + dt.timedelta(days=1)  # a window ending inside a day includes that day
    return start, end
