"""The console's request checks, in one place: Host and Origin as the MCP endpoint checks
them, a cap on request bodies, the CSRF token of every form, and the response headers
that keep the pages to themselves (no inline script, no framing, no caching).

The Host/Origin rules are the MCP endpoint's (``transport_security`` of the server, run
by the SDK's own checker), so a DNS-rebinding page or a form posted from another origin
is refused with 421 / 403 before any view runs; on top of them a form whose Origin is
not the host it was sent to is refused too (whatever address the server listens on).
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from mcp.server.transport_security import (
    RequestBodyLimitMiddleware,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memserver.errors import ScopeError

MAX_BODY_BYTES = 1024 * 1024  # the largest form: a page's markdown in the edit view
CSRF_FIELD = "csrf"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


def _cross_origin(request: Request) -> Response | None:
    """A form sent from a page of another origin than the one it is sent to: 403.

    Checked even where the MCP rules are off (a server bound to 0.0.0.0 accepts any
    Host): the console's cookie must never act for another site's page."""
    origin = request.headers.get("origin")
    if not origin or origin == "null":
        return Response("Cross-origin form refused", status_code=403) if origin else None
    if urlsplit(origin).netloc != request.headers.get("host", ""):
        return Response("Cross-origin form refused", status_code=403)
    return None


class CSRFError(ScopeError):
    """A form without this session's CSRF token (or from another origin)."""


def check_csrf(sent: object, expected: str) -> None:
    """Refuse a form whose ``csrf`` field is not the session's token."""
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise CSRFError(
            "this form's CSRF token is missing or wrong (a form from another page or origin?)",
            "reload the page and send the form again",
        )


class ConsoleGuard:
    """ASGI middleware around the console: Host/Origin checks, body cap, headers."""

    def __init__(
        self, app: ASGIApp, security: TransportSecuritySettings, max_body: int = MAX_BODY_BYTES
    ) -> None:
        self.app = RequestBodyLimitMiddleware(app, max_body)
        self.checker = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = await self.checker.validate_request(request, is_post=False)
        if refused is None and request.method not in SAFE_METHODS:
            refused = _cross_origin(request)
        if refused is not None:
            await refused(scope, receive, self._with_headers(send))
            return
        await self.app(scope, receive, self._with_headers(send))

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [
                    (k.encode(), v.encode())
                    for k, v in HEADERS.items()
                    if k.encode() not in present
                ]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return sending
