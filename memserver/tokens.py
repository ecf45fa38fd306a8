"""Scoped access tokens for the memory server.

A token grants a set of folders (schema folders, ``source`` for raw sources and the
pipeline tools, or ``*`` for everything) and read or write access. The secret
(``ms_<random>``) is shown once, at creation; only its SHA-256 is stored, in
``<kb>/.memserver/tokens.json``. Tokens can expire and be revoked; a revoked record is
kept so ``token list`` still shows it.

The store is a small JSON file rewritten atomically under an exclusive file lock, so
the CLI can create or revoke tokens while a server is running: the server re-reads the
file when its modification stamp changes, which makes a revocation effective on the
next request.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memserver.errors import NotFoundError, UserError

ALL_FOLDERS = "*"
SOURCE_FOLDER = "source"
SECRET_PREFIX = "ms_"
TOKENS_FILE = "tokens.json"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


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
    """The token records of one knowledge base (``<state>/tokens.json``)."""

    def __init__(self, state_dir: Path | str) -> None:
        self.path = Path(state_dir) / TOKENS_FILE
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._tokens: dict[str, Token] = {}
        self._by_hash: dict[str, Token] = {}

    # -- reading -------------------------------------------------------------------

    def list(self) -> list[Token]:
        """Every token, revoked and expired included, by name."""
        return sorted(self._load().values(), key=lambda t: t.name)

    def get(self, name: str) -> Token:
        """The token called ``name`` (NotFoundError naming the known tokens)."""
        tokens = self._load()
        if name not in tokens:
            known = ", ".join(sorted(tokens)) or "none yet"
            raise NotFoundError(
                f"no token named {name!r}",
                f"known tokens: {known}; create one with `memserver token create`",
            )
        return tokens[name]

    def verify(self, secret: str, now: dt.datetime | None = None) -> Token | None:
        """The active token whose secret this is, or None (unknown, expired or revoked)."""
        if not secret.startswith(SECRET_PREFIX):
            return None
        digest = hash_secret(secret)
        self._load()
        token = self._by_hash.get(digest)
        if token is None or not hmac.compare_digest(token.sha256, digest):
            return None
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
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        token = Token(
            name=name,
            sha256=hash_secret(secret),
            folders=scope,
            write=write,
            created=now,
            expires=expires,
        )
        with self._locked_update() as tokens:
            existing = tokens.get(name)
            if existing is not None and existing.revoked is None:
                raise TokenError(
                    f"a token named {name!r} already exists",
                    f"revoke it first (`memserver token revoke --name {name}`) or pick another name",
                )
            tokens[name] = token
        return CreatedToken(token=token, secret=secret)

    def revoke(self, name: str, now: dt.datetime | None = None) -> Token:
        """Revoke a token; later requests with its secret get 401. Idempotent."""
        with self._locked_update() as tokens:
            if name not in tokens:
                known = ", ".join(sorted(tokens)) or "none yet"
                raise NotFoundError(f"no token named {name!r}", f"known tokens: {known}")
            token = tokens[name]
            if token.revoked is None:
                token = replace(token, revoked=now or utcnow())
                tokens[name] = token
        return token

    # -- file handling ---------------------------------------------------------------

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _load(self) -> dict[str, Token]:
        """The records, re-read only when the file changed (one stat per call)."""
        with self._lock:
            stamp = self._stat()
            if stamp != self._stamp or stamp is None:
                self._tokens = self._read_file()
                self._by_hash = {t.sha256: t for t in self._tokens.values()}
                self._stamp = stamp
            return self._tokens

    def _read_file(self) -> dict[str, Token]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(raw)
            return {item["name"]: _token_from_dict(item) for item in data["tokens"]}
        except (ValueError, KeyError, TypeError) as exc:
            raise TokenError(
                f"{self.path} is corrupt ({exc})",
                "restore it from a backup or delete it and create the tokens again",
            ) from exc

    @contextmanager
    def _locked_update(self) -> Iterator[dict[str, Token]]:
        """Read-modify-write under an exclusive lock; the new file replaces the old atomically."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_suffix(".lock")
        with open(lock_path, "a+") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                tokens = self._read_file()
                yield tokens
                payload = {"tokens": [_token_to_dict(tokens[n]) for n in sorted(tokens)]}
                tmp = self.path.with_suffix(".tmp")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(payload, out, indent=2)
                    out.write("\n")
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, self.path)
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _parse_iso(value: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value) if value else None


def _token_to_dict(token: Token) -> dict[str, Any]:
    return {**token.as_dict(), "sha256": token.sha256}


def _token_from_dict(item: dict[str, Any]) -> Token:
    return Token(
        name=item["name"],
        sha256=item["sha256"],
        folders=tuple(item["folders"]),
        write=bool(item["write"]),
        created=dt.datetime.fromisoformat(item["created"]),
        expires=_parse_iso(item.get("expires")),
        revoked=_parse_iso(item.get("revoked")),
    )
