"""The PostgreSQL index: connecting, migrating, and typing the embedding columns
(the column types and HNSW indexes themselves: :mod:`memserver.db.vectors`).

Which server
    ``Database.open(kb)`` uses ``database_url`` if given, else the ``DATABASE_URL``
    environment variable, else the knowledge base's embedded server (``pgserver``, data
    under ``<kb>/.memserver/pg``, database ``memserver``). Any server must offer the
    ``vector`` (pgvector) and ``pg_trgm`` extensions; a missing one is a StoreError that
    says how to get it.

Migrations (``memserver.db.migrate``)
    ``migrations/NNN_name.sql`` files are applied in order, each recorded in
    ``schema_migrations`` (name, sha256, time), all in one transaction under a
    transaction-scoped advisory lock, so two processes migrating at once are safe: the
    second waits, then finds nothing to do. An applied file that changed afterwards is
    refused (add a new numbered file instead).

Connections
    ``db.pool`` is a :class:`memserver.db.pool.Pool`: a ``psycopg_pool.ConnectionPool``
    that fails fast with ``DatabaseUnavailable`` while PostgreSQL is down and recovers
    on the first call after it is back (``db.ping()`` says whether it answers). Every
    connection has pgvector's types registered (``register_types``): numpy arrays go in as ``vector`` and
    ``vector`` values come out as float32 numpy arrays. Rows are tuples
    (use ``conn.cursor(row_factory=psycopg.rows.dict_row)`` for dicts).
    ``with db.connection() as conn:`` commits on success, rolls back on error;
    ``with db.transaction() as conn:`` is the same with an explicit transaction block;
    ``with db.reading() as conn:`` is for reads, one round trip per query (autocommit).

Embeddings
    Vector columns (``chunks``, ``source_chunks``) are created without a dimension. ``ensure_embedding(model, dims)`` records the embedder in
    ``index_meta`` on first use, types the columns ``vector(dims)`` and builds the HNSW
    cosine indexes; later calls with another model or dimension raise
    EmbeddingModelChanged. ``reset_embedding`` (``reindex --force``) clears all vectors,
    marks the rows stale and retypes and reindexes for the new model. Above 2,000 dims
    (HNSW's limit for ``vector``) the index is built on ``embedding::halfvec(dims)``;
    ``db.distance_sql()`` writes the matching distance expression. For bulk loads,
    ``with db.bulk_vectors():`` drops the HNSW indexes and rebuilds them after (~10x
    faster inserts).

Filtered vector queries
    An HNSW scan returns ``hnsw.ef_search`` candidates and *then* applies the WHERE
    clause, so a scope filter (``folder = ANY(...)``) or a date window can leave too few
    rows. pgvector 0.8's iterative scans keep scanning until the LIMIT is met; use them
    through :func:`vector_scan`, and re-sort, because ``relaxed_order`` may return rows
    slightly out of order::

        with db.connection() as conn, vector_scan(conn):
            rows = conn.execute(
                f"WITH c AS MATERIALIZED ("
                f"  SELECT id, page_id, {db.distance_sql()} AS distance FROM chunks"
                f"  WHERE folder = ANY(%(folders)s) AND embedding IS NOT NULL"
                f"  ORDER BY distance LIMIT %(k)s)"
                f" SELECT * FROM c ORDER BY distance",
                {"q": query_vector, "folders": folders, "k": 50},
            ).fetchall()

    ``distance_sql()`` uses the named parameter ``%(q)s``; cosine similarity is
    ``1 - distance``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memserver.db import pgserver
from memserver.db.migrate import MIGRATE_LOCK, apply_migrations
from memserver.db.pool import Pool, unbounded
from memserver.db.vectors import (
    check_dims,
    create_vector_indexes,
    drop_vector_indexes,
    embedding_label,
    read_embedding,
    register_types,
    retype_vectors,
    vector_type,
)
from memserver.errors import EmbeddingModelChanged, StoreError

if TYPE_CHECKING:
    from memserver.kb.layout import KBPaths

EMBEDDED_DATABASE = "memserver"
REQUIRED_EXTENSIONS = ("vector", "pg_trgm")
_CORE_TABLES = ("pages", "page_versions", "page_aliases", "chunks", "links", "timeline_entries")
# Advisory lock keys (any constant bigint; "ms" + purpose; migrations: memserver.db.migrate).
_EMBEDDING_LOCK = 0x6D73_0002
_CONNECT_TIMEOUT = 10


# --------------------------------------------------------------------------- URLs


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (safe for messages and logs)."""
    if "://" in url:
        parts = urlsplit(url)
        if parts.password:
            user = parts.username or ""
            host = parts.netloc.rsplit("@", 1)[1]
            return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
        return url
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "<unparsable connection string>"
    if "password" in params:
        params["password"] = "***"
    return make_conninfo(**{k: str(v) for k, v in params.items()})


def with_database(url: str, database: str) -> str:
    """The same connection string pointing at another database on the same server."""
    if "://" in url:
        parts = urlsplit(url)
        return urlunsplit(parts._replace(path="/" + database))
    return make_conninfo(url, dbname=database)


def database_name(url: str) -> str:
    """The database a connection string names (libpq's default: the user name)."""
    params = conninfo_to_dict(url)
    return str(params.get("dbname") or params.get("user") or os.environ.get("PGDATABASE", ""))


# --------------------------------------------------------------------------- extensions


def missing_extension_error(
    extension: str, url: str, *, available: bool, detail: str = ""
) -> StoreError:
    """The StoreError for an extension that is missing or cannot be enabled."""
    where = f"the PostgreSQL server at {redact_url(url)}"
    why = f": {detail.strip()}" if detail.strip() else ""
    if available:
        return StoreError(
            f'the "{extension}" extension is installed on {where} but could not be enabled '
            f'in database "{database_name(url)}"{why}',
            f"run `CREATE EXTENSION {extension};` in that database as its owner or a superuser, "
            "or unset DATABASE_URL to use the embedded PostgreSQL",
        )
    if extension == "vector":
        return StoreError(
            f'{where} does not have the "vector" extension (pgvector){why}',
            "install pgvector on that server (https://github.com/pgvector/pgvector#installation), "
            "or use the docker-compose PostgreSQL service (image pgvector/pgvector), "
            "or unset DATABASE_URL to use the embedded PostgreSQL, which includes it",
        )
    return StoreError(
        f'{where} does not have the "{extension}" extension{why}',
        f"install the PostgreSQL contrib package that provides {extension} on that server, "
        "or unset DATABASE_URL to use the embedded PostgreSQL, which includes it",
    )


def ensure_extensions(
    conn: psycopg.Connection[Any], url: str, extensions: Sequence[str] = REQUIRED_EXTENSIONS
) -> None:
    """Create the extensions that do not exist yet; StoreError saying how to get a missing one.

    Call it inside a transaction (a failed CREATE is rolled back to a savepoint).
    """
    for name in extensions:
        if conn.execute("SELECT 1 FROM pg_extension WHERE extname = %s", (name,)).fetchone():
            continue
        try:
            with conn.transaction():
                conn.execute(
                    sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(name))
                )
        except psycopg.Error as exc:
            available = bool(
                conn.execute(
                    "SELECT 1 FROM pg_available_extensions WHERE name = %s", (name,)
                ).fetchone()
            )
            raise missing_extension_error(name, url, available=available, detail=str(exc)) from exc


def _configure(conn: psycopg.Connection[Any]) -> None:
    register_types(conn)
    conn.commit()


# --------------------------------------------------------------------------- Database


class Database:
    """An open connection pool on a migrated index database (see the module docstring)."""

    def __init__(self, url: str, pool: Pool, server: pgserver.EmbeddedServer | None = None) -> None:
        self.url = url
        self.pool = pool
        self.server = server
        self._embedding: tuple[str, int] | None = None
        self._closed = False

    @classmethod
    def open(
        cls,
        kb: KBPaths | None,
        database_url: str | None = None,
        *,
        max_size: int = 10,
        migrate: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> Database:
        """Connect (starting the embedded server if needed), create the extensions,
        apply pending migrations (unless ``migrate=False``) and open the pool."""
        environ = os.environ if env is None else env
        url = database_url or environ.get("DATABASE_URL") or None
        server = None
        if url is None:
            if kb is None:
                raise StoreError(
                    "no database: no DATABASE_URL and no knowledge base for the embedded PostgreSQL",
                    "pass --kb DIR or set DATABASE_URL to a PostgreSQL with pgvector",
                )
            server = pgserver.acquire(kb.state / "pg")
        try:
            if server is not None:
                url = server.uri(EMBEDDED_DATABASE)
                create_database(server.uri(), EMBEDDED_DATABASE, exist_ok=True)
            assert url is not None
            with _connect(url) as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
                ensure_extensions(conn, url)
                if migrate:
                    apply_migrations(conn)
            pool = Pool(url, shown_url=redact_url(url), max_size=max_size, configure=_configure)
            pool.open(timeout=_CONNECT_TIMEOUT)
        except BaseException:
            if server is not None:
                server.release()
            raise
        return cls(url, pool, server)

    # ---------------------------------------------------------------- connections

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection; committed on success, rolled back on error."""
        with self.pool.connection() as conn:
            yield conn

    @contextmanager
    def checked(self, action: str) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection whose database errors become one StoreError: ``could not
        <action> in the index database: ...`` (for stores at the repository edge)."""
        try:
            with self.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise StoreError(
                f"could not {action} in the index database: {str(exc).strip()}",
                "check that PostgreSQL is running and migrated (`memserver migrate`)",
            ) from exc

    @contextmanager
    def reading(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for reads: in autocommit, so each query is one round trip
        (no BEGIN before it, no COMMIT after the block: three round trips for one SELECT
        otherwise). Each statement sees what was committed when it ran; a block that
        writes uses ``connection`` or ``transaction`` (``conn.transaction()`` inside
        works too)."""
        with self.pool.connection() as conn:
            conn.autocommit = True
            try:
                yield conn
            finally:
                if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                    conn.autocommit = False
                else:  # a failed or open transaction: the pool's return discards it
                    conn.close()

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection inside one explicit transaction."""
        with self.pool.connection() as conn, conn.transaction():
            yield conn

    def ping(self) -> str | None:
        """None when the database answers a query, else why not (for health checks)."""
        return self.pool.ping()

    def migrate(self) -> list[str]:
        """Apply pending migrations; returns the names applied (empty when up to date)."""
        with self.transaction() as conn:
            return apply_migrations(conn)

    def applied_migrations(self) -> list[str]:
        """Names of the migrations recorded in this database, in order."""
        with self.connection() as conn:
            if conn.execute("SELECT to_regclass('schema_migrations')").fetchone() == (None,):
                return []
            rows = conn.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()
        return [name for (name,) in rows]

    # ---------------------------------------------------------------- embeddings

    def embedding_info(self) -> tuple[str, int] | None:
        """The recorded ``(model, dims)``, or None before the first embedding."""
        with self.reading() as conn:
            return read_embedding(conn)

    def ensure_embedding(self, model: str, dims: int) -> None:
        """Record ``model``/``dims`` on first use (typing the vector columns and building
        their HNSW indexes); EmbeddingModelChanged when the index has another one."""
        wanted = (model, int(dims))
        if self._embedding == wanted:
            return
        check_dims(dims)
        with self.transaction() as conn:
            unbounded(conn)  # the first model types the vector columns and builds indexes
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_EMBEDDING_LOCK,))
            current = read_embedding(conn)
            if current is None:
                retype_vectors(conn, wanted, clear=False)
            elif current != wanted:
                raise EmbeddingModelChanged(
                    embedding_label(*current, wanted), embedding_label(*wanted, current)
                )
        self._embedding = wanted

    def reset_embedding(self, model: str, dims: int) -> None:
        """Forget every vector and switch the index to ``model``/``dims`` (reindex --force).

        All embedded rows become stale; the HNSW indexes are rebuilt for the new type.
        """
        check_dims(dims)
        with self.transaction() as conn:
            unbounded(conn)  # every vector cleared and the indexes rebuilt: may take minutes
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_EMBEDDING_LOCK,))
            retype_vectors(conn, (model, int(dims)), clear=True)
        self._embedding = (model, int(dims))

    @contextmanager
    def bulk_vectors(self) -> Iterator[None]:
        """Drop the HNSW indexes for a bulk load and rebuild them afterwards (also on error).

        Inserting into a table with a live HNSW index is about 10x slower than inserting
        and building the index once after (measured: 450 vs 4,500 384-dim chunks/s, and
        2 s to build over 6,000). Meanwhile vector queries still work, as exact scans.
        Use it for ``reindex --force`` and first indexing, not for single page writes.
        """
        info = self._embedding or self.embedding_info()
        if info is None:
            raise StoreError(
                "the index has no embedding model yet",
                "call Database.ensure_embedding(model, dims) before bulk_vectors()",
            )
        with self.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_EMBEDDING_LOCK,))
            drop_vector_indexes(conn)
        try:
            yield
        finally:
            with self.transaction() as conn:
                unbounded(conn)  # building the HNSW indexes over every row
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_EMBEDDING_LOCK,))
                current = read_embedding(conn)  # reset_embedding may have run meanwhile
                create_vector_indexes(conn, (current or info)[1])

    def distance_sql(self, param: str = "q", column: str = "embedding") -> str:
        """The cosine-distance expression for ``column`` against ``%(param)s`` that
        matches the HNSW index (call after ensure_embedding)."""
        info = self._embedding or self.embedding_info()
        if info is None:
            raise StoreError(
                "the index has no embedding model yet",
                "call Database.ensure_embedding(model, dims) before vector queries",
            )
        dims = info[1]
        if vector_type(dims) == "vector":
            return f"{column} <=> %({param})s::vector"
        return f"{column}::halfvec({dims}) <=> %({param})s::halfvec({dims})"

    # ---------------------------------------------------------------- misc

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables (for ``memserver stats``)."""
        tables = (*_CORE_TABLES, "source_docs", "source_chunks", "conflicts")
        query = " UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in tables)
        with self.connection() as conn:
            return {name: int(n) for name, n in conn.execute(query).fetchall()}

    def close(self) -> None:
        """Close the pool and release the embedded server (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.pool.close()
        finally:
            if self.server is not None:
                self.server.release()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Database({redact_url(self.url)!r})"


def _connect(url: str, **kwargs: Any) -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(url, connect_timeout=_CONNECT_TIMEOUT, **kwargs)
    except psycopg.OperationalError as exc:
        raise StoreError(
            f"could not connect to PostgreSQL at {redact_url(url)}: {str(exc).strip()}",
            "check DATABASE_URL (host, port, user, password, database), "
            "or unset it to use the embedded PostgreSQL",
        ) from exc


def create_database(
    admin_url: str, name: str, *, template: str | None = None, exist_ok: bool = False
) -> None:
    """CREATE DATABASE ``name`` (optionally from ``template``) over ``admin_url``."""
    statement: sql.Composed = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
    with _connect(admin_url, autocommit=True) as conn:
        if (
            exist_ok
            and conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        ):
            return
        try:
            conn.execute(statement)
        except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
            if not exist_ok:
                raise


def drop_database(admin_url: str, name: str) -> None:
    """DROP DATABASE IF EXISTS ``name``, disconnecting its sessions."""
    statement = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    with _connect(admin_url, autocommit=True) as conn:
        conn.execute(statement)
