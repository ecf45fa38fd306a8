"""The rules every HTTP endpoint we serve applies before its app sees a request.

One ASGI middleware, :class:`HttpGuard`, wraps an app (the read agent, the memory
server, and any later console served by it) and checks, in this order:

==========  ======  ===================================================================
Host        421     the ``Host`` header names an address we serve (DNS rebinding: a web
                    page whose name resolves to 127.0.0.1 still sends its own name)
Origin      403     a browser's ``Origin``, when sent, is one of ours (loopback by default)
API key     401     ``Authorization: Bearer <key>`` when a key is set (constant-time);
                    ``public_paths`` (``/healthz``) need none
media type  415     a request body is ``application/json``
body size   413     by ``Content-Length`` up front, else while reading: nothing larger than
                    ``max_body`` bytes is ever buffered or parsed
body time   408     the whole body arrives within ``body_timeout`` seconds (a client that
                    trickles a body cannot hold a worker)
==========  ======  ===================================================================

The body is read here, whole, and handed to the app in one piece, so the app parses
only bodies that passed. Errors are JSON in the endpoint's own shape (``error_body``:
OpenAI-style by default, JSON-RPC for MCP) and name what was wrong and how to fix it.

:class:`HostRules` says which hosts and origins are ours for a listening address, the
same way for every server (the MCP SDK's own check is fed from it too): loopback names
on any port, plus the address itself. Bound to a wildcard address (``0.0.0.0``) any
Host may be legitimate, so the Host and Origin checks are off there; such a server must
then require a key or token on every request.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
DEFAULT_MAX_BODY = 1024 * 1024
DEFAULT_BODY_TIMEOUT = 15.0
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

# (HTTP status, short code, message) -> the JSON body of the error response.
ErrorBody = Callable[[int, str, str], Mapping[str, Any]]


def openai_error(status: int, code: str, message: str) -> Mapping[str, Any]:
    """``{"error": {"message", "type", "code", "param"}}``, as OpenAI-compatible clients read."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "code": code, "param": None}}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an IP address or ``localhost``) is reachable only from this machine."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """Whether ``host`` is the any-address (``0.0.0.0``, ``::``)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _shown(host: str) -> str:
    """A host as it appears in a Host header (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _matches(value: str, patterns: Iterable[str]) -> bool:
    """``value`` equals a pattern, or a ``base:*`` pattern with any port."""
    for pattern in patterns:
        if value == pattern:
            return True
        if pattern.endswith(":*"):
            base = pattern[:-1]
            rest = value[len(base) :]
            if value.startswith(base) and rest.isdigit():
                return True
    return False


@dataclass(frozen=True)
class HostRules:
    """Which ``Host`` and ``Origin`` headers a server accepts (see the module docstring)."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]
    enabled: bool = True

    @classmethod
    def loopback(cls, extra_origins: Iterable[str] = ()) -> HostRules:
        """Loopback names on any port (a server whose port is not known yet)."""
        hosts = tuple(f"{name}:*" for name in LOOPBACK_NAMES) + LOOPBACK_NAMES
        origins = tuple(f"{s}://{name}:*" for s in ("http", "https") for name in LOOPBACK_NAMES)
        origins += tuple(f"{s}://{name}" for s in ("http", "https") for name in LOOPBACK_NAMES)
        return cls(hosts=hosts, origins=origins + tuple(extra_origins))

    @classmethod
    def for_address(
        cls,
        host: str,
        port: int,
        extra_origins: Iterable[str] = (),
        public_url: str | None = None,
    ) -> HostRules:
        """The rules for a server listening on ``host:port``; ``public_url`` (where a TLS
        proxy in front of it is reached: it forwards that name) is one of ours too."""
        if is_wildcard(host):
            return cls(hosts=(), origins=(), enabled=False)
        base = cls.loopback(extra_origins)
        shown = _shown(host)
        hosts = (*base.hosts, f"{shown}:{port}", shown)
        origins = (*base.origins, *(f"{s}://{shown}:{port}" for s in ("http", "https")))
        public = urlsplit(public_url) if public_url else None
        if public is not None and public.netloc and public.scheme in ("http", "https"):
            hosts += (public.netloc.lower(),)
            origins += (f"{public.scheme}://{public.netloc.lower()}",)
        return cls(hosts=tuple(dict.fromkeys(hosts)), origins=tuple(dict.fromkeys(origins)))

    def host_allowed(self, host: str | None) -> bool:
        return not self.enabled or (bool(host) and _matches(str(host).lower(), self.hosts))

    def origin_allowed(self, origin: str | None) -> bool:
        # Browsers send no Origin on same-origin GETs; other clients send none at all.
        return not self.enabled or not origin or _matches(origin.lower(), self.origins)


@dataclass(frozen=True)
class GuardRules:
    """What :class:`HttpGuard` enforces for one app."""

    hosts: HostRules = field(default_factory=HostRules.loopback)
    api_key: str | None = None
    key_hint: str = "send Authorization: Bearer <key>"
    public_paths: frozenset[str] = frozenset({"/healthz"})
    max_body: int = DEFAULT_MAX_BODY
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    json_only: bool = True


class _Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class HttpGuard:
    """ASGI middleware applying :class:`GuardRules` (see the module docstring)."""

    def __init__(
        self, app: ASGIApp, rules: GuardRules, *, error_body: ErrorBody = openai_error
    ) -> None:
        self.app = app
        self.rules = rules
        self.error_body = error_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            self._check_headers(scope)
            if scope["method"] in _BODY_METHODS:
                body = await self._read_body(scope, receive)
                if body is None:
                    return  # the client went away
                receive = _replay(body, receive)
        except _Refused as refused:
            await self._refuse(refused, scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _check_headers(self, scope: Scope) -> None:
        rules = self.rules
        headers = Headers(scope=scope)
        host = headers.get("host")
        if not rules.hosts.host_allowed(host):
            raise _Refused(
                421,
                "invalid_host",
                f"the Host header {host!r} is not an address this server answers to; "
                "connect to the address it listens on (e.g. http://127.0.0.1:PORT)",
            )
        origin = headers.get("origin")
        if not rules.hosts.origin_allowed(origin):
            raise _Refused(
                403,
                "invalid_origin",
                f"requests from the web origin {origin!r} are refused; "
                "call this server from a local client, or allow that origin when starting it",
            )
        if rules.api_key is not None and scope["path"] not in rules.public_paths:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                given.strip().encode(), rules.api_key.encode()
            ):
                raise _Refused(
                    401, "invalid_api_key", f"missing or wrong API key; {rules.key_hint}"
                )
        if scope["method"] not in _BODY_METHODS:
            return
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if rules.json_only and media != "application/json":
            raise _Refused(
                415,
                "unsupported_media_type",
                f"the body must be JSON with Content-Type: application/json (got {media or 'none'!r})",
            )
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                raise _Refused(
                    400, "bad_content_length", f"Content-Length {length!r} is not a number"
                )
            if int(length) > rules.max_body:
                raise self._too_large()

    def _too_large(self) -> _Refused:
        return _Refused(
            413,
            "body_too_large",
            f"the request body is larger than {self.rules.max_body} bytes; send less",
        )

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        """The whole body within the size and time limits; None when the client left."""
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.rules.body_timeout) as deadline:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.rules.max_body:
                    raise self._too_large()
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        if deadline.cancelled_caught:
            raise _Refused(
                408,
                "body_timeout",
                f"the request body did not arrive within {self.rules.body_timeout:g} s",
            )
        return b"".join(chunks)

    async def _refuse(self, refused: _Refused, scope: Scope, receive: Receive, send: Send) -> None:
        logger.warning(
            "refused %s %s from %s: %s",
            scope.get("method"),
            scope.get("path"),
            (scope.get("client") or ("?",))[0],
            refused.message,
        )
        headers = {"Connection": "close"} if refused.status in (408, 413) else {}
        if refused.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        response = JSONResponse(
            dict(self.error_body(refused.status, refused.code, refused.message)),
            status_code=refused.status,
            headers=headers,
        )
        await response(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields ``body`` once, then whatever the client sends next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY",
    "ErrorBody",
    "GuardRules",
    "HostRules",
    "HttpGuard",
    "is_loopback",
    "is_wildcard",
    "openai_error",
]
