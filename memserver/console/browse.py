"""Reading views: search, a page (with links, backlinks, history, diff, restore), its
graph neighbourhood, and the timeline. Each runs the MCP tools an agent would call."""

from __future__ import annotations

import difflib
import itertools
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from memserver.console.restore import restore_version
from memserver.console.web import ConsoleError, form_of, redirect, render, signed_in, tool, url
from memserver.search.pipeline import MODES

MAX_DIFF_LINES = 2000


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
    edges = graph["edges"]
    return render(
        request,
        caller,
        "page.html",
        page=stored,
        links=[e for e in edges if e["from_id"] == page_id],
        backlinks=[e for e in edges if e["to_id"] == page_id],
        versions=history["versions"],
        restored=request.query_params.get("restored", ""),
    )


async def diff(request: Request) -> Response:
    caller = await signed_in(request)
    page_id = _page_id(request)
    old = _int(request.query_params.get("a", "1"), "a")
    new = _int(request.query_params.get("b", "1"), "b")
    before = await tool(caller, request, "kb_history", id=page_id, version=old)
    after = await tool(caller, request, "kb_history", id=page_id, version=new)
    lines = difflib.unified_diff(
        (before["markdown"] or "").splitlines(),
        (after["markdown"] or "").splitlines(),
        fromfile=f"version {old}",
        tofile=f"version {new}",
        lineterm="",
    )
    rows = [(_kind(line), line) for line in itertools.islice(lines, MAX_DIFF_LINES)]
    return render(
        request,
        caller,
        "diff.html",
        page_id=page_id,
        a=old,
        b=new,
        rows=rows,
        versions=after["versions"],
    )


def _kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "same")


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
        data = _graph_data(page_id, found)
    return render(
        request, caller, "graph.html", page_id=page_id, depth=depth, chosen=chosen, data=data
    )


def _graph_data(page_id: str, found: dict[str, Any]) -> dict[str, Any]:
    nodes: dict[str, dict[str, Any]] = {page_id: {"id": page_id, "title": page_id, "depth": 0}}
    for edge in found["edges"]:
        for end, title in (
            (edge["from_id"], edge["from_title"]),
            (edge["to_id"], edge["to_title"]),
        ):
            node = nodes.setdefault(end, {"id": end, "title": title, "depth": edge["depth"]})
            node["title"] = title
    for node in nodes.values():
        node["folder"] = node["id"].partition("/")[0]
        node["href"] = url(f"page/{node['id']}")
    return {
        "center": page_id,
        "nodes": list(nodes.values()),
        "edges": [
            {"source": e["from_id"], "target": e["to_id"], "verb": e["verb"], "depth": e["depth"]}
            for e in found["edges"]
        ],
        "verbs": sorted({e["verb"] for e in found["edges"]}),
        "truncated": found["truncated"],
    }


async def timeline(request: Request) -> Response:
    caller = await signed_in(request)
    query = request.query_params
    window = query.get("window", "").strip()
    page_id = query.get("page", "").strip()
    now = query.get("now", "").strip()
    data = None
    days: list[tuple[str, list[dict[str, Any]]]] = []
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
        for day, events in itertools.groupby(data["events"], key=lambda e: e["date"]):
            days.append((day, list(events)))
    return render(
        request,
        caller,
        "timeline.html",
        window=window,
        page_id=page_id,
        now=now,
        data=data,
        days=days,
    )
