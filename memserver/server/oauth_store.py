"""The OAuth records in the index database: clients, consent requests, grants, codes and
refresh tokens (migration 018), for :mod:`memserver.server.oauth`.

A *grant* is one person's consent: a client may use these folders, read or write. Its
access token is an ordinary token of :class:`~memserver.server.tokens.TokenStore`
(issued when the code is exchanged, rotated in place on each refresh). Every secret
made here (consent request ids, codes, refresh tokens) is random, handed out once and
stored as its SHA-256 only. Each use that must happen once (a consent, a code, a refresh
token) is one conditional UPDATE or DELETE, so two concurrent uses cannot both succeed;
a code or refresh token presented again after its use is taken for a stolen copy and
revokes its grant (OAuth 2.1, section 4.3.1 and 6.1). Database errors become StoreError.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.types.json import Jsonb

from memserver.errors import StoreError
from memserver.server.tokens import CreatedToken, TokenStore, hash_secret, utcnow

if TYPE_CHECKING:
    from memserver.db.database import Database

REQUEST_TTL = dt.timedelta(minutes=10)  # a consent page left open longer starts again
CODE_TTL = dt.timedelta(minutes=5)
ACCESS_TTL = dt.timedelta(hours=1)
REFRESH_TTL = dt.timedelta(days=30)
MAX_NAME_CHARS = 80
_SLUG = re.compile(r"[^a-z0-9]+")
_GRANT_COLUMNS = "g.id, g.client_id, c.name, g.token_name, g.folders, g.write, g.approved_by"


@dataclass(frozen=True)
class Client:
    client_id: str
    name: str
    metadata: Mapping[str, Any]  # the registered metadata, as JSON


@dataclass(frozen=True)
class Request:
    """An authorization request waiting on the consent page."""

    client: Client
    params: Mapping[str, Any]  # state, scopes, code_challenge, redirect_uri, ...


@dataclass(frozen=True)
class Grant:
    id: int
    client_id: str
    client_name: str
    token_name: str
    folders: tuple[str, ...]
    write: bool
    approved_by: str

    @property
    def scopes(self) -> list[str]:
        """The OAuth scopes it grants (``read``, and ``write`` when it may write)."""
        return ["read", "write"] if self.write else ["read"]


@dataclass(frozen=True)
class Code:
    """An authorization code as stored (``used``: exchanged already)."""

    sha256: str
    grant: Grant
    params: Mapping[str, Any]
    expires_at: dt.datetime
    used: bool


@dataclass(frozen=True)
class Refresh:
    sha256: str
    grant: Grant
    expires_at: dt.datetime


@dataclass(frozen=True)
class Issued:
    """What a code or refresh exchange hands the client (the only time it exists)."""

    grant: Grant
    access: CreatedToken
    refresh: str
    refresh_expires: dt.datetime


def client_name(metadata: Mapping[str, Any]) -> str:
    """How a client is shown: its ``client_name``, else the host of its redirect URI."""
    name = str(metadata.get("client_name") or "").strip()
    if not name:
        uris = metadata.get("redirect_uris") or []
        name = str(uris[0]).split("//", 1)[-1].split("/", 1)[0] if uris else "client"
    printable = "".join(ch for ch in name if ch.isprintable())
    return printable[:MAX_NAME_CHARS] or "client"


class OAuthStore:
    """The OAuth records of one knowledge base's index database."""

    def __init__(self, tokens: TokenStore) -> None:
        self.tokens = tokens
        self.db: Database = tokens.db

    # -- clients and consent requests ----------------------------------------------

    def register(self, client_id: str, metadata: Mapping[str, Any]) -> Client:
        client = Client(client_id, client_name(metadata), dict(metadata))
        with self._transaction("register the client") as conn:
            conn.execute(
                "INSERT INTO oauth_clients (client_id, name, metadata) VALUES (%s, %s, %s)",
                (client_id, client.name, Jsonb(client.metadata)),
            )
        return client

    def client(self, client_id: str) -> Client | None:
        with self._transaction("read the client") as conn:
            row = conn.execute(
                "SELECT client_id, name, metadata FROM oauth_clients WHERE client_id = %s",
                (client_id,),
            ).fetchone()
        return Client(*row) if row else None

    def open_request(self, client_id: str, params: Mapping[str, Any]) -> str:
        """Keep an authorization request for the consent page; its id (a secret)."""
        request_id = secrets.token_urlsafe(32)
        with self._transaction("keep the authorization request") as conn:
            conn.execute("DELETE FROM oauth_requests WHERE expires_at < now()")
            conn.execute(
                "INSERT INTO oauth_requests (id_sha256, client_id, params, expires_at)"
                " VALUES (%s, %s, %s, %s)",
                (hash_secret(request_id), client_id, Jsonb(dict(params)), utcnow() + REQUEST_TTL),
            )
        return request_id

    def request(self, request_id: str) -> Request | None:
        """The request waiting under this id (None: unknown, answered or expired)."""
        with self._transaction("read the authorization request") as conn:
            row = conn.execute(
                "SELECT c.client_id, c.name, c.metadata, r.params FROM oauth_requests r"
                " JOIN oauth_clients c ON c.client_id = r.client_id"
                " WHERE r.id_sha256 = %s AND r.expires_at > now()",
                (hash_secret(request_id),),
            ).fetchone()
        return Request(Client(row[0], row[1], row[2]), row[3]) if row else None

    def deny(self, request_id: str) -> Request | None:
        """Answer a request with no: it is gone (None: already answered or expired)."""
        with self._transaction("answer the authorization request") as conn:
            return _take_request(conn, request_id)

    def approve(
        self, request_id: str, folders: Sequence[str], write: bool, approved_by: str
    ) -> tuple[Request, str] | None:
        """A grant for the request's client and its authorization code (a secret); None
        when the request was already answered or expired."""
        code = secrets.token_urlsafe(32)
        with self._transaction("record the consent") as conn:
            request = _take_request(conn, request_id)
            if request is None:
                return None
            name = f"oauth-{_slug(request.client.name)}-{secrets.token_hex(3)}"
            row = conn.execute(
                "INSERT INTO oauth_grants (client_id, token_name, folders, write, approved_by)"
                " VALUES (%s, %s, %s, %s, %s) RETURNING id",
                (request.client.client_id, name, list(folders), write, approved_by),
            ).fetchone()
            assert row is not None
            conn.execute(
                "INSERT INTO oauth_codes (code_sha256, grant_id, params, expires_at)"
                " VALUES (%s, %s, %s, %s)",
                (hash_secret(code), row[0], Jsonb(dict(request.params)), utcnow() + CODE_TTL),
            )
        return request, code

    # -- codes and refresh tokens ---------------------------------------------------

    def code(self, code: str) -> Code | None:
        with self._transaction("read the authorization code") as conn:
            row = conn.execute(
                f"SELECT o.code_sha256, o.params, o.expires_at, o.used_at IS NOT NULL,"
                f" {_GRANT_COLUMNS} FROM oauth_codes o JOIN oauth_grants g ON g.id = o.grant_id"
                " JOIN oauth_clients c ON c.client_id = g.client_id"
                " WHERE o.code_sha256 = %s AND g.revoked_at IS NULL",
                (hash_secret(code),),
            ).fetchone()
        if row is None:
            return None
        sha, params, expires, used, *grant = row
        return Code(sha, _grant(grant), params, expires, bool(used))

    def exchange_code(self, code_sha256: str, grant_id: int) -> Issued | None:
        """The grant's access and refresh tokens for a code used once; None (and the
        grant revoked) when it was used before."""
        with self._transaction("exchange the authorization code") as conn:
            taken = conn.execute(
                "UPDATE oauth_codes SET used_at = now() WHERE code_sha256 = %s AND grant_id = %s"
                " AND used_at IS NULL AND expires_at > now() RETURNING grant_id",
                (code_sha256, grant_id),
            ).fetchone()
            grant = _live_grant(conn, grant_id) if taken is not None else None
            if grant is None:
                _revoke(conn, grant_id)
                return None
            access = self.tokens.issue(
                conn,
                grant.token_name,
                grant.folders,
                write=grant.write,
                expires=utcnow() + ACCESS_TTL,
                client=grant.client_name,
                grant=grant.id,
            )
            return _with_refresh(conn, grant, access)

    def refresh_token(self, token: str) -> Refresh | None:
        """The live refresh token (None: unknown, expired or revoked). One presented again
        after it was rotated away is a stolen copy: its grant is revoked."""
        with self._transaction("read the refresh token") as conn:
            row = conn.execute(
                f"SELECT r.token_sha256, r.expires_at, r.used_at IS NOT NULL, {_GRANT_COLUMNS}"
                " FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id"
                " JOIN oauth_clients c ON c.client_id = g.client_id"
                " WHERE r.token_sha256 = %s AND g.revoked_at IS NULL",
                (hash_secret(token),),
            ).fetchone()
            if row is None:
                return None
            sha, expires, used, *grant = row
            if used:
                _revoke(conn, int(grant[0]))
                return None
        return Refresh(sha, _grant(grant), expires)

    def exchange_refresh(self, token_sha256: str, grant_id: int) -> Issued | None:
        """A new access token secret and refresh token for a refresh token used once;
        None when it was used meanwhile, or the grant or its token was revoked."""
        with self._transaction("rotate the tokens") as conn:
            taken = conn.execute(
                "UPDATE oauth_refresh_tokens SET used_at = now() WHERE token_sha256 = %s"
                " AND grant_id = %s AND used_at IS NULL AND expires_at > now() RETURNING grant_id",
                (token_sha256, grant_id),
            ).fetchone()
            grant = _live_grant(conn, grant_id) if taken is not None else None
            if grant is None:
                return None
            conn.execute(
                "DELETE FROM oauth_refresh_tokens WHERE grant_id = %s AND expires_at < now()",
                (grant_id,),
            )
            access = self.tokens.rotate(conn, grant_id, utcnow() + ACCESS_TTL)
            if access is None:  # revoked in the console or the CLI: the grant ends with it
                _revoke(conn, grant_id)
                return None
            return _with_refresh(conn, grant, access)

    # -- access tokens and revocation -----------------------------------------------

    def grant_of_access(self, secret: str) -> Grant | None:
        """The grant whose live access token this secret is (None: not one, or revoked)."""
        token = self.tokens.verify(secret)
        if token is None or token.grant is None:
            return None
        return self.grant(token.grant)

    def grant(self, grant_id: int) -> Grant | None:
        """A grant not revoked (None: unknown or revoked)."""
        with self._transaction("read the grant") as conn:
            return _live_grant(conn, grant_id)

    def revoke(self, grant_id: int) -> None:
        """End a grant: its access token is revoked and its refresh tokens deleted."""
        with self._transaction("revoke the grant") as conn:
            _revoke(conn, grant_id)

    @contextmanager
    def _transaction(self, action: str) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self.db.transaction() as conn:
                yield conn
        except psycopg.Error as exc:
            raise StoreError(
                f"could not {action} in the index database: {str(exc).strip()}",
                "check that PostgreSQL is running and migrated (`memserver migrate`)",
            ) from exc


def _take_request(conn: psycopg.Connection[Any], request_id: str) -> Request | None:
    row = conn.execute(
        "DELETE FROM oauth_requests r USING oauth_clients c"
        " WHERE r.id_sha256 = %s AND r.expires_at > now() AND c.client_id = r.client_id"
        " RETURNING c.client_id, c.name, c.metadata, r.params",
        (hash_secret(request_id),),
    ).fetchone()
    return Request(Client(row[0], row[1], row[2]), row[3]) if row else None


def _with_refresh(conn: psycopg.Connection[Any], grant: Grant, access: CreatedToken) -> Issued:
    refresh = "msr_" + secrets.token_urlsafe(32)
    expires = utcnow() + REFRESH_TTL
    conn.execute(
        "INSERT INTO oauth_refresh_tokens (token_sha256, grant_id, expires_at) VALUES (%s, %s, %s)",
        (hash_secret(refresh), grant.id, expires),
    )
    return Issued(grant, access, refresh, expires)


def _revoke(conn: psycopg.Connection[Any], grant_id: int) -> None:
    conn.execute(
        "UPDATE oauth_grants SET revoked_at = now() WHERE id = %s AND revoked_at IS NULL",
        (grant_id,),
    )
    conn.execute(
        "UPDATE api_tokens SET revoked_at = now() WHERE oauth_grant = %s AND revoked_at IS NULL",
        (grant_id,),
    )
    conn.execute("DELETE FROM oauth_refresh_tokens WHERE grant_id = %s", (grant_id,))


def _live_grant(conn: psycopg.Connection[Any], grant_id: int) -> Grant | None:
    row = conn.execute(
        f"SELECT {_GRANT_COLUMNS} FROM oauth_grants g"
        " JOIN oauth_clients c ON c.client_id = g.client_id"
        " WHERE g.id = %s AND g.revoked_at IS NULL",
        (grant_id,),
    ).fetchone()
    return _grant(row) if row else None


def _grant(row: Sequence[Any]) -> Grant:
    grant_id, client_id, name, token_name, folders, write, approved_by = row
    return Grant(
        int(grant_id), client_id, name, token_name, tuple(folders), bool(write), approved_by
    )


def _slug(name: str) -> str:
    return _SLUG.sub("-", name.casefold()).strip("-")[:32].strip("-") or "client"
