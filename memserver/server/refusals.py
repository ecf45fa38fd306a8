"""Every refused HTTP request is an audit row, like every tool call.

:class:`AuditRefusals` wraps the memory server's whole HTTP app (MCP, ``/healthz``, the
console). When an answer starts with a refusal status (401 no or wrong token, 403
origin, CSRF or rights, 408 slow body, 413 body too large, 415 not JSON, 421 foreign
Host, 429 too many), it appends a row: ``tool`` is ``http <METHOD> <path>`` (the path
cut short), ``outcome`` is ``refused:<status>``, and ``token`` says who asked, never
with the secret:

- the name of the token the request carried, when it is a token of the store;
- ``unknown:<first 12 hex of the secret's SHA-256>`` for a secret that is not one (so
  repeated tries with the same wrong secret can be told apart, and the secret is not
  kept);
- what ``label`` answers for the request (the console: the token of its session cookie);
- ``-`` when nothing identifies the caller.

The row is written with the tool calls' rows (``AuditWriter``) before the answer goes
out, as a tool call's is; a database outage loses the row, not the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memserver.errors import DatabaseUnavailable, StoreError
from memserver.server.audit import AuditEntry, make_entry
from memserver.server.tokens import hash_secret
from memserver.server.verifier import checked_token

logger = logging.getLogger(__name__)

REFUSALS = frozenset({401, 403, 408, 413, 415, 421, 429})
MAX_PATH = 120

Record = Callable[[AuditEntry], Awaitable[None]]
Label = Callable[[Scope], Awaitable[str | None]]


async def bearer_label(scope: Scope) -> str | None:
    """Who an ``Authorization: Bearer`` request is: a token's name or ``unknown:<hash>``."""
    scheme, _, secret = Headers(scope=scope).get("authorization", "").strip().partition(" ")
    secret = secret.strip()
    if scheme.lower() != "bearer" or not secret:
        return None
    checked = checked_token()
    if checked is not None and checked[0] == hash_secret(secret) and checked[1] is not None:
        return checked[1].client_id
    return f"unknown:{hash_secret(secret)[:12]}"


class AuditRefusals:
    """ASGI middleware: an audit row for every refused request (module docstring)."""

    def __init__(self, app: ASGIApp, record: Record, labels: tuple[Label, ...] = ()) -> None:
        self.app = app
        self.record = record
        self.labels = (*labels, bearer_label)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in REFUSALS:
                await self._write(scope, int(message["status"]))
            await send(message)

        await self.app(scope, receive, watch)

    async def _write(self, scope: Scope, status: int) -> None:
        try:
            who = "-"
            for label in self.labels:
                found = await label(scope)
                if found:
                    who = found
                    break
            path = str(scope.get("path", ""))[:MAX_PATH]
            what = f"http {scope.get('method', '?')} {path}"
            client = (scope.get("client") or ("?",))[0]
            entry = make_entry(who, what, {"client": client}, f"refused:{status}", 0.0)
            await self.record(entry)
        except DatabaseUnavailable as exc:
            logger.warning("could not write the audit row of a refusal: %s", exc.message)
        except StoreError:
            logger.exception("could not write the audit row of a refusal")
