"""`memserver schema-check`, `scan` and `page-check`: output, JSON, exit codes, no tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memserver.cli import main
from memserver.kb.layout import KBPaths
from memserver.kb.page import Page, render_page
from memserver.kb.schema import load_schema
from tests.fixtures.kb import MakeKB

REPO = Path(__file__).resolve().parents[3]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_schema_check_passes_on_the_example_kb(
    example_kb: KBPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--kb", str(example_kb.root), "schema-check")
    assert code == 0 and "OK" in out and "people" in out
    code, out, _ = run(capsys, "--kb", str(example_kb.root), "schema-check", "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"] is True
    assert "meetings" in [f["name"] for f in data["schema"]["folders"]]


def test_schema_check_notes_a_schema_that_trusts_no_source(
    make_kb: MakeKB, example_kb: KBPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = make_kb("folders:\n  - name: a\n    type: a\n    description: A\n")
    code, out, _ = run(capsys, "--kb", str(kb.root), "schema-check")
    assert code == 0 and "note: no source is trusted" in out and "memserver review" in out
    code, out, _ = run(capsys, "--kb", str(kb.root), "schema-check", "--json")
    assert json.loads(out)["notes"][0].startswith("no source is trusted")
    # the example trusts its decisions and meetings folders: nothing to note
    code, out, _ = run(capsys, "--kb", str(example_kb.root), "schema-check", "--json")
    assert json.loads(out)["notes"] == []


def test_schema_check_lists_every_problem_and_exits_2(
    make_kb: MakeKB, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = make_kb(
        "timezone: Nowhere/City\nfolders:\n  - name: a\n    type: a\n    description: A\n"
        "    fields:\n      - {name: x, type: strng}\n"
    )
    code, out, err = run(capsys, "--kb", str(kb.root), "schema-check")
    assert code == 2 and out == ""
    assert err.startswith("memserver: error: ") and "2 schema problems" in err
    assert "timezone (line 1)" in err and "folders[0].fields[0].type (line 7)" in err
    assert "Traceback" not in err
    code, out, _ = run(capsys, "--kb", str(kb.root), "schema-check", "--json")
    data = json.loads(out)
    assert code == 2 and data["ok"] is False
    assert {p["location"] for p in data["problems"]} == {"timezone", "folders[0].fields[0].type"}


def test_scan_prints_counts_and_json_lists_sources(
    make_kb: MakeKB, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = make_kb(sources={"a.md": "A", "b/c.md": "C", "bin.dat": b"\x00\x01"})
    code, out, _ = run(capsys, "--kb", str(kb.root), "scan", "--no-index")
    assert code == 0 and "pending" in out and "failed: bin.dat: binary" in out
    code, out, _ = run(capsys, "--kb", str(kb.root), "scan", "--no-index", "--json")
    data = json.loads(out)
    assert (
        code == 0
        and data["counts"]["pending"] == 2
        and data["index"] is None
        and data["counts"]["failed"] == 1
    )
    assert [s["path"] for s in data["sources"]] == ["a.md", "b/c.md", "bin.dat"]


def test_scan_of_a_corrupt_manifest_is_one_clear_line(
    make_kb: MakeKB, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = make_kb(sources={"a.md": "A"})
    kb.manifest.write_text("{oops")
    code, _, err = run(capsys, "--kb", str(kb.root), "scan", "--no-index")
    assert code == 2 and "manifest.json is corrupt" in err and len(err.strip().splitlines()) == 1
    assert kb.manifest.read_text() == "{oops"


def write_page(kb: KBPaths, folder: str, name: str, text: str) -> Path:
    path = kb.knowledge / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_page_check_accepts_a_valid_page_and_infers_its_folder(
    make_kb: MakeKB, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = make_kb()
    folder = load_schema(kb.root).folder("meetings")
    page = Page("Weekly sync", "meeting", {"date": "2026-09-08"}, sections={"Summary": "ok"})
    path = write_page(kb, "meetings", "2026-09-08-weekly-sync.md", render_page(page, folder))
    code, out, _ = run(capsys, "--kb", str(kb.root), "page-check", str(path))
    assert code == 0 and "OK" in out and "2026-09-08" in out
    code, out, _ = run(capsys, "--kb", str(kb.root), "page-check", str(path), "--json")
    data = json.loads(out)
    assert data == {
        "ok": True,
        "file": str(path),
        "folder": "meetings",
        "slug": "2026-09-08-weekly-sync",
        "effective_date": "2026-09-08",
        "canonical": True,
    }


def test_page_check_reports_every_problem(
    make_kb: MakeKB, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = make_kb()
    text = "---\ntitle: Bob\ntype: person\nrole: [a]\nage: 3\n---\n\n## Bogus\nx\n"
    path = write_page(kb, "people", "robert.md", text)
    code, _, err = run(capsys, "--kb", str(kb.root), "page-check", str(path))
    assert code == 2 and "3 page problems" in err
    assert "fields.role" in err and "fields.age" in err and "sections.Bogus" in err
    fixed = write_page(kb, "people", "robert.md", "---\ntitle: Bob\ntype: person\n---\n")
    code, out, _ = run(capsys, "--kb", str(kb.root), "page-check", str(fixed), "--json")
    data = json.loads(out)
    assert code == 2 and data["problems"][0]["location"] == "file"
    assert "bob.md" in data["problems"][0]["fix"]


def test_page_check_needs_a_folder_outside_knowledge(
    make_kb: MakeKB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = make_kb()
    loose = tmp_path / "bob.md"
    loose.write_text("---\ntitle: Bob\ntype: person\n---\n")
    code, _, err = run(capsys, "--kb", str(kb.root), "page-check", str(loose))
    assert code == 2 and "pass --folder" in err
    code, _, _ = run(capsys, "--kb", str(kb.root), "page-check", str(loose), "--folder", "people")
    assert code == 0
    code, _, err = run(capsys, "--kb", str(kb.root), "page-check", str(loose), "--folder", "nope")
    assert code == 2 and "no folder 'nope'" in err and "people, meetings" in err
    code, _, err = run(capsys, "--kb", str(kb.root), "page-check", str(tmp_path / "missing.md"))
    assert code == 2 and "does not exist" in err


def test_console_script_prints_no_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "memserver.cli", "--kb", str(tmp_path / "none"), "scan"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("memserver: error: ") and "Traceback" not in proc.stderr
