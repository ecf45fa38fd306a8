"""bench/ingest_quality.py's counts: what makes a title a name or a label, a timeline line
a header, on pages written by hand (no ingest needed)."""

from __future__ import annotations

from pathlib import Path

from bench.ingest_quality import half_of, is_header_line, measure, title_fault

LABELS = {"decision", "attendees", "date"}


def test_a_title_that_says_nothing_of_its_own_is_counted_with_why() -> None:
    people = {"maya patel"}
    assert title_fault("Maya Patel", people, LABELS) == "a person's name"
    assert title_fault("Decision", people, LABELS) == "a label"
    assert title_fault("EMG P01 F1 0", people, LABELS) == "an identifier"
    assert title_fault("Reallocate [09:00:12] Luis", people, LABELS) == "a transcript's frame"
    assert title_fault("2026-11-26) Territory", people, LABELS) == "markup or a fragment"
    assert title_fault("<!-- Slide number: 3 -->", people, LABELS) == "markup or a fragment"
    assert title_fault("$49", people, LABELS) == "a date or an amount"
    note = "## Decisions\n- **Security**: Daniel runs static analysis.\n"
    assert title_fault("Security", people, LABELS, [note]) == "a label of its note"
    step = "3. **Docker Image** – Build and push to registry.\n"
    assert title_fault("Docker Image", set(), LABELS, [step], person=True) == "a label of its note"
    speaker = "**Maya Patel**: Got the doc link.\n"
    assert title_fault("Maya Patel", set(), LABELS, [speaker], person=True) is None
    assert (
        title_fault("Go-live for all eight Globex warehouses on 2026-12-01", people, LABELS) is None
    )


def test_header_lines_and_chat_frames_are_told_from_labelled_facts() -> None:
    assert is_header_line("From: Ethan Brooks <e@x> To: Maya Patel")
    assert is_header_line("Von: Ethan Brooks")
    assert is_header_line("**Priya Shah** 16:02")
    assert not is_header_line("Started: 2022-09-15 10:12")
    assert not is_header_line("Globex signed the pilot on 2026-08-25.")


def test_the_halves_are_fixed_by_path_and_pages_are_counted_in_their_note_s_half(
    tmp_path: Path,
) -> None:
    assert half_of("a.md") == half_of("a.md") and {half_of(f"{i}.md") for i in range(20)} == {
        "tune",
        "check",
    }
    kb = tmp_path / "kb"
    (kb / "knowledge" / "decisions").mkdir(parents=True)
    (kb / "source").mkdir()
    (kb / "schema.yaml").write_text(
        (Path(__file__).resolve().parents[2] / "example_kb" / "schema.yaml").read_text("utf-8"),
        encoding="utf-8",
    )
    (kb / "source" / "n.md").write_text("- **Security**: run the scan.\n", encoding="utf-8")
    (kb / "knowledge" / "decisions" / "2026-10-01-security.md").write_text(
        "---\ntitle: Security\ntype: decision\ndate: 2026-10-01\nstatus: accepted\n"
        "sources: [n.md]\n---\n\n## Timeline\n- **2026-10-01** | From: Ann <a@b> To: Bo [source: n.md]\n",
        encoding="utf-8",
    )
    counts = measure(kb)
    assert counts.pages["all"] == 1 and counts.pages[half_of("n.md")] == 1
    assert counts.count("titles that are names or labels", half_of("n.md")) == 1
    assert counts.count("header lines in timelines") == 1
    assert counts.count("decisions without a decider") == 1
