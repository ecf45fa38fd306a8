"""Page files a killed writer left staged: put in place or removed, as the database says.

A page write commits the database first and then renames its staged file into place
(:mod:`memserver.store.page_writes`). A process killed between the two leaves
``knowledge/<folder>/.<slug>.md.<random>.tmp`` behind, and one killed before its commit
may leave one too. :func:`settle_staged` looks at each such file under the page's lock
(so a live writer's file is never touched): when the database's current body of that
page is exactly its bytes, the write was committed and the file is renamed into place;
otherwise it was never committed and the file is removed. Either way the page file and
the index agree afterwards, and no write the database does not hold reaches a page file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from memserver.db.database import Database
from memserver.index.indexer import PAGE_LOCK_SPACE
from memserver.kb.layout import STAGED_SUFFIX, KBPaths, put_in_place, staged_target

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settled:
    """What became of one staged file: ``placed`` (committed, now the page file),
    ``removed`` (never committed) or ``busy`` (a live writer holds the page)."""

    page_id: str
    outcome: str


def settle_staged(paths: KBPaths, db: Database) -> list[Settled]:
    """Settle every staged page file of the knowledge base (see the module docstring)."""
    found = _staged_files(paths)
    if not found:
        return []
    settled: list[Settled] = []
    with db.connection() as conn:
        conn.autocommit = True
        try:
            for staged, target, page_id in found:
                settled.append(Settled(page_id, _settle(conn, staged, target, page_id)))
        finally:
            conn.autocommit = False
    for item in settled:
        if item.outcome != "busy":
            logger.warning("a write interrupted by a crash: %s (%s)", item.page_id, item.outcome)
    return settled


def _staged_files(paths: KBPaths) -> list[tuple[Path, Path, str]]:
    if not paths.knowledge.is_dir():
        return []
    out = []
    for folder in sorted(paths.knowledge.iterdir()):
        if not folder.is_dir() or folder.is_symlink():
            continue
        for staged in sorted(folder.glob(f".*{STAGED_SUFFIX}")):
            target = staged_target(staged)
            if target is not None and target.suffix == ".md":
                out.append((staged, target, f"{folder.name}/{target.stem}"))
    return out


def _settle(conn: psycopg.Connection[Any], staged: Path, target: Path, page_id: str) -> str:
    lock = (PAGE_LOCK_SPACE, page_id)
    row = conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", lock).fetchone()
    if not row or not row[0]:
        return "busy"
    try:
        body = conn.execute("SELECT body FROM pages WHERE id = %s", (page_id,)).fetchone()
        try:
            data = staged.read_bytes()
        except FileNotFoundError:
            return "busy"  # settled meanwhile by another process
        if body is not None and str(body[0]).encode("utf-8") == data:
            put_in_place(staged, target)
            return "placed"
        staged.unlink(missing_ok=True)
        return "removed"
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", lock)
