"""Raw sources in the index: ``source_docs`` mirrors the manifest, ``source_chunks`` holds
their text cut into sentences, embedded, for searches that include sources.

Only redacted text is ever stored: ``<private>`` spans are replaced before chunking, so
neither the keyword index nor the vectors can reveal them. A source is (re)chunked only
when its hash differs from the one indexed (or on ``force``); its status and date follow
the manifest on every run. Unreadable sources (binary, not UTF-8) and removed ones have
no rows. When the embedder is down the chunks are stored ``stale`` (keyword search works)
and the next reindex embeds them.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memserver.clients.embed import Embedder
from memserver.db.database import Database
from memserver.errors import EmbeddingError, UserError
from memserver.index.indexer import EMBED_BATCH, embed_texts
from memserver.kb.chunks import source_units
from memserver.kb.frontmatter import read_frontmatter
from memserver.kb.layout import KBPaths
from memserver.kb.manifest import Manifest, SourceEntry, Status
from memserver.kb.redact import redact_private

SOURCE_SECTION = "Source"
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class SourcesReport:
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    unreadable: tuple[tuple[str, str], ...] = ()  # (path, why)
    degraded: tuple[str, ...] = ()
    chunks: int = 0


@dataclass
class _Doc:
    entry: SourceEntry
    hash: str
    title: str
    chunks: list[str] = field(default_factory=list)


def source_title(rel: str, text: str) -> str:
    """A source's title: its frontmatter ``title``, else its first heading, else its name."""
    title = read_frontmatter(text).get("title")
    if isinstance(title, str) and title.strip():
        return " ".join(title.split())
    if match := _HEADING.search(text):
        return " ".join(match.group(1).split())
    return rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def index_sources(
    db: Database,
    paths: KBPaths,
    manifest: Manifest,
    embedder: Embedder,
    *,
    force: bool = False,
    entries: Sequence[SourceEntry] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> SourcesReport:
    """Bring source_docs/source_chunks up to date with ``source/`` (scans the manifest
    unless ``entries`` are given). ``on_progress(n)`` is told of every n sources handled."""
    if entries is None:
        entries = manifest.scan().entries if paths.source.is_dir() else ()
    with db.connection() as conn:
        indexed = dict(conn.execute("SELECT path, hash FROM source_docs").fetchall())
    present = [e for e in entries if e.status is not Status.REMOVED]
    todo: list[_Doc] = []
    unreadable: list[tuple[str, str]] = []
    for entry in present:
        if not force and indexed.get(entry.path) == entry.hash:
            continue
        try:
            text, digest = manifest.read_text(entry.path)
        except UserError as exc:
            unreadable.append((entry.path, exc.message))
            continue
        text = redact_private(text)
        title = source_title(entry.path, text)
        todo.append(_Doc(entry, digest, title, source_units(text)))
    missing = set(indexed) - {e.path for e in present}
    gone = sorted(missing | ({path for path, _ in unreadable} & set(indexed)))
    unchanged = len(present) - len(todo) - len(unreadable)
    degraded: list[str] = []
    with db.transaction() as conn:
        if gone:
            conn.execute("DELETE FROM source_docs WHERE path = ANY(%s)", (gone,))
        _sync_metadata(conn, [e for e in present if indexed.get(e.path) == e.hash])
    if on_progress is not None and unchanged:
        on_progress(unchanged + len(unreadable))
    for batch in _batches(todo, EMBED_BATCH):
        texts = [text for doc in batch for text in doc.chunks]
        vectors: dict[str, Any] | None
        try:
            vectors = embed_texts(embedder, texts)
        except EmbeddingError:
            vectors = None
            if "embedding_unavailable" not in degraded:
                degraded.append("embedding_unavailable")
        with db.transaction() as conn:
            _write_docs(conn, batch, vectors)
        if on_progress is not None:
            on_progress(len(batch))
    return SourcesReport(
        indexed=len(todo),
        unchanged=unchanged,
        removed=len(gone),
        unreadable=tuple(unreadable),
        degraded=tuple(degraded),
        chunks=sum(len(doc.chunks) for doc in todo),
    )


def _batches(docs: list[_Doc], texts_per_batch: int) -> list[list[_Doc]]:
    """Whole documents grouped so a group holds about ``texts_per_batch`` chunks."""
    out: list[list[_Doc]] = []
    current: list[_Doc] = []
    size = 0
    for doc in docs:
        current.append(doc)
        size += len(doc.chunks)
        if size >= texts_per_batch:
            out.append(current)
            current, size = [], 0
    if current:
        out.append(current)
    return out


def _sync_metadata(conn: Any, entries: Sequence[SourceEntry]) -> None:
    """Status and date of unchanged sources follow the manifest (rows touched only when
    something differs, so a second run changes nothing)."""
    if not entries:
        return
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE source_docs SET status = %s, doc_date = %s, updated_at = now()"
            " WHERE path = %s AND (status IS DISTINCT FROM %s OR doc_date IS DISTINCT FROM %s)",
            [(e.status.value, e.doc_date, e.path, e.status.value, e.doc_date) for e in entries],
        )
        cur.executemany(
            "UPDATE source_chunks SET doc_date = %s WHERE path = %s AND doc_date IS DISTINCT FROM %s",
            [(e.doc_date, e.path, e.doc_date) for e in entries],
        )


def _write_docs(conn: Any, docs: Sequence[_Doc], vectors: dict[str, Any] | None) -> None:
    now = datetime.datetime.now(datetime.UTC)
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO source_docs (path, hash, doc_date, status, size, title, indexed_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (path) DO UPDATE SET hash = EXCLUDED.hash, doc_date = EXCLUDED.doc_date,"
            " status = EXCLUDED.status, size = EXCLUDED.size, title = EXCLUDED.title,"
            " indexed_at = EXCLUDED.indexed_at, updated_at = now()",
            [
                (
                    d.entry.path,
                    d.hash,
                    d.entry.doc_date,
                    d.entry.status.value,
                    d.entry.size,
                    d.title,
                    now,
                )
                for d in docs
            ],
        )
        cur.execute(
            "DELETE FROM source_chunks WHERE path = ANY(%s)", ([d.entry.path for d in docs],)
        )
        rows = []
        for d in docs:
            for ordinal, text in enumerate(d.chunks):
                vector = vectors.get(text) if vectors is not None else None
                rows.append((d.entry.path, ordinal, text, vector, vector is None, d.entry.doc_date))
        if rows:
            cur.executemany(
                "INSERT INTO source_chunks (path, ordinal, text, embedding, stale, doc_date)"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                rows,
            )
