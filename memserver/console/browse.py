"""Reading views: search, a page (with links, backlinks, history, diff, restore), a raw
note, its graph neighbourhood, and the timeline. Each runs the MCP tools an agent would
call; the note view reads the note as ``source_read`` does (private spans redacted)
without counting as the ingest agent's reading."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from memserver.console.graph_view import graph_data
from memserver.console.page_diff import compare, version_sources
from memserver.console.period import DEFAULT_DAYS
from memserver.console.restore import restore_version
from memserver.console.timeline_days import by_day
from memserver.console.web import (
    ConsoleError,
    blocking,
    caller_period,
    console_of,
    form_of,
    redirect,
    render,
    signed_in,
    tool,
    url,
)
from memserver.search.pipeline import MODES


def _page_id(request: Request) -> str:
    return f"{request.path_params['folder']}/{request.path_params['slug']}"


def _int(value: Any, name: str) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise ConsoleError(
            400, f"{name}={value!r} is not a number", f"give {name} as 1, 2, ..."
        ) from None


async def search(request: Request) -> Response:
    caller = await signed_in(request)
    query = request.query_params
    question = query.get("q", "").strip()
    mode = query.get("mode", "balanced")
    chosen = query.getlist("folder")
    now = query.get("now", "").strip()
    include_sources = query.get("sources") == "1" and caller.scope.source
    result = None
    if question:
        result = await tool(
            caller,
            request,
            "kb_query",
            question=question,
            folders=chosen or None,
            mode=mode,
            include_sources=include_sources,
            now=now or None,
        )
    return render(
        request,
        caller,
        "search.html",
        q=question,
        mode=mode,
        modes=MODES,
        chosen=chosen,
        now=now,
        include_sources=include_sources,
        result=result,
    )


async def page(request: Request) -> Response:
    caller = await signed_in(request)
    page_id = _page_id(request)
    stored = await tool(caller, request, "kb_get_page", id=page_id)
    graph = await tool(caller, request, "kb_neighbors", id=page_id, depth=1)
    history = await tool(caller, request, "kb_history", id=page_id)
    made_by = await blocking(version_sources, console_of(request).services.kb().db, page_id)
    edges = graph["edges"]
    return render(
        request,
        caller,
        "page.html",
        page=stored,
        links=[e for e in edges if e["from_id"] == page_id],
        backlinks=[e for e in edges if e["to_id"] == page_id],
        versions=history["versions"],
        made_by=made_by,
        restored=request.query_params.get("restored", ""),
    )


async def note(request: Request) -> Response:
    """A raw note under ``source/`` (cited by answers as ``source/<path>``), redacted."""
    caller = await signed_in(request, source=True)
    path = request.path_params["path"]
    services = console_of(request).services

    def read() -> tuple[str, str]:
        from memserver.kb.redact import redact_private

        # A citation drops the ".md" (source/meetings/2026-11-12-standup).
        rel = path if path.endswith(".md") else f"{path}.md"
        with services.pipeline_lock:
            text, _, entry = services.manifest().read_source(rel)
        return redact_private(text), entry.doc_date.isoformat()

    text, doc_date = await blocking(read)
    return render(request, caller, "note.html", note_path=path, text=text, doc_date=doc_date)


async def diff(request: Request) -> Response:
    """Two versions side by side (fields, then sections), with who and which note made
    each."""
    caller = await signed_in(request)
    page_id = _page_id(request)
    old = _int(request.query_params.get("a", "1"), "a")
    new = _int(request.query_params.get("b", "1"), "b")
    before = await tool(caller, request, "kb_history", id=page_id, version=old)
    after = await tool(caller, request, "kb_history", id=page_id, version=new)
    made_by = await blocking(version_sources, console_of(request).services.kb().db, page_id)
    written = {v["version"]: v for v in after["versions"]}
    return render(
        request,
        caller,
        "diff.html",
        page_id=page_id,
        a=old,
        b=new,
        parts=compare(before["markdown"] or "", after["markdown"] or ""),
        sides=[
            (old, written.get(old), made_by.get(old)),
            (new, written.get(new), made_by.get(new)),
        ],
    )


async def restore(request: Request) -> Response:
    """Write an old version again, as the newest, guarded by the version the user saw."""
    caller = await signed_in(request, write=True)
    form = await form_of(request, caller)
    page_id = _page_id(request)
    version = _int(form.get("version"), "version")
    base = _int(form.get("base_version"), "base_version")
    written = await restore_version(caller, request, page_id, version, base)
    return redirect(url(f"page/{page_id}", restored=f"{version}:{written}"))


async def graph(request: Request) -> Response:
    """The typed neighbourhood of a page, drawn by static/graph.js from the embedded data."""
    caller = await signed_in(request)
    page_id = request.query_params.get("id", "").strip()
    depth = 2 if request.query_params.get("depth") == "2" else 1
    chosen = request.query_params.getlist("verb")
    data = None
    if page_id:
        found = await tool(
            caller, request, "kb_neighbors", id=page_id, depth=depth, verbs=chosen or None
        )
        data = graph_data(console_of(request).services.schema(), page_id, found)
    return render(
        request, caller, "graph.html", page_id=page_id, depth=depth, chosen=chosen, data=data
    )


async def timeline(request: Request) -> Response:
    """What happened in a period or to a page; with neither, the last 30 days up to the
    newest dated entry (the notes may end long before today)."""
    caller = await signed_in(request)
    query = request.query_params
    window = query.get("window", "").strip()
    page_id = query.get("page", "").strip()
    now = query.get("now", "").strip()
    opened_on = None
    if not window and not page_id:
        opened_on = await caller_period(request, caller)
        window = opened_on.last_days() if opened_on is not None else ""
    data = None
    if window or page_id:
        data = await tool(
            caller,
            request,
            "kb_timeline",
            window=window or None,
            page=page_id or None,
            now=now or None,
            limit=300,
        )
    return render(
        request,
        caller,
        "timeline.html",
        window=window,
        page_id=page_id,
        now=now,
        data=data,
        days=by_day(data["events"]) if data is not None else [],
        opened_on=opened_on,
        default_days=DEFAULT_DAYS,
    )
