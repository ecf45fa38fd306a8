"""Schema migrations: numbered SQL files under ``memserver/db/migrations`` applied in
order, each once, recorded with its SHA-256 in ``schema_migrations`` (an applied file
that changed afterwards is refused)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import psycopg

from memserver.errors import StoreError

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
MIGRATE_LOCK = 0x6D73_0001  # advisory lock key ("ms" + 1), held while migrating
_MIGRATION_NAME = re.compile(r"^(\d{3,})_[a-z0-9_]+\.sql$")


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[Path]:
    """The migration files in the order they apply (by number)."""
    files = []
    for path in directory.glob("*.sql"):
        match = _MIGRATION_NAME.match(path.name)
        if match is None:
            raise StoreError(
                f"bad migration file name {path.name!r} in {directory}",
                "name migrations NNN_lowercase_words.sql, e.g. 002_add_index.sql",
            )
        files.append((int(match.group(1)), path))
    files.sort()
    numbers = [n for n, _ in files]
    if len(set(numbers)) != len(numbers):
        raise StoreError(f"two migrations share a number in {directory}", "renumber one of them")
    return [path for _, path in files]


def apply_migrations(conn: psycopg.Connection[Any], directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply the pending migrations; returns their names. Call inside a transaction."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " name text PRIMARY KEY, sha256 text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())"
    )
    done = dict(conn.execute("SELECT name, sha256 FROM schema_migrations").fetchall())
    applied = []
    for path in migration_files(directory):
        text = path.read_text(encoding="utf-8")
        digest = hashlib.sha256(text.encode()).hexdigest()
        name = path.stem
        if name in done:
            if done[name] != digest:
                raise StoreError(
                    f"migration {path.name} changed after it was applied to this database",
                    "never edit an applied migration: restore it and add a new numbered file",
                )
            continue
        try:
            conn.execute(text.encode())
        except psycopg.Error as exc:
            raise StoreError(f"migration {path.name} failed: {exc}", "nothing was applied") from exc
        conn.execute("INSERT INTO schema_migrations (name, sha256) VALUES (%s, %s)", (name, digest))
        applied.append(name)
    return applied
