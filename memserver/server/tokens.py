"""Scoped access tokens for the memory server.

A token grants a set of folders (schema folders, ``source`` for raw sources and the
pipeline tools, or ``*`` for everything) and read or write access. The secret
(``ms_<random>``) is shown once, at creation; only its SHA-256 is stored, in the
``api_tokens`` table of the index database. Tokens can expire and be revoked; a revoked
token keeps its row (``token list`` still shows it), and its name may then be given to
a new token.

An OAuth grant's access token (``memserver.server.oauth``) is a token like any other,
marked with its grant and its client's name: ``issue`` creates it inside the grant's
transaction, and each refresh ``rotate``s its secret in place (the old secret stops
working at once), so one grant stays one row with one name and one audit trail.

There is no cache: every ``verify`` and ``get`` is one indexed query (by ``sha256`` or
by ``name``), so a revocation or expiry written by the CLI is effective on the server's
next request. Database errors are translated here, at the edge: a duplicate name
becomes a TokenError, anything else a StoreError.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg

from memserver.errors import NotFoundError, StoreError, UserError

if TYPE_CHECKING:
    from memserver.db.database import Database

ALL_FOLDERS = "*"
SOURCE_FOLDER = "source"
SECRET_PREFIX = "ms_"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_COLUMNS = "name, sha256, folders, write, created_at, expires_at, revoked_at, client, oauth_grant"
_LIVE_NAME_INDEX = "api_tokens_live_name"  # unique name among tokens not revoked (002)


class TokenError(UserError):
    """A token request that cannot be honoured (bad name, folder, expiry, duplicate)."""


@dataclass(frozen=True)
class Token:
    """One stored token: everything but the secret."""

    name: str
    sha256: str
    folders: tuple[str, ...]  # schema folders, "source", or ("*",)
    write: bool
    created: dt.datetime
    expires: dt.datetime | None = None
    revoked: dt.datetime | None = None
    client: str | None = None  # the OAuth client it was issued to (its name)
    grant: int | None = None  # the OAuth grant whose access token it is

    @property
    def all_folders(self) -> bool:
        return ALL_FOLDERS in self.folders

    def status(self, now: dt.datetime | None = None) -> str:
        """``active``, ``expired`` or ``revoked``."""
        now = now or utcnow()
        if self.revoked is not None:
            return "revoked"
        if self.expires is not None and self.expires <= now:
            return "expired"
        return "active"

    def is_active(self, now: dt.datetime | None = None) -> bool:
        return self.status(now) == "active"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "folders": list(self.folders),
            "write": self.write,
            "created": _iso(self.created),
            "expires": _iso(self.expires),
            "revoked": _iso(self.revoked),
            "client": self.client,
        }


@dataclass(frozen=True)
class CreatedToken:
    """A freshly created token and its secret (the only time the secret exists)."""

    token: Token
    secret: str


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def hash_secret(secret: str) -> str:
    """The stored form of a secret: its SHA-256, hex."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def parse_duration(text: str) -> dt.timedelta:
    """``"30d"``, ``"12h"``, ``"90m"``, ``"2w"``, ``"45s"`` -> a timedelta (UserError otherwise)."""
    match = _DURATION_RE.match(text)
    if not match:
        raise TokenError(
            f"cannot read the duration {text!r}",
            "write a number and a unit: 30d, 12h, 90m, 2w, or an ISO date/time",
        )
    amount, unit = float(match.group(1)), match.group(2).lower()
    return dt.timedelta(seconds=amount * _UNIT_SECONDS[unit])


def parse_instant(text: str, now: dt.datetime | None = None, *, past: bool = False) -> dt.datetime:
    """A duration relative to ``now`` (future, or past when ``past``) or an ISO date/time.

    ISO values without a timezone are taken as UTC; a bare date means its midnight.
    """
    now = now or utcnow()
    stripped = text.strip()
    if _DURATION_RE.match(stripped):
        delta = parse_duration(stripped)
        return now - delta if past else now + delta
    try:
        value = dt.datetime.fromisoformat(stripped)
    except ValueError:
        raise TokenError(
            f"cannot read the time {text!r}",
            "use a duration such as 30d or 12h, or an ISO date/time such as 2026-12-31",
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def parse_folders(
    text: str | Sequence[str], known: Collection[str] | None = None
) -> tuple[str, ...]:
    """``"a,b"`` / ``["a", "b"]`` / ``"*"`` -> a sorted tuple of folder names.

    With ``known`` (the schema's folder names) an unknown folder is refused and the
    message lists the valid ones.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    folders = sorted({item.strip() for item in items if item.strip()})
    if not folders:
        raise TokenError(
            "a token needs at least one folder",
            "pass --folders with schema folder names, 'source', or '*'",
        )
    if ALL_FOLDERS in folders:
        return (ALL_FOLDERS,)
    if known is not None:
        valid = set(known) | {SOURCE_FOLDER}
        unknown = [f for f in folders if f not in valid]
        if unknown:
            raise TokenError(
                f"unknown folder(s): {', '.join(unknown)}",
                f"valid folders are {', '.join(sorted(valid))}, or '*' for all",
            )
    return tuple(folders)


class TokenStore:
    """The tokens of one knowledge base, in its index database (``api_tokens``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- reading -------------------------------------------------------------------

    def list(self) -> list[Token]:
        """Every token, revoked and expired included, by name (then oldest first)."""
        rows = _fetch(self.db, f"SELECT {_COLUMNS} FROM api_tokens ORDER BY name, created_at, id")
        return [_token_from_row(row) for row in rows]

    def get(self, name: str) -> Token:
        """The token called ``name``: the live one, else the newest revoked one
        (NotFoundError naming the known tokens)."""
        rows = _fetch(
            self.db,
            f"SELECT {_COLUMNS} FROM api_tokens WHERE name = %s"
            " ORDER BY revoked_at IS NULL DESC, created_at DESC, id DESC LIMIT 1",
            (name,),
        )
        if not rows:
            raise self._not_found(name)
        return _token_from_row(rows[0])

    def verify(self, secret: str, now: dt.datetime | None = None) -> Token | None:
        """The active token whose secret this is, or None (unknown, expired or revoked)."""
        if not secret.startswith(SECRET_PREFIX):
            return None
        rows = _fetch(
            self.db, f"SELECT {_COLUMNS} FROM api_tokens WHERE sha256 = %s", (hash_secret(secret),)
        )
        if not rows:
            return None
        token = _token_from_row(rows[0])
        return token if token.is_active(now) else None

    # -- writing -------------------------------------------------------------------

    def create(
        self,
        name: str,
        folders: str | Sequence[str],
        *,
        write: bool = False,
        expires: dt.datetime | None = None,
        known_folders: Collection[str] | None = None,
        now: dt.datetime | None = None,
    ) -> CreatedToken:
        """Create a token and return it with its secret (shown once, never stored)."""
        created = self._new(name, folders, write, expires, known_folders, now)
        try:
            with self.db.connection() as conn:
                self._insert(conn, created.token)
        except psycopg.Error as exc:
            raise _store_error("create the token", exc) from exc
        return created

    def issue(
        self,
        conn: psycopg.Connection[Any],
        name: str,
        folders: Sequence[str],
        *,
        write: bool,
        expires: dt.datetime,
        client: str,
        grant: int,
    ) -> CreatedToken:
        """Create the access token of an OAuth grant, in the caller's transaction."""
        created = self._new(name, folders, write, expires, None, None)
        token = dataclasses.replace(created.token, client=client, grant=grant)
        self._insert(conn, token)
        return CreatedToken(token=token, secret=created.secret)

    def rotate(
        self, conn: psycopg.Connection[Any], grant: int, expires: dt.datetime
    ) -> CreatedToken | None:
        """A new secret and expiry for the access token of ``grant``, in the caller's
        transaction: the old secret stops working at once. None when that token was
        revoked (in the console or by the CLI)."""
        secret = _new_secret()
        row = conn.execute(
            f"UPDATE api_tokens SET sha256 = %s, expires_at = %s"
            f" WHERE oauth_grant = %s AND revoked_at IS NULL RETURNING {_COLUMNS}",
            (hash_secret(secret), expires, grant),
        ).fetchone()
        return CreatedToken(token=_token_from_row(row), secret=secret) if row else None

    def _new(
        self,
        name: str,
        folders: str | Sequence[str],
        write: bool,
        expires: dt.datetime | None,
        known_folders: Collection[str] | None,
        now: dt.datetime | None,
    ) -> CreatedToken:
        """A checked token and its secret, not stored yet."""
        now = now or utcnow()
        if not _NAME_RE.match(name):
            raise TokenError(
                f"invalid token name {name!r}",
                "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
            )
        scope = parse_folders(folders, known_folders)
        if expires is not None and expires <= now:
            raise TokenError(
                f"the expiry {_iso(expires)} is in the past", "give a future time such as 30d"
            )
        secret = _new_secret()
        token = Token(
            name=name,
            sha256=hash_secret(secret),
            folders=scope,
            write=write,
            created=now.astimezone(dt.UTC),
            expires=_utc(expires),
        )
        return CreatedToken(token=token, secret=secret)

    @staticmethod
    def _insert(conn: psycopg.Connection[Any], token: Token) -> None:
        try:
            with conn.transaction():  # a savepoint inside the caller's transaction
                conn.execute(
                    "INSERT INTO api_tokens (name, sha256, folders, write, created_at,"
                    " expires_at, client, oauth_grant) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        token.name,
                        token.sha256,
                        list(token.folders),
                        token.write,
                        token.created,
                        token.expires,
                        token.client,
                        token.grant,
                    ),
                )
        except psycopg.errors.UniqueViolation as exc:
            if exc.diag.constraint_name == _LIVE_NAME_INDEX:
                raise TokenError(
                    f"a token named {token.name!r} already exists",
                    f"revoke it first (`memserver token revoke --name {token.name}`)"
                    " or pick another name",
                ) from exc
            raise

    def revoke(self, name: str, now: dt.datetime | None = None) -> Token:
        """Revoke a token; later requests with its secret get 401. Idempotent (revoking a
        revoked name returns its newest revoked token unchanged)."""
        rows = _fetch(
            self.db,
            f"UPDATE api_tokens SET revoked_at = %s WHERE name = %s AND revoked_at IS NULL"
            f" RETURNING {_COLUMNS}",
            (now or utcnow(), name),
        )
        return _token_from_row(rows[0]) if rows else self.get(name)

    def _not_found(self, name: str) -> NotFoundError:
        names = sorted({row[0] for row in _fetch(self.db, "SELECT DISTINCT name FROM api_tokens")})
        known = ", ".join(names) or "none yet"
        return NotFoundError(
            f"no token named {name!r}",
            f"known tokens: {known}; create one with `memserver token create`",
        )


def _fetch(db: Database, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    try:
        with db.reading() as conn:
            return conn.execute(query, params).fetchall()
    except psycopg.Error as exc:
        raise _store_error("read or update the tokens", exc) from exc


def _store_error(action: str, exc: psycopg.Error) -> StoreError:
    return StoreError(
        f"could not {action} in the index database: {str(exc).strip()}",
        "check that PostgreSQL is running and migrated (`memserver migrate`)",
    )


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    return value.astimezone(dt.UTC) if value is not None else None


def _new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def _token_from_row(row: Sequence[Any]) -> Token:
    name, sha256, folders, write, created, expires, revoked, client, grant = row
    return Token(
        name=name,
        sha256=sha256,
        folders=tuple(folders),
        write=bool(write),
        created=created.astimezone(dt.UTC),
        expires=_utc(expires),
        revoked=_utc(revoked),
        client=client,
        grant=grant,
    )
