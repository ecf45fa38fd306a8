"""`memserver migrate | reindex | stats | get | history | restore` through the real CLI."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memserver.cli import main
from memserver.kb.layout import KBPaths
from memserver.kb.page import Page, TimelineEntry, render_page
from memserver.kb.schema import load_schema


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def config(tmp_path: Path, dims: int = 384) -> str:
    path = tmp_path / f"config-{dims}.yaml"
    path.write_text(f"embedding:\n  provider: hash\n  dims: {dims}\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def kb_args(
    example_kb: KBPaths, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    monkeypatch.setenv("DATABASE_URL", database_url)
    spec = load_schema(example_kb.schema).folder("people")
    page = Page(
        "Alice Chen",
        "person",
        fields={"role": "CTO"},
        sections={"Summary": "Alice runs engineering."},
        timeline=(TimelineEntry(date(2026, 3, 1), "Became CTO."),),
    )
    path = example_kb.page_path("people", "alice-chen")
    path.parent.mkdir(parents=True)
    path.write_text(render_page(page, spec), encoding="utf-8")
    return ["--kb", str(example_kb.root), "--config", config(tmp_path)]


def as_json(out: str) -> Any:
    return json.loads(out)


def test_migrate_reports_up_to_date(kb_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *kb_args, "migrate")
    assert code == 0 and "up to date" in out
    code, out, _ = run(capsys, *kb_args, "migrate", "--json")
    assert code == 0 and as_json(out)["applied"] == [] and "001_init" in as_json(out)["migrations"]


def test_reindex_stats_get_history_restore(
    kb_args: list[str], example_kb: KBPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, *kb_args, "reindex", "--json")
    report = as_json(out)
    assert code == 0 and report["indexed"] == 1 and report["sources_indexed"] == 28
    code, out, _ = run(capsys, *kb_args, "reindex")
    assert code == 0 and "0 indexed, 1 unchanged" in out

    code, out, _ = run(capsys, *kb_args, "stats", "--json")
    stats = as_json(out)
    assert code == 0 and stats["folders"] == {"people": 1}
    assert stats["embedding"]["model"] == "hash:384"
    code, out, _ = run(capsys, *kb_args, "stats")
    assert code == 0 and "1 pages" in out

    code, out, _ = run(capsys, *kb_args, "get", "people/alice-chen")
    assert code == 0 and out == example_kb.page_path("people", "alice-chen").read_text("utf-8")
    code, out, _ = run(capsys, *kb_args, "get", "people/alice-chen", "--json")
    assert as_json(out)["page"]["fields"] == {"role": "CTO"} and as_json(out)["version"] == 1

    path = example_kb.page_path("people", "alice-chen")
    path.write_text(path.read_text("utf-8").replace("role: CTO", "role: CEO"), "utf-8")
    run(capsys, *kb_args, "reindex")
    code, out, _ = run(capsys, *kb_args, "history", "people/alice-chen", "--json")
    assert [v["version"] for v in as_json(out)["versions"]] == [2, 1]
    code, out, _ = run(capsys, *kb_args, "history", "people/alice-chen")
    assert code == 0 and "reindex" in out

    code, out, _ = run(capsys, *kb_args, "restore", "people/alice-chen", "--version", "1")
    assert code == 0 and "restored as version 3" in out
    assert "role: CTO" in path.read_text("utf-8")
    code, out, _ = run(capsys, *kb_args, "history", "people/alice-chen", "--json")
    assert as_json(out)["versions"][0]["written_by"] == "cli"


def test_missing_page_is_one_line_exit_2(
    kb_args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, *kb_args, "get", "people/nobody")
    assert code == 2 and err.startswith("memserver: error: no page 'people/nobody'")
    code, _, err = run(capsys, *kb_args, "get", "nobody")
    assert code == 2 and "folder/slug" in err


def test_invalid_page_makes_reindex_exit_1_with_its_problems(
    kb_args: list[str], example_kb: KBPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = example_kb.page_path("people", "bad")
    bad.write_text("---\ntitle: Bad\ntype: robot\n---\n", "utf-8")
    code, out, _ = run(capsys, *kb_args, "reindex")
    assert code == 1
    assert "skipped knowledge/people/bad.md:" in out and "type 'robot'" in out


def test_model_change_needs_reindex_force(
    kb_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, *kb_args, "reindex")[0] == 0
    other = [*kb_args[:2], "--config", config(tmp_path, dims=256)]
    code, _, err = run(capsys, *other, "reindex")
    assert code == 2 and "embedding model changed from hash:384 to hash:256" in err
    assert "reindex --force" in err
    code, out, _ = run(capsys, *other, "reindex", "--force", "--json")
    assert code == 0 and as_json(out)["indexed"] == 1
    code, out, _ = run(capsys, *other, "stats", "--json")
    assert as_json(out)["embedding"] == {"model": "hash:256", "dims": 256, "embedder": "hash:256"}
