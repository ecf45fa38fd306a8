"""Originals dropped into source/: converted once per version (the text cached under
.memserver/, never beside the original), the ledger keeping the original's path and
hash, and every hostile or unusable file one failed entry with its reason and fix."""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memserver.convert.note import Note
from memserver.kb import converted
from memserver.kb.manifest import Manifest, Status
from tests.fixtures.kb import MakeKB
from tests.memserver.convert.originals import (
    MSG,
    VTT,
    pdf_bomb,
    slack_export,
    write_docx,
    write_epub,
    write_mbox,
    write_pdf,
    write_xlsx,
    xlsx_with_entities,
    zip_bomb_docx,
)


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the originals converted (the real converter runs)."""
    seen: list[str] = []
    real: Callable[..., list[Note]] = converted.convert_isolated

    def counted(kind: str, name: str, data: bytes, *args: Any, **kwargs: Any) -> list[Note]:
        seen.append(name)
        return real(kind, name, data, *args, **kwargs)

    monkeypatch.setattr(converted, "convert_isolated", counted)
    return seen


def test_a_transcript_is_read_as_its_note_and_converted_once_per_version(
    make_kb: MakeKB, conversions: list[str]
) -> None:
    paths = make_kb(sources={"meetings/2026-09-22-globex-sync.vtt": VTT})
    manifest = Manifest(paths)
    [entry] = manifest.scan().entries
    original = (paths.source / entry.path).read_bytes()
    assert (entry.path, entry.status, entry.doc_date) == (
        "meetings/2026-09-22-globex-sync.vtt",
        Status.PENDING,
        dt.date(2026, 9, 22),
    )
    assert entry.hash == hashlib.sha256(original).hexdigest()  # the original's hash
    text, digest, _ = manifest.read_source(entry.path)
    assert digest == entry.hash and text.startswith('---\ntitle: "Globex sync"')
    assert "Bob Martinez: The Pueblo warehouse goes live" in text
    assert sorted(p.name for p in (paths.source / "meetings").iterdir()) == [
        "2026-09-22-globex-sync.vtt"  # nothing written beside the original
    ]
    assert len(list((paths.state / "converted").iterdir())) == 1
    manifest.scan()
    manifest.read_text(entry.path)
    assert conversions == ["2026-09-22-globex-sync.vtt"]  # unchanged: never again
    (paths.source / entry.path).write_text(VTT.replace("twelve", "fifteen"), encoding="utf-8")
    [changed] = manifest.scan().entries
    assert changed.hash != entry.hash and "fifteen" in manifest.read_text(entry.path)[0]
    manifest.scan()
    assert conversions == ["2026-09-22-globex-sync.vtt"] * 2  # the change: converted once
    assert manifest.reset(entry.path).status is Status.PENDING
    assert conversions == ["2026-09-22-globex-sync.vtt"] * 3  # a reset converts again


@pytest.mark.parametrize(
    ("name", "make", "day", "who"),
    [
        ("handbook.docx", write_docx, dt.date(2026, 8, 3), 'author: "Maria Lopez"'),
        ("costs.xlsx", write_xlsx, dt.date(2026, 9, 15), 'author: "Alex Kim"'),
        ("manual.epub", write_epub, dt.date(2026, 6, 15), 'author: "Priya Shah"'),
        ("outer.msg", lambda _: MSG, dt.date(2016, 11, 15), 'participants: ["outer@foo.bar"]'),
    ],
)
def test_a_document_is_dated_by_its_own_metadata(
    make_kb: MakeKB,
    tmp_path: Path,
    name: str,
    make: Callable[[Path], Path],
    day: dt.date,
    who: str,
) -> None:
    original = make(tmp_path / name).read_bytes()
    paths = make_kb(sources={name: original})
    manifest = Manifest(paths)
    [entry] = manifest.scan().entries
    assert (entry.status, entry.doc_date, entry.size) == (Status.PENDING, day, len(original))
    assert entry.hash == hashlib.sha256(original).hexdigest()
    assert f"\n{who}\n" in manifest.read_text(name)[0]  # the note's frontmatter


def test_hostile_and_unusable_originals_each_fail_once_with_the_reason_and_the_fix(
    make_kb: MakeKB, tmp_path: Path, conversions: list[str]
) -> None:
    paths = make_kb(
        sources={
            "bomb.docx": zip_bomb_docx(tmp_path / "b.docx").read_bytes(),
            "bomb.pdf": pdf_bomb(tmp_path / "b.pdf").read_bytes(),
            "locked.pdf": write_pdf(tmp_path / "l.pdf", password="pw").read_bytes(),
            "broken.pdf": b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog",
            "broken.docx": b"PK\x03\x04 truncated",
            "bomb.xlsx": zip_bomb_docx(tmp_path / "b.xlsx").read_bytes(),
            "broken.xlsx": write_xlsx(tmp_path / "c.xlsx").read_bytes()[:2000],
            "entities.xlsx": xlsx_with_entities(tmp_path / "e.xlsx").read_bytes(),
            "broken.epub": write_epub(tmp_path / "m.epub").read_bytes()[:2000],
            "broken.msg": MSG.read_bytes()[:4096],
            "text.msg": b"From: someone\n\nnot an Outlook file",
            "team.mbox": write_mbox(tmp_path / "team.mbox").read_bytes(),
            "notes.md": "# Fine\n\nA plain note.\n",
        }
    )
    manifest = Manifest(paths)
    entries = {e.path: e for e in manifest.scan().entries}
    assert entries.pop("notes.md").status is Status.PENDING
    assert {e.status for e in entries.values()} == {Status.FAILED}
    reasons = {path: e.error or "" for path, e in entries.items()}
    assert "a zip bomb?" in reasons["bomb.docx"]
    assert "a PDF bomb?" in reasons["bomb.pdf"]
    assert "encrypted PDF" in reasons["locked.pdf"] and "qpdf --decrypt" in reasons["locked.pdf"]
    assert "not a readable PDF" in reasons["broken.pdf"]
    assert "not a valid zip archive" in reasons["broken.docx"]
    assert "a zip bomb?" in reasons["bomb.xlsx"]
    assert "not a valid zip archive" in reasons["broken.xlsx"]
    assert "openpyxl" in reasons["entities.xlsx"]  # entities refused, unexpanded
    assert "failed while reading the workbook" in reasons["entities.xlsx"]
    assert "not a valid zip archive" in reasons["broken.epub"]
    assert "truncated or damaged Outlook message" in reasons["broken.msg"]
    assert "not an Outlook message" in reasons["text.msg"]
    assert "holds 3 notes" in reasons["team.mbox"]
    assert "memserver import email FILE" in reasons["team.mbox"]
    manifest.scan()
    assert sorted(conversions) == sorted(entries)  # failures are remembered too


def test_a_note_longer_than_the_limit_is_refused_with_the_command_that_splits_it(
    make_kb: MakeKB, tmp_path: Path
) -> None:
    pdf = write_pdf(tmp_path / "long.pdf", pages=30).read_bytes()
    paths = make_kb(sources={"report.pdf": pdf})
    [entry] = Manifest(paths, max_bytes=20_000).scan().entries
    assert entry.status is Status.FAILED and entry.error is not None
    assert "larger than the limit of 20,000 bytes" in entry.error
    assert "memserver import folder DIR" in entry.error


def test_a_slack_export_folder_dropped_in_is_refused_with_the_import_command(
    make_kb: MakeKB,
) -> None:
    paths = make_kb(sources={"notes.json": '{"not": "slack"}'})
    slack_export(paths.source / "exports" / "acme")
    entries = {e.path: e for e in Manifest(paths).scan().entries}
    assert entries.pop("notes.json").status is Status.PENDING  # other JSON is a note
    assert sorted(entries) == [
        "exports/acme/channels.json",
        "exports/acme/ops/2026-10-20.json",
        "exports/acme/ops/2026-10-21.json",
        "exports/acme/users.json",
    ]
    assert {e.status for e in entries.values()} == {Status.FAILED}
    assert {e.error for e in entries.values()} == {
        "part of the Slack export exports/acme/ (it holds users.json and channels.json), "
        "which is imported whole; move the export out of source/ and run `memserver import "
        "slack DIR`, which writes a note per channel and day"
    }


def test_a_text_over_the_limit_is_never_cached_and_scans_stay_light(
    make_kb: MakeKB, conversions: list[str]
) -> None:
    """The issue's workbook: 150,000 cells of one shared string, 300 MB of table, was
    converted whole, cached, and read back by every scan. The conversion stops at the
    limit and what is cached is its reason (a few hundred bytes); a scan reads that."""
    from tests.fixtures.hostile_files import shared_string_xlsx

    paths = make_kb(sources={"shared.xlsx": shared_string_xlsx(20_000)})
    manifest = Manifest(paths)
    [entry] = manifest.scan().entries
    assert entry.status is Status.FAILED and "larger than the limit" in (entry.error or "")
    [cached] = (paths.state / "converted").iterdir()
    assert cached.stat().st_size < 1_000
    manifest.scan()
    assert conversions == ["shared.xlsx"]


def test_each_original_has_its_entry_as_soon_as_it_is_converted(
    make_kb: MakeKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan of many slow files showed nothing until all were converted (20 hostile
    files: 190 s). Each entry is written when its file is done: here the second file
    waits until the first one's entry is in manifest.json."""
    import threading

    from memserver.kb import manifest as manifest_module

    paths = make_kb(sources={"meetings/2026-09-22-a.vtt": VTT, "meetings/2026-09-23-b.vtt": VTT})
    monkeypatch.setattr(manifest_module, "CONVERT_WORKERS", 1)
    real: Callable[..., list[Note]] = converted.convert_isolated
    first_written = threading.Event()

    def written() -> bool:
        listed = paths.manifest.read_text(encoding="utf-8") if paths.manifest.exists() else ""
        return '"meetings/2026-09-22-a.vtt"' in listed

    def slow_second(kind: str, name: str, data: bytes, *args: Any, **kwargs: Any) -> list[Note]:
        if name.endswith("b.vtt"):  # bounded: the scan runs in this thread
            deadline = time.monotonic() + 60
            while not written():
                assert time.monotonic() < deadline, "the first entry was not written"
                time.sleep(0.02)
            first_written.set()
        return real(kind, name, data, *args, **kwargs)

    monkeypatch.setattr(converted, "convert_isolated", slow_second)
    entries = Manifest(paths).scan().entries
    assert first_written.is_set()
    assert [e.status for e in entries] == [Status.PENDING, Status.PENDING]
