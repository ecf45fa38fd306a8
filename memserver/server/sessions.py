"""How many MCP sessions one token may hold open, and for how long an idle one lives.

Every MCP client opens a session (``initialize`` -> an ``mcp-session-id``) and should
close it (``DELETE``). One that never does, in a loop, used to fill the SDK's global
table (10,000 sessions, ~40 KB each) so that every other client got 503 until they
expired 30 minutes later. Here:

- a token holds at most ``MAX_SESSIONS_PER_TOKEN`` open sessions; one more is refused
  with 429 and a message saying how to free one (other tokens are unaffected);
- the whole server holds at most ``MAX_SESSIONS``;
- a session with no request in flight for ``SESSION_IDLE_TIMEOUT`` seconds is closed
  by the SDK (the client then opens a new one; ours do that per question or per pass).

:class:`SessionLimit` is an ASGI middleware in front of the SDK's Streamable HTTP app:
it notes which token opened which session (from the response's ``mcp-session-id``) and
counts only sessions the SDK still holds.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Container
from typing import Final

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

MAX_SESSIONS_PER_TOKEN: Final = 64
MAX_SESSIONS: Final = 2_000
SESSION_IDLE_TIMEOUT: Final = 10 * 60.0
_SESSION_HEADER = b"mcp-session-id"


class SessionLimit:
    """Refuse a new MCP session when the calling token already holds ``per_token``."""

    def __init__(
        self,
        app: ASGIApp,
        live_sessions: Callable[[], Container[str]],
        per_token: int = MAX_SESSIONS_PER_TOKEN,
    ) -> None:
        self.app = app
        self.live_sessions = live_sessions
        self.per_token = per_token
        self._owned: dict[str, set[str]] = {}
        self._opening: dict[str, int] = {}  # opening requests still being answered

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
        opening = (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and _SESSION_HEADER.decode() not in headers
        )
        authorization = headers.get("authorization", "")
        if not opening or not authorization:
            await self.app(scope, receive, send)  # no token: the SDK answers 401
            return
        credential = hashlib.sha256(authorization.encode()).hexdigest()
        if self.open_sessions(credential) >= self.per_token:
            logger.warning("refused a new MCP session: a token holds %d already", self.per_token)
            await _too_many(self.per_token, send)
            return

        opening = True

        def opened() -> None:
            nonlocal opening
            if opening:  # it counts as opening until its answer starts, then as owned
                opening = False
                left = self._opening[credential] - 1
                if left:
                    self._opening[credential] = left
                else:
                    del self._opening[credential]

        async def note_session(message: Message) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if key.lower() == _SESSION_HEADER and message["status"] < 400:
                        self._owned.setdefault(credential, set()).add(value.decode("latin-1"))
                # Moved over before the answer goes out: the client may send its next
                # request before this one's handler has finished.
                opened()
            await send(message)

        self._opening[credential] = self._opening.get(credential, 0) + 1
        try:
            await self.app(scope, receive, note_session)
        finally:
            opened()

    async def _closing(self, headers: Headers, scope: Scope, receive: Receive, send: Send) -> None:
        """A session closed by its client stops counting as soon as the answer says so (the
        SDK forgets it a moment later, after a next request may already have arrived)."""
        session = headers.get(_SESSION_HEADER.decode(), "")
        credential = hashlib.sha256(headers.get("authorization", "").encode()).hexdigest()

        async def note_closed(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 300:
                self._owned.get(credential, set()).discard(session)
            await send(message)

        await self.app(scope, receive, note_closed)


async def _too_many(limit: int, send: Send) -> None:
    message = (
        f"this token already holds {limit} open MCP sessions, the most one token may hold; "
        "close sessions you no longer use (HTTP DELETE with their mcp-session-id, which MCP "
        f"clients do on exit) or wait until idle ones expire ({SESSION_IDLE_TIMEOUT:.0f} s)"
    )
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
                (b"retry-after", b"30"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
