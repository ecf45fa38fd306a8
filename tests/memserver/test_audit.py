"""Audit log: one row per call, digests not arguments, filters, last used."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

from memserver.audit import AuditLog, digest_arguments

T0 = dt.datetime(2026, 9, 20, 12, 0, tzinfo=dt.UTC)


def test_rows_hold_a_digest_not_the_arguments(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    entry = log.record("reader", "kb_get_page", {"id": "people/secret-agent"}, "ok", 3.2)
    text = (tmp_path / "audit.jsonl").read_text()
    assert "secret-agent" not in text
    assert entry.args_sha256 in text
    assert [e.tool for e in log.entries()] == ["kb_get_page"]


def test_digest_is_canonical() -> None:
    assert digest_arguments({"a": 1, "b": [1, 2]}) == digest_arguments({"b": [1, 2], "a": 1})
    assert digest_arguments({"a": 1}) != digest_arguments({"a": 2})
    assert digest_arguments(None) == digest_arguments({})


def test_query_filters_by_time_and_token(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    for i, token in enumerate(["a", "b", "a", "c"]):
        log.record(token, "kb_schema", {}, "ok", 1.0, time=T0 + dt.timedelta(hours=i))
    assert [e.token for e in log.query(since=T0 + dt.timedelta(hours=1))] == ["b", "a", "c"]
    assert len(log.query(token="a")) == 2
    assert [e.token for e in log.query(limit=2)] == ["a", "c"]
    assert log.query(limit=0) == []
    assert log.last_used() == {
        "a": T0 + dt.timedelta(hours=2),
        "b": T0 + dt.timedelta(hours=1),
        "c": T0 + dt.timedelta(hours=3),
    }


def test_error_outcomes_are_kept(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    log.record("a", "kb_put_page", {}, "error:validation", 5.0)
    (entry,) = log.query()
    assert entry.outcome == "error:validation" and not entry.ok


def test_concurrent_appends_from_two_logs_do_not_tear_lines(tmp_path: Path) -> None:
    logs = [AuditLog(tmp_path), AuditLog(tmp_path)]

    def work(log: AuditLog, name: str) -> None:
        for _ in range(200):
            log.record(name, "kb_list_pages", {"folder": "x" * 50}, "ok", 0.5)

    threads = [threading.Thread(target=work, args=(log, f"t{i}")) for i, log in enumerate(logs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert len(lines) == 400
    assert len(list(logs[0].entries())) == 400
    for log in logs:
        log.close()


def test_missing_or_torn_log_reads_as_empty_rows(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    assert log.query() == [] and log.last_used() == {}
    (tmp_path / "audit.jsonl").write_text('{"time": "broken\n')
    assert log.query() == []
