"""`memserver scan` (the ledger and the source index) and `memserver source reset`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memserver.cli import main
from memserver.kb.layout import KBPaths
from memserver.kb.manifest import Manifest, Status
from tests.fixtures.kb import MakeKB

REPO = Path(__file__).resolve().parents[3]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def as_json(out: str) -> Any:
    return json.loads(out)


def test_scan_indexes_a_new_note_so_search_with_sources_finds_it_at_once(
    example_kb: KBPaths,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    args = ["--kb", str(example_kb.root), "--config", str(REPO / "config.dev.yaml")]
    code, out, _ = run(capsys, *args, "scan", "--json")
    first = as_json(out)
    assert code == 0 and first["index"]["indexed"] == first["counts"]["pending"] > 0
    note = example_kb.source / "inbox" / "2026-07-01-quokka.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("# Quokka review\n\nThe zanzibarite supplier was dropped.\n", "utf-8")

    code, out, _ = run(capsys, *args, "scan")
    assert code == 0 and "index: 1 indexed" in out
    code, out, _ = run(capsys, *args, "search", "--include-sources", "--json", "zanzibarite")
    assert code == 0 and "inbox/2026-07-01-quokka.md" in out
    code, out, _ = run(capsys, *args, "stats", "--json")
    assert as_json(out)["tables"]["source_docs"] == first["counts"]["pending"] + 1

    note.unlink()  # a removed note leaves the index with the next scan
    code, out, _ = run(capsys, *args, "scan", "--json")
    assert code == 0 and as_json(out)["index"]["removed"] == 1


def failed_kb(make_kb: MakeKB) -> tuple[KBPaths, Manifest]:
    kb = make_kb(sources={"a.md": "A", "b/c.md": "C", "d.md": "D", "bin.dat": b"\x00\x01"})
    manifest = Manifest(kb)
    manifest.scan()
    for path in ("a.md", "b/c.md"):
        manifest.mark_failed(path, "embedding model changed from hash:384 to local:e5")
    return kb, manifest


def statuses(manifest: Manifest) -> dict[str, Status]:
    return {e.path: e.status for e in manifest.entries()}


def test_source_reset_failed_queues_every_failed_note_and_names_what_stays_failed(
    make_kb: MakeKB, capsys: pytest.CaptureFixture[str]
) -> None:
    kb, manifest = failed_kb(make_kb)
    code, out, _ = run(capsys, "--kb", str(kb.root), "source", "reset", "--failed")
    assert code == 1  # bin.dat still cannot be read
    assert "2 queued again" in out and "still failed: bin.dat: binary file" in out
    assert statuses(manifest) == {
        "a.md": Status.PENDING,
        "b/c.md": Status.PENDING,
        "d.md": Status.PENDING,
        "bin.dat": Status.FAILED,
    }
    assert [e.path for e in manifest.entries() if e.error is not None] == ["bin.dat"]


def test_source_reset_of_paths_queues_those_only(
    make_kb: MakeKB, capsys: pytest.CaptureFixture[str]
) -> None:
    kb, manifest = failed_kb(make_kb)
    code, out, _ = run(capsys, "--kb", str(kb.root), "source", "reset", "--json", "source/a.md")
    assert code == 0 and as_json(out)["still_failed"] == 0
    assert statuses(manifest)["a.md"] is Status.PENDING
    assert statuses(manifest)["b/c.md"] is Status.FAILED


def test_source_reset_refuses_unclear_requests_with_the_fix(
    make_kb: MakeKB, capsys: pytest.CaptureFixture[str]
) -> None:
    kb, manifest = failed_kb(make_kb)
    before = statuses(manifest)
    code, _, err = run(capsys, "--kb", str(kb.root), "source", "reset")
    assert code == 2 and "pass --failed" in err
    code, _, err = run(capsys, "--kb", str(kb.root), "source", "reset", "--failed", "a.md")
    assert code == 2 and "not both" in err
    code, _, err = run(capsys, "--kb", str(kb.root), "source", "reset", "nope.md")
    assert code == 2 and "no source file 'nope.md'" in err and "Traceback" not in err
    assert statuses(manifest) == before
