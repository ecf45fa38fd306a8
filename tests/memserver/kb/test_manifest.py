"""The manifest ledger: statuses, document dates, order, locking, corruption, safety."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memserver.errors import ManifestError, NotFoundError, UserError
from memserver.kb.layout import KBPaths
from memserver.kb.manifest import Manifest, SourceEntry, Status
from tests.fixtures.kb import MakeKB

REPO = Path(__file__).resolve().parents[3]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def status_of(manifest: Manifest, path: str) -> Status:
    return manifest.get(path).status


def test_scan_records_every_file_at_any_depth_as_pending(make_kb: MakeKB) -> None:
    kb = make_kb(sources={"a.md": "A", "x/y/z/deep.markdown": "B", "notes.txt": "C"})
    result = Manifest(kb).scan()
    assert [e.path for e in result.entries] == ["a.md", "notes.txt", "x/y/z/deep.markdown"]
    assert result.counts == {"pending": 3, "updated": 0, "ingested": 0, "failed": 0, "removed": 0}
    entry = result.entries[0]
    assert entry.hash == sha("A") and entry.size == 1 and entry.status is Status.PENDING
    saved = json.loads(kb.manifest.read_text())
    assert saved["version"] == 1 and set(saved["sources"]) == {e.path for e in result.entries}


def test_hidden_files_and_folders_are_skipped(make_kb: MakeKB) -> None:
    kb = make_kb(sources={".DS_Store": "x", ".git/config": "x", "a.md": "A", "d/.a.md.swp": "x"})
    assert [e.path for e in Manifest(kb).scan().entries] == ["a.md"]


def test_document_date_from_frontmatter_then_name_then_mtime(make_kb: MakeKB) -> None:
    kb = make_kb(
        sources={
            "2026-05-05-named.md": "---\ndate: 2026-01-02\n---\nbody",
            "2026-05-05-only-name.md": "no frontmatter",
            "plain.md": "no date anywhere",
            "bad-front.md": "---\ndate: [unclosed\n---\n",
        }
    )
    stamp = dt.datetime(2025, 12, 31, 23, 30, tzinfo=dt.UTC).timestamp()
    for name in ("plain.md", "bad-front.md"):
        os.utime(kb.source / name, (stamp, stamp))
    dates = {e.path: e.doc_date for e in Manifest(kb).scan().entries}
    assert dates == {
        "2026-05-05-named.md": dt.date(2026, 1, 2),
        "2026-05-05-only-name.md": dt.date(2026, 5, 5),
        "plain.md": dt.date(2025, 12, 31),
        "bad-front.md": dt.date(2025, 12, 31),
    }


def test_pending_comes_oldest_document_first_then_by_path(make_kb: MakeKB) -> None:
    kb = make_kb(
        sources={
            "z/2026-03-01-c.md": "c",
            "2026-01-15-b.md": "b",
            "a/2026-03-01-a.md": "a",
            "2025-12-01-old.md": "---\ndate: 2026-02-01\n---\n",
        }
    )
    manifest = Manifest(kb)
    order = [e.path for e in manifest.pending()]
    assert order == [
        "2026-01-15-b.md",
        "2025-12-01-old.md",
        "a/2026-03-01-a.md",
        "z/2026-03-01-c.md",
    ]
    _, digest, _ = manifest.read_source("2026-01-15-b.md")
    manifest.mark_ingested("2026-01-15-b.md", digest, ["notes/b"])
    assert manifest.pending()[0].path == "2025-12-01-old.md"


def test_state_machine_ingested_updated_and_back(make_kb: MakeKB) -> None:
    kb = make_kb(sources={"n.md": "v1"})
    manifest = Manifest(kb)
    text, digest, entry = manifest.read_source("n.md")
    assert (text, digest, entry.status) == ("v1", sha("v1"), Status.PENDING)
    done = manifest.mark_ingested("n.md", digest, ["people/bob", "people/bob"], extractor="test")
    assert done.status is Status.INGESTED and done.pages == ("people/bob",)
    assert done.ingested_hash == digest and done.extractor == "test"
    assert manifest.scan().counts["ingested"] == 1
    (kb.source / "n.md").write_text("v2")
    assert status_of_after_scan(manifest, "n.md") is Status.UPDATED
    assert [e.path for e in manifest.pending()] == ["n.md"]
    (kb.source / "n.md").write_text("v1")  # reverted to what was ingested
    assert status_of_after_scan(manifest, "n.md") is Status.INGESTED
    assert manifest.pending() == []


def status_of_after_scan(manifest: Manifest, path: str) -> Status:
    manifest.scan()
    return status_of(manifest, path)


def test_file_changed_during_ingestion_stays_updated(make_kb: MakeKB) -> None:
    kb = make_kb(sources={"n.md": "as read"})
    manifest = Manifest(kb)
    _, digest, _ = manifest.read_source("n.md")
    (kb.source / "n.md").write_text("edited while the agent worked")
    entry = manifest.mark_ingested("n.md", digest, ["people/bob"])
    assert entry.status is Status.UPDATED
    assert entry.ingested_hash == digest and entry.hash == sha("edited while the agent worked")
    assert [e.path for e in manifest.pending()] == ["n.md"]
    _, newer, _ = manifest.read_source("n.md")
    assert manifest.mark_ingested("n.md", newer, ["people/bob"]).status is Status.INGESTED


def test_failed_keeps_its_error_until_the_file_changes_or_reset(make_kb: MakeKB) -> None:
    kb = make_kb(sources={"n.md": "v1", "m.md": "m"})
    manifest = Manifest(kb)
    manifest.read_source("n.md")
    failed = manifest.mark_failed("n.md", "LLM timed out")
    assert failed.status is Status.FAILED and failed.error == "LLM timed out"
    assert status_of_after_scan(manifest, "n.md") is Status.FAILED
    assert manifest.get("n.md").error == "LLM timed out"
    assert [e.path for e in manifest.pending()] == ["m.md"]
    (kb.source / "n.md").write_text("v2")
    manifest.scan()
    entry = manifest.get("n.md")
    assert entry.status is Status.PENDING and entry.error is None
    manifest.mark_failed("n.md", "again")
    reset = manifest.reset("n.md")
    assert reset.status is Status.PENDING and reset.error is None
    _, digest, _ = manifest.read_source("n.md")
    manifest.mark_ingested("n.md", digest, [])
    assert manifest.reset("n.md").status is Status.UPDATED  # ingested before: re-queued


def test_removed_keeps_pages_and_comes_back(make_kb: MakeKB) -> None:
    kb = make_kb(sources={"n.md": "v1"})
    manifest = Manifest(kb)
    _, digest, _ = manifest.read_source("n.md")
    manifest.mark_ingested("n.md", digest, ["people/bob"])
    (kb.source / "n.md").unlink()
    result = manifest.scan()
    assert result.counts["removed"] == 1
    gone = manifest.get("n.md")
    assert gone.status is Status.REMOVED and gone.pages == ("people/bob",)
    with pytest.raises(NotFoundError):
        manifest.read_source("n.md")
    with pytest.raises(NotFoundError):
        manifest.reset("n.md")
    (kb.source / "n.md").write_text("v1")
    assert status_of_after_scan(manifest, "n.md") is Status.INGESTED


def test_binary_and_non_utf8_files_are_failed_with_a_reason(make_kb: MakeKB) -> None:
    kb = make_kb(
        sources={
            "image.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00",
            "latin1.md": "café".encode("latin-1"),
            "bom.md": "\ufeffUTF-8 with BOM".encode(),
        }
    )
    manifest = Manifest(kb)
    result = manifest.scan()
    entries = {e.path: e for e in result.entries}
    assert entries["image.png"].status is Status.FAILED
    assert "binary" in (entries["image.png"].error or "")
    assert entries["latin1.md"].status is Status.FAILED
    assert "not UTF-8" in (entries["latin1.md"].error or "")
    assert entries["bom.md"].status is Status.PENDING
    with pytest.raises(UserError, match="cannot be ingested: not UTF-8"):
        manifest.read_source("latin1.md")
    assert manifest.reset("latin1.md").status is Status.FAILED
    (kb.source / "latin1.md").write_text("café")
    assert status_of_after_scan(manifest, "latin1.md") is Status.PENDING
    assert manifest.read_source("bom.md")[0] == "UTF-8 with BOM"


@pytest.mark.parametrize("path", ["../schema.yaml", "/etc/passwd", "a/../../x.md", "a\\b.md", ""])
def test_source_paths_outside_source_are_refused(make_kb: MakeKB, path: str) -> None:
    manifest = Manifest(make_kb(sources={"a.md": "A"}))
    for call in (
        lambda: manifest.read_source(path),
        lambda: manifest.mark_ingested(path, sha("A"), []),
        lambda: manifest.mark_failed(path, "x"),
        lambda: manifest.reset(path),
    ):
        with pytest.raises(UserError, match="refused source path"):
            call()


def test_symlinks_escaping_source_are_refused_and_recorded(make_kb: MakeKB, tmp_path: Path) -> None:
    kb = make_kb(sources={"a.md": "A"})
    secret = tmp_path / "secret.md"
    secret.write_text("do not read")
    os.symlink(secret, kb.source / "leak.md")
    os.symlink(tmp_path, kb.source / "outside-dir")
    manifest = Manifest(kb)
    entries = {e.path: e for e in manifest.scan().entries}
    # a symlinked folder is not followed, and has its failed entry saying so
    assert set(entries) == {"a.md", "leak.md", "outside-dir"}
    assert entries["outside-dir"].status is Status.FAILED
    assert "a symlinked folder" in (entries["outside-dir"].error or "")
    assert entries["leak.md"].status is Status.FAILED
    assert "outside source" in (entries["leak.md"].error or "")
    with pytest.raises(UserError, match="resolves outside source"):
        manifest.read_source("leak.md")


def test_mark_ingested_needs_a_real_hash(make_kb: MakeKB) -> None:
    manifest = Manifest(make_kb(sources={"a.md": "A"}))
    with pytest.raises(UserError, match="not a SHA-256"):
        manifest.mark_ingested("a.md", "abc", [])


def test_unknown_source_is_not_found(make_kb: MakeKB) -> None:
    manifest = Manifest(make_kb(sources={"a.md": "A"}))
    with pytest.raises(NotFoundError, match=r"no source 'b\.md'"):
        manifest.get("b.md")
    with pytest.raises(NotFoundError):
        manifest.read_source("b.md")


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "",
        '{"version": 1}',
        '{"version": 1, "sources": {"a.md": {"hash": "x"}}}',
        '{"version": 99, "sources": {}}',
    ],
)
def test_corrupt_manifest_is_a_clear_error_and_never_overwritten(
    make_kb: MakeKB, content: str
) -> None:
    kb = make_kb(sources={"a.md": "A"})
    kb.manifest.write_text(content)
    manifest = Manifest(kb)
    for call in (manifest.scan, manifest.entries, manifest.pending, lambda: manifest.get("a.md")):
        with pytest.raises(ManifestError) as caught:
            call()
        assert str(kb.manifest) in str(caught.value)
    message = str(caught.value)
    if '"version": 99' in content:
        assert "has version 99; this memserver reads" in message and "upgrade memserver" in message
    else:
        assert "is corrupt" in message and "run `memserver scan` to rebuild it" in message
    assert kb.manifest.read_text() == content


def test_writes_are_atomic_and_leave_no_temp_files(make_kb: MakeKB) -> None:
    kb = make_kb(sources={f"n{i}.md": str(i) for i in range(5)})
    manifest = Manifest(kb)
    manifest.scan()
    for i in range(5):
        manifest.mark_failed(f"n{i}.md", "x")
    assert sorted(p.name for p in kb.root.iterdir()) == [
        ".memserver",
        "manifest.json",
        "schema.yaml",
        "source",
    ]


def test_entries_round_trip_through_json(make_kb: MakeKB) -> None:
    kb = make_kb(sources={"a.md": "A"})
    manifest = Manifest(kb)
    _, digest, _ = manifest.read_source("a.md")
    entry = manifest.mark_ingested("a.md", digest, ["p/x"])
    assert SourceEntry.from_dict(entry.to_dict()) == entry
    assert Manifest(kb).entries() == [entry]


WRITER = textwrap.dedent(
    """
    import sys
    from memserver.kb.layout import KBPaths
    from memserver.kb.manifest import Manifest
    kb, prefix, count = KBPaths.of(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    manifest = Manifest(kb)
    for i in range(count):
        path = f"{prefix}{i}.md"
        text, digest, _ = manifest.read_source(path)
        manifest.mark_ingested(path, digest, [f"notes/{prefix}{i}"])
        manifest.scan()
    """
)


def test_two_processes_writing_at_once_lose_nothing(make_kb: MakeKB) -> None:
    count = 25
    sources = {f"{p}{i}.md": f"{p} {i}" for p in ("a", "b") for i in range(count)}
    kb = make_kb(sources=sources)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(kb.root), prefix, str(count)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for prefix in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    entries = Manifest(kb).entries()
    assert len(entries) == 2 * count and all(e.status is Status.INGESTED for e in entries), [
        (e.path, e.status) for e in entries if e.status is not Status.INGESTED
    ]
    assert entries and all(e.pages == (f"notes/{e.path[:-3]}",) for e in entries)


def test_scan_without_source_folder_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="source does not exist"):
        Manifest(KBPaths.of(tmp_path)).scan()


def test_a_name_no_tool_takes_gets_a_failed_entry_shown_escaped(make_kb: MakeKB) -> None:
    """The issue's case: a name with a newline or an escape character stayed pending for
    ever (every source tool refused it, so no failed entry could be written) and reached
    the agent's log raw. Each is a failed entry under its escaped name, once."""
    kb = make_kb(sources={"a.md": "A"})
    for name in ("bad\nname.md", "esc\x1b[31mred.md", "turn\u202eed.md"):
        (kb.source / name).write_text("hidden", encoding="utf-8")
    (kb.source / os.fsdecode(b"\xff\xfe.md")).write_text("x", encoding="utf-8")
    manifest = Manifest(kb)
    first = {e.path: e for e in manifest.scan().entries}
    assert set(first) == {
        "a.md",
        "bad\\nname.md",
        "esc\\x1b[31mred.md",
        "turn\\u202eed.md",
        "\\udcff\\udcfe.md",
    }
    for path, entry in first.items():
        assert path.isprintable()
        if path != "a.md":
            assert entry.status is Status.FAILED
            assert "rename the file" in (entry.error or "")
    assert [e.path for e in manifest.pending()] == ["a.md"]
    assert {e.path: e for e in manifest.scan().entries} == first  # stable: nothing retried
    (kb.source / "bad\nname.md").rename(kb.source / "good-name.md")
    after = {e.path: e.status for e in manifest.scan().entries}
    assert after["bad\\nname.md"] is Status.REMOVED and after["good-name.md"] is Status.PENDING
