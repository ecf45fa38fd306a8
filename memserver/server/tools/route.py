"""Routing tool: kb_route, which schema folders a text belongs to (laya -> LLM -> lexical).

The ingest agent calls it as a hint before extracting a source; any client can use it
to pick folders. Only the caller's folders are considered. The router is built once per
server from the settings the server was started with (``Services.settings``: config.yaml
plus environment, resolved once; a server built without settings routes lexically) and
the knowledge base's embedder for the lexical stage; a stage that is not configured or
down is skipped and named in ``degraded``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from memserver.errors import ToolErrorKind
from memserver.server.tools.base import Access, MemoryToolError, Services, current, tool

if TYPE_CHECKING:
    import numpy as np

    from memserver.kb.schema import Schema
    from memserver.routing.router import Router

log = logging.getLogger(__name__)

MAX_TEXT = 50_000
_routers: dict[int, tuple[Schema, Router]] = {}
_lock = threading.Lock()


class FolderScoreView(TypedDict):
    folder: str
    score: float


class RouteView(TypedDict):
    folders: list[FolderScoreView]
    stage: str
    degraded: list[str]
    scores: list[FolderScoreView]


def _router(services: Services, schema: Schema) -> Router:
    """The server's router for this schema (rebuilt when schema.yaml changes)."""
    from memserver.routing.router import Router

    with _lock:
        cached = _routers.get(id(services))
        if cached is not None and cached[0] is schema:
            return cached[1]
        settings = services.settings
        embed = None
        try:
            kb = services.kb()

            def embed(texts: Sequence[str]) -> list[np.ndarray]:
                return kb.embed_in_background(texts)  # routing a note is ingest work

        except Exception as exc:  # no index yet: keyword overlap only
            log.warning("kb_route: no embedder, keyword overlap only: %s", exc)
        router = (
            Router.from_settings(schema, settings, embed)
            if settings is not None
            else Router(schema, embed=embed)
        )
        if cached is not None:
            cached[1].close()
        else:
            services.on_close(lambda: _close_router(services))
        _routers[id(services)] = (schema, router)
        return router


def _close_router(services: Services) -> None:
    """Close the router's clients (its model, laya) when the server closes."""
    with _lock:
        cached = _routers.pop(id(services), None)
    if cached is not None:
        cached[1].close()


@tool(access=Access.READ, title="Route a text to folders", idempotent=True)
def kb_route(
    text: Annotated[
        str,
        Field(
            max_length=MAX_TEXT,
            description="The text to route (a note, a question); at most 50,000 characters.",
        ),
    ],
    folders: Annotated[
        list[str] | None,
        Field(description="Consider only these folders (default: all you can read)."),
    ] = None,
) -> RouteView:
    """Say which schema folders a text belongs to, each with a score from 0 to 1.

    Use it to decide where the facts of a note go, or which folders to search for a
    question. `folders` lists those at or above the threshold, best first (a text
    can belong to several, or to none); `scores` lists every folder considered.
    `stage` says who answered (laya, llm or lexical) and `degraded` which stages
    were unavailable.
    """
    call = current()
    schema = call.services.schema()
    mine = list(call.scope.filter_folders(schema.folder_names))
    if folders:
        unknown = [f for f in folders if f not in mine]
        if unknown:
            raise MemoryToolError(
                f"no folder {', '.join(map(repr, unknown))} in your scope; "
                f"your folders are: {', '.join(mine) or 'none'}",
                ToolErrorKind.ARGUMENTS,
            )
        mine = [f for f in mine if f in folders]
    if not text.strip():
        raise MemoryToolError("text is empty; pass the text to route", ToolErrorKind.ARGUMENTS)
    result = _router(call.services, schema).route(text, mine)
    data: dict[str, Any] = result.as_dict()
    return {
        "folders": data["folders"],
        "stage": data["stage"],
        "degraded": data["degraded"],
        "scores": data["scores"],
    }
