"""The knowledge base service: the one safe way to write a page, and reading it back.

:class:`KnowledgeBase` opens a knowledge base (schema, index database, embedder), holds
its schema (re-read when schema.yaml changes) and is made of three parts:

- the write path, ``put_page`` and ``restore``: :mod:`memserver.store.page_writes`
  (a write a crash cut off is settled when the knowledge base is opened:
  :mod:`memserver.store.page_files`);
- the reads, within a reader's folders: :mod:`memserver.store.page_reads`;
- background embedding: :mod:`memserver.store.background_embedding`.

Reindex (``reindex``): see :mod:`memserver.index.reindex`; source scans
(``index_sources``): :mod:`memserver.index.sources`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memserver.clients.embed import Embedder, embedder_from_settings
from memserver.db.database import Database
from memserver.index import reindex as reindexing
from memserver.index import sources as source_index
from memserver.index.embedding import EMBEDDING_PENDING
from memserver.index.indexer import adopt_chunk_format
from memserver.kb.layout import KBPaths
from memserver.kb.manifest import DEFAULT_MAX_SOURCE_BYTES, Manifest, SourceEntry
from memserver.kb.schema import Schema, load_schema
from memserver.store import validity
from memserver.store.page_files import settle_staged
from memserver.store.page_reads import PageReads
from memserver.store.page_writes import PageWrites
from memserver.timeparse.mentions import mention_reader

if TYPE_CHECKING:
    from memserver.clients.config import Settings

ReindexReport = reindexing.ReindexReport


class KnowledgeBase(PageWrites, PageReads):
    """Pages on disk plus their PostgreSQL index: the write path (:class:`PageWrites`,
    with :class:`~memserver.store.background_embedding.BackgroundEmbedding`), the reads
    (:class:`PageReads`), reindex and source scans (see the module docstring)."""

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
        self.background = None
        self.write_step = None

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
            settle_staged(paths, db)  # a write a crash cut off: file and index agree again
        except BaseException:
            db.close()
            raise
        limit = settings.source_max_bytes if settings is not None else DEFAULT_MAX_SOURCE_BYTES
        return cls(paths, schema, db, embedder, limit)

    def close(self) -> None:
        if self.background is not None:
            self.background.stop()
        self.db.close()

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
