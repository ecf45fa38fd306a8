"""The ingest view: the ledger (``manifest.json``) with counts by status, live progress
as server-sent events while the ingest agent works, a retry for each failed note, and
the background embedder's progress (vectors written / total, rate, time left).

The ledger is the source of truth: the view and its event stream read the manifest
through the same ``Manifest`` the pipeline tools write, and a retry is the pipeline
tool ``source_mark(status="reset")``. The stream watches the file's size and mtime (a
stat every ``POLL_SECONDS``) and sends the counts whenever it changes; it ends after
``STREAM_SECONDS`` (the browser's ``EventSource`` reconnects by itself). Every
``EMBEDDING_SECONDS`` it counts the vectors waiting in the index and sends the embedding
progress when it changed (the rate is the console's ``EmbeddingMeter``'s).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from memserver.console.sessions import COOKIE, SignedOut
from memserver.console.web import (
    Console,
    blocking,
    console_of,
    form_of,
    redirect,
    render,
    signed_in,
    tool,
    url,
)
from memserver.errors import MemoryError_
from memserver.kb.manifest import Manifest, SourceEntry, Status

POLL_SECONDS = 0.25
STREAM_SECONDS = 300.0
HEARTBEAT_SECONDS = 15.0
RECHECK_SECONDS = 5.0
EMBEDDING_SECONDS = 5.0
LIST_LIMIT = 200
RECENT = 8


def ledger(manifest: Manifest) -> dict[str, Any]:
    """Counts by status, the notes still to do, the failed ones and the latest changes."""
    entries = manifest.entries()
    counts = {status.value: 0 for status in Status}
    for entry in entries:
        counts[entry.status.value] += 1
    live = len(entries) - counts[Status.REMOVED.value]
    by_time = sorted(entries, key=lambda e: e.updated_at, reverse=True)
    return {
        "counts": counts,
        "total": live,
        "done": counts[Status.INGESTED.value],
        "waiting": [_entry(e) for e in entries if e.status in (Status.PENDING, Status.UPDATED)][
            :LIST_LIMIT
        ],
        "failed": [_entry(e) for e in entries if e.status is Status.FAILED][:LIST_LIMIT],
        "recent": [_entry(e) for e in by_time[:RECENT]],
    }


def embedding(console: Console) -> dict[str, Any] | None:
    """The background embedder's progress (vectors done, total, rate, time left and a
    line saying it); None when none runs, nothing waited or the index is unreachable."""
    try:
        counts = console.services.kb().embedding_counts()
    except MemoryError_:
        return None
    if counts is None:
        return None
    with console.vectors_lock:
        reading = console.vectors.read(*counts)
    if not reading.total:
        return None
    return {**reading.as_dict(), "line": reading.line("search vectors")}


def _entry(entry: SourceEntry) -> dict[str, Any]:
    return {
        "path": entry.path,
        "status": entry.status.value,
        "doc_date": entry.doc_date.isoformat(),
        "error": entry.error,
        "pages": list(entry.pages),
        "updated_at": entry.updated_at,
    }


async def view(request: Request) -> Response:
    caller = await signed_in(request, source=True)
    console = console_of(request)
    data = await blocking(ledger, console.services.manifest())
    vectors = await blocking(embedding, console)
    return render(request, caller, "ingest.html", ledger=data, embedding=vectors)


async def retry(request: Request) -> Response:
    caller = await signed_in(request, write=True, source=True)
    form = await form_of(request, caller)
    await tool(caller, request, "source_mark", path=str(form.get("path", "")), status="reset")
    return redirect(url("ingest"))


async def events(request: Request) -> Response:
    await signed_in(request, source=True)
    console = console_of(request)
    manifest = console.services.manifest()
    session = request.cookies.get(COOKIE)

    async def stream() -> AsyncIterator[str]:
        yield "retry: 1000\n\n"
        seen: tuple[int, int] | None = None
        vectors: dict[str, Any] | None = None
        started = last_sent = checked = time.monotonic()
        counted = started - EMBEDDING_SECONDS
        while time.monotonic() - started < STREAM_SECONDS:
            if await request.is_disconnected():
                return
            if time.monotonic() - checked > RECHECK_SECONDS:
                checked = time.monotonic()
                try:  # a revoked token ends its stream too, within RECHECK_SECONDS
                    await anyio.to_thread.run_sync(console.sessions.caller, session)
                except SignedOut:
                    yield "event: signed-out\ndata: {}\n\n"
                    return
            if time.monotonic() - counted >= EMBEDDING_SECONDS:
                counted = time.monotonic()
                now = await anyio.to_thread.run_sync(embedding, console)
                if now is not None and now != vectors:
                    vectors = now
                    yield f"event: embedding\ndata: {json.dumps(now)}\n\n"
                    last_sent = time.monotonic()
            stamp = await anyio.to_thread.run_sync(_stamp, manifest)
            if stamp != seen:
                seen = stamp
                data = await anyio.to_thread.run_sync(ledger, manifest)
                payload = {k: data[k] for k in ("counts", "total", "done", "recent")}
                yield f"event: ledger\ndata: {json.dumps(payload)}\n\n"
                last_sent = time.monotonic()
            elif time.monotonic() - last_sent > HEARTBEAT_SECONDS:
                yield ": still here\n\n"
                last_sent = time.monotonic()
            await anyio.sleep(POLL_SECONDS)

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"x-accel-buffering": "no"}
    )


def _stamp(manifest: Manifest) -> tuple[int, int]:
    try:
        st = os.stat(manifest.kb.manifest)
    except FileNotFoundError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)
