"""Audit log (PostgreSQL): one row per call, digests not arguments, append-only, filters."""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path

import psycopg
import pytest

from memserver.db.database import Database
from memserver.errors import StoreError
from memserver.server.audit import AuditLog, UseWindow, digest_arguments, make_entry
from memserver.server.tokens import TokenStore

T0 = dt.datetime(2026, 9, 20, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def log(database: Database) -> AuditLog:
    return AuditLog(database)


def test_rows_hold_a_digest_not_the_arguments(log: AuditLog, database: Database) -> None:
    entry = log.record("reader", "kb_get_page", {"id": "people/secret-agent"}, "ok", 3.2)
    with database.connection() as conn:
        (raw,) = conn.execute("SELECT row_to_json(a)::text FROM audit_log a").fetchone() or ("",)
    assert "secret-agent" not in raw
    assert entry.args_sha256 in raw
    (stored,) = log.entries()
    assert stored == entry


def test_digest_is_canonical() -> None:
    assert digest_arguments({"a": 1, "b": [1, 2]}) == digest_arguments({"b": [1, 2], "a": 1})
    assert digest_arguments({"a": 1}) != digest_arguments({"a": 2})
    assert digest_arguments(None) == digest_arguments({})


def test_query_filters_by_time_token_and_tool(log: AuditLog) -> None:
    for i, token in enumerate(["a", "b", "a", "c"]):
        tool = "kb_query" if i == 3 else "kb_schema"
        log.record(token, tool, {}, "ok", 1.0, time=T0 + dt.timedelta(hours=i))
    assert [e.token for e in log.query(since=T0 + dt.timedelta(hours=1))] == ["b", "a", "c"]
    assert [e.time for e in log.query(token="a")] == [T0, T0 + dt.timedelta(hours=2)]
    assert [e.token for e in log.query(tool="kb_query")] == ["c"]
    assert [e.token for e in log.query(since=T0 + dt.timedelta(hours=1), token="a")] == ["a"]
    assert [e.token for e in log.query(limit=2)] == ["a", "c"]
    assert log.query(limit=0) == []
    assert log.last_used() == {
        "a": T0 + dt.timedelta(hours=2),
        "b": T0 + dt.timedelta(hours=1),
        "c": T0 + dt.timedelta(hours=3),
    }


def test_last_used_during_counts_only_calls_within_each_window(log: AuditLog) -> None:
    for minutes in (5, 30):
        log.record("bot", "kb_schema", {}, "ok", 1.0, time=T0 + dt.timedelta(minutes=minutes))
    windows = [
        UseWindow("bot", T0, T0 + dt.timedelta(minutes=10)),  # revoked after 10 minutes
        UseWindow("bot", T0 + dt.timedelta(minutes=20)),  # its successor, still live
        UseWindow("bot", T0 + dt.timedelta(hours=1)),  # created after every call
        UseWindow("idle", T0),
    ]
    assert log.last_used_during(windows) == [
        T0 + dt.timedelta(minutes=5),
        T0 + dt.timedelta(minutes=30),
        None,
        None,
    ]
    assert log.last_used_during([]) == []


def test_error_outcomes_are_kept(log: AuditLog) -> None:
    log.record("a", "kb_put_page", {}, "error:validation", 5.0)
    (entry,) = log.query()
    assert entry.outcome == "error:validation" and not entry.ok


def test_concurrent_appends_from_two_pools_are_all_kept(log: AuditLog, database_url: str) -> None:
    with Database.open(None, database_url, max_size=2) as other:
        logs = [log, AuditLog(other)]

        def work(target: AuditLog, name: str) -> None:
            for _ in range(200):
                target.record(name, "kb_list_pages", {"folder": "x" * 50}, "ok", 0.5)

        threads = [threading.Thread(target=work, args=(g, f"t{i}")) for i, g in enumerate(logs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    rows = log.query()
    assert len(rows) == 400
    assert {e.token: len(log.query(token=e.token)) for e in rows} == {"t0": 200, "t1": 200}


def test_an_unreachable_database_is_a_store_error(database_url: str) -> None:
    db = Database.open(None, database_url, max_size=1)
    db.close()
    with pytest.raises(StoreError, match="audit log"):
        AuditLog(db).record("a", "kb_schema", {}, "ok", 1.0)
    with pytest.raises(StoreError, match="tokens"):
        TokenStore(db).verify("ms_" + "x" * 43)


def test_empty_log_reads_as_no_rows(log: AuditLog) -> None:
    assert log.query() == [] and log.last_used() == {} and list(log.entries()) == []


@pytest.mark.parametrize(
    "statement",
    ["UPDATE audit_log SET outcome = 'ok'", "DELETE FROM audit_log", "TRUNCATE audit_log"],
)
def test_the_database_refuses_to_change_or_remove_rows(
    log: AuditLog, database: Database, statement: str
) -> None:
    log.record("a", "kb_put_page", {}, "error:validation", 5.0)
    refused = pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only")
    with refused, database.connection() as conn:
        conn.execute(statement)
    assert [e.outcome for e in log.query()] == ["error:validation"]


def test_last_used_by_token_is_an_index_lookup(log: AuditLog, database: Database) -> None:
    log.record("a", "kb_schema", {}, "ok", 1.0)
    with database.transaction() as conn:
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = conn.execute(
            "EXPLAIN SELECT max(created_at) FROM audit_log WHERE token_name = %s", ("a",)
        ).fetchall()
    assert "audit_log_token" in str(plan)


def test_cli_audit_filters_and_prints_json(
    log: AuditLog,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from memserver import cli

    monkeypatch.setenv("DATABASE_URL", database_url)
    now = dt.datetime.now(dt.UTC)
    log.record("old", "kb_schema", {}, "ok", 1.0, time=now - dt.timedelta(days=3))
    log.record("reader", "kb_get_page", {"id": "people/x"}, "error:not_found", 2.5, time=now)
    log.record("writer", "kb_put_page", {}, "ok", 9.0, time=now)
    kb = ["--kb", str(tmp_path)]
    assert cli.main([*kb, "audit", "--since", "1d", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)["entries"]
    assert [(e["token"], e["tool"], e["outcome"]) for e in entries] == [
        ("reader", "kb_get_page", "error:not_found"),
        ("writer", "kb_put_page", "ok"),
    ]
    assert entries[0]["args_sha256"] == digest_arguments({"id": "people/x"})
    assert cli.main([*kb, "audit", "--token", "old", "--json"]) == 0
    assert [e["token"] for e in json.loads(capsys.readouterr().out)["entries"]] == ["old"]
    assert cli.main([*kb, "audit", "--token", "nobody"]) == 0
    assert "no tool calls" in capsys.readouterr().out


def test_the_writer_commits_each_calls_row_before_the_call_returns(log: AuditLog) -> None:
    import anyio

    from memserver.server.audit_writer import AuditWriter

    writer = AuditWriter(log)
    seen: list[int] = []

    async def call(i: int) -> None:
        await writer.record(make_entry(f"c{i % 4}", "kb_get_page", {"id": f"p{i}"}, "ok", 1.0))
        seen.append(len(log.query(token=f"c{i % 4}")))  # its own row is already there

    async def calls() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(60):
                tg.start_soon(call, i)

    try:
        anyio.run(calls)
    finally:
        writer.close()
    assert len(log.query()) == 60 and len(seen) == 60 and min(seen) >= 1
    assert {e.token for e in log.query()} == {"c0", "c1", "c2", "c3"}


def test_a_failed_batch_reaches_every_waiting_call(database_url: str) -> None:
    import anyio

    from memserver.server.audit_writer import AuditWriter

    db = Database.open(None, database_url, max_size=1)
    writer = AuditWriter(AuditLog(db))
    db.close()  # every write now fails

    async def call() -> None:
        await writer.record(make_entry("t", "kb_schema", {}, "ok", 1.0))

    try:
        with pytest.raises(StoreError):
            anyio.run(call)
    finally:
        writer.close()
