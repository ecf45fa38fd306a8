"""How much of the MCP server one token may hold: sessions, and requests in flight.

Two kinds of client reach ``/mcp``. A client of the handshake era (protocol 2025-xx)
opens a session (``initialize`` -> an ``mcp-session-id``) and should close it
(``DELETE``); one that never does, in a loop, used to fill the SDK's global table
(10,000 sessions, ~40 KB each) so that every other client got 503 until they expired
30 minutes later. A 2026-07-28 client (the SDK's own, so both agents) keeps no
session: every request is a self-contained POST, and what it can hold is requests in
flight. Here:

- a token holds at most ``MAX_SESSIONS_PER_TOKEN`` open sessions; one more is refused
  with 429 and a message saying how to free one (other tokens are unaffected);
- room is reserved so that no group of tokens can take every session: each token's
  first ``RESERVED_PER_TOKEN`` sessions are its own, sessions beyond them come from a
  room of ``SHARED_SESSIONS`` that all tokens share (when it is taken, one more is
  refused with 429, and each token can still open its own few), and tokens that are
  not admin hold at most ``MAX_SESSIONS`` in all (room for 250 tokens' own sessions
  beside the shared room). Admin tokens (``*`` and write) hold sessions of their own
  only: the SDK's table has ``ADMIN_SESSIONS`` places beyond ``MAX_SESSIONS`` for them,
  so a flood of other tokens never locks an admin out;
- a session with no request in flight for ``SESSION_IDLE_TIMEOUT`` seconds is closed
  by the SDK (the client then opens a new one; ours do that per question or per pass);
- a token has at most ``MAX_IN_FLIGHT_PER_TOKEN`` requests in flight, whatever the
  protocol; one more is refused with 429 until an answer goes out (other tokens are
  unaffected). With the bodies' size limit (``HttpGuard``) this bounds the memory one
  token can tie up, sessions or not.

:class:`SessionLimit` is an ASGI middleware in front of the SDK's Streamable HTTP app:
it notes which token opened which session (from the response's ``mcp-session-id``),
counts only sessions the SDK still holds, and counts each token's requests until their
answer starts.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Container
from typing import Final

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

MAX_SESSIONS_PER_TOKEN: Final = 64
RESERVED_PER_TOKEN: Final = 4
SHARED_SESSIONS: Final = 1_000
MAX_SESSIONS: Final = 2_000  # of tokens that are not admin
ADMIN_SESSIONS: Final = 128
SDK_MAX_SESSIONS: Final = MAX_SESSIONS + ADMIN_SESSIONS  # the SDK's own table, a backstop
MAX_IN_FLIGHT_PER_TOKEN: Final = 64
SESSION_IDLE_TIMEOUT: Final = 10 * 60.0
_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = "mcp-protocol-version"


class SessionLimit:
    """Refuse a new MCP session when the calling token already holds ``per_token``, and
    a request when it already has ``in_flight`` requests being answered."""

    def __init__(
        self,
        app: ASGIApp,
        live_sessions: Callable[[], Container[str]],
        per_token: int = MAX_SESSIONS_PER_TOKEN,
        in_flight: int = MAX_IN_FLIGHT_PER_TOKEN,
        *,
        is_admin: Callable[[], bool] = lambda: False,
        reserved: int = RESERVED_PER_TOKEN,
        shared: int = SHARED_SESSIONS,
        total: int = MAX_SESSIONS,
    ) -> None:
        self.app = app
        self.live_sessions = live_sessions
        self.per_token = per_token
        self.in_flight = in_flight
        self.is_admin = is_admin  # whether the request being handled is an admin token's
        self.reserved, self.shared, self.total = reserved, shared, total
        self._owned: dict[str, set[str]] = {}
        self._admins: set[str] = set()  # credentials of admin tokens that hold sessions
        self._opening: dict[str, int] = {}  # opening requests still being answered
        self._answering: dict[str, int] = {}  # every request still being answered

    def requests_in_flight(self, credential: str) -> int:
        """Requests of this credential whose answer has not started yet."""
        return self._answering.get(credential, 0)

    def open_sessions(self, credential: str) -> int:
        """Sessions this credential holds or is opening (sessions the SDK closed are forgotten)."""
        live = self.live_sessions()
        owned = self._owned.get(credential, set())
        owned.difference_update([s for s in owned if s not in live])
        if not owned:
            self._owned.pop(credential, None)
        return len(owned) + self._opening.get(credential, 0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        if scope["type"] == "http" and scope["method"] == "DELETE":
            await self._closing(headers, scope, receive, send)
            return
        authorization = headers.get("authorization", "")
        if scope["type"] != "http" or scope["method"] != "POST" or not authorization:
            await self.app(scope, receive, send)  # no token: the SDK answers 401
            return
        credential = token_credential(authorization)
        if self.requests_in_flight(credential) >= self.in_flight:
            logger.warning("refused an MCP request: a token has %d in flight", self.in_flight)
            await _too_many(_in_flight_message(self.in_flight), "1", send)
            return
        # A POST without a session id opens one, unless it speaks a sessionless
        # (2026-07-28) version: then it is a request like any other.
        version = headers.get(_VERSION_HEADER)
        opening = _SESSION_HEADER.decode() not in headers and (
            version is None or version in HANDSHAKE_PROTOCOL_VERSIONS
        )
        if opening:
            refused = self._no_room(credential)
            if refused is not None:
                logger.warning("refused a new MCP session: %s", refused.split(";")[0])
                await _too_many(refused, "30", send)
                return

        tables = [self._answering, self._opening] if opening else [self._answering]
        _count(tables, credential, +1)

        def answered() -> None:
            # Counted until its answer starts (then a new session counts as owned).
            nonlocal tables
            _count(tables, credential, -1)
            tables = []

        async def note_session(message: Message) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if opening and key.lower() == _SESSION_HEADER and message["status"] < 400:
                        self._owned.setdefault(credential, set()).add(value.decode("latin-1"))
                # Moved over before the answer goes out: the client may send its next
                # request before this one's handler has finished.
                answered()
            await send(message)

        try:
            await self.app(scope, receive, note_session)
        finally:
            answered()

    def _no_room(self, credential: str) -> str | None:
        """Why ``credential`` may not open one more session now (None: it may)."""
        held = self.open_sessions(credential)
        if held >= self.per_token:
            return _sessions_message(self.per_token)
        if self.is_admin():
            self._admins.add(credential)
            return None  # admin sessions are their own (the SDK's table has room for them)
        self._admins.discard(credential)
        others = [c for c in list(self._owned) + list(self._opening) if c not in self._admins]
        counts = {c: self.open_sessions(c) for c in set(others)}
        if sum(counts.values()) >= self.total:
            return _full_message(self.total, self.reserved)
        if held < self.reserved:
            return None  # this token's own few
        if sum(max(0, n - self.reserved) for n in counts.values()) >= self.shared:
            return _shared_message(self.shared, self.reserved)
        return None

    async def _closing(self, headers: Headers, scope: Scope, receive: Receive, send: Send) -> None:
        """A session closed by its client stops counting as soon as the answer says so (the
        SDK forgets it a moment later, after a next request may already have arrived)."""
        session = headers.get(_SESSION_HEADER.decode(), "")
        credential = token_credential(headers.get("authorization", ""))

        async def note_closed(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 300:
                self._owned.get(credential, set()).discard(session)
            await send(message)

        await self.app(scope, receive, note_closed)


def token_credential(authorization: str) -> str:
    """What the caps count by: the token an ``Authorization`` header carries, hashed. The
    scheme is case-insensitive ("Bearer", "bearer", "BEARER" are one scheme) and spaces
    around the token do not count, so writing one token 64 ways is still one token."""
    scheme, _, token = authorization.strip().partition(" ")
    value = token.strip() if scheme.lower() == "bearer" else authorization.strip()
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()


def _count(tables: list[dict[str, int]], credential: str, step: int) -> None:
    """Add ``step`` to the credential's count in each table (a count of 0 is forgotten)."""
    for table in tables:
        left = table.get(credential, 0) + step
        if left:
            table[credential] = left
        else:
            table.pop(credential, None)


def _sessions_message(limit: int) -> str:
    return (
        f"this token already holds {limit} open MCP sessions, the most one token may hold; "
        "close sessions you no longer use (HTTP DELETE with their mcp-session-id, which MCP "
        f"clients do on exit) or wait until idle ones expire ({SESSION_IDLE_TIMEOUT:.0f} s)"
    )


def _shared_message(shared: int, reserved: int) -> str:
    return (
        f"the {shared} MCP sessions all tokens share are taken, and this token holds its own "
        f"{reserved} already; close sessions you no longer use (HTTP DELETE with their "
        f"mcp-session-id) or wait until idle ones expire ({SESSION_IDLE_TIMEOUT:.0f} s)"
    )


def _full_message(total: int, reserved: int) -> str:
    return (
        f"the server holds {total} MCP sessions, the most it keeps for tokens that are not "
        "admin; close sessions you no longer use or wait until idle ones expire "
        f"({SESSION_IDLE_TIMEOUT:.0f} s). A client of protocol 2026-07-28 needs no session"
    )


def _in_flight_message(limit: int) -> str:
    return (
        f"this token already has {limit} MCP requests being answered, the most one token "
        "may have at once; wait for their answers before sending more"
    )


async def _too_many(message: str, retry_after: str, send: Send) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", retry_after.encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
