"""Bearer tokens of MCP requests over HTTP, checked against the token store.

Every request's token is verified in a worker thread (the query must not hold up the
event loop, which serves every session), and the verified record travels with the
request (``VerifiedToken``) so the call's scope needs no second lookup. While
PostgreSQL is down, a token verified in the last ``VERIFIED_GRACE`` seconds is still
let in, so its calls fail as a ToolError that says the database is unavailable.

The HTTP app checks the token before it reads a request's body (``check_first``, so a
client without a valid token cannot make the server hold its body); the SDK's own check
of the same request, later in the same task, reuses that answer (``_checked``) instead
of asking the database again.
"""

from __future__ import annotations

import contextvars
import time

import anyio
from mcp.server.auth.provider import AccessToken, TokenVerifier
from pydantic import ConfigDict
from pydantic import Field as PydanticField

from memserver.errors import DatabaseUnavailable
from memserver.server.tokens import Token, TokenStore, hash_secret

# While the database is down, a token verified this recently is still let in (so its
# calls get a clear ToolError); it is checked against the database again once it is back.
VERIFIED_GRACE = 10 * 60.0
# (hash of the secret, its verdict) for the request being handled: set by check_first.
_checked: contextvars.ContextVar[tuple[str, AccessToken | None] | None] = contextvars.ContextVar(
    "memserver_token_checked", default=None
)


def checked_token() -> tuple[str, AccessToken | None] | None:
    """(hash of the secret, its verdict) of the request being handled, once checked."""
    return _checked.get()


class VerifiedToken(AccessToken):
    """The SDK's access token, with the token record this request was verified against
    (so the call's scope needs no second lookup)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    record: Token | None = PydanticField(default=None, exclude=True)


class StoreTokenVerifier(TokenVerifier):
    """Bearer tokens checked against the token store on every HTTP request (in a worker
    thread: the query must not hold up the event loop, which serves every session)."""

    def __init__(self, store: TokenStore) -> None:
        self.store = store
        self._verified: dict[str, tuple[float, AccessToken]] = {}

    async def check_first(self, token: str) -> AccessToken | None:
        """Verify ``token`` for the request being handled and remember the verdict for the
        rest of its handling (the SDK's check reuses it)."""
        access = await self.verify_token(token)
        _checked.set((hash_secret(token), access))
        return access

    async def verify_token(self, token: str) -> AccessToken | None:
        checked = _checked.get()
        if checked is not None and checked[0] == hash_secret(token):
            return checked[1]  # this request's token, checked before its body was read
        try:
            record = await anyio.to_thread.run_sync(self.store.verify, token)
        except DatabaseUnavailable:
            return self._recently_verified(token)
        if record is None:
            self._verified.pop(hash_secret(token), None)
            return None
        access = VerifiedToken(
            token=record.sha256,  # the secret itself is never kept past this point
            client_id=record.name,
            scopes=["write"] if record.write else ["read"],
            expires_at=int(record.expires.timestamp()) if record.expires else None,
            record=record,
        )
        self._verified[record.sha256] = (time.monotonic(), access)
        return access

    def _recently_verified(self, token: str) -> AccessToken:
        """During an outage: the token as last verified, if that was recent enough."""
        seen = self._verified.get(hash_secret(token))
        if seen is not None and time.monotonic() - seen[0] < VERIFIED_GRACE:
            return seen[1]
        raise DatabaseUnavailable(self.store.db.pool.shown_url, "cannot check the token")
