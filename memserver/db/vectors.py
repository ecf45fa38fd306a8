"""The embedding columns: pgvector types as numpy arrays, typing the vector columns for a
model, their HNSW cosine indexes, and iterative HNSW scans (:func:`vector_scan`).

See :mod:`memserver.db.database` (Embeddings, Filtered vector queries) for how the
``Database`` uses them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from pgvector.psycopg.vector import VectorBinaryLoader, VectorLoader
from psycopg import sql
from psycopg.types import TypeInfo

from memserver.errors import StoreError

VECTOR_TABLES = ("chunks", "source_chunks")


@dataclass(frozen=True)
class VectorColumn:
    """One embedded text of a vector table: the text, its SHA-256, its vector and whether
    the vector is still to be written (``stale``)."""

    table: str
    text: str = "text"
    hash: str = "text_hash"
    embedding: str = "embedding"
    stale: str = "stale"

    @property
    def index(self) -> str:
        """The name of the column's HNSW index."""
        return f"{self.table}_{self.embedding}_hnsw"


# Every vector column, in the order stale rows are filled. A source sentence has two: its
# own text's and its context's (the sentence with its neighbours, migration 012).
VECTOR_COLUMNS = (
    VectorColumn("chunks"),
    VectorColumn("source_chunks"),
    VectorColumn("source_chunks", "context", "context_hash", "context_embedding", "context_stale"),
)
HNSW_MAX_VECTOR_DIMS = 2000
HNSW_MAX_HALFVEC_DIMS = 4000


@contextmanager
def vector_scan(
    conn: psycopg.Connection[Any],
    *,
    ef_search: int = 100,
    max_scan_tuples: int = 20_000,
    order: str = "relaxed_order",
) -> Iterator[psycopg.Connection[Any]]:
    """A transaction in which HNSW scans are iterative (filters cannot starve a LIMIT).

    ``order`` is ``relaxed_order`` (fast; re-sort the rows by distance) or
    ``strict_order``; ``max_scan_tuples`` bounds the work of one scan.
    """
    if order not in ("relaxed_order", "strict_order", "off"):
        raise ValueError(f"unknown hnsw.iterative_scan mode {order!r}")
    with conn.transaction():
        conn.execute(
            "SELECT set_config('hnsw.iterative_scan', %s, true),"
            " set_config('hnsw.ef_search', %s, true),"
            " set_config('hnsw.max_scan_tuples', %s, true)",
            (order, str(ef_search), str(max_scan_tuples)),
        )
        yield conn


def embedding_label(model: str, dims: int, other: tuple[str, int]) -> str:
    return model if model != other[0] else f"{model} ({dims} dims)"


def vector_type(dims: int) -> str:
    return "vector" if dims <= HNSW_MAX_VECTOR_DIMS else "halfvec"


class _NumpyVectorLoader(VectorLoader):
    def load(self, data: Any) -> np.ndarray:  # type: ignore[override]
        vector = super().load(data)
        assert vector is not None
        return vector.to_numpy()


class _NumpyVectorBinaryLoader(VectorBinaryLoader):
    def load(self, data: Any) -> np.ndarray:  # type: ignore[override]
        vector = super().load(data)
        assert vector is not None
        return vector.to_numpy()


def register_types(conn: psycopg.Connection[Any]) -> None:
    """Register pgvector's types on ``conn``; ``vector`` values load as float32 numpy arrays."""
    register_vector(conn)
    info = TypeInfo.fetch(conn, "vector")
    assert info is not None  # register_vector raised otherwise
    conn.adapters.register_loader(info.oid, _NumpyVectorLoader)
    conn.adapters.register_loader(info.oid, _NumpyVectorBinaryLoader)


def check_dims(dims: int) -> None:
    if not 1 <= int(dims) <= HNSW_MAX_HALFVEC_DIMS:
        raise StoreError(
            f"embedding dimension {dims} is not supported (1 to {HNSW_MAX_HALFVEC_DIMS})",
            "configure the embedding endpoint's `dims` to a smaller output size",
        )


def read_embedding(conn: psycopg.Connection[Any]) -> tuple[str, int] | None:
    rows = dict(
        conn.execute(
            "SELECT key, value FROM index_meta WHERE key IN ('embedding_model', 'embedding_dims')"
        ).fetchall()
    )
    if "embedding_model" not in rows or "embedding_dims" not in rows:
        return None
    return rows["embedding_model"], int(rows["embedding_dims"])


def retype_vectors(
    conn: psycopg.Connection[Any], embedding: tuple[str, int], *, clear: bool
) -> None:
    """Type every vector column ``vector(dims)`` and (re)build its HNSW cosine index."""
    model, dims = embedding
    drop_vector_indexes(conn)
    for column in VECTOR_COLUMNS:
        ident, vector = sql.Identifier(column.table), sql.Identifier(column.embedding)
        where: sql.Composable
        if clear:
            where = sql.SQL("{} IS NOT NULL").format(vector)
        else:  # vectors written before any model was recorded; keep those that fit
            where = sql.SQL("{} IS NOT NULL AND vector_dims({}) <> {}").format(
                vector, vector, sql.Literal(dims)
            )
        conn.execute(
            sql.SQL("UPDATE {} SET {} = NULL, {} = true WHERE {}").format(
                ident, vector, sql.Identifier(column.stale), where
            )
        )
        conn.execute(
            sql.SQL("ALTER TABLE {} ALTER COLUMN {} TYPE vector({})").format(
                ident, vector, sql.Literal(dims)
            )
        )
    create_vector_indexes(conn, dims)
    conn.execute(
        "INSERT INTO index_meta (key, value) VALUES ('embedding_model', %s), ('embedding_dims', %s)"
        " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
        (model, str(dims)),
    )


def drop_vector_indexes(conn: psycopg.Connection[Any]) -> None:
    for column in VECTOR_COLUMNS:
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(column.index)))


def create_vector_indexes(conn: psycopg.Connection[Any], dims: int) -> None:
    conn.execute("SELECT set_config('maintenance_work_mem', '256MB', true)")
    for column in VECTOR_COLUMNS:
        vector = sql.Identifier(column.embedding)
        expr: sql.Composable
        if vector_type(dims) == "vector":
            expr = sql.SQL("{} vector_cosine_ops").format(vector)
        else:
            expr = sql.SQL("({}::halfvec({})) halfvec_cosine_ops").format(vector, sql.Literal(dims))
        conn.execute(
            sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw ({})").format(
                sql.Identifier(column.index), sql.Identifier(column.table), expr
            )
        )
