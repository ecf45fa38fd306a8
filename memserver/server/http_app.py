"""The memory server over HTTP: ``/healthz``, the Streamable HTTP MCP app at ``/mcp``, and
with ``oauth`` the OAuth endpoints (``memserver.server.oauth``).

``create_http_app`` puts the MCP endpoint behind ``memserver.web.guard.HttpGuard``
(Host, Origin, JSON bodies of at most ``MAX_MCP_BODY`` bytes, read within a deadline)
and ``memserver.server.sessions.SessionLimit`` (open sessions and requests in flight per
token); a database outage met outside a tool (checking a token) is a 503 with that
message. ``serve_http`` runs it under uvicorn until SIGINT or SIGTERM.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Mount, Route, request_response
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as ASGIScope

from memserver import __version__
from memserver.errors import DatabaseUnavailable
from memserver.server.mcp_server import MemoryServer
from memserver.server.notifications import ChangeListener
from memserver.server.oauth import MemoryOAuth
from memserver.server.refusals import AuditRefusals, Label
from memserver.server.sessions import SDK_MAX_SESSIONS, SESSION_IDLE_TIMEOUT, SessionLimit
from memserver.server.verifier import StoreTokenVerifier, checked_token
from memserver.web.guard import GuardRules, HostRules, HttpGuard
from memserver.web.serve import server_config

MAX_MCP_BODY = 4 * 1024 * 1024
LISTEN_WAIT = 5.0


def transport_security(
    host: str, port: int, public_url: str | None = None
) -> TransportSecuritySettings:
    """The SDK's own Host/Origin check, fed from the same rules as our guard."""
    rules = HostRules.for_address(host, port, public_url=public_url)
    if not rules.enabled:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(rules.hosts),
        allowed_origins=list(rules.origins),
    )


def jsonrpc_error(status: int, code: str, message: str) -> dict[str, Any]:
    """A refused HTTP request as a JSON-RPC error (what MCP clients read)."""
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600 if status < 500 else -32603, "message": message, "data": code},
    }


class _UnavailableAs503:
    """A DatabaseUnavailable raised outside a tool (checking a token) becomes a 503."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except DatabaseUnavailable as exc:
            if started or scope["type"] != "http":
                raise
            body = jsonrpc_error(503, "database_unavailable", str(exc))
            await JSONResponse(body, status_code=503, headers={"Retry-After": "5"})(
                scope, receive, send
            )


class _TokenFirst:
    """An MCP request without a valid bearer token is refused (401) before its body is
    read: a client with no token cannot make the server hold a body of any size. The
    scheme is read in any letter case; the SDK's own check reuses this verdict. With
    OAuth on, the 401 names the protected resource metadata (RFC 9728), where a client
    finds how to sign in."""

    def __init__(
        self, app: ASGIApp, verifier: StoreTokenVerifier | None, metadata_url: str | None = None
    ) -> None:
        self.app = app
        self.verifier = verifier
        self.challenge = "Bearer" + (f' resource_metadata="{metadata_url}"' if metadata_url else "")

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        if (
            self.verifier is None
            or scope["type"] != "http"
            or scope["path"] != "/mcp"
            or scope["method"] == "OPTIONS"
        ):
            await self.app(scope, receive, send)
            return
        scheme, _, token = Headers(scope=scope).get("authorization", "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            await _unauthorized("no bearer token", self.challenge, scope, receive, send)
            return
        try:
            access = await self.verifier.check_first(token)
        except DatabaseUnavailable:
            await self.app(scope, receive, send)  # the SDK's own check answers 503
            return
        if access is None:
            await _unauthorized(
                "unknown, expired or revoked token", self.challenge, scope, receive, send
            )
            return
        await self.app(scope, receive, send)


def _admin_request() -> bool:
    """Whether the request being handled carries an admin token (``*`` and write), as
    ``_TokenFirst`` verified it."""
    checked = checked_token()
    access = checked[1] if checked is not None else None
    record = getattr(access, "record", None)
    return record is not None and record.all_folders and record.write


async def _unauthorized(
    what: str, challenge: str, scope: ASGIScope, receive: Receive, send: Send
) -> None:
    body = jsonrpc_error(401, "invalid_token", f"{what}: send Authorization: Bearer <token>")
    response = JSONResponse(body, status_code=401, headers={"WWW-Authenticate": challenge})
    await response(scope, receive, send)


class _HostChecked:
    """The OAuth endpoints answer only the Host names the MCP endpoint answers (DNS
    rebinding); any Origin may call them (the SDK's CORS: browser-based clients)."""

    def __init__(self, app: ASGIApp, hosts: HostRules) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.hosts.host_allowed(
            Headers(scope=scope).get("host")
        ):
            body = {"error": "invalid_request", "error_description": "unknown Host header"}
            await JSONResponse(body, status_code=421)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def oauth_routes(oauth: MemoryOAuth, hosts: HostRules) -> list[BaseRoute]:
    """The SDK's OAuth routes (``MemoryOAuth.routes``), each behind the Host check."""
    return [
        Route(route.path, _HostChecked(route.app, hosts), methods=route.methods)
        for route in oauth.routes()
    ]


class _McpFirst(Starlette):
    """A Starlette app that hands ``/mcp``, the path every MCP call takes, straight to
    its guarded MCP app, past its own error middleware and router (the MCP app has its
    own): one ASGI stack per call instead of two."""

    def __init__(self, mcp: ASGIApp, **options: Any) -> None:
        super().__init__(**options)
        self._mcp = mcp

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/mcp":
            await self._mcp(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def create_http_app(
    server: MemoryServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8787,
    routes: Sequence[BaseRoute] = (),
    refusal_labels: Sequence[Label] = (),
    oauth: MemoryOAuth | None = None,
) -> Starlette:
    """``/healthz`` plus the Streamable HTTP MCP endpoint at ``/mcp`` (bearer auth).

    The MCP endpoint is behind ``HttpGuard`` (Host, Origin, JSON bodies of at most
    ``MAX_MCP_BODY``, read within a deadline) and ``SessionLimit``. ``routes`` are served
    before it, on the same port, with their own guard (the web console passes its
    ``/ui`` mount here, behind a guard fed by the same Host rules; the server does not
    import it). Every refused request is an audit row (``memserver.server.refusals``;
    ``refusal_labels`` say who a request is when its bearer token does not, e.g. the
    console's session cookie). ``oauth`` adds OAuth 2.1 for remote clients
    (``memserver.server.oauth``; the console serves its consent page)."""
    mcp_app = server.streamable_http_app(
        streamable_http_path="/mcp",
        # Answers as one JSON body instead of an SSE stream: no tool of ours sends
        # progress or other notifications during a call, and a 2026-07-28 request is
        # then served in the request's own task (no sibling task, stream or timer).
        json_response=True,
        transport_security=transport_security(host, port, server.public_url),
        host=host,
        max_request_body_size=MAX_MCP_BODY,
        session_idle_timeout=SESSION_IDLE_TIMEOUT,
        max_sessions=SDK_MAX_SESSIONS,
    )
    # Outermost inside the SDK app, so that it also sees errors of the token check.
    mcp_app.user_middleware.insert(0, Middleware(_UnavailableAs503))
    manager = server.session_manager

    async def healthz(request: Request) -> JSONResponse:
        problem = await anyio.to_thread.run_sync(server.database_problem)
        if problem is not None:
            body = {"status": "unavailable", "version": __version__, "database": problem}
            return JSONResponse(body, status_code=503)
        return JSONResponse({"status": "ok", "version": __version__, "database": "ok"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with manager.run(), anyio.create_task_group() as tasks:
                if server.tokens is not None:
                    changes = ChangeListener(server.tokens.db.url, server.bus, server.listen)
                    tasks.start_soon(changes.run)
                    # Serve once page changes are heard (a client may listen at once),
                    # or after LISTEN_WAIT with the database away (it retries meanwhile).
                    with anyio.move_on_after(LISTEN_WAIT):
                        await changes.listening.wait()
                yield
                tasks.cancel_scope.cancel()
        finally:
            await anyio.to_thread.run_sync(server.close)
            await anyio.to_thread.run_sync(server.services.close)

    sessions = SessionLimit(
        mcp_app, live_sessions=lambda: manager._server_instances, is_admin=_admin_request
    )
    hosts = HostRules.for_address(host, port, public_url=server.public_url)
    rules = GuardRules(hosts=hosts, max_body=MAX_MCP_BODY)
    metadata_url = oauth.resource_metadata_url if oauth is not None else None
    guarded = _TokenFirst(
        HttpGuard(sessions, rules, error_body=jsonrpc_error), server.verifier, metadata_url
    )
    # /healthz answers only the Host names the MCP endpoint answers (no key: probes).
    health = HttpGuard(request_response(healthz), GuardRules(hosts=rules.hosts))
    labels = tuple(refusal_labels)
    return _McpFirst(
        AuditRefusals(guarded, server.record_audit, labels),
        routes=[
            Route("/healthz", health, methods=["GET"]),
            *(oauth_routes(oauth, rules.hosts) if oauth is not None else ()),
            *routes,
            Mount("/", app=guarded),
        ],
        middleware=[Middleware(AuditRefusals, record=server.record_audit, labels=labels)],
        lifespan=lifespan,
    )


def serve_http(app: Starlette, host: str, port: int) -> None:
    """Serve ``app`` (``create_http_app``'s, or the console's around it) until SIGINT or
    SIGTERM, then shut down gracefully and return normally."""
    import uvicorn

    config = server_config(app, host=host, port=port)
    # uvicorn re-raises the signal that stopped it once it has shut down; a no-op
    # handler underneath turns that into a normal return (exit status 0).
    stops = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda signum, frame: None) for sig in stops}
    try:
        uvicorn.Server(config).run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
