"""Search tools: kb_query (questions with dates in them), kb_timeline (what happened in a
window, or one page's history) and kb_latest (newest/first pages of a folder).

Scope comes from the caller's token: every arm is filtered to its folders in SQL, raw
sources are searched only when the token includes ``source``. kb_query routes the
question to likely folders first when the token can read many (retrying on the whole
scope when that finds nothing). The reranker, the LLM (query expansion) and the router
come from the settings the server was started with (``Services.settings``: config.yaml
plus environment, resolved once by :func:`memserver.clients.config.load_settings`); a server
built without settings searches without them.

A result also says what is still on its way (``with_progress``): ``embedding_pending``
while the background embedder has texts to embed (keyword arms already see them), and
``ingest_in_progress`` with the ledger's counts (``ingest``) while the ingest agent works,
so an empty answer during ``up``'s first minutes says why.
"""

from __future__ import annotations

import datetime as dt
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from memserver.errors import ToolErrorKind, UserError
from memserver.index.embedding import EMBEDDING_PENDING
from memserver.search.pipeline import MODES, Searcher, SearchRequest
from memserver.server.ingest_progress import INGEST_IN_PROGRESS
from memserver.server.tools.as_of import AsOfArg, as_of_date, as_of_view, end_of, intervals
from memserver.server.tools.base import (
    Access,
    CallContext,
    MemoryToolError,
    current,
    page_not_found,
    tool,
)
from memserver.timeparse.now import parse_now
from memserver.timeparse.window import NEWEST, NEXT, OLDEST

if TYPE_CHECKING:
    from memserver.store.knowledge_base import KnowledgeBase

# Texts searched are capped: everything in them is parsed, matched and embedded.
MAX_QUESTION_CHARS = 8_000
MAX_NAME_CHARS = 1_000

_lock = threading.Lock()
_searchers: weakref.WeakKeyDictionary[Any, Searcher] = weakref.WeakKeyDictionary()

FoldersArg = Annotated[
    list[str] | str | None,
    Field(description="Only these folders (list or comma-separated); default: all you can read."),
]
NowArg = Annotated[
    str | None,
    Field(
        description="Reference time for 'last week', 'yesterday' ... as ISO date or time "
        "(default: now)."
    ),
]


class TimelineLineView(TypedDict):
    date: str
    text: str


class ResultView(TypedDict):
    id: str
    title: str
    folder: str
    date: str | None
    score: float
    snippet: str
    ranks: dict[str, int]
    labels: list[str]
    timeline: list[TimelineLineView]
    as_of: NotRequired[dict[str, Any]]  # with as_of: the values then and what changed since


class QueryView(TypedDict):
    question: str
    query: str
    mode: str
    now: str
    time: dict[str, Any]
    folders: list[str]
    routing: dict[str, Any] | None
    degraded: list[str]
    results: list[ResultView]
    tokens: int
    outside_window: int
    parts: list[str]  # a question of several parts: the questions each was searched with
    arms: dict[str, int]
    took_ms: float
    intent: dict[str, Any]
    ingest: dict[str, Any] | None


class EventView(TypedDict):
    date: str
    id: str
    title: str
    folder: str
    text: str
    source: str | None
    kind: str


class TimelineView(TypedDict):
    window: dict[str, str] | None
    phrase: str | None
    page: str | None
    now: str
    events: list[EventView]
    truncated: bool
    as_of: NotRequired[str | None]


def with_progress(data: dict[str, Any], call: CallContext) -> QueryView:
    """A search result with what is still on its way (see the module docstring); the
    ledger's counts only for a caller that may read sources."""
    degraded = list(data.get("degraded") or ())
    if call.services.kb().embedding_pending():
        degraded.append(EMBEDDING_PENDING)
    status = call.services.ingest.status()
    ingest: dict[str, Any] | None = None
    if status.running:
        degraded.append(INGEST_IN_PROGRESS)
        ingest = {"running": True}
        if call.scope.source:
            ingest = {**status.as_dict(), "summary": status.summary()}
    view = {**data, "degraded": list(dict.fromkeys(degraded)), "ingest": ingest}
    return QueryView(**view)  # type: ignore[typeddict-item]


def searcher(call: CallContext) -> Searcher:
    """The searcher of the caller's knowledge base, built once per knowledge base with the
    server's settings (never re-read from the environment per call)."""
    kb: KnowledgeBase = call.services.kb()
    with _lock:
        found = _searchers.get(kb)
        if found is None:
            found = _searchers[kb] = Searcher.for_kb(kb, call.services.settings)
            weakref.finalize(kb, found.close)  # its HTTP clients go with the knowledge base
        return found


def folder_list(value: Sequence[str] | str | None) -> list[str] | None:
    """Folders as a list from a list, a comma-separated string or JSON-ish text."""
    if value is None:
        return None
    items = value.replace(";", ",").split(",") if isinstance(value, str) else list(value)
    names = [str(v).strip().strip("[]'\" ") for v in items]
    names = [n for n in names if n and n != "*"]
    return names or None


def given_text(value: str | None, missing: str) -> str:
    """``value`` stripped; an arguments error saying ``missing`` when nothing is left."""
    text = (value or "").strip()
    if not text:
        raise MemoryToolError(missing, ToolErrorKind.ARGUMENTS)
    return text


def _now(value: str | None) -> dt.datetime | None:
    try:
        return parse_now(value)
    except UserError as exc:
        raise MemoryToolError(str(exc), ToolErrorKind.ARGUMENTS) from None


def now_as_of(now: str | None, day: dt.date | None) -> dt.datetime | None:
    """The reference time: ``now``, or the end of the ``as_of`` day when that is earlier
    (a question asked then: "latest" is the latest on or before it)."""
    moment = _now(now)
    if day is None:
        return moment
    then = end_of(day, moment.tzinfo if moment is not None else None)
    if moment is not None and moment.tzinfo is None:  # a naive now: its day, naive too
        then = then.replace(tzinfo=None)
    return then if moment is None or moment > then else moment


def known_then(data: dict[str, Any], call: CallContext, day: dt.date | None) -> dict[str, Any]:
    """With ``as_of``: pages the memory had not yet heard of by ``day`` left out, and each
    page result marked with its values then and what changed since."""
    if day is None:
        return data
    results = data.get("results") or []
    ids = [r["id"] for r in results if not str(r["id"]).startswith("source/")]
    found = intervals(call, ids)
    kept = []
    for result in results:
        rows = found.get(result["id"])
        if rows is not None:
            view = as_of_view(rows, day)
            if not view["known"]:
                continue
            result = {**result, "as_of": view}
        kept.append(result)
    return {**data, "results": kept}


def _mode(value: str | None) -> str:
    name = (value or "balanced").strip().lower()
    if name not in MODES:
        raise MemoryToolError(
            f"mode={value!r} is not a search mode; use one of: {', '.join(MODES)}",
            ToolErrorKind.ARGUMENTS,
        )
    return name


def _order(value: str | None) -> str:
    text = (value or NEWEST).strip().lower()
    if text in ("newest", "latest", "desc", "descending", "recent", "last", "most recent"):
        return NEWEST
    if text in ("oldest", "first", "earliest", "asc", "ascending"):
        return OLDEST
    if text in ("next", "upcoming", "soonest", "future"):
        return NEXT
    raise MemoryToolError(
        f"order={value!r}: use 'newest', 'oldest' or 'next'", ToolErrorKind.ARGUMENTS
    )


@tool(
    access=Access.READ,
    title="Search the knowledge base",
    aliases={"query": "question", "q": "question", "text": "question", "folder": "folders"},
)
def kb_query(
    question: Annotated[
        str,
        Field(
            max_length=MAX_QUESTION_CHARS,
            description="The question, dates and all: 'latest meeting with Bob'.",
        ),
    ],
    folders: FoldersArg = None,
    mode: Annotated[
        str,
        Field(
            description="conservative (10 results, short), balanced (default, 20), "
            "tokenmax (50, full text, query expansion)."
        ),
    ] = "balanced",
    limit: Annotated[int | None, Field(ge=1, le=100, description="At most this many.")] = None,
    include_sources: Annotated[
        bool, Field(description="Also search raw source notes (not yet ingested text).")
    ] = False,
    now: NowArg = None,
    as_of: AsOfArg = None,
) -> QueryView:
    """Search pages by meaning, words, names, dates and links; best first.

    Write the question naturally, with its time words: "what happened last week",
    "meetings on 2026-09-15", "latest meeting with Alice", "first decision about
    pricing", "next meeting with Bob", "who reports to Bob", "INV-2026-044", Mongolian
    too ("өнгөрсөн долоо хоног"). Dates are read for you: `time` shows the window
    [start, end) and the ordering used. With latest/first/next, results are ordered
    by date (label `date_ordered`): latest is the newest on or before `now`, next the
    first after it; "latest meeting with X" follows X's links, so a newer meeting X
    did not attend never wins. Each result has id (cite it as [folder/slug]), title,
    folder, date, a snippet, timeline lines that matched, and `labels` saying why it
    matched (exact_title_match, alias_hit, keyword_exact, high_vector_match,
    graph:<verb>, timeline_match, weak_semantic ...). `intent` says how the
    question was read (topical terms, folders it names, a relation). A question
    that asks several things ("who decided it, and why did they?") is searched whole and
    part by part, and `parts` lists the questions its parts were searched with. With
    `include_sources`, pages and source notes each have half of `limit` (and of the
    mode's budget), what one kind does not fill going to the other. Read a page in
    full with kb_get_page. `degraded` lists anything that fell back (e.g.
    reranker_unavailable);
    `ingest_in_progress` means notes are still being ingested (`ingest.summary`: "12/28
    notes ingested"): if nothing fits, say the knowledge base is still being built.
    With `as_of` (YYYY-MM-DD) you get what was known then: pages and notes dated after
    it are left out, and each page result's `as_of` holds its field values on that date
    (with when each held and was learned) and what changed since.
    """
    call = current()
    day = as_of_date(as_of)
    text = given_text(question, "question is empty: say what you are looking for")
    request = SearchRequest(
        question=text,
        scope=call.folders,
        folders=folder_list(folders),
        mode=_mode(mode),
        limit=limit,
        include_sources=bool(include_sources),
        source_access=call.scope.source,
        now=now_as_of(now, day),
        route=True,
        as_of=day,
    )
    found = known_then(searcher(call).search(request).to_dict(), call, day)
    return with_progress(found, call)


@tool(
    access=Access.READ,
    title="Timeline of a period or a page",
    aliases={
        "id": "page",
        "page_id": "page",
        "period": "window",
        "when": "window",
        "range": "window",
        "query": "window",
        "folder": "folders",
    },
)
def kb_timeline(
    window: Annotated[
        str | None,
        Field(
            max_length=MAX_NAME_CHARS,
            description="A period in words: 'last week', 'in March', '2026-09', "
            "'from 2026-09-01 to 2026-09-15', 'өчигдөр'.",
        ),
    ] = None,
    page: Annotated[
        str | None, Field(description="A page id 'folder/slug' for its dated history.")
    ] = None,
    folders: FoldersArg = None,
    now: NowArg = None,
    limit: Annotated[int, Field(ge=1, le=500, description="At most this many events.")] = 100,
    as_of: AsOfArg = None,
) -> TimelineView:
    """List what happened, newest first: in a period, or in one page's history.

    Give `window` ("last week", "2026-09", "yesterday") for every dated event in it
    across your folders (timeline entries, and pages such as meetings dated in it),
    or `page` for that page's dated history (with `window` too: only that period).
    Each event has its date, the page id and title, the text and its source.
    `truncated` is true when there were more than `limit`. With `as_of` (YYYY-MM-DD),
    only events on or before that date (alone: everything up to it, newest first).
    """
    call = current()
    day = as_of_date(as_of)
    if page is not None and not call.scope.page_visible(page.strip().strip("[]")):
        raise page_not_found(page)
    data = searcher(call).timeline(
        window=window,
        page=page,
        scope=call.folders,
        folders=folder_list(folders),
        now=_now(now),
        limit=limit,
        as_of=day,
    )
    return TimelineView(**data)  # type: ignore[typeddict-item]


@tool(
    access=Access.READ,
    title="Newest or first pages of a folder",
    aliases={"query": "about", "entity": "about", "with": "about", "sort": "order"},
)
def kb_latest(
    folder: Annotated[str, Field(description="The folder, e.g. 'meetings' or 'decisions'.")],
    about: Annotated[
        str | None,
        Field(
            max_length=MAX_NAME_CHARS,
            description="Only pages about this: a name ('Globex') or a topic ('pricing').",
        ),
    ] = None,
    order: Annotated[
        str,
        Field(
            description="'newest' (default: the newest on or before now), 'oldest', or "
            "'next' (the first after now: upcoming meetings, due dates)."
        ),
    ] = "newest",
    limit: Annotated[int, Field(ge=1, le=100, description="At most this many.")] = 10,
    now: NowArg = None,
    as_of: AsOfArg = None,
) -> QueryView:
    """The newest (or oldest, or next) pages of one folder, optionally about an entity or topic.

    "Latest meeting with Globex": folder='meetings', about='Globex'. "First
    decision about pricing": folder='decisions', about='pricing', order='oldest'.
    "Next meeting with Bob": folder='meetings', about='Bob', order='next'. Newest
    never returns a page dated after `now` first; next starts after it.
    With a named entity, only pages linked to it count (a meeting it attended or
    was about). Results are ordered by the page's date and shaped like kb_query's.
    With `as_of` (YYYY-MM-DD): the newest dated on or before it, as known then.
    """
    call = current()
    day = as_of_date(as_of)
    name = given_text(folder, "say which folder: folder='meetings' for example")
    request = SearchRequest(
        question=(about or "").strip(),
        scope=call.folders,  # names resolve anywhere the token reaches
        mode="balanced",
        limit=limit,
        source_access=call.scope.source,
        now=now_as_of(now, day),
        order=_order(order),
        focus=name,
        as_of=day,
    )
    found = known_then(searcher(call).search(request).to_dict(), call, day)
    return with_progress(found, call)
