"""Writing a page: the one safe way, and writing an old version again.

Write path (``put_page``)
    validate (every problem at once) -> slug from the folder template -> render ->
    vectors for the page's texts (outside any lock or transaction: those the index holds
    by text hash, the new ones embedded, or left to the background embedder,
    :mod:`memserver.store.background_embedding`) ->
    take the page's lock ->
    compare ``base_version`` with the current version -> in one transaction: the pages
    row, a page_versions row, aliases, chunks, timeline entries, links, conflicts ->
    stage the markdown (a temp file beside the page, synced) -> commit -> rename the
    staged file into place -> release the lock.

    The database commits first, so the page file never holds a write the database
    does not: a failure before the commit (the commit included) removes the staged file
    and leaves the page as it was. A process killed between the commit and the rename
    leaves the staged file behind; :func:`memserver.store.page_files.settle_staged`
    (run whenever a knowledge base is opened) puts it in place when the database holds
    exactly those bytes and removes it otherwise, so after any crash the file and the
    index agree.

    The lock is a session-level advisory lock on the page id, taken as the write's
    transaction begins and held until the file is in place (a transaction-level lock
    would be released by the commit before the rename).
    If embedding fails, the page is still written and keyword-indexed with stale chunks,
    the result says ``degraded: ["embedding_unavailable"]`` and the next ``reindex``
    embeds them.

:class:`PageWrites` is the write side of :class:`~memserver.store.knowledge_base.KnowledgeBase`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.types.json import Jsonb

from memserver.errors import (
    EmbeddingError,
    NotFoundError,
    UserError,
    VersionConflictError,
)
from memserver.index.embedding import EMBEDDING_PENDING, vectors_for
from memserver.index.indexer import PAGE_LOCK_SPACE, PreparedPage, Vectors, prepare_page
from memserver.index.indexer import write_pages as index_pages
from memserver.kb.layout import KBPaths, check_name, put_in_place, stage
from memserver.kb.manifest import Manifest
from memserver.kb.page import Page, check_page, page_slug, parse_page, render_page
from memserver.store import validity
from memserver.store.background_embedding import BackgroundEmbedding
from memserver.store.records import ConflictRecord, PageWrite, PutResult, split_id
from memserver.store.reviews import flag_for_review, settle_open

if TYPE_CHECKING:
    from memserver.kb.schema import Schema

logger = logging.getLogger(__name__)

EMBEDDING_UNAVAILABLE = "embedding_unavailable"
_DEADLOCK_RETRIES = 3


class PageWrites(BackgroundEmbedding):
    """Page writes and restores (see the module docstring)."""

    paths: KBPaths
    manifest: Manifest
    # Test hook: called with (step, page id) at each step of a write: "staged" (the file
    # staged, before the commit), "committed" (before the rename), "in_place" (after it).
    write_step: Callable[[str, str], None] | None

    if TYPE_CHECKING:  # the rest of KnowledgeBase: its schema, and PageReads

        @property
        def schema(self) -> Schema: ...

        def get_version(
            self, page_id: str, version: int, folders: Collection[str] | None = None
        ) -> str: ...

    def put_page(
        self,
        folder: str,
        page: Page,
        base_version: int | None,
        *,
        written_by: str = "",
        slug: str | None = None,
        conflicts: Iterable[ConflictRecord | Mapping[str, Any]] = (),
        note: str | None = None,
        review: str | None = None,
    ) -> PutResult:
        """Create (``base_version`` None) or update (``base_version`` = the current
        version) a page; see the module docstring for the guarantees. ``review`` (why)
        lists the new version for a person's review (:mod:`memserver.store.reviews`)."""
        schema = self.schema
        spec = schema.folder(folder)
        check_page(page, spec)
        slug = check_name(slug, "slug") if slug else page_slug(page, spec)
        path = self.paths.page_path(folder, slug)
        records = tuple(ConflictRecord.of(c) for c in conflicts)
        prepared = prepare_page(f"{folder}/{slug}", spec, slug, page, render_page(page, spec))
        degraded: tuple[str, ...]
        vectors: Vectors | None
        defer = self.defers_embedding
        try:
            found = vectors_for(self.db, self.embedder, prepared.texts(), embed=not defer)
            vectors = found.vectors
            degraded = tuple(self.embedder.degraded)
            if found.missing:
                degraded += (EMBEDDING_PENDING,)
        except EmbeddingError as exc:
            logger.warning("storing %s without embeddings: %s", prepared.id, exc)
            vectors = None
            degraded = (EMBEDDING_UNAVAILABLE,)
        self.db.ensure_embedding(self.embedder.name, self.embedder.dims)
        write = PageWrite(
            prepared=prepared,
            path=path,
            base_version=base_version,
            vectors=vectors,
            written_by=written_by,
            note=note,
            conflicts=records,
            degraded=degraded,
            review=(review or "").strip() or None,
        )
        for attempt in range(_DEADLOCK_RETRIES):
            try:
                result = self._store(write)
                if EMBEDDING_PENDING in degraded:
                    self._embedding_left()
                return result
            except psycopg.errors.DeadlockDetected:
                # links rows shared with a concurrent writer; everything was rolled back
                if attempt == _DEADLOCK_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def _store(self, write: PageWrite) -> PutResult:
        lock = (PAGE_LOCK_SPACE, write.prepared.id)
        with self.db.connection() as conn:
            try:
                return self._store_locked(conn, write, lock)
            finally:
                try:
                    conn.rollback()  # nothing is pending here; leaves any failed state
                    _unlock(conn, lock)
                except psycopg.Error:
                    conn.close()  # ending the session releases its locks; the pool drops it

    def _store_locked(
        self, conn: psycopg.Connection[Any], write: PageWrite, lock: tuple[int, str]
    ) -> PutResult:
        prepared, path, base_version = write.prepared, write.path, write.base_version
        page_id = prepared.id
        new_bytes = prepared.markdown.encode("utf-8")
        staged: Path | None = None
        try:
            with conn.transaction():
                # A session lock, taken inside the transaction: it outlives the commit
                # (the file is renamed after it), and ``_store`` releases it.
                conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", lock)
                previous = path.read_bytes() if path.exists() else None
                current, current_hash, latest = conn.execute(
                    "SELECT (SELECT version FROM pages WHERE id = %(id)s),"
                    " (SELECT content_hash FROM pages WHERE id = %(id)s),"
                    " (SELECT coalesce(max(version), 0) FROM page_versions"
                    " WHERE page_id = %(id)s)",
                    {"id": page_id},
                ).fetchone() or (None, None, 0)
                if current is None and previous is not None:
                    raise UserError(
                        f"{page_id} exists on disk but is not in the index",
                        "run `memserver reindex`, then read the page and update it",
                    )
                if base_version != current:
                    if current is None:
                        raise NotFoundError(
                            f"no page {page_id!r} to update (base_version {base_version})",
                            "omit base_version to create it",
                        )
                    raise VersionConflictError(page_id, base_version, current)
                self._insert_conflicts(conn, prepared, write.conflicts)
                if current_hash == prepared.content_hash and previous == new_bytes:
                    assert current is not None
                    return PutResult(page_id, current, False, (), str(path))
                version = max(int(latest), current or 0) + 1
                index_pages(conn, [(prepared, version)], write.vectors, self.schema)
                conn.execute(
                    "INSERT INTO page_versions (page_id, version, markdown, content_hash,"
                    " written_by, note) VALUES (%s, %s, %s, %s, %s, %s)",
                    (
                        page_id,
                        version,
                        prepared.markdown,
                        prepared.content_hash,
                        write.written_by,
                        write.note,
                    ),
                )
                validity.record_write(
                    conn,
                    page_id,
                    prepared.folder.name,
                    version,
                    prepared.page,
                    prepared.folder.date_field,
                    self.manifest,
                )
                if write.review is not None:
                    flag_for_review(
                        conn, prepared.id, prepared.folder.name, version, current, write
                    )
                staged = stage(path, new_bytes)
                self._step("staged", page_id)
        except BaseException:
            if staged is not None:
                staged.unlink(missing_ok=True)
            raise
        # Committed: from here on the page is this version, whatever happens to this
        # process (a staged file left by a kill is put in place by settle_staged).
        self._step("committed", page_id)
        try:
            put_in_place(staged, path)
        except OSError:
            logger.exception(
                "%s version %d is stored but its file could not be renamed into place;"
                " it is put there when the knowledge base is next opened",
                page_id,
                version,
            )
        self._step("in_place", page_id)
        return PutResult(page_id, version, current is None, write.degraded, str(path))

    def _step(self, step: str, page_id: str) -> None:
        if self.write_step is not None:
            self.write_step(step, page_id)

    @staticmethod
    def _insert_conflicts(
        conn: psycopg.Connection[Any], prepared: PreparedPage, records: Sequence[ConflictRecord]
    ) -> None:
        if not records:
            return
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO conflicts (page_id, folder, field, old_value, new_value,"
                " old_source, new_source, status, note)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        prepared.id,
                        prepared.folder.name,
                        r.field,
                        Jsonb(_json_value(r.old_value)),
                        Jsonb(_json_value(r.new_value)),
                        r.old_source,
                        r.new_source,
                        r.status,
                        r.note,
                    )
                    for r in records
                ],
            )
        for r in records:
            if r.status == "resolved":
                settle_open(conn, prepared.id, r.field, r.new_source, r.new_value)

    def restore(self, page_id: str, version: int, *, written_by: str = "") -> PutResult:
        """Write version ``version`` of a page again, as its newest version."""
        folder, slug = split_id(page_id)
        markdown = self.get_version(page_id, version)
        page = parse_page(markdown, source=f"{page_id} version {version}")
        with self.db.connection() as conn:
            row = conn.execute("SELECT version FROM pages WHERE id = %s", (page_id,)).fetchone()
        return self.put_page(
            folder,
            page,
            row[0] if row else None,
            written_by=written_by,
            slug=slug,
            note=f"restore of version {version}",
        )


def _unlock(conn: psycopg.Connection[Any], lock: tuple[int, str]) -> None:
    """Release a page's session lock in one round trip (no transaction around it)."""
    conn.autocommit = True
    try:
        conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", lock)
    finally:
        conn.autocommit = False


def _json_value(value: Any) -> Any:
    """A conflict value as JSON (dates and other objects as text)."""
    return json.loads(json.dumps(value, default=str))
