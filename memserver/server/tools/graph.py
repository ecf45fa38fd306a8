"""Graph tools: kb_neighbors (typed edges around a page) and kb_resolve (does a page for
this name exist?).

Scope comes from the caller's token: an edge is returned only when both of its ends are
in the token's folders, a start page out of scope is reported exactly like a missing
one, and resolve looks only at pages the token can read.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from memserver.errors import NotFoundError
from memserver.graph.neighbors import MAX_DEPTH, MAX_EDGES, neighbors
from memserver.graph.resolve import advice, resolve
from memserver.server.tools.base import (
    Access,
    current,
    page_id,
    page_not_found,
    require_visible,
    tool,
)
from memserver.server.tools.pages import FolderArg, IdArg, SlugArg
from memserver.server.tools.search import MAX_NAME_CHARS


class EdgeView(TypedDict):
    from_id: str
    verb: str
    to_id: str
    from_title: str
    to_title: str
    depth: int
    origins: list[str]


class NeighborsView(TypedDict):
    id: str
    direction: str
    depth: int
    edges: list[EdgeView]
    truncated: bool


class CandidateView(TypedDict):
    id: str
    title: str
    folder: str
    score: float
    why: str
    effective_date: str | None


class ResolveView(TypedDict):
    name: str
    verdict: str
    ambiguous: bool
    candidates: list[CandidateView]
    advice: str
    degraded: list[str]


def _verbs(value: list[str] | str | None) -> list[str] | None:
    """Verbs as a list or "a, b" text (models send both)."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    verbs = [v.strip() for v in items if v and v.strip()]
    return verbs or None


@tool(
    access=Access.READ,
    title="Linked pages",
    aliases={
        "verb": "verbs",
        "relation": "verbs",
        "relations": "verbs",
        "types": "verbs",
        "hops": "depth",
        "dir": "direction",
    },
)
def kb_neighbors(
    id: IdArg = "",
    folder: FolderArg = None,
    slug: SlugArg = None,
    verbs: Annotated[
        list[str] | str | None,
        Field(
            description="Only these edge types, e.g. ['attended'] or 'reports_to,works_at' "
            "(default: all). Verbs come from the schema's link fields and link_verbs, "
            "plus 'mentions' for [[wikilinks]]."
        ),
    ] = None,
    direction: Annotated[
        str,
        Field(description="'out' (edges from the page), 'in' (edges to it) or 'both'."),
    ] = "both",
    depth: Annotated[
        int, Field(description="1 = direct links; 2 = also the links of those pages.")
    ] = 1,
) -> NeighborsView:
    """Follow typed links from or to a page: who attended a meeting, which meetings a
    person attended, who reports to whom, what a page mentions.

    Each edge reads `from_id --verb--> to_id` (with both titles), e.g.
    meetings/2026-09-08-kickoff --attended--> people/alice-chen, or
    people/bob-martinez --reports_to--> people/alice-chen. For "who reports to
    Alice" use id='people/alice-chen', verbs='reports_to', direction='in'; for "what
    did Bob attend" id='people/bob-martinez', verbs='attended', direction='in'.
    `depth` 2 also follows the neighbours' links (at most 2). Only links between
    pages you can read are shown.
    """
    call = current()
    target = page_id(id, folder, slug)
    require_visible(target, call.scope)
    depth = max(1, min(int(depth), MAX_DEPTH))
    kb = call.services.kb()
    try:
        edges = neighbors(kb.db, target, call.folders, _verbs(verbs), direction, depth)
    except NotFoundError:
        raise page_not_found(target) from None
    per_depth = [sum(1 for e in edges if e.depth == d) for d in range(1, depth + 1)]
    return {
        "id": target,
        "direction": direction,
        "depth": depth,
        "edges": [
            {
                "from_id": e.from_id,
                "verb": e.verb,
                "to_id": e.to_id,
                "from_title": e.from_title,
                "to_title": e.to_title,
                "depth": e.depth,
                "origins": list(e.origins),
            }
            for e in edges
        ],
        "truncated": any(n >= MAX_EDGES for n in per_depth),
    }


@tool(
    access=Access.READ,
    title="Find the page for a name",
    aliases={
        "query": "name",
        "q": "name",
        "text": "name",
        "title": "name",
        "entity": "name",
        "entity_name": "name",
        "day": "date",
        "on": "date",
        "event_date": "date",
        "max_results": "limit",
    },
)
def kb_resolve(
    name: Annotated[
        str,
        Field(
            max_length=MAX_NAME_CHARS,
            description="The name as the source writes it: 'Bob', 'Bob Martinez', "
            "'bob-martinez', 'Weekly sync', 'people/bob-martinez'.",
        ),
    ],
    folder: Annotated[
        str | None,
        Field(description="Look only in this folder, e.g. 'people' (default: all yours)."),
    ] = None,
    date: Annotated[
        dt.date | None,
        Field(
            description="YYYY-MM-DD of the event, for dated folders such as meetings: "
            "'Weekly sync' on two days is two pages."
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=20, description="At most this many candidates.")] = 5,
) -> ResolveView:
    """Before creating a page, check whether one already exists for this name.

    Matches by exact slug, alias, exact title (case and punctuation ignored), fuzzy
    title, then meaning. `verdict`: `exists` = exactly one page is this name, use it
    (kb_get_page, then kb_put_page with its version); `probable` = a close or
    several equal matches, read them and decide; `new` = create a page.
    `ambiguous` = two different pages match equally well (two people called
    "Alex"): pick from context, never merge blindly. Each candidate says `why` it
    matched (exact_slug, exact_title, alias_hit, fuzzy_title, transliteration, semantic) with a
    score. For meetings and other dated folders pass `date`.
    """
    call = current()
    kb = call.services.kb()
    chosen = (folder or "").strip() or None
    if chosen is not None and not call.scope.allows_folder(chosen):
        mine = call.scope.filter_folders(kb.schema.folder_names)
        raise NotFoundError(
            f"no folder {chosen!r} in your scope",
            f"your folders are: {', '.join(mine) or 'none'}",
        )
    result = resolve(
        kb.db,
        kb.embedder,
        name,
        call.folders,
        chosen,
        date,
        limit,
        schema=kb.schema,
    )
    return {
        "name": result.name,
        "verdict": result.verdict,
        "ambiguous": result.ambiguous,
        "candidates": [
            {
                "id": c.id,
                "title": c.title,
                "folder": c.folder,
                "score": round(c.score, 4),
                "why": c.why,
                "effective_date": c.effective_date.isoformat() if c.effective_date else None,
            }
            for c in result.candidates
        ],
        "advice": advice(result),
        "degraded": list(result.degraded),
    }
