"""Raw sources in the index: ``source_docs`` mirrors the manifest, ``source_chunks`` holds
their text cut into sentences, embedded, for searches that include sources.

Only redacted text is ever stored: ``<private>`` spans are replaced before chunking, so
neither the keyword index nor the vectors can reveal them. A source is (re)chunked only
when its hash differs from the one indexed (or on ``force``); its status and date follow
the manifest on every run. Unreadable sources (binary, not UTF-8) and removed ones have
no rows. Each sentence of a conversation is stored with its context (the sentence with
its neighbours, ``memserver.kb.chunks.source_contexts``) and both are embedded. Texts whose vector the
index already holds are not embedded again; the others are embedded now, or (``defer_embedding``, and when the embedder is down) stored
``stale``: keyword search finds them at once, and the background embedder or the next
reindex embeds them. The server runs this on every ``source_pending`` scan, so a new
note is searchable with ``include_sources`` as soon as the ingest agent looks for work.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memserver.clients.embed import Embedder
from memserver.db.database import Database
from memserver.errors import EmbeddingError, UserError
from memserver.index.embedding import EMBEDDING_PENDING, vectors_for
from memserver.index.indexer import EMBED_BATCH, text_hash
from memserver.index.source_notes import (
    NoteRows,
    note_key,
    note_rows,
    write_note_rows,
)
from memserver.kb.chunks import source_contexts, source_units
from memserver.kb.frontmatter import read_frontmatter
from memserver.kb.layout import KBPaths
from memserver.kb.manifest import Manifest, SourceEntry, Status
from memserver.kb.redact import redact_private
from memserver.timeparse.mentions import MentionReader

SOURCE_SECTION = "Source"
# Advisory lock of source index writes: a server's scan and a `memserver reindex` in
# another process never replace the same note's sentences at once.
SOURCE_WRITE_LOCK = 0x6D73_0007
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
    notes: NoteRows | None = None  # the note-level rows (memserver.index.source_notes)
    contexts: list[str | None] = field(default_factory=list)  # per chunk (source_contexts)


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
    defer_embedding: bool = False,
    mentions: MentionReader | None = None,
) -> SourcesReport:
    """Bring source_docs/source_chunks (and the note-level rows) up to date with
    ``source/`` (scans the manifest unless ``entries`` are given). ``on_progress(n)`` is
    told of every n sources handled; ``mentions`` reads the dates a sentence mentions."""
    if entries is None:
        entries = manifest.scan().entries if paths.source.is_dir() else ()
    with db.reading() as conn:
        rows = conn.execute(
            "SELECT path, hash, status, doc_date, note_key FROM source_docs"
        ).fetchall()
    indexed = {path: digest for path, digest, _, _, _ in rows}
    recorded = {path: (status, day) for path, _, status, day, _ in rows}
    keys = {path: key for path, _, _, _, key in rows}
    present = [e for e in entries if e.status is not Status.REMOVED]
    todo: list[_Doc] = []
    renote: list[NoteRows] = []  # unchanged notes whose note-level rows are missing or old
    unreadable: list[tuple[str, str]] = []
    for entry in present:
        unchanged = not force and indexed.get(entry.path) == entry.hash
        if unchanged and keys.get(entry.path) == note_key(entry.doc_date, mentions is not None):
            continue
        try:
            text, digest = manifest.read_text(entry.path)
        except UserError as exc:
            unreadable.append((entry.path, exc.message))
            continue
        text = redact_private(text)
        title = source_title(entry.path, text)
        units = source_units(text)
        notes = note_rows(entry.path, title, text, units, entry.doc_date, mentions)
        if unchanged:
            renote.append(notes)
        else:
            todo.append(_Doc(entry, digest, title, units, notes, source_contexts(text, units)))
    missing = set(indexed) - {e.path for e in present}
    gone = sorted(missing | ({path for path, _ in unreadable} & set(indexed)))
    unchanged = len(present) - len(todo) - len(unreadable)
    degraded: list[str] = []
    moved = [
        e
        for e in present
        if indexed.get(e.path) == e.hash and recorded[e.path] != (e.status.value, e.doc_date)
    ]
    if gone or moved or renote:
        with db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SOURCE_WRITE_LOCK,))
            if gone:
                conn.execute("DELETE FROM source_docs WHERE path = ANY(%s)", (gone,))
            _sync_metadata(conn, moved)
            with conn.cursor() as cur:
                write_note_rows(cur, renote)
    if on_progress is not None and unchanged:
        on_progress(unchanged + len(unreadable))
    for batch in _batches(todo, EMBED_BATCH):
        texts = [t for doc in batch for t in (*doc.chunks, *doc.contexts) if t is not None]
        vectors: Mapping[str, Any] | None
        try:
            found = vectors_for(db, embedder, texts, embed=not defer_embedding)
            vectors = found.vectors
            if found.missing and EMBEDDING_PENDING not in degraded:
                degraded.append(EMBEDDING_PENDING)
        except EmbeddingError:
            vectors = None
            if "embedding_unavailable" not in degraded:
                degraded.append("embedding_unavailable")
        with db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SOURCE_WRITE_LOCK,))
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
    """Status and date of unchanged sources follow the manifest (only the sources whose
    status or date differ are passed, so a second run writes nothing)."""
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


def _write_docs(conn: Any, docs: Sequence[_Doc], vectors: Mapping[str, Any] | None) -> None:
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
        rows: list[tuple[Any, ...]] = []
        for d in docs:
            day = d.entry.doc_date
            for ordinal, (text, context) in enumerate(zip(d.chunks, d.contexts, strict=True)):
                own = vectors.get(text) if vectors is not None else None
                row = (d.entry.path, ordinal, text, text_hash(text), own, own is None, day)
                if context is None:  # not a conversation: no context vector
                    rows.append((*row, None, None, None, False))
                    continue
                around = vectors.get(context) if vectors is not None else None
                rows.append((*row, context, text_hash(context), around, around is None))
        if rows:
            cur.executemany(
                "INSERT INTO source_chunks (path, ordinal, text, text_hash, embedding, stale,"
                " doc_date, context, context_hash, context_embedding, context_stale)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )
        write_note_rows(cur, [d.notes for d in docs if d.notes is not None])
