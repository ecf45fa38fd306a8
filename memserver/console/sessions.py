"""Console sessions: who is signed in, re-checked against the token store on every request.

Signing in exchanges a token secret (the same ``ms_...`` secrets MCP takes) for a random
session id in an ``HttpOnly``, ``SameSite=Strict`` cookie; only the token's name and
SHA-256 are kept, never the secret. Each request looks the token up again (one indexed
query), so a revoked or expired token signs its sessions out on their next request, and
a new token given the revoked one's name does not inherit them. A *trusted* session
(``memserver up``'s login link, a key that lives as long as the process) has every
right, like ``serve --stdio --trusted``.

Sessions live in this process's memory: restarting the server signs everyone out. A
token holds at most ``MAX_SESSIONS_PER_TOKEN`` (signing in once more signs out its own
longest idle one); the console holds at most ``MAX_SESSIONS`` and refuses one more
sign-in rather than sign out another token's session.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field

from memserver.errors import NotFoundError, UserError
from memserver.server.scope import Scope
from memserver.server.tokens import TokenStore

COOKIE = "ms_console"
IDLE_SECONDS = 12 * 3600
MAX_SESSIONS = 1000
MAX_SESSIONS_PER_TOKEN = 20  # one more signs out that token's longest idle session
TRUSTED_NAME = "console-trusted"


@dataclass
class Session:
    """One signed-in browser."""

    id: str
    csrf: str
    token_name: str
    token_sha256: str | None  # None: a trusted session
    last_seen: float = field(default_factory=time.monotonic)

    @property
    def trusted(self) -> bool:
        return self.token_sha256 is None


@dataclass(frozen=True)
class Caller:
    """A session checked against the token store: what this request may see and do."""

    session: Session
    scope: Scope

    @property
    def admin(self) -> bool:
        """Tokens, audit and ledger actions: a ``*`` + write token, or a trusted session."""
        return self.session.trusted or (self.scope.all_folders and self.scope.write)

    @property
    def csrf(self) -> str:
        return self.session.csrf


class SignedOut(Exception):
    """The session is gone or its token no longer works; ``reason`` says why."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class ConsoleFull(UserError):
    """No room for one more session (other tokens' sessions are never signed out)."""


class Sessions:
    """Sessions of one console (thread-safe; views run in worker threads too)."""

    def __init__(
        self,
        tokens: TokenStore | None,
        login_key: str | None = None,
        *,
        max_sessions: int = MAX_SESSIONS,
        per_token: int = MAX_SESSIONS_PER_TOKEN,
    ) -> None:
        self.tokens = tokens
        self.login_key = login_key
        self.max_sessions = max_sessions
        self.per_token = per_token
        self._lock = threading.Lock()
        self._by_id: dict[str, Session] = {}

    def sign_in(self, secret: str) -> Session | None:
        """A new session for a valid token secret, or None (unknown, expired, revoked)."""
        token = self.tokens.verify(secret.strip()) if self.tokens is not None else None
        if token is None:
            return None
        return self._add(token.name, token.sha256)

    def sign_in_trusted(self, key: str) -> Session | None:
        """A trusted session for the login link's key, or None."""
        if not self.login_key or not hmac.compare_digest(key.encode(), self.login_key.encode()):
            return None
        return self._add(TRUSTED_NAME, None)

    def sign_out(self, session_id: str) -> None:
        with self._lock:
            self._by_id.pop(session_id, None)

    def name_of(self, session_id: str | None) -> str | None:
        """The token name a session was signed in with (no check; for audit rows)."""
        with self._lock:
            session = self._by_id.get(session_id or "")
        return session.token_name if session is not None else None

    def caller(self, session_id: str | None) -> Caller:
        """The session's caller, re-checked now (SignedOut when it no longer works)."""
        with self._lock:
            session = self._by_id.get(session_id or "")
            now = time.monotonic()
            if session is None or now - session.last_seen > IDLE_SECONDS:
                if session is not None:
                    del self._by_id[session.id]
                raise SignedOut()
            session.last_seen = now
        if session.trusted:
            return Caller(session, Scope.trusted(TRUSTED_NAME))
        assert self.tokens is not None
        try:
            token = self.tokens.get(session.token_name)
        except NotFoundError:
            token = None
        if token is not None and token.sha256 == session.token_sha256 and token.is_active():
            return Caller(session, Scope.of_token(token))
        self.sign_out(session.id)
        status = (
            token.status()
            if token is not None and token.sha256 == session.token_sha256
            else "revoked"
        )
        raise SignedOut(f"token {session.token_name!r} is {status}")

    def _add(self, name: str, sha256: str | None) -> Session:
        session = Session(
            id=secrets.token_urlsafe(32),
            csrf=secrets.token_urlsafe(32),
            token_name=name,
            token_sha256=sha256,
        )
        with self._lock:
            now = time.monotonic()
            for stale in [s for s in self._by_id.values() if now - s.last_seen > IDLE_SECONDS]:
                del self._by_id[stale.id]
            own = [s for s in self._by_id.values() if s.token_name == name]
            if len(own) >= self.per_token:  # this token's longest idle one, never another's
                del self._by_id[min(own, key=lambda s: s.last_seen).id]
            elif len(self._by_id) >= self.max_sessions:
                raise ConsoleFull(
                    f"the console holds {self.max_sessions} sessions, the most it keeps",
                    "sign out elsewhere, or wait until idle sessions expire",
                )
            self._by_id[session.id] = session
        return session
