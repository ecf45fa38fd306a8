"""Word documents from more than one writer (python-docx, LibreOffice) become notes with
their text, headings, lists and tables, dated and attributed by their core properties;
a document the library cannot read fails naming the library and its step, never calling
the file corrupt, and keeps the document's date."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from pathlib import Path

import pytest

from memserver.convert.errors import ConversionError
from memserver.convert.isolated import convert_isolated
from memserver.kb.manifest import Manifest, Status
from tests.fixtures.kb import MakeKB

SAMPLES = Path(__file__).parent / "samples"


def python_docx_file() -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.author = "Alex Kim"
    document.core_properties.title = "Osprey rollout plan"
    document.core_properties.created = dt.datetime(2026, 10, 5, 9, 30)
    document.add_heading("Osprey rollout plan", level=1)
    document.add_paragraph("Osprey goes live in the Denver depot on 2026-11-02.")
    document.add_paragraph("Train the dispatchers", style="List Bullet")
    document.add_paragraph("Move the tablets", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    for cell, text in zip(table._cells, ("Depot", "Owner", "Denver", "Sofia Rossi"), strict=True):
        cell.text = text
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_python_docx_document_converts_with_its_lists_table_date_and_author() -> None:
    [note] = convert_isolated("docx", "osprey-plan.docx", python_docx_file())
    assert (note.title, note.date, note.author) == (
        "Osprey rollout plan",
        dt.date(2026, 10, 5),
        "Alex Kim",
    )
    # the document's own title heading is the note's, written once
    assert note.render().count("# Osprey rollout plan") == 1
    assert "Osprey goes live in the Denver depot on 2026-11-02." in note.body
    assert "* Train the dispatchers" in note.body and "* Move the tablets" in note.body
    assert "| Denver | Sofia Rossi |" in note.body


def test_a_libreoffice_document_converts_with_its_headings_list_table_date_and_author() -> None:
    data = (SAMPLES / "falcon-roster.docx").read_bytes()
    [note] = convert_isolated("docx", "falcon-roster.docx", data)
    assert (note.title, note.date, note.author) == (
        "Falcon shift roster",
        dt.date(2026, 9, 14),
        "Priya Shah",
    )
    assert "Tom Becker leads the night shift at the Falcon warehouse from 2026-10-01." in note.body
    assert "## Shifts" in note.body and "* Night shift starts at 22:00." in note.body
    assert "| Night | Tom Becker |" in note.body


def without_body(data: bytes) -> bytes:
    """The document with its ``word/document.xml`` emptied: a zip the converter opens,
    whose properties it reads, and whose text the library cannot read."""
    source, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            body = b"" if info.filename == "word/document.xml" else source.read(info)
            target.writestr(info, body)
    return out.getvalue()


def test_a_document_the_library_cannot_read_names_the_library_and_step_and_keeps_its_date() -> None:
    with pytest.raises(ConversionError) as failed:
        convert_isolated("docx", "osprey-plan.docx", without_body(python_docx_file()))
    error = failed.value
    assert error.message.startswith("osprey-plan.docx: mammoth ")
    assert "failed while reading the document's paragraphs" in error.message
    assert "corrupt" not in str(error)
    assert "the converter is at fault, not the file" in error.fix
    assert error.date == dt.date(2026, 10, 5)


def test_the_ledger_dates_a_failed_document_by_its_own_properties(make_kb: MakeKB) -> None:
    paths = make_kb(sources={"plans/osprey-plan.docx": without_body(python_docx_file())})
    [entry] = Manifest(paths).scan().entries
    assert (entry.status, entry.doc_date) == (Status.FAILED, dt.date(2026, 10, 5))
    assert "mammoth" in (entry.error or "")
