"""A page's index rows (pages, aliases, chunks, timeline entries, links), shared by
``KnowledgeBase.put_page`` and ``reindex``.

Two phases, so the slow part never runs inside a transaction:

1. ``prepare_page`` (pure) turns a page into the rows it needs and the texts to embed;
   ``embed_texts`` embeds a batch of texts (deduplicated, ``EMBED_BATCH`` a call),
   outside any transaction (``embedding.vectors_for`` first takes the vectors the index
   already holds, by text hash).
2. ``write_pages`` stores the rows of one or more prepared pages in the caller's
   transaction, with the vectors found for their texts. A text without a vector (the
   embedder was down) is stored with ``embedding`` NULL and ``stale`` true, still
   keyword-searchable; :mod:`memserver.index.embedding` fills those in later (the
   background embedder, or ``reindex``) and finds the vectors the index already holds.

A timeline entry is stored twice: as a timeline_entries row (dated, for the timeline arm
and ``kb_timeline``) and as a chunk of its page (for the keyword and vector arms); only
the chunk has a vector.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from memserver.clients.embed import Embedder
from memserver.db.database import Database
from memserver.db.pool import unbounded
from memserver.db.vectors import VECTOR_TABLES
from memserver.graph import linker
from memserver.kb.chunks import CHUNK_FORMAT, SOURCE_FORMAT
from memserver.kb.page import (
    Chunk,
    Page,
    chunk_page,
    content_hash,
    effective_date,
)
from memserver.kb.schema import FolderSpec, Schema
from memserver.kb.words import normalize_name

EMBED_BATCH = 64  # texts per embedder call
# Advisory lock space of pages: (PAGE_LOCK_SPACE, hashtext(page id)), taken by every
# writer of a page (put_page, reindex).
PAGE_LOCK_SPACE = 0x6D73
Conn = psycopg.Connection[Any]
Vectors = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class PreparedPage:
    """Everything the index stores for one page, computed without I/O."""

    id: str
    folder: FolderSpec
    slug: str
    page: Page
    markdown: str
    content_hash: str
    effective_date: datetime.date | None
    chunks: tuple[Chunk, ...]

    def texts(self) -> list[str]:
        """The texts to embed for this page (its chunks')."""
        return [c.text for c in self.chunks]


def prepare_page(
    page_id: str, folder: FolderSpec, slug: str, page: Page, markdown: str
) -> PreparedPage:
    """The rows of a (validated) page whose file holds ``markdown``."""
    return PreparedPage(
        id=page_id,
        folder=folder,
        slug=slug,
        page=page,
        markdown=markdown,
        content_hash=content_hash(markdown),
        effective_date=effective_date(page, folder, slug),
        chunks=tuple(chunk_page(page)),
    )


def text_hash(text: str) -> bytes:
    """The SHA-256 of a chunk's UTF-8 text, stored with it (``text_hash``): a vector is
    found again by it (:mod:`memserver.index.embedding`)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def embed_texts(
    embedder: Embedder, texts: Iterable[str], batch_size: int = EMBED_BATCH
) -> dict[str, np.ndarray]:
    """Vectors for ``texts`` (each distinct text embedded once); EmbeddingError passes up.

    Texts go to the embedder shortest first, so each call holds texts of similar length
    (a model pads a batch to its longest text)."""
    unique = sorted(dict.fromkeys(texts), key=len)
    out: dict[str, np.ndarray] = {}
    for start in range(0, len(unique), batch_size):
        batch = unique[start : start + batch_size]
        vectors = embedder.embed_passages(batch)
        out.update(zip(batch, vectors, strict=True))
    return out


# --------------------------------------------------------------------------- writing


def write_pages(
    conn: Conn,
    pages: Sequence[tuple[PreparedPage, int]],
    vectors: Vectors | None,
    schema: Schema,
) -> None:
    """Store ``(prepared page, version)`` pairs in the caller's transaction.

    Replaces each page's row, aliases, chunks, timeline entries and outgoing links, then
    re-matches the links that name it (``linker``). Rows go in with one multi-row
    statement per table for the whole batch.
    """
    if not pages:
        return
    ids = [p.id for p, _ in pages]
    previous = linker.page_names_many(conn, ids)  # the names of the pages already indexed
    existing = set(previous)
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO pages (id, folder, slug, title, type, fields, effective_date, version,"
            " content_hash, body, title_norm, slug_norm)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, type = EXCLUDED.type,"
            " title_norm = EXCLUDED.title_norm, slug_norm = EXCLUDED.slug_norm,"
            " fields = EXCLUDED.fields, effective_date = EXCLUDED.effective_date,"
            " version = EXCLUDED.version, content_hash = EXCLUDED.content_hash,"
            " body = EXCLUDED.body, updated_at = now()",
            [
                (
                    p.id,
                    p.folder.name,
                    p.slug,
                    p.page.title,
                    p.page.type,
                    Jsonb(dict(p.page.fields)),
                    p.effective_date,
                    version,
                    p.content_hash,
                    p.markdown,
                    normalize_name(p.page.title),
                    normalize_name(p.slug),
                )
                for p, version in pages
            ],
        )
        # every title a page has had (redaction hides a renamed page by its old one too)
        cur.executemany(
            "INSERT INTO page_titles (page_id, folder, title, title_norm)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
            [(p.id, p.folder.name, p.page.title, p.page.title.lower()) for p, _ in pages],
        )
        if existing:
            for table in ("page_aliases", "chunks", "timeline_entries"):
                key = "page_id"
                cur.execute(f"DELETE FROM {table} WHERE {key} = ANY(%s)", (sorted(existing),))
        _insert_aliases(cur, [p for p, _ in pages])
        _insert_chunks(cur, [p for p, _ in pages], vectors)
        _insert_timeline(cur, [p for p, _ in pages])
    linker.write_links_many(
        conn,
        [
            linker.PageRefs(p.id, p.folder.name, linker.extract_links(p.page, p.folder, schema))
            for p, _ in pages
        ],
        fresh=set(ids) - existing,
    )
    names = [linker.page_name_set(p.page.title, p.slug, p.page.aliases) for p, _ in pages]
    linker.rewire(conn, ids, set().union(*names, *previous.values()))


def _vector(vectors: Vectors | None, text: str) -> tuple[np.ndarray | None, bool]:
    found = vectors.get(text) if vectors is not None else None
    return found, found is None


def _insert_aliases(cur: psycopg.Cursor[Any], pages: Sequence[PreparedPage]) -> None:
    rows = []
    for p in pages:
        seen: set[str] = set()
        for alias in p.page.aliases:
            norm = normalize_name(alias)
            if norm and norm not in seen:
                seen.add(norm)
                rows.append((p.id, p.folder.name, alias, norm))
    if rows:
        cur.executemany(
            "INSERT INTO page_aliases (page_id, folder, alias, alias_norm) VALUES (%s, %s, %s, %s)",
            rows,
        )


def _insert_chunks(
    cur: psycopg.Cursor[Any], pages: Sequence[PreparedPage], vectors: Vectors | None
) -> None:
    rows = []
    for p in pages:
        for chunk in p.chunks:
            vector, stale = _vector(vectors, chunk.text)
            day = chunk.date or p.effective_date
            rows.append(
                (
                    *(p.id, p.folder.name, chunk.ordinal, chunk.section, chunk.text),
                    *(text_hash(chunk.text), vector, stale, day),
                )
            )
    _copy(
        cur,
        "chunks (page_id, folder, ordinal, section, text, text_hash, embedding, stale,"
        " effective_date)",
        ("text", "text", "int4", "text", "text", "bytea", "vector", "bool", "date"),
        rows,
    )


def _insert_timeline(cur: psycopg.Cursor[Any], pages: Sequence[PreparedPage]) -> None:
    rows = [
        (p.id, p.folder.name, ordinal, entry.date, entry.text, entry.source)
        for p in pages
        for ordinal, entry in enumerate(p.page.timeline)
    ]
    _copy(
        cur,
        "timeline_entries (page_id, folder, ordinal, date, text, source)",
        ("text", "text", "int4", "date", "text", "text"),
        rows,
    )


def _copy(
    cur: psycopg.Cursor[Any], target: str, types: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Load ``rows`` into ``target`` ("table (columns)") with one binary COPY: several
    times cheaper than row-by-row INSERTs for both the client and the server."""
    if not rows:
        return
    with cur.copy(f"COPY {target} FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)


def delete_pages(conn: Conn, page_ids: Iterable[str]) -> int:
    """Remove pages from the index (their history in page_versions stays); re-matches the
    links that pointed at them first. Returns how many rows were deleted."""
    ids = sorted(set(page_ids))
    if not ids:
        return 0
    linker.unwire_many(conn, ids)
    return conn.execute("DELETE FROM pages WHERE id = ANY(%s)", (ids,)).rowcount


# --------------------------------------------------------------------------- chunk formats

# index_meta key -> how this version cuts what it indexes (pages, raw sources). An index
# cut another way is redone by the next reindex (the files did not change, the cut did).
PAGE_CHUNKS = "chunk_format"
SOURCE_CHUNKS = "source_chunk_format"
_RECORD_FORMAT = (
    "INSERT INTO index_meta (key, value) {source}"
    " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()"
)


def chunk_formats() -> dict[str, str]:
    return {PAGE_CHUNKS: CHUNK_FORMAT, SOURCE_CHUNKS: SOURCE_FORMAT}


def chunk_format_current(conn: Conn, key: str = PAGE_CHUNKS) -> bool:
    """Whether the index's page (or source) chunks were cut the way this version cuts."""
    row = conn.execute("SELECT value FROM index_meta WHERE key = %s", (key,)).fetchone()
    return row is not None and row[0] == chunk_formats()[key]


def adopt_chunk_format(db: Database) -> None:
    """Record the chunk formats for an index without pages and sources (every chunk it
    gets will be cut this way). An index with rows and another or no format keeps it:
    its chunks are redone by the next reindex."""
    empty = {
        PAGE_CHUNKS: "NOT EXISTS (SELECT 1 FROM pages)",
        SOURCE_CHUNKS: "NOT EXISTS (SELECT 1 FROM source_docs)",
    }
    with db.transaction() as conn:
        for key, value in chunk_formats().items():
            conn.execute(
                _RECORD_FORMAT.format(source=f"SELECT %s, %s WHERE {empty[key]}"), (key, value)
            )


def record_chunk_format(db: Database, key: str = PAGE_CHUNKS) -> None:
    """Record that every page (or source) has been chunked by this version (reindex,
    after a pass over all of them; a page that failed validation is redone when its
    file changes)."""
    with db.transaction() as conn:
        conn.execute(_RECORD_FORMAT.format(source="VALUES (%s, %s)"), (key, chunk_formats()[key]))


# --------------------------------------------------------------------------- bulk loads

_SUSPENDED = "suspended_index:"
# Text-search indexes no write looks anything up in (only searches do): a bulk load
# builds them once at the end, like the HNSW indexes, instead of growing them per row.
SEARCH_ONLY_INDEXES = (
    "chunks_tsv",
    "timeline_tsv",
    "source_chunks_tsv",
    "pages_title_tsv",
    "pages_title_trgm",
    "pages_fields",
    "page_aliases_trgm",
)
BULK_MAINTENANCE_MEM = "512MB"


def suspend_search_indexes(db: Database) -> int:
    """Drop the HNSW indexes of the vector tables and the SEARCH_ONLY_INDEXES, keeping
    their definitions in index_meta until ``restore_search_indexes`` rebuilds them.
    Returns how many."""
    with db.transaction() as conn:
        rows = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
            " AND ((tablename = ANY(%s) AND indexdef LIKE '%% USING hnsw %%')"
            " OR indexname = ANY(%s))",
            (list(VECTOR_TABLES), list(SEARCH_ONLY_INDEXES)),
        ).fetchall()
        for name, definition in rows:
            conn.execute(
                "INSERT INTO index_meta (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (_SUSPENDED + name, definition),
            )
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    return len(rows)


def restore_search_indexes(db: Database) -> int:
    """Rebuild every suspended index (also after a crash mid-load)."""
    with db.transaction() as conn:
        rows = conn.execute(
            "SELECT key, value FROM index_meta WHERE key LIKE %s ORDER BY key FOR UPDATE",
            (_SUSPENDED + "%",),
        ).fetchall()
        if not rows:
            return 0
        unbounded(conn)  # building an index over every row may take minutes
        conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (BULK_MAINTENANCE_MEM,))
        for key, definition in rows:
            name = key.removeprefix(_SUSPENDED)
            present = conn.execute(
                "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = %s",
                (name,),
            ).fetchone()
            if present is None:
                conn.execute(definition)
            conn.execute("DELETE FROM index_meta WHERE key = %s", (key,))
    return len(rows)


@contextmanager
def search_indexes_suspended(db: Database, enabled: bool = True) -> Iterator[None]:
    """For bulk loads: building an HNSW or GIN index over loaded rows is several times
    faster than inserting the rows into it one by one. Searches meanwhile scan (HNSW:
    exactly; text search: without an index)."""
    if not enabled:
        yield
        return
    suspend_search_indexes(db)
    try:
        yield
    finally:
        restore_search_indexes(db)
