"""`memserver init`: seed once, migrate, secrets written once and reused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memserver.cli import main

REPO = Path(__file__).resolve().parents[3]


def test_init_seeds_an_empty_kb_once_and_keeps_its_secrets(
    tmp_path: Path,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("READ_AGENT_API_KEY", "from-the-env")  # init always writes the file
    kb, secrets = tmp_path / "kb", tmp_path / "secrets"
    argv = [
        "--kb",
        str(kb),
        "init",
        "--secrets",
        str(secrets),
        "--seed",
        str(REPO / "example_kb"),
        "--json",
    ]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["seeded"] is True and (kb / "schema.yaml").is_file()
    assert not (kb / "knowledge").exists() and not (kb / "manifest.json").exists()
    saved = {p.name: p.read_text() for p in secrets.iterdir()}
    assert sorted(saved) == ["ingest.token", "read-agent.key", "read.token"]
    assert saved["read-agent.key"].startswith("ra_")
    assert oct(secrets.stat().st_mode & 0o777) == "0o700"

    (kb / "source" / "mine.md").write_text("# Mine\n", encoding="utf-8")
    assert main(argv) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["seeded"] is False and (kb / "source" / "mine.md").is_file()
    assert {p.name: p.read_text() for p in secrets.iterdir()} == saved


def test_init_without_a_kb_or_a_seed_says_what_to_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--kb", str(tmp_path / "empty"), "init", "--secrets", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert code == 2 and "no schema.yaml in" in err and "--seed DIR" in err
    assert not (tmp_path / "s").exists()
