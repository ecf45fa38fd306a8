"""The knowledge base service: the one safe way to write a page, and reading it back.

Write path (``put_page``)
    validate (every problem at once) -> slug from the folder template -> render ->
    vectors for the page's texts (outside any lock or transaction: those the index holds
    by text hash, the new ones embedded, or left to the background embedder, below) ->
    take the page's lock ->
    compare ``base_version`` with the current version -> in one transaction: the pages
    row, a page_versions row, aliases, chunks, timeline entries, links, conflicts ->
    write the markdown atomically (temp file in the same folder, fsync, rename) ->
    commit. If anything fails after the file was written (the commit included), the
    previous bytes are put back (or the new file removed) before the lock is released,
    so the file and the index never disagree and no other writer sees the gap.

    The lock is a session-level advisory lock on the page id, taken as the write's
    transaction begins and held until after a possible file restore (a
    transaction-level lock would be released by the failed commit before the restore). If embedding fails, the page is
    still written and keyword-indexed with stale chunks, the result says
    ``degraded: ["embedding_unavailable"]`` and the next ``reindex`` embeds them.

Background embedding
    A server calls ``start_background_embedding``: with an embedder that runs a model
    (``Embedder.background``), puts, source scans (``index_sources``) and reindexes then
    write new texts stale, keyword-searchable at once, say
    ``degraded: ["embedding_pending"]``, and wake the ``BackgroundEmbedder``
    (:mod:`memserver.index.embedding`), which embeds them off the write path;
    ``embedding_pending()`` says whether it still has work.

Scope
    Readers pass ``folders`` (None = all folders). A page outside them behaves exactly
    like a missing page: the same NotFoundError.

Reindex (``reindex``): see :mod:`memserver.index.reindex`.
"""

from __future__ import annotations

import datetime
import json
import logging
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from memserver.clients.embed import Embedder, embedder_from_settings
from memserver.db.database import Database, redact_url
from memserver.errors import (
    EmbeddingError,
    NotFoundError,
    UserError,
    VersionConflictError,
)
from memserver.index import reindex as reindexing
from memserver.index import sources as source_index
from memserver.index.embedding import (
    EMBEDDING_PENDING,
    BackgroundEmbedder,
    stale_counts,
    vectors_for,
)
from memserver.index.indexer import (
    PAGE_LOCK_SPACE,
    PreparedPage,
    Vectors,
    adopt_chunk_format,
    prepare_page,
)
from memserver.index.indexer import write_pages as index_pages
from memserver.kb.layout import KBPaths, check_name, write_atomic
from memserver.kb.manifest import DEFAULT_MAX_SOURCE_BYTES, Manifest, SourceEntry
from memserver.kb.page import Page, check_page, page_slug, parse_page, render_page
from memserver.kb.schema import Schema, load_schema
from memserver.store import validity
from memserver.store.records import (
    ConflictRecord,
    PageSummary,
    PageWrite,
    PutResult,
    StoredPage,
    VersionInfo,
    not_found,
    split_id,
    visible_id,
)
from memserver.store.reviews import flag_for_review
from memserver.timeparse.mentions import mention_reader

if TYPE_CHECKING:
    from memserver.clients.config import Settings

logger = logging.getLogger(__name__)

EMBEDDING_UNAVAILABLE = "embedding_unavailable"
_DEADLOCK_RETRIES = 3

ReindexReport = reindexing.ReindexReport


def _put_back(path: Path, previous: bytes | None) -> None:
    """Undo a page file write: the previous bytes again, or no file."""
    try:
        if previous is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, previous)
    except OSError:
        logger.exception("could not restore %s after a failed write", path)


class KnowledgeBase:
    """Pages on disk plus their PostgreSQL index (see the module docstring)."""

    def __init__(
        self,
        paths: KBPaths,
        schema: Schema,
        db: Database,
        embedder: Embedder,
        max_source_bytes: int = DEFAULT_MAX_SOURCE_BYTES,
    ) -> None:
        self.paths = paths
        self.db = db
        self.embedder = embedder
        self.manifest = Manifest(paths, max_source_bytes)
        self._schema = schema
        self._schema_stamp = self._stamp()
        self._schema_lock = threading.Lock()
        self._sources_lock = threading.Lock()
        self.background: BackgroundEmbedder | None = None
        # Test hook: called with the page id after the file is written, before the commit.
        self.before_commit: Callable[[str], None] | None = None

    @classmethod
    def open(
        cls,
        kb_dir: Path | str,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        database_url: str | None = None,
        config: Path | str | None = None,
        check_embedding: bool = True,
    ) -> KnowledgeBase:
        """Open a knowledge base: schema, index database (migrated), embedder.

        ``settings`` default to ``load_settings(config)``. ``check_embedding=False``
        defers the embedding model check (``reindex --force`` switches models).
        """
        paths = KBPaths.of(kb_dir)
        schema = load_schema(paths.schema)
        if settings is None and (embedder is None or database_url is None):
            from memserver.clients.config import load_settings

            settings = load_settings(config)
        if embedder is None:
            assert settings is not None
            embedder = embedder_from_settings(settings.embedding)
        url = database_url or (settings.database_url if settings is not None else None)
        db = Database.open(paths, url)
        try:
            if check_embedding:
                db.ensure_embedding(embedder.name, embedder.dims)
            adopt_chunk_format(db)
        except BaseException:
            db.close()
            raise
        limit = settings.source_max_bytes if settings is not None else DEFAULT_MAX_SOURCE_BYTES
        return cls(paths, schema, db, embedder, limit)

    def close(self) -> None:
        if self.background is not None:
            self.background.stop()
        self.db.close()

    # ---------------------------------------------------------------- background embedding

    def start_background_embedding(self) -> bool:
        """Leave new texts to a background embedder from now on (servers call this); a
        no-op for an embedder that needs none (``Embedder.background``). Stale rows left
        by an earlier process are filled first. Returns whether one runs."""
        if self.background is None and self.embedder.background:
            self.background = BackgroundEmbedder(self.db, self.embedder).start()
        return self.background is not None

    @property
    def defers_embedding(self) -> bool:
        return self.background is not None and self.background.running

    def embedding_pending(self) -> bool:
        """Whether the background embedder still has texts to embed."""
        return self.defers_embedding and self.background is not None and self.background.pending

    def embedding_counts(self) -> tuple[int, int] | None:
        """(vectors the background embedder has written since it started, vectors still
        waiting in the index), for progress; None when no background embedder runs."""
        if self.background is None:
            return None
        with self.db.reading() as conn:
            waiting = sum(stale_counts(conn).values())
        return self.background.filled, waiting

    def embed_in_background(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Passages for ingest-side work that must wait for them (``kb_route``), embedded
        at the background embedder's low priority when one runs (so questions come
        first), else directly."""
        if self.background is not None and self.background.running:
            return self.background.embed(texts)
        return self.embedder.embed_passages(texts)

    def _embedding_left(self) -> None:
        if self.background is not None:
            self.background.notify()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- schema

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = self.paths.schema.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    @property
    def schema(self) -> Schema:
        """The schema, re-read when schema.yaml changes on disk."""
        stamp = self._stamp()
        with self._schema_lock:
            if stamp is not None and stamp != self._schema_stamp:
                self._schema = load_schema(self.paths.schema)
                self._schema_stamp = stamp
            return self._schema

    # ---------------------------------------------------------------- writing

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
        written = False
        previous: bytes | None = None
        try:
            with conn.transaction():
                # A session lock, taken inside the transaction: a rollback keeps it, and
                # ``_store`` releases it after a possible file restore.
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
                written = True
                write_atomic(path, new_bytes)
                if self.before_commit is not None:
                    self.before_commit(page_id)
        except BaseException:
            if written:
                _put_back(path, previous)
            raise
        return PutResult(page_id, version, current is None, write.degraded, str(path))

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

    # ---------------------------------------------------------------- reading

    def get_page(self, page_id: str, folders: Collection[str] | None = None) -> StoredPage:
        folder, slug = visible_id(page_id, folders)
        with self.db.reading() as conn:
            row = conn.execute(
                "SELECT version, body, effective_date, updated_at FROM pages WHERE id = %s",
                (page_id,),
            ).fetchone()
        if row is None:
            raise not_found(page_id)
        version, body, day, updated = row
        page = parse_page(body, source=page_id)
        return StoredPage(page_id, folder, slug, version, page, body, day, updated)

    def list_pages(
        self,
        folders: Collection[str] | None = None,
        *,
        folder: str | None = None,
        start: datetime.date | None = None,
        end: datetime.date | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[PageSummary], int]:
        """Pages newest effective date first (undated last), in ``[start, end)``, and the
        total number matching."""
        where = ["TRUE"]
        params: dict[str, Any] = {"limit": max(0, limit), "offset": max(0, offset)}
        if folders is not None:
            where.append("folder = ANY(%(folders)s)")
            params["folders"] = sorted(folders)
        if folder is not None:
            where.append("folder = %(folder)s")
            params["folder"] = folder
        if start is not None:
            where.append("effective_date >= %(start)s")
            params["start"] = start
        if end is not None:
            where.append("effective_date < %(end)s")
            params["end"] = end
        clause = " AND ".join(where)
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT id, folder, slug, title, type, effective_date, version, updated_at"
                f" FROM pages WHERE {clause}"
                " ORDER BY effective_date DESC NULLS LAST, title, id"
                " LIMIT %(limit)s OFFSET %(offset)s",
                params,
            ).fetchall()
            total_row = conn.execute(
                f"SELECT count(*) FROM pages WHERE {clause}", params
            ).fetchone()
        total = int(total_row[0]) if total_row else 0
        return [PageSummary(*row) for row in rows], total

    def titles(self, page_ids: Collection[str]) -> dict[str, str]:
        """``{id: title}`` of the given ids that are pages (any folder; for redaction)."""
        if not page_ids:
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT id, title FROM pages WHERE id = ANY(%s)", (list(page_ids),)
            ).fetchall()
        return {str(page_id): str(title) for page_id, title in rows}

    def pages_titled(self, names: Collection[str], folders: Collection[str]) -> dict[str, str]:
        """``{id: title}`` of the pages of ``folders`` titled one of ``names`` (any case;
        for redacting ``[[Title]]`` links)."""
        if not names or not folders:
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT id, title FROM pages WHERE folder = ANY(%s) AND lower(title) = ANY(%s)",
                (list(folders), sorted({n.lower() for n in names})),
            ).fetchall()
        return {str(page_id): str(title) for page_id, title in rows}

    def history(self, page_id: str, folders: Collection[str] | None = None) -> list[VersionInfo]:
        """Every stored version of a page, newest first (also for a deleted page)."""
        visible_id(page_id, folders)
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT version, created_at, coalesce(written_by, ''), content_hash"
                " FROM page_versions WHERE page_id = %s ORDER BY version DESC",
                (page_id,),
            ).fetchall()
        if not rows:
            raise not_found(page_id)
        return [VersionInfo(*row) for row in rows]

    def get_version(
        self, page_id: str, version: int, folders: Collection[str] | None = None
    ) -> str:
        """The markdown of one stored version."""
        visible_id(page_id, folders)
        with self.db.reading() as conn:
            row = conn.execute(
                "SELECT markdown FROM page_versions WHERE page_id = %s AND version = %s",
                (page_id, version),
            ).fetchone()
        if row is None:
            raise NotFoundError(
                f"page {page_id!r} has no version {version}", "list its versions with history"
            )
        return str(row[0])

    def stats(self) -> dict[str, Any]:
        """Sizes of the index: pages per folder, rows per table, stale rows, model."""
        info = self.db.embedding_info()
        with self.db.connection() as conn:
            folders = dict(
                conn.execute(
                    "SELECT folder, count(*) FROM pages GROUP BY folder ORDER BY folder"
                ).fetchall()
            )
            stale = stale_counts(conn)
            (versions,) = conn.execute("SELECT count(*) FROM page_versions").fetchone() or (0,)
            (open_conflicts,) = conn.execute(
                "SELECT count(*) FROM conflicts WHERE status = 'unresolved'"
            ).fetchone() or (0,)
        return {
            "kb": str(self.paths.root),
            "database": redact_url(self.db.url),
            "embedding": {
                "model": info[0] if info else None,
                "dims": info[1] if info else None,
                "embedder": self.embedder.name,
            },
            "pages": sum(folders.values()),
            "folders": {name: int(n) for name, n in folders.items()},
            "tables": self.db.counts(),
            "stale": stale,
            "page_versions": int(versions),
            "open_conflicts": int(open_conflicts),
        }

    # ---------------------------------------------------------------- reindex

    def reindex(
        self,
        force: bool = False,
        on_progress: Callable[[int, int], None] | None = None,
        *,
        defer_embedding: bool | None = None,
        on_embedding: Callable[[int, int], None] | None = None,
    ) -> ReindexReport:
        """Rebuild the index from knowledge/ and source/ (see :mod:`memserver.index.reindex`).

        New texts are left to the background embedder when one runs (or with
        ``defer_embedding``: ``up`` indexes before it starts the server); else they are
        embedded, after the files when ``on_embedding(done, total)`` follows it."""
        defer = self.defers_embedding if defer_embedding is None else defer_embedding
        report = reindexing.reindex(
            self.db,
            self.schema,
            self.paths,
            self.manifest,
            self.embedder,
            force=force,
            on_progress=on_progress,
            defer_embedding=defer,
            mentions=mention_reader(self.schema.tz),
            on_embedding=on_embedding,
        )
        self.rebuild_history(everything=force)
        if EMBEDDING_PENDING in report.degraded:
            self._embedding_left()
        return report

    def rebuild_history(self, *, everything: bool = False) -> int:
        """Replay the stored page versions into the validity intervals
        (:mod:`memserver.store.validity`): every page, or those whose history lags;
        returns how many pages were replayed."""
        fields = {f.name: f.date_field or "" for f in self.schema.folders}
        with self.db.connection() as conn, conn.transaction():
            ids = None
            if everything:
                rows = conn.execute("SELECT DISTINCT page_id FROM page_versions").fetchall()
                ids = [str(r[0]) for r in rows]
            return validity.rebuild(conn, self.manifest, ids, date_fields=fields)

    def index_sources(self, entries: Sequence[SourceEntry]) -> source_index.SourcesReport:
        """Bring the source index in line with a scan of ``source/`` (``entries``: every
        source the manifest knows): new and changed notes are chunked and keyword-indexed
        now, removed ones leave the index (``source_pending`` calls this on every scan)."""
        with self._sources_lock:
            report = source_index.index_sources(
                self.db,
                self.paths,
                self.manifest,
                self.embedder,
                entries=entries,
                defer_embedding=self.defers_embedding,
                mentions=mention_reader(self.schema.tz),
            )
        if EMBEDDING_PENDING in report.degraded:
            self._embedding_left()
        return report


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
