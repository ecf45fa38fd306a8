"""`memserver import slack|email|folder`: notes named after their originals written into
source/, a long document split to fit, nothing written twice, nothing dropped silently."""

from __future__ import annotations

import datetime as dt
import json
from email.message import EmailMessage
from pathlib import Path

import pytest

from memserver.cli import main
from memserver.kb.frontmatter import read_frontmatter
from memserver.kb.manifest import Manifest, Status
from tests.fixtures.kb import MakeKB
from tests.memserver.convert.originals import (
    MSG,
    budget_thread,
    message,
    slack_export,
    write_eml,
    write_mbox,
    write_pdf,
    zip_folder,
)


def run(capsys: pytest.CaptureFixture[str], kb: Path, *argv: str) -> tuple[int, dict]:
    code = main(["--kb", str(kb), "import", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_slack_zip_becomes_a_note_per_channel_day_and_a_second_import_writes_nothing(
    make_kb: MakeKB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = make_kb()
    export = zip_folder(slack_export(tmp_path / "acme"), tmp_path / "acme.zip")
    code, first = run(capsys, paths.root, "slack", str(export))
    assert code == 0 and first["created"] == ["slack/ops/2026-10-20.md", "slack/ops/2026-10-21.md"]
    note = (paths.source / "slack/ops/2026-10-20.md").read_text(encoding="utf-8")
    front = read_frontmatter(note)
    assert (front["date"], front["channel"], front["original"]) == (
        "2026-10-20",
        "ops",
        "acme.zip",
    )
    assert front["participants"] == ["Priya Shah", "Tom Becker"]
    code, again = run(capsys, paths.root, "slack", str(export))
    assert (code, again["created"], again["updated"]) == (0, [], [])
    assert again["unchanged"] == first["created"]
    statuses = {e.path: e.status for e in Manifest(paths).scan().entries}
    assert statuses == dict.fromkeys(first["created"], Status.PENDING)


def test_an_mbox_becomes_a_note_per_thread_under_its_name(
    make_kb: MakeKB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = make_kb()
    code, out = run(capsys, paths.root, "email", str(write_mbox(tmp_path / "team.mbox")))
    assert code == 0 and out["created"] == [
        "email/team.mbox/2026-10-14-plover-budget-001.md",
        "email/team.mbox/2026-11-02-wren-offsite-002.md",
        "email/team.mbox/2026-11-03-salaries-003.md",
    ]


def test_a_folder_import_splits_a_long_pdf_copies_notes_and_reports_what_it_cannot_read(
    make_kb: MakeKB,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_MAX_SOURCE_BYTES", "20000")
    paths = make_kb()
    wiki = tmp_path / "wiki"
    (wiki / "reports").mkdir(parents=True)
    write_pdf(wiki / "reports" / "osprey.pdf", pages=12)
    (wiki / "readme.md").write_text("# Wiki\n\nExported pages.\n", encoding="utf-8")
    (wiki / "logo.bin").write_bytes(b"\x00\x01")
    code, out = run(capsys, paths.root, "folder", str(wiki), "--into", "docs")
    assert code == 1  # something was refused, and said so
    assert out["refused"] == [{"path": "logo.bin", "why": "no converter reads .bin files"}]
    parts = [p for p in out["created"] if p.startswith("docs/reports/osprey.pdf/")]
    assert len(parts) > 1 and "docs/readme.md" in out["created"]
    for rel in parts:
        text = (paths.source / rel).read_text(encoding="utf-8")
        assert len(text.encode()) <= 20_000
        front = read_frontmatter(text)
        assert front["date"] == "2026-10-12" and front["author"] == "Tom Becker"
        assert front["original"] == "reports/osprey.pdf"
    joined = "".join((paths.source / rel).read_text(encoding="utf-8") for rel in parts)
    assert [n for n in range(1, 13) if f"Osprey report page {n}\n" not in joined] == []


def test_an_import_cannot_write_outside_source(
    make_kb: MakeKB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = make_kb()
    code = main(["--kb", str(paths.root), "import", "email", str(tmp_path), "--into", "../out"])
    assert code == 2 and "outside source/" in capsys.readouterr().err


def budget_inbox(tmp_path: Path) -> Path:
    """A mail folder holding the Plover budget thread: a.eml and its reply, b.eml."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    first, reply = budget_thread()
    write_eml(inbox / "a.eml", first)
    write_eml(inbox / "b.eml", reply)
    return inbox


def test_a_folder_of_eml_messages_is_threaded_together(
    make_kb: MakeKB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = make_kb()
    inbox = budget_inbox(tmp_path)
    write_eml(inbox / "c.eml", message_alone())
    code, out = run(capsys, paths.root, "email", str(inbox))
    assert code == 0 and out["created"] == [
        "email/2026-10-14-plover-budget-001.md",
        "email/2026-11-05-kite-launch-002.md",
    ]
    text = (paths.source / out["created"][0]).read_text(encoding="utf-8")
    assert text.index("needs a budget") < text.index("Approved")
    kite = (paths.source / out["created"][1]).read_text(encoding="utf-8")
    assert "From now on we ship weekly." in kite  # mbox's escaped "From " line read back


def test_an_outlook_message_in_a_mail_folder_is_a_note_of_its_own(
    make_kb: MakeKB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = make_kb()
    inbox = budget_inbox(tmp_path)
    (inbox / "outer.msg").write_bytes(MSG.read_bytes())
    code, out = run(capsys, paths.root, "email", str(inbox))
    assert code == 0 and out["refused"] == [], out
    assert sorted(out["created"]) == ["email/outer.msg.md", "email/thread.md"]
    note = read_frontmatter((paths.source / "email/outer.msg.md").read_text(encoding="utf-8"))
    assert (note["title"], str(note["date"]), note["original"]) == (
        "outer subject",
        "2016-11-15",
        "outer.msg",
    )


def message_alone() -> EmailMessage:
    return message(
        "Kite launch",
        "Priya Shah <priya@acme.example>",
        "Team <team@acme.example>",
        dt.datetime(2026, 11, 5, 9, 0, tzinfo=dt.UTC),
        "Kite launches on December 1.\nFrom now on we ship weekly.\n",
        "<kite-1@acme.example>",
    )


def test_a_slack_export_folder_imports_like_its_zip(
    make_kb: MakeKB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = make_kb()
    code, out = run(
        capsys, paths.root, "slack", str(slack_export(tmp_path / "acme")), "--into", "chat"
    )
    assert code == 0 and out["created"] == ["chat/ops/2026-10-20.md", "chat/ops/2026-10-21.md"]
    front = read_frontmatter((paths.source / "chat/ops/2026-10-21.md").read_text("utf-8"))
    assert (front["original"], front["participants"]) == ("acme", ["Priya Shah"])
