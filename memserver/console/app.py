"""The console's routes, and the memory server's HTTP app with the console mounted at ``/ui``.

``create_app`` is what ``memserver serve`` and ``memserver up`` run: ``/healthz``, the
console at ``/ui`` (behind :class:`~memserver.console.guard.ConsoleGuard`), ``/`` sending a
browser there, MCP at ``/mcp`` and, at an https (or loopback) address, OAuth for remote
MCP clients with its consent page (``memserver.console.consent``), on one port.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from memserver.console import admin, ask, auth, browse, consent, ingest, review
from memserver.console.agent_link import ReadAgentLink
from memserver.console.guard import ConsoleGuard
from memserver.console.web import (
    PREFIX,
    Console,
    ConsoleError,
    SignInRequired,
    current_caller,
    redirect,
    render,
    url,
)
from memserver.errors import DatabaseUnavailable
from memserver.server.http_app import create_http_app, transport_security
from memserver.server.mcp_server import MemoryServer

STATIC = Path(__file__).parent / "static"
_PAGE = "/page/{folder}/{slug}"


def console_routes() -> list[BaseRoute]:
    return [
        Route("/", browse.search, methods=["GET"]),
        Route("/login", auth.login, methods=["GET", "POST"]),
        Route("/logout", auth.logout, methods=["POST"]),
        Route(_PAGE, browse.page, methods=["GET"]),
        Route(_PAGE + "/diff", browse.diff, methods=["GET"]),
        Route(_PAGE + "/restore", browse.restore, methods=["POST"]),
        Route("/note/{path:path}", browse.note, methods=["GET"]),
        Route("/ask", ask.view, methods=["GET"]),
        Route("/ask", ask.ask, methods=["POST"]),
        Route("/ask/clear", ask.clear, methods=["POST"]),
        Route("/graph", browse.graph, methods=["GET"]),
        Route("/timeline", browse.timeline, methods=["GET"]),
        Route("/ingest", ingest.view, methods=["GET"]),
        Route("/ingest/events", ingest.events, methods=["GET"]),
        Route("/ingest/retry", ingest.retry, methods=["POST"]),
        Route("/review", review.view, methods=["GET"]),
        Route("/review/{id}/accept", review.accept, methods=["POST"]),
        Route("/review/{id}/reject", review.reject, methods=["POST"]),
        Route("/review/{id}/edit", review.edit, methods=["GET", "POST"]),
        Route("/conflicts/{id}/resolve", review.resolve_conflict, methods=["POST"]),
        Route("/conflicts/{id}/accept", review.accept_held, methods=["POST"]),
        Route("/conflicts/{id}/reject", review.reject_held, methods=["POST"]),
        Route("/audit", admin.audit, methods=["GET"]),
        Route("/tokens", admin.tokens, methods=["GET"]),
        Route("/tokens/create", admin.create_token, methods=["POST"]),
        Route("/tokens/revoke", admin.revoke_token, methods=["POST"]),
        Route(f"/{consent.CONSENT}", consent.view, methods=["GET"]),
        Route(f"/{consent.CONSENT}", consent.answer, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]


async def _refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ConsoleError)
    page = render(request, await current_caller(request), "error.html", exc.status, error=exc)
    page.headers.update(exc.headers)
    return page


async def _outage(request: Request, exc: Exception) -> Response:
    """PostgreSQL met outside ``blocking``: the same outage page."""
    assert isinstance(exc, DatabaseUnavailable)
    return await _refused(request, ConsoleError.of(exc))


async def _sign_in(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SignInRequired)
    if request.method == "GET" and request.url.path.endswith("/events"):
        return Response("signed out", status_code=401)
    return redirect(url("login", reason=exc.reason))


async def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    error = ConsoleError(exc.status_code, str(exc.detail), "go back to the search page")
    caller = await current_caller(request)
    return render(request, caller, "error.html", exc.status_code, error=error)


def console_app(console: Console) -> Starlette:
    """The console alone (mounted at ``/ui``)."""
    app = Starlette(
        routes=console_routes(),
        exception_handlers={
            ConsoleError: _refused,
            SignInRequired: _sign_in,
            HTTPException: _http,
            DatabaseUnavailable: _outage,
        },
    )
    app.state.console = console
    return app


def create_app(
    server: MemoryServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8787,
    login_key: str | None = None,
    read_agent: ReadAgentLink | None = None,
    console: Console | None = None,
) -> Starlette:
    """The memory server's HTTP app with the console; ``login_key`` enables ``up``'s
    trusted login link (``/ui/login?key=...``), ``read_agent`` the Ask view; ``console``
    one built with other limits."""
    console = console or Console(
        server, login_key=login_key, read_agent=read_agent, oauth=consent.oauth_of(server)
    )
    guarded = ConsoleGuard(console_app(console), transport_security(host, port, server.public_url))

    async def home(request: Request) -> Response:
        return redirect(url())

    return create_http_app(
        server,
        host=host,
        port=port,
        routes=[
            Route("/", home, methods=["GET"]),
            # The README writes the address without a slash: open the console all the same.
            Route(PREFIX, home, methods=["GET"]),
            Mount(PREFIX, app=guarded),
        ],
        refusal_labels=(console.refusal_label,),
        oauth=console.oauth,
    )
