"""Token store: secrets shown once, only hashes stored, expiry, revocation, scope."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from memserver.errors import NotFoundError, ScopeError
from memserver.scope import Scope
from memserver.tokens import TokenError, TokenStore, hash_secret, parse_folders, parse_instant

NOW = dt.datetime(2026, 9, 20, 12, 0, tzinfo=dt.UTC)
KNOWN = ("people", "meetings", "decisions")


def test_created_secret_verifies_and_only_its_hash_is_stored(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    created = store.create("reader", "people,meetings", known_folders=KNOWN)
    assert created.secret.startswith("ms_") and len(created.secret) > 40
    raw = (tmp_path / "tokens.json").read_text()
    assert created.secret not in raw
    assert hash_secret(created.secret) in raw
    token = store.verify(created.secret)
    assert token is not None and token.name == "reader"
    assert token.folders == ("meetings", "people") and not token.write


def test_unknown_or_malformed_secret_is_refused(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    created = store.create("reader", "*")
    assert store.verify(created.secret + "x") is None
    assert store.verify("not-a-token") is None
    assert store.verify("") is None


def test_expired_token_is_refused(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    created = store.create("temp", "*", expires=NOW + dt.timedelta(hours=1), now=NOW)
    assert store.verify(created.secret, now=NOW + dt.timedelta(minutes=59)) is not None
    assert store.verify(created.secret, now=NOW + dt.timedelta(hours=1)) is None
    assert store.get("temp").status(NOW + dt.timedelta(days=1)) == "expired"


def test_revoked_token_is_refused_by_a_store_that_already_cached_it(tmp_path: Path) -> None:
    server_view = TokenStore(tmp_path)
    cli_view = TokenStore(tmp_path)
    created = cli_view.create("bot", "people")
    assert server_view.verify(created.secret) is not None
    cli_view.revoke("bot")
    assert server_view.verify(created.secret) is None
    assert server_view.get("bot").status() == "revoked"


def test_duplicate_name_is_refused_until_revoked(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    first = store.create("bot", "people")
    with pytest.raises(TokenError, match="revoke it first"):
        store.create("bot", "people")
    store.revoke("bot")
    second = store.create("bot", "meetings")
    assert store.verify(first.secret) is None
    assert store.verify(second.secret) is not None


def test_unknown_folder_names_the_valid_ones() -> None:
    with pytest.raises(TokenError) as info:
        parse_folders("people,planets", KNOWN)
    assert "planets" in str(info.value) and "meetings" in str(info.value)
    assert parse_folders("source, people", KNOWN) == ("people", "source")
    assert parse_folders("people,*", KNOWN) == ("*",)


def test_bad_names_expiry_and_missing_tokens_are_user_errors(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    with pytest.raises(TokenError, match="invalid token name"):
        store.create("no spaces", "*")
    with pytest.raises(TokenError, match="past"):
        store.create("old", "*", expires=NOW - dt.timedelta(days=1), now=NOW)
    with pytest.raises(NotFoundError):
        store.revoke("ghost")
    with pytest.raises(TokenError, match="duration"):
        parse_instant("soon")


def test_expiry_parsing_accepts_durations_and_iso() -> None:
    assert parse_instant("30d", NOW) == NOW + dt.timedelta(days=30)
    assert parse_instant("12h", NOW) == NOW + dt.timedelta(hours=12)
    assert parse_instant("1d", NOW, past=True) == NOW - dt.timedelta(days=1)
    assert parse_instant("2026-12-31", NOW) == dt.datetime(2026, 12, 31, tzinfo=dt.UTC)
    assert parse_instant("2026-12-31T10:00:00+08:00", NOW).utcoffset() == dt.timedelta(hours=8)


def test_store_file_is_private_and_readable_json(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.create("a", "*", write=True)
    path = tmp_path / "tokens.json"
    assert path.stat().st_mode & 0o077 == 0
    data = json.loads(path.read_text())
    assert data["tokens"][0]["write"] is True


def test_scope_of_token_separates_source_and_folders(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
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


def _kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    kb.mkdir()
    example = Path(__file__).resolve().parents[2] / "example_kb" / "schema.yaml"
    (kb / "schema.yaml").write_text(example.read_text())
    return kb


def test_cli_create_prints_the_secret_once_and_list_never_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memserver import cli

    kb = str(_kb(tmp_path))
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


def test_cli_revoke_and_mistakes_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memserver import cli

    kb = str(_kb(tmp_path))
    assert cli.main(["--kb", kb, "token", "create", "--name", "bot", "--folders", "people"]) == 0
    assert cli.main(["--kb", kb, "token", "revoke", "--name", "bot"]) == 0
    capsys.readouterr()
    assert cli.main(["--kb", kb, "token", "list"]) == 0
    assert "revoked" in capsys.readouterr().out
    assert cli.main(["--kb", kb, "token", "create", "--name", "x", "--folders", "planets"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "planets" in err and "people" in err
    assert cli.main(["--kb", kb, "token", "revoke", "--name", "ghost"]) == 2
    assert cli.main(["--kb", kb, "audit", "--since", "yesterday-ish"]) == 2
