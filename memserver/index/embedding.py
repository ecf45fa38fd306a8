"""Each text embedded once, and embedding kept off the write path.

Reuse by hash
    Every chunk and source chunk row stores the SHA-256 of its text (``text_hash``,
    migration 007; a source sentence also its context's, ``context_hash``, migration
    012: every vector column is a ``memserver.db.vectors.VectorColumn``), and the index
    holds the vectors of one model (a model switch clears them all), so a vector is known
    by its text's hash. ``known_vectors`` finds, in one query over every vector column,
    the vectors the index already holds for some texts; ``vectors_for`` embeds only the
    others. A page put again keeps the vectors of its unchanged chunks, a reindex that
    re-cuts unchanged pages embeds nothing new, a sentence two notes share is embedded
    once, and so is a one-sentence note's context (the sentence itself).

Stale rows
    A row written without its vector (``stale``) is keyword-searchable at once; only the
    vector arms miss it. ``fill_stale`` takes a bounded batch of stale texts, copies the
    vectors other rows already hold, embeds the rest and writes each vector to every stale
    row of its text. It locks the rows it updates with ``SKIP LOCKED``: a row a writer is
    replacing right now is left for the next batch (the writer's new rows are stale too),
    so the filler never waits for a writer or deadlocks with one.

The background embedder
    ``BackgroundEmbedder`` is a thread of the server process that runs ``fill_stale``
    until nothing is stale, then sleeps until a write ``notify``s it (or ``POLL_SECONDS``
    pass, for rows other processes wrote). Writes that leave their new texts to it are
    never blocked on the model; nothing is lost if the process dies, because the rows
    stay stale in the database and the next start fills them. On Linux the thread runs
    at a lower CPU priority (nice +``NICE``, inherited by the model's OpenMP threads it
    starts), so questions, which embed in their own threads at normal priority and do
    not wait for passage batches (``LocalEmbedder``), keep the CPU when both want it.
    ``embed`` runs other ingest-side passages (the ingest agent's ``kb_route``) on a
    second thread at the same low priority and waits for them: a question asked during
    ingest never queues behind a batch, nor shares the CPU evenly with ingest work. The
    filler starts no batch while such a call runs (the agent waits for it; the stale
    rows can wait), so between batches the ingest path comes first.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

from memserver.clients.embed import Embedder
from memserver.db.database import Database
from memserver.db.vectors import VECTOR_COLUMNS, VECTOR_TABLES
from memserver.errors import EmbeddingError, MemoryError_
from memserver.index.indexer import EMBED_BATCH, embed_texts, text_hash

logger = logging.getLogger(__name__)

EMBEDDING_PENDING = "embedding_pending"
FILL_BATCH = 16  # distinct texts per fill: one short transaction, two model calls
POLL_SECONDS = 30.0  # the idle worker looks for stale rows written by other processes
RETRY_SECONDS = 30.0  # after the embedder or the database failed
NICE = 10
EMBED_TIMEOUT = 300.0

Conn = psycopg.Connection[Any]

_KNOWN = " UNION ALL ".join(
    f"SELECT {c.hash}, {c.embedding} FROM {c.table}"
    f" WHERE {c.hash} = ANY(%(hashes)s) AND NOT {c.stale} AND {c.embedding} IS NOT NULL"
    for c in VECTOR_COLUMNS
)
_STALE = [
    f"SELECT {c.hash}, {c.text} FROM {c.table} WHERE {c.stale} ORDER BY id LIMIT %s"
    for c in VECTOR_COLUMNS
]
_FILL = [
    f"UPDATE {c.table} AS t SET {c.embedding} = u.embedding, {c.stale} = false"
    " FROM unnest(%(hashes)s::bytea[], %(vectors)s::vector[]) AS u (text_hash, embedding)"
    f" WHERE t.id IN (SELECT id FROM {c.table} WHERE {c.stale} AND {c.hash} = ANY(%(hashes)s)"
    f" FOR UPDATE SKIP LOCKED) AND t.{c.hash} = u.text_hash"
    for c in VECTOR_COLUMNS
]
# table -> the count of its vectors waiting to be written (a source sentence has two)
_WAITING = {
    table: " + ".join(
        f"count(*) FILTER (WHERE {c.stale})" for c in VECTOR_COLUMNS if c.table == table
    )
    for table in VECTOR_TABLES
}


def known_vectors(conn: Conn, texts: Iterable[str]) -> dict[str, np.ndarray]:
    """The vectors the index already holds for ``texts`` (by text hash, any table)."""
    by_hash = {text_hash(t): t for t in texts}
    if not by_hash:
        return {}
    rows = conn.execute(_KNOWN, {"hashes": list(by_hash)}).fetchall()
    return {by_hash[bytes(digest)]: vector for digest, vector in rows}


@dataclass(frozen=True)
class FoundVectors:
    """The vectors found for some texts, and how they were come by."""

    vectors: Mapping[str, np.ndarray]
    reused: int  # distinct texts whose vector the index already held
    embedded: int  # distinct texts embedded now
    missing: int  # distinct texts left without a vector (stale)


def vectors_for(
    db: Database, embedder: Embedder, texts: Iterable[str], *, embed: bool = True
) -> FoundVectors:
    """Vectors for ``texts``: the index's own, plus (``embed``) the others embedded now.

    With ``embed`` false the others are left out (their rows are written stale, for
    ``fill_stale``). EmbeddingError passes up."""
    unique = list(dict.fromkeys(texts))
    with db.reading() as conn:
        found = known_vectors(conn, unique)
    new = [t for t in unique if t not in found]
    if new and embed:
        found.update(embed_texts(embedder, new))
        return FoundVectors(found, len(unique) - len(new), len(new), 0)
    return FoundVectors(found, len(unique) - len(new), 0, len(new))


@dataclass(frozen=True)
class Fill:
    """What one ``fill_stale`` batch did."""

    texts: int  # distinct stale texts taken
    embedded: int  # of which embedded now (the rest had a vector elsewhere)
    rows: int  # rows updated


def fill_stale(db: Database, embedder: Embedder, limit: int = FILL_BATCH) -> Fill:
    """Give up to ``limit`` stale texts their vectors (page chunks, then source sentences,
    then their contexts); see the module docstring. EmbeddingError passes up; nothing is
    written then."""
    texts: dict[bytes, str] = {}
    with db.connection() as conn:
        for stale in _STALE:
            for digest, text in conn.execute(stale, (limit,)).fetchall():
                texts.setdefault(bytes(digest), text)
            if texts:
                break
    if not texts:
        return Fill(0, 0, 0)
    db.ensure_embedding(embedder.name, embedder.dims)
    with db.connection() as conn:
        known = known_vectors(conn, texts.values())
    new = [t for t in texts.values() if t not in known]
    vectors = {**known, **embed_texts(embedder, new)} if new else known
    hashes = list(texts)
    params = {"hashes": hashes, "vectors": [vectors[texts[h]] for h in hashes]}
    rows = 0
    with db.transaction() as conn:
        for fill in _FILL:
            rows += conn.execute(fill, params).rowcount
    return Fill(len(texts), len(new), rows)


def embed_stale(
    db: Database,
    embedder: Embedder,
    batch_size: int = EMBED_BATCH,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Fill every stale row now (``reindex``); returns how many rows were filled.

    Stops early when a batch could update nothing (its rows are being rewritten by
    another writer, whose new rows a later run or the background embedder fills)."""
    done = 0
    while True:
        fill = fill_stale(db, embedder, batch_size)
        if fill.rows == 0:
            return done
        done += fill.rows
        if on_batch is not None:
            on_batch(fill.rows)


def stale_counts(conn: Conn) -> dict[str, int]:
    """How many vectors of each vector table wait to be written (rows x their vector
    columns: a source sentence's own and its context's)."""
    return {
        table: int(conn.execute(f"SELECT {waiting} FROM {table}").fetchone()[0])  # type: ignore[index]
        for table, waiting in _WAITING.items()
    }


def _lower_priority() -> None:
    """Nice this thread (Linux threads are tasks; the OpenMP threads it starts inherit it)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)


class BackgroundEmbedder:
    """Fills stale rows in a thread until stopped (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        *,
        batch: int = FILL_BATCH,
        poll: float = POLL_SECONDS,
        retry: float = RETRY_SECONDS,
    ) -> None:
        self.db = db
        self.embedder = embedder
        self.batch = batch
        self.poll = poll
        self.retry = retry
        self.embedded = 0  # texts embedded by this worker
        self.filled = 0  # rows it gave a vector
        self.error: str | None = None  # the last failure, until a batch succeeds again
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._generation = 0  # bumped by every notify
        self._pending = True  # until the first look finds nothing stale
        self._thread = threading.Thread(target=self._run, name="background-embedder", daemon=True)
        self._lane = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="low-priority-embed", initializer=_lower_priority
        )
        self._waiting = 0  # embed() calls in flight: the filler lets them go first
        self._lane_free = threading.Condition(self._lock)

    def start(self) -> BackgroundEmbedder:
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def pending(self) -> bool:
        """Whether some rows may still wait for their vectors."""
        return self._pending

    def notify(self) -> None:
        """A write left stale rows: look again now."""
        with self._lock:
            self._generation += 1
            self._pending = True
            self._idle.clear()
        self._wake.set()

    def embed(self, texts: Sequence[str], timeout: float = EMBED_TIMEOUT) -> list[np.ndarray]:
        """``embedder.embed_passages(texts)`` at the background's low CPU priority,
        waited for (at most ``timeout`` seconds); EmbeddingError passes up."""
        with self._lock:
            self._waiting += 1
        try:
            future = self._lane.submit(self.embedder.embed_passages, list(texts))
            try:
                return future.result(timeout)
            except concurrent.futures.TimeoutError:
                future.cancel()
                raise EmbeddingError(
                    f"the embedder did not answer within {timeout:.0f}s (low-priority lane)",
                    "the machine is overloaded; try again later",
                ) from None
        finally:
            with self._lock:
                self._waiting -= 1
                self._lane_free.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is stale (True) or ``timeout`` seconds pass (False)."""
        return self._idle.wait(timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the batch in hand (its model calls finish; nothing is cut short)."""
        self._stop.set()
        self._wake.set()
        self._lane.shutdown(wait=False, cancel_futures=True)
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        _lower_priority()
        while not self._stop.is_set():
            with self._lock:
                while self._waiting and not self._stop.is_set():  # bounded: re-checked
                    self._lane_free.wait(1.0)
                generation = self._generation
            try:
                fill = fill_stale(self.db, self.embedder, self.batch)
            except Exception as exc:  # the worker outlives any failure; it retries later
                if self._stop.is_set():
                    return
                if self.error != str(exc):
                    expected = isinstance(exc, MemoryError_ | psycopg.Error)
                    logger.warning(
                        "background embedding failed, retrying in %.0fs: %s",
                        self.retry,
                        exc,
                        exc_info=not expected,
                    )
                self.error = str(exc)
                self._sleep(self.retry)
                continue
            self.error = None
            self.embedded += fill.embedded
            self.filled += fill.rows
            if fill.rows:
                continue
            if fill.texts:  # only rows a writer is replacing right now: look again soon
                self._sleep(0.5)
                continue
            with self._lock:
                if generation == self._generation:
                    self._pending = False
                    self._idle.set()
            self._sleep(self.poll)

    def _sleep(self, seconds: float) -> None:
        self._wake.wait(seconds)
        self._wake.clear()
