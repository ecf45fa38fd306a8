"""Resource-updated notifications: a page written anywhere on the database reaches the
clients that listen for it, within their scope.

A page version written by any process (this server, another one on the same database,
the CLI, reindex) sends ``pg_notify('memserver_pages', <page id>)`` from the change
feed's trigger (migration 017), delivered when its transaction commits; a token revoked
anywhere sends ``memserver_tokens`` (migration 018). :class:`ChangeListener` keeps one
connection that LISTENs to both (reconnecting with backoff while PostgreSQL is away) and
turns a page into a ``ResourceUpdated(kb://<page id>)`` event on the server's
subscription bus, which the SDK's listen streams (``subscriptions/listen``, MCP
2026-07-28) deliver to the clients that asked for that URI.

:class:`ScopedListen` is the SDK's listen handler with the caller's scope: only URIs of
pages the caller's token may read are honoured (the acknowledgement says which), and a
stream ends as soon as its token is revoked.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import psycopg
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST, SubscriptionsListenRequestParams, SubscriptionsListenResult

from memserver.db.database import redact_url
from memserver.errors import MemoryError_
from memserver.server.resources import SCHEMA_URI, ScopedCaller, page_of, page_uri

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

logger = logging.getLogger(__name__)

PAGES_CHANNEL = "memserver_pages"
TOKENS_CHANNEL = "memserver_tokens"
MAX_BACKOFF = 30.0


class ScopedListen(ListenHandler):
    """``subscriptions/listen`` for the caller: its pages only, ended when it is revoked."""

    def __init__(self, server: ScopedCaller, bus: SubscriptionBus) -> None:
        super().__init__(bus)
        self.server = server
        self._by_token: dict[str, set[anyio.CancelScope]] = {}

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        try:
            scope = self.server.caller_scope()
        except MemoryError_ as exc:
            raise MCPError(INVALID_REQUEST, str(exc)) from None
        asked = params.notifications.resource_subscriptions or []
        visible = [
            uri
            for uri in asked
            if uri == SCHEMA_URI
            or ((page := page_of(uri)) is not None and scope.page_visible(page))
        ]
        narrowed = params.model_copy(
            update={
                "notifications": params.notifications.model_copy(
                    update={"resource_subscriptions": visible or None}
                )
            }
        )
        streams = self._by_token.setdefault(scope.token_name, set())
        with anyio.CancelScope() as cancel:
            streams.add(cancel)
            try:
                return await super().__call__(ctx, narrowed)
            finally:
                streams.discard(cancel)
                if not streams:
                    self._by_token.pop(scope.token_name, None)
        raise MCPError(INVALID_REQUEST, f"token {scope.token_name!r} was revoked")

    def end_streams_of(self, token_name: str) -> None:
        """End every listen stream of this token (it was revoked)."""
        for cancel in list(self._by_token.get(token_name, ())):
            cancel.cancel()


class ChangeListener:
    """LISTENs on the index database for page writes and token revocations."""

    def __init__(self, url: str, bus: SubscriptionBus, listen: ScopedListen) -> None:
        self.url = url
        self.bus = bus
        self.listen = listen
        self.listening = anyio.Event()  # set once the first LISTEN is in place

    async def run(self) -> None:
        """Until cancelled: listen, and after a lost connection, listen again."""
        delay = 1.0
        while True:
            connected = self.listening.is_set()
            try:
                await self._listen()
            except (psycopg.Error, OSError) as exc:
                if self.listening.is_set() and not connected:
                    delay = 1.0  # it did connect: the next outage starts its backoff anew
                logger.warning(
                    "change notifications from %s stopped (%s); retrying in %.0f s",
                    redact_url(self.url),
                    str(exc).strip() or type(exc).__name__,
                    delay,
                )
            await anyio.sleep(delay)  # a backoff between reconnections, not a wait on work
            delay = min(delay * 2, MAX_BACKOFF)

    async def _listen(self) -> None:
        conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
        try:
            await conn.execute(f"LISTEN {PAGES_CHANNEL}")
            await conn.execute(f"LISTEN {TOKENS_CHANNEL}")
            self.listening.set()
            async for note in conn.notifies():
                if note.channel == PAGES_CHANNEL:
                    await self.bus.publish(ResourceUpdated(uri=page_uri(note.payload)))
                elif note.channel == TOKENS_CHANNEL:
                    self.listen.end_streams_of(note.payload)
        finally:
            # anyio cancels every await of a cancelled task: the close is shielded, or a
            # server stopping leaves the connection open for the collector to find
            with anyio.CancelScope(shield=True):
                await conn.close()
