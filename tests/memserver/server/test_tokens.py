"""Token store (PostgreSQL): secrets shown once, only hashes stored, expiry, revocation."""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memserver.db.database import Database
from memserver.errors import NotFoundError, ScopeError
from memserver.server.audit import AuditLog
from memserver.server.scope import Scope
from memserver.server.tokens import (
    TokenError,
    TokenStore,
    hash_secret,
    parse_folders,
    parse_instant,
)

NOW = dt.datetime(2026, 9, 20, 12, 0, tzinfo=dt.UTC)
KNOWN = ("people", "meetings", "decisions")


@pytest.fixture
def store(database: Database) -> TokenStore:
    return TokenStore(database)


@pytest.fixture
def other_db(database_url: str) -> Iterator[Database]:
    """A second pool on the same database: another process's view (the CLI's, say)."""
    db = Database.open(None, database_url, max_size=2)
    try:
        yield db
    finally:
        db.close()


def test_created_secret_verifies_and_only_its_hash_is_stored(
    store: TokenStore, database: Database
) -> None:
    created = store.create("reader", "people,meetings", known_folders=KNOWN)
    assert created.secret.startswith("ms_") and len(created.secret) > 40
    with database.connection() as conn:
        rows = conn.execute("SELECT row_to_json(t)::text FROM api_tokens t").fetchall()
    (raw,) = (text for (text,) in rows)
    assert created.secret not in raw and created.secret.removeprefix("ms_") not in raw
    assert json.loads(raw)["sha256"] == hash_secret(created.secret)
    token = store.verify(created.secret)
    assert token is not None and token.name == "reader"
    assert token.folders == ("meetings", "people") and not token.write


def test_unknown_or_malformed_secret_is_refused(store: TokenStore) -> None:
    created = store.create("reader", "*")
    assert store.verify(created.secret + "x") is None
    assert store.verify("not-a-token") is None
    assert store.verify("") is None


def test_expired_token_is_refused(store: TokenStore) -> None:
    created = store.create("temp", "*", expires=NOW + dt.timedelta(hours=1), now=NOW)
    assert store.verify(created.secret, now=NOW + dt.timedelta(minutes=59)) is not None
    assert store.verify(created.secret, now=NOW + dt.timedelta(hours=1)) is None
    token = store.get("temp")
    assert token.expires == NOW + dt.timedelta(hours=1) and token.created == NOW
    assert token.status(NOW + dt.timedelta(days=1)) == "expired"


def test_revocation_by_another_connection_is_effective_on_the_next_verify(
    store: TokenStore, other_db: Database
) -> None:
    cli_view = TokenStore(other_db)
    created = cli_view.create("bot", "people")
    assert store.verify(created.secret) is not None
    cli_view.revoke("bot")
    assert store.verify(created.secret) is None
    assert store.get("bot").status() == "revoked"


def test_revoke_keeps_the_row_and_is_idempotent(store: TokenStore) -> None:
    store.create("bot", "people", write=True, now=NOW)
    first = store.revoke("bot", now=NOW + dt.timedelta(hours=1))
    again = store.revoke("bot", now=NOW + dt.timedelta(hours=2))
    assert first.revoked == again.revoked == NOW + dt.timedelta(hours=1)
    (listed,) = store.list()
    assert listed == first and listed.write and listed.folders == ("people",)


def test_duplicate_name_is_refused_until_revoked_and_history_is_kept(store: TokenStore) -> None:
    first = store.create("bot", "people", now=NOW)
    with pytest.raises(TokenError, match="revoke it first"):
        store.create("bot", "people")
    store.revoke("bot", now=NOW + dt.timedelta(minutes=1))
    second = store.create("bot", "meetings", now=NOW + dt.timedelta(minutes=2))
    assert store.verify(first.secret) is None
    assert store.verify(second.secret) is not None
    assert [(t.folders, t.status()) for t in store.list()] == [
        (("people",), "revoked"),
        (("meetings",), "active"),
    ]
    assert store.get("bot").sha256 == second.token.sha256


def test_concurrent_creates_of_one_name_leave_exactly_one_token(
    store: TokenStore, other_db: Database
) -> None:
    stores = [store, TokenStore(other_db)]
    barrier = threading.Barrier(len(stores), timeout=10)
    outcomes: list[str] = []

    def create(target: TokenStore) -> None:
        barrier.wait()
        try:
            target.create("race", "*")
            outcomes.append("created")
        except TokenError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=create, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert outcomes.count("created") == 1 and len(outcomes) == 2
    assert "already exists" in next(o for o in outcomes if o != "created")
    assert [t.name for t in store.list()] == ["race"]


def test_verify_and_get_are_index_lookups(store: TokenStore, database: Database) -> None:
    store.create("reader", "*")
    with database.transaction() as conn:
        conn.execute("SET LOCAL enable_seqscan = off")
        by_hash = conn.execute(
            "EXPLAIN SELECT * FROM api_tokens WHERE sha256 = %s", ("x",)
        ).fetchall()
        by_name = conn.execute(
            "EXPLAIN SELECT * FROM api_tokens WHERE name = %s", ("reader",)
        ).fetchall()
    assert "api_tokens_sha256_key" in str(by_hash)
    assert "Index" in str(by_name) and "api_tokens" in str(by_name)


def test_unknown_folder_names_the_valid_ones() -> None:
    with pytest.raises(TokenError) as info:
        parse_folders("people,planets", KNOWN)
    assert "planets" in str(info.value) and "meetings" in str(info.value)
    assert parse_folders("source, people", KNOWN) == ("people", "source")
    assert parse_folders("people,*", KNOWN) == ("*",)


def test_bad_names_expiry_and_missing_tokens_are_user_errors(store: TokenStore) -> None:
    store.create("known", "*")
    with pytest.raises(TokenError, match="invalid token name"):
        store.create("no spaces", "*")
    with pytest.raises(TokenError, match="past"):
        store.create("old", "*", expires=NOW - dt.timedelta(days=1), now=NOW)
    with pytest.raises(NotFoundError, match="known tokens: known"):
        store.revoke("ghost")
    with pytest.raises(NotFoundError):
        store.get("ghost")
    with pytest.raises(TokenError, match="duration"):
        parse_instant("soon")
    assert [t.name for t in store.list()] == ["known"]


def test_expiry_parsing_accepts_durations_and_iso() -> None:
    assert parse_instant("30d", NOW) == NOW + dt.timedelta(days=30)
    assert parse_instant("12h", NOW) == NOW + dt.timedelta(hours=12)
    assert parse_instant("1d", NOW, past=True) == NOW - dt.timedelta(days=1)
    assert parse_instant("2026-12-31", NOW) == dt.datetime(2026, 12, 31, tzinfo=dt.UTC)
    assert parse_instant("2026-12-31T10:00:00+08:00", NOW).utcoffset() == dt.timedelta(hours=8)


def test_scope_of_token_separates_source_and_folders(store: TokenStore) -> None:
    writer = Scope.of_token(store.create("w", "meetings,source", write=True).token)
    assert writer.folders == frozenset({"meetings"}) and writer.source and writer.can_use_pipeline
    assert writer.page_visible("meetings/2026-09-01-sync")
    assert not writer.page_visible("people/alice")
    assert not writer.page_visible("meetings")
    everything = Scope.of_token(store.create("all", "*").token)
    assert everything.folders is None and everything.source and not everything.write
    with pytest.raises(ScopeError, match="--write"):
        everything.require_write()
    with pytest.raises(ScopeError, match="source"):
        Scope.of_token(store.create("r", "people", write=True).token).require_pipeline()
    assert writer.filter_folders(["people", "meetings", "source"]) == ["meetings"]


# -- CLI ---------------------------------------------------------------------------------


@pytest.fixture
def kb(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DATABASE_URL", database_url)
    kb = tmp_path / "kb"
    kb.mkdir()
    example = Path(__file__).resolve().parents[3] / "example_kb" / "schema.yaml"
    (kb / "schema.yaml").write_text(example.read_text())
    return str(kb)


def test_cli_create_prints_the_secret_once_and_list_never_shows_it(
    kb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from memserver import cli

    assert (
        cli.main(["--kb", kb, "token", "create", "--name", "ingest", "--folders", "*", "--write"])
        == 0
    )
    out = capsys.readouterr()
    secret = out.out.strip()
    assert secret.startswith("ms_") and "\n" not in secret
    assert "shown only once" in out.err
    args = ["token", "create", "--name", "reader", "--folders", "people,source"]
    assert cli.main(["--kb", kb, *args, "--expires", "30d", "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert set(created) == {"name", "secret", "folders", "write", "expires"}
    assert created["folders"] == ["people", "source"] and created["write"] is False
    assert cli.main(["--kb", kb, "token", "list", "--json"]) == 0
    listed = capsys.readouterr().out
    assert secret not in listed and created["secret"] not in listed
    rows = {t["name"]: t for t in json.loads(listed)["tokens"]}
    assert rows["ingest"]["write"] is True and rows["reader"]["expires"] is not None
    assert rows["reader"]["last_used"] is None and rows["reader"]["status"] == "active"


def test_cli_list_takes_last_used_from_the_audit_log_per_token_lifetime(
    kb: str, database: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    from memserver import cli

    store, audit = TokenStore(database), AuditLog(database)
    store.create("bot", "people", now=NOW)
    audit.record("bot", "kb_schema", {}, "ok", 1.0, time=NOW + dt.timedelta(minutes=5))
    store.revoke("bot", now=NOW + dt.timedelta(minutes=10))
    store.create("bot", "*", now=NOW + dt.timedelta(minutes=20))
    audit.record("bot", "kb_schema", {}, "ok", 1.0, time=NOW + dt.timedelta(minutes=30))
    store.create("idle", "*", now=NOW)
    assert cli.main(["--kb", kb, "token", "list", "--json"]) == 0
    rows = [
        (t["name"], t["status"], t["last_used"])
        for t in json.loads(capsys.readouterr().out)["tokens"]
    ]
    assert rows == [
        ("bot", "revoked", (NOW + dt.timedelta(minutes=5)).isoformat()),
        ("bot", "active", (NOW + dt.timedelta(minutes=30)).isoformat()),
        ("idle", "active", None),
    ]


def test_cli_revoke_and_mistakes_exit_2_with_one_line(
    kb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from memserver import cli

    assert cli.main(["--kb", kb, "token", "create", "--name", "bot", "--folders", "people"]) == 0
    assert cli.main(["--kb", kb, "token", "create", "--name", "bot", "--folders", "people"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert cli.main(["--kb", kb, "token", "revoke", "--name", "bot"]) == 0
    capsys.readouterr()
    assert cli.main(["--kb", kb, "token", "list"]) == 0
    assert "revoked" in capsys.readouterr().out
    assert cli.main(["--kb", kb, "token", "create", "--name", "x", "--folders", "planets"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "planets" in err and "people" in err
    assert cli.main(["--kb", kb, "token", "revoke", "--name", "ghost"]) == 2
    assert cli.main(["--kb", kb, "audit", "--since", "yesterday-ish"]) == 2
