"""``memserver reindex [--force]``: rebuild the index from the files.

The markdown under ``knowledge/`` is the system of record. Reindex

1. indexes every page file whose content hash differs from the indexed one (all of them
   with ``force``, or when the index was chunked by another version of ``chunk_page``:
   ``indexer.chunk_formats`` in index_meta): a worker thread parses, validates and embeds (64 texts a call) the
   next batch of 64 pages while the previous batch is written in one transaction. A
   file edited by hand gets a new page_versions row (``written_by`` "reindex"); a page
   already in the history with the same content keeps its version.
2. removes the index rows of pages whose files are gone (their history stays);
3. mirrors ``source/`` into source_docs/source_chunks (``memserver.index.sources``; all
   of them again when they were cut into windows another way);
4. embeds every row still marked stale (written while the embedder was down), unless
   ``defer_embedding``: then new texts are left stale for the background embedder
   (``memserver.index.embedding``) and the index is keyword-searchable at once.

Texts whose vector the index already holds (by text hash, any page or source) are never
embedded again, so a reindex that re-cuts unchanged pages, or a ``--force`` with the
same model, embeds nothing.

A page that does not parse or fit its folder is reported with every problem and left
as it was in the index: a page is indexed whole or not at all. Each page is written
under the same advisory lock as ``put_page``; a file rewritten by ``put_page`` after it
was read is left to that put. Running it twice in a row changes nothing the second
time. With ``force`` the embedding model recorded in the index is switched to the
configured one first (all vectors cleared), which is how a model change is applied.

Bulk loads (from BULK_PAGES changed pages, and at least half the index; or every source
re-cut because the way sources are cut changed) drop the HNSW
indexes and the text-search GIN indexes no write reads (``indexer.SEARCH_ONLY_INDEXES``)
first and rebuild them at the end, which is several times faster than growing them row
by row; their definitions wait in index_meta, so a reindex that dies mid-load leaves them
to be rebuilt by the next one. Meanwhile searches scan without them.
"""

from __future__ import annotations

import hashlib
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from memserver.clients.embed import Embedder
from memserver.db.database import Database
from memserver.errors import EmbeddingError, PageValidationError, Problem
from memserver.graph.linker import backfill_names
from memserver.index.embedding import EMBEDDING_PENDING, embed_stale, stale_counts, vectors_for
from memserver.index.indexer import (
    PAGE_LOCK_SPACE,
    SOURCE_CHUNKS,
    PreparedPage,
    Vectors,
    chunk_format_current,
    delete_pages,
    prepare_page,
    record_chunk_format,
    restore_search_indexes,
    search_indexes_suspended,
    write_pages,
)
from memserver.index.sources import index_sources
from memserver.kb.layout import KBPaths, name_problem
from memserver.kb.manifest import Manifest, Status
from memserver.kb.page import check_page, parse_page
from memserver.kb.schema import Schema
from memserver.timeparse.mentions import MentionReader

PAGE_BATCH = 128  # pages per transaction (64: ~10% slower at 10,000 pages, bench/)
# From this many changed pages (and at least half as many as are indexed) the HNSW
# indexes are dropped during the load and rebuilt after it.
BULK_PAGES = 250
EMBEDDING_UNAVAILABLE = "embedding_unavailable"


@dataclass(frozen=True)
class FailedPage:
    """A page file reindex skipped, and why (every problem)."""

    path: str  # relative to the knowledge base root
    problems: tuple[Problem, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "problems": [p.as_dict() for p in self.problems]}


@dataclass(frozen=True)
class ReindexReport:
    indexed: int
    unchanged: int
    removed: int
    failed: tuple[FailedPage, ...]
    sources_indexed: int
    sources_unchanged: int
    sources_removed: int
    sources_unreadable: tuple[tuple[str, str], ...]
    embedded: int  # stale rows embedded at the end
    degraded: tuple[str, ...]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "indexed": self.indexed,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "failed": [f.to_dict() for f in self.failed],
            "sources_indexed": self.sources_indexed,
            "sources_unchanged": self.sources_unchanged,
            "sources_removed": self.sources_removed,
            "sources_unreadable": [{"path": p, "error": e} for p, e in self.sources_unreadable],
            "embedded": self.embedded,
            "degraded": list(self.degraded),
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class _File:
    id: str
    folder: str
    slug: str
    path: Path


class _Progress:
    def __init__(self, callback: Callable[[int, int], None] | None, total: int) -> None:
        self.callback = callback
        self.total = total
        self.done = 0

    def __call__(self, n: int) -> None:
        self.done += n
        if self.callback is not None and n:
            self.callback(min(self.done, self.total), self.total)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def page_files(paths: KBPaths, schema: Schema) -> tuple[list[_File], list[FailedPage]]:
    """``knowledge/<folder>/<slug>.md`` files of the schema's folders, and the files that
    cannot be pages (unknown folder, unsafe name). Hidden files are temp files: skipped."""
    files: list[_File] = []
    failed: list[FailedPage] = []
    if not paths.knowledge.is_dir():
        return files, failed
    for folder_dir in sorted(paths.knowledge.iterdir()):
        if folder_dir.name.startswith(".") or not folder_dir.is_dir():
            continue
        entries = sorted(
            p for p in folder_dir.glob("*.md") if not p.name.startswith(".") and p.is_file()
        )
        folder = folder_dir.name
        for path in entries:
            rel = path.relative_to(paths.root).as_posix()
            if folder not in schema.folder_names:
                problem = Problem(
                    "folder",
                    f"folder {folder!r} is not in schema.yaml",
                    f"add it to the schema or move the page into one of: "
                    f"{', '.join(schema.folder_names)}",
                )
                failed.append(FailedPage(rel, (problem,)))
                continue
            why = name_problem(path.stem)
            if why is not None:
                problem = Problem("file name", f"{path.name!r} cannot be a slug: {why}")
                failed.append(FailedPage(rel, (problem,)))
                continue
            files.append(_File(f"{folder}/{path.stem}", folder, path.stem, path))
    return files, failed


def _switch_model(db: Database, embedder: Embedder) -> None:
    if db.embedding_info() != (embedder.name, embedder.dims):
        db.reset_embedding(embedder.name, embedder.dims)
    db.ensure_embedding(embedder.name, embedder.dims)


def _changed(
    files: Sequence[_File],
    indexed: dict[str, str],
    paths: KBPaths,
    force: bool,
    progress: _Progress,
) -> tuple[list[tuple[_File, str]], int, list[FailedPage]]:
    """The files whose content differs from the index: ((file, text) pairs, unchanged
    count, unreadable files)."""
    changed: list[tuple[_File, str]] = []
    failed: list[FailedPage] = []
    unchanged = 0
    for file in files:
        try:
            data = file.path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            rel = file.path.relative_to(paths.root).as_posix()
            failed.append(FailedPage(rel, (Problem("file", f"cannot read it: {exc}"),)))
            progress(1)
            continue
        if not force and indexed.get(file.id) == _sha256(data):
            unchanged += 1
            progress(1)
            continue
        changed.append((file, text))
    return changed, unchanged, failed


@dataclass(frozen=True)
class _Batch:
    pages: list[PreparedPage]
    failed: list[FailedPage]
    vectors: Vectors | None


def _prepared_batches(
    changed: Sequence[tuple[_File, str]],
    schema: Schema,
    paths: KBPaths,
    db: Database,
    embedder: Embedder,
    embed: bool,
) -> Iterator[_Batch]:
    """Parse, validate and embed (``embed``; else only reuse vectors) the changed files,
    PAGE_BATCH at a time."""
    for start in range(0, len(changed), PAGE_BATCH):
        pages: list[PreparedPage] = []
        failed: list[FailedPage] = []
        for file, text in changed[start : start + PAGE_BATCH]:
            rel = file.path.relative_to(paths.root).as_posix()
            spec = schema.folder(file.folder)
            try:
                page = parse_page(text, source=rel)
                check_page(page, spec)
            except PageValidationError as exc:
                failed.append(FailedPage(rel, exc.problems))
                continue
            pages.append(prepare_page(file.id, spec, file.slug, page, text))
        vectors: Vectors | None
        try:
            texts = [t for p in pages for t in p.texts()]
            vectors = vectors_for(db, embedder, texts, embed=embed).vectors
        except EmbeddingError:
            vectors = None
        yield _Batch(pages, failed, vectors)


T = TypeVar("T")


def ahead(items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """``items`` produced by a worker thread up to ``depth`` items ahead of the consumer,
    so reading, parsing and embedding the next batch overlaps writing this one (the
    database work runs in the server process, and waiting for it releases the GIL)."""
    slots: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(value: tuple[bool, Any]) -> bool:
        while not stop.is_set():
            try:
                slots.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((True, done))
        except BaseException as exc:
            put((False, exc))

    worker = threading.Thread(target=work, name="reindex-prepare", daemon=True)
    worker.start()
    try:
        while True:
            ok, item = slots.get()
            if not ok:
                raise item
            if item is done:
                return
            yield item
    finally:
        stop.set()
        worker.join()


def _lock(conn: Any, ids: Sequence[str]) -> None:
    """The pages' write locks, in id order (two reindexes cannot deadlock)."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(%s, hashtext(id))"
        " FROM (SELECT unnest(%s::text[]) AS id ORDER BY 1) AS ids",
        (PAGE_LOCK_SPACE, sorted(ids)),
    )


def _write_batch(
    db: Database,
    schema: Schema,
    paths: KBPaths,
    batch: Sequence[PreparedPage],
    vectors: Vectors | None,
) -> int:
    """Index one batch of pages in one transaction; returns how many were written."""
    ids = [p.id for p in batch]
    with db.transaction() as conn:
        _lock(conn, ids)
        latest = {
            pid: (version, digest)
            for pid, version, digest in conn.execute(
                "SELECT DISTINCT ON (page_id) page_id, version, content_hash FROM page_versions"
                " WHERE page_id = ANY(%s) ORDER BY page_id, version DESC",
                (ids,),
            ).fetchall()
        }
        rows: list[tuple[PreparedPage, int]] = []
        history: list[tuple[str, int, str, str]] = []
        for p in batch:
            try:
                now = paths.page_path(p.folder.name, p.slug).read_bytes()
            except OSError:
                continue  # deleted meanwhile: the next reindex removes it
            if _sha256(now) != p.content_hash:
                continue  # rewritten meanwhile (put_page indexed it, or the next reindex will)
            last = latest.get(p.id)
            if last is not None and last[1] == p.content_hash:
                version = last[0]
            else:
                version = (last[0] if last else 0) + 1
                history.append((p.id, version, p.markdown, p.content_hash))
            rows.append((p, version))
        write_pages(conn, rows, vectors, schema)
        if history:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO page_versions (page_id, version, markdown, content_hash,"
                    " written_by, note) VALUES (%s, %s, %s, %s, 'reindex', 'read from disk')",
                    history,
                )
    return len(rows)


def _remove(db: Database, paths: KBPaths, ids: Sequence[str]) -> int:
    """Drop the index rows of pages whose files are gone (checked again under the lock)."""
    if not ids:
        return 0
    with db.transaction() as conn:
        _lock(conn, ids)
        gone = []
        for page_id in ids:
            folder, slug = page_id.split("/", 1)
            try:
                exists = paths.page_path(folder, slug).exists()
            except Exception:  # a row whose id is no longer a valid path: drop it
                exists = False
            if not exists:
                gone.append(page_id)
        return delete_pages(conn, gone)


def _is_bulk(changed: int, indexed: int) -> bool:
    return changed >= BULK_PAGES and changed * 2 >= indexed


def _index_pages(
    db: Database,
    schema: Schema,
    paths: KBPaths,
    embedder: Embedder,
    changed: Sequence[tuple[_File, str]],
    failed: list[FailedPage],
    degraded: list[str],
    progress: _Progress,
    embed: bool,
) -> int:
    """Index the changed files (prepared one batch ahead); returns how many were written."""
    written = 0
    analyzed = _analyze(db, 0, 0)
    for batch in ahead(_prepared_batches(changed, schema, paths, db, embedder, embed)):
        failed.extend(batch.failed)
        if batch.vectors is None and batch.pages and EMBEDDING_UNAVAILABLE not in degraded:
            degraded.append(EMBEDDING_UNAVAILABLE)
        written += _write_batch(db, schema, paths, batch.pages, batch.vectors)
        analyzed = _analyze(db, written, analyzed)
        progress(len(batch.pages) + len(batch.failed))
    return written


# Tables the batch writes look pages and edges up in.
_LOOKUP_TABLES = "pages, page_aliases, links, page_versions"


def _analyze(db: Database, written: int, analyzed: int) -> int:
    """Refresh the planner's statistics of the lookup tables each time the pages
    written in this run double (from PAGE_BATCH on); returns the count last analysed.

    A load into an empty index outgrows its statistics long before autovacuum looks:
    planned for the empty tables, the per-batch lookups scan whole tables (a DELETE
    of a batch's edges took 40 ms at 10,000 pages instead of well under one)."""
    if written < PAGE_BATCH or written < 2 * analyzed:
        return analyzed
    with db.transaction() as conn:
        conn.execute(f"ANALYZE {_LOOKUP_TABLES}")
    return written


def _counted(
    db: Database, on_embedding: Callable[[int, int], None] | None
) -> Callable[[int], None] | None:
    """``embed_stale``'s ``on_batch`` as ``on_embedding(done, total)``, told the total
    first (the vectors waiting now)."""
    if on_embedding is None:
        return None
    with db.connection() as conn:
        total = sum(stale_counts(conn).values())
    done = 0
    on_embedding(0, total)

    def batch(rows: int) -> None:
        nonlocal done
        done += rows
        on_embedding(done, max(total, done))

    return batch


def reindex(
    db: Database,
    schema: Schema,
    paths: KBPaths,
    manifest: Manifest,
    embedder: Embedder,
    *,
    force: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
    defer_embedding: bool = False,
    mentions: MentionReader | None = None,
    on_embedding: Callable[[int, int], None] | None = None,
) -> ReindexReport:
    """See the module docstring. ``on_progress(done, total)`` counts files (pages and
    sources) handled; ``mentions`` reads the dates a source's sentences mention. With
    ``on_embedding(done, total)`` the new texts are written stale first and embedded
    after the files, in one pass counted in vectors (rows' vector columns)."""
    embed = not defer_embedding and on_embedding is None
    started = time.perf_counter()
    if force:
        _switch_model(db, embedder)
    else:
        db.ensure_embedding(embedder.name, embedder.dims)
    files, failed = page_files(paths, schema)
    entries = manifest.scan().entries if paths.source.is_dir() else ()
    present = [e for e in entries if e.status is not Status.REMOVED]
    progress = _Progress(on_progress, len(files) + len(failed) + len(present))
    progress(len(failed))
    with db.transaction() as conn:
        backfill_names(conn)  # rows indexed before their normalised names were stored
    with db.connection() as conn:
        indexed: dict[str, str] = dict(
            conn.execute("SELECT id, content_hash FROM pages").fetchall()
        )
        rechunk = not chunk_format_current(conn)
        resource = not chunk_format_current(conn, SOURCE_CHUNKS)
    changed, unchanged, unreadable = _changed(files, indexed, paths, force or rechunk, progress)
    failed.extend(unreadable)
    restore_search_indexes(db)  # left suspended by a reindex that died mid-load
    degraded: list[str] = []
    # Every source re-cut replaces all of source_chunks: with live HNSW indexes each new
    # row joins the graph and the old one stays in it, dead, until a vacuum, and scans find
    # fewer of the true nearest (bench/eval_search.py sources: hybrid R@5 0.98 -> 0.95 right
    # after such a reindex, 0.98 again after VACUUM). Rebuilt, the graphs hold live rows.
    bulk = _is_bulk(len(changed), len(indexed)) or (resource and bool(present))
    with search_indexes_suspended(db, bulk):
        written = _index_pages(
            db, schema, paths, embedder, changed, failed, degraded, progress, embed
        )
        if rechunk:
            record_chunk_format(db)
        removed = _remove(db, paths, sorted(set(indexed) - {f.id for f in files}))
        sources = index_sources(
            db,
            paths,
            manifest,
            embedder,
            force=force or resource,
            entries=present,
            on_progress=progress,
            defer_embedding=not embed,
            mentions=mentions,
        )
        if resource:
            record_chunk_format(db, SOURCE_CHUNKS)
        for reason in sources.degraded:
            if reason not in degraded:
                degraded.append(reason)
        embedded = 0
        if defer_embedding:
            with db.connection() as conn:
                if any(stale_counts(conn).values()):
                    degraded.append(EMBEDDING_PENDING)
        elif EMBEDDING_UNAVAILABLE not in degraded:
            try:
                embedded = embed_stale(db, embedder, on_batch=_counted(db, on_embedding))
            except EmbeddingError:
                degraded.append(EMBEDDING_UNAVAILABLE)
    return ReindexReport(
        indexed=written,
        unchanged=unchanged,
        removed=removed,
        failed=tuple(failed),
        sources_indexed=sources.indexed,
        sources_unchanged=sources.unchanged,
        sources_removed=sources.removed,
        sources_unreadable=sources.unreadable,
        embedded=embedded,
        degraded=tuple(degraded),
        seconds=time.perf_counter() - started,
    )
