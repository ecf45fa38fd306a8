"""Ingest progress on screen: a bar and a line per note on a terminal, the lines alone in a
log, JSON lines for scripts; and ``up``'s view fed by the server's pipeline events."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from memserver.server.ingest_progress import IngestProgress
from memserver.terminal.progress import NoteDone, NoteProgress
from memserver.up.progress import UpProgress
from memserver.up.working_copy import prepare
from tests.fixtures.server import EXAMPLE_KB


def run_two_notes(display: NoteProgress, out: io.StringIO) -> list[str]:
    """Two notes through ``display``; what ``out`` held right after each step."""
    seen = []
    display.start(2)
    display.reading("meetings/a.md")
    display.finished(NoteDone("meetings/a.md", "ingested", pages=3, seconds=1.25))
    seen.append(out.getvalue())
    display.reading("updates/b.md")
    display.finished(NoteDone("updates/b.md", "failed", error="no date in it", seconds=0.5))
    seen.append(out.getvalue())
    display.end()
    seen.append(out.getvalue())
    return seen


def test_without_a_terminal_each_note_is_a_line_written_as_it_finishes() -> None:
    out = io.StringIO()
    after_first, after_second, after_end = run_two_notes(NoteProgress(out, terminal=False), out)
    assert after_first == "ingested      1/2  meetings/a.md -> 3 page(s) (1.2s)\n"
    assert after_second.endswith("failed        2/2  updates/b.md: no date in it (0.5s)\n")
    last = after_end.splitlines()[-1]
    assert last.startswith("ingest: 1 note(s) ingested, 1 failed in ")


def test_on_a_terminal_a_bar_runs_under_the_lines() -> None:
    out = io.StringIO()
    display = NoteProgress(out, terminal=True)
    display.start(2)
    display.reading("meetings/a.md")
    display._bar.refresh()  # draw now instead of at the next tick
    drawn = out.getvalue()
    assert "0/2" in drawn and "meetings/a.md" in drawn and "━" in drawn
    display.finished(NoteDone("meetings/a.md", "ingested", pages=3, seconds=1.0))
    display.end()
    text = out.getvalue()
    assert "ingested      1/2  meetings/a.md -> 3 page(s) (1.0s)" in text
    assert "ingest: 1 note(s) ingested in " in text
    assert not display.running


def test_json_lines_for_scripts() -> None:
    out = io.StringIO()
    run_two_notes(NoteProgress(out, json_lines=True, terminal=True), out)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["event"] for e in events] == ["note", "note", "ingest_done"]
    assert events[0] == {
        "event": "note",
        "path": "meetings/a.md",
        "status": "ingested",
        "pages": 3,
        "error": None,
        "seconds": 1.25,
        "done": 1,
        "total": 2,
    }
    assert events[1]["error"] == "no date in it"
    assert (events[2]["ingested"], events[2]["failed"], events[2]["notes"]) == (1, 1, 2)


def test_up_draws_the_servers_pipeline_events_when_it_polls() -> None:
    ingest = IngestProgress()
    out = io.StringIO()
    pending = [True]
    view = UpProgress(ingest, NoteProgress(out, terminal=False), lambda: pending[0])
    ingest.listed({"pending": 2})
    ingest.reading("a.md")
    ingest.finished("a.md", "ingested", {"pending": 1, "ingested": 1}, pages=("x/y", "x/z"))
    assert out.getvalue() == ""  # drawn by the supervisor's loop, not in the tool's thread
    view.poll()
    assert out.getvalue().splitlines()[0].startswith("ingested      1/2  a.md -> 2 page(s) (")
    ingest.reading("b.md")
    ingest.finished("b.md", "ingested", {"ingested": 2}, pages=("x/w",))
    pending[0] = False
    view.poll()
    lines = out.getvalue().splitlines()
    assert lines[1].startswith("ingested      2/2  b.md -> 1 page(s) (")
    assert lines[2].startswith("ingest: 2 note(s) ingested in ")
    assert lines[2].endswith("(2/2 notes ingested)")
    assert lines[3].startswith("search vectors: every text embedded")
    view.close()


def test_ups_pass_ends_naming_every_failed_note_and_why() -> None:
    ingest = IngestProgress()
    out = io.StringIO()
    pending = [True]
    view = UpProgress(ingest, NoteProgress(out, terminal=False), lambda: pending[0])
    why = "handbook.docx: mammoth 1.13.0 failed while reading the document's paragraphs"
    ingest.listed({"pending": 1, "failed": 1}, {"source/handbook.docx": why})
    ingest.reading("a.md")
    ingest.finished("a.md", "failed", {"failed": 2}, error="no date\nin it")
    pending[0] = False
    view.poll()
    done = out.getvalue().splitlines()[1]
    assert done.endswith(
        f"(0/2 notes ingested, 2 failed: a.md (no date in it); source/handbook.docx ({why}))"
    )
    view.close()


def test_the_working_copy_is_kept_and_made_fresh_only_when_asked(tmp_path: Path) -> None:
    target = tmp_path / ".memserver" / "example_kb"
    assert prepare(target, EXAMPLE_KB).startswith("created the working copy")
    assert (target / "schema.yaml").is_file() and (target / "source").is_dir()
    edited = target / "source" / "mine.md"
    edited.write_text("# Mine\n\nA note of my own.\n", encoding="utf-8")
    assert prepare(target, EXAMPLE_KB).startswith("using the existing working copy")
    assert edited.is_file()
    assert prepare(target, EXAMPLE_KB, reset=True).startswith("created a fresh working copy")
    assert not edited.exists() and (target / "schema.yaml").is_file()


@pytest.mark.parametrize("reset", [False, True])
def test_the_working_copy_never_takes_a_run_of_the_example(tmp_path: Path, reset: bool) -> None:
    example = tmp_path / "example"
    (example / "source").mkdir(parents=True)
    (example / "schema.yaml").write_text("folders: []\n", encoding="utf-8")
    for left in ("knowledge", ".memserver"):
        (example / left).mkdir()
    (example / "manifest.json").write_text("{}", encoding="utf-8")
    target = tmp_path / "copy"
    if reset:
        target.mkdir()
    prepare(target, example, reset=reset)
    assert sorted(p.name for p in target.iterdir()) == ["schema.yaml", "source"]


def test_up_says_how_the_background_embedding_goes_while_it_has_work() -> None:
    ingest = IngestProgress()
    out = io.StringIO()
    now = [0.0]
    counts = [(0, 200)]
    pending = [True]
    view = UpProgress(
        ingest,
        NoteProgress(out, json_lines=True),
        lambda: pending[0],
        lambda: counts[0],
        clock=lambda: now[0],
    )
    view.poll()
    now[0], counts[0] = 2.0, (50, 150)
    view.poll()  # too soon to count again
    now[0], counts[0] = 20.0, (100, 100)
    view.poll()
    pending[0] = False
    now[0] = 40.0
    view.poll()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["event"] for e in events] == ["embedding", "embedding", "vectors_done"]
    assert (events[0]["done"], events[0]["total"]) == (0, 200)
    assert (events[1]["done"], events[1]["rate"], events[1]["seconds_left"]) == (100, 5.0, 20.0)
    view.close()
