"""The formats converted, by file extension, and the converter of each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import PurePosixPath

from memserver.convert import clean
from memserver.convert.archive import zip_files
from memserver.convert.document import convert_document
from memserver.convert.email_thread import convert_eml, convert_mbox
from memserver.convert.note import Note
from memserver.convert.outlook import convert_msg
from memserver.convert.slack import convert_slack
from memserver.convert.transcript import convert_transcript

# extension -> (kind, what one such file becomes), as docs/sources.md lists them
FORMATS: dict[str, tuple[str, str]] = {
    ".vtt": ("vtt", "one note per transcript: speakers, date from the name or first cue"),
    ".srt": ("srt", "one note per transcript: speakers, date from the name or first cue"),
    ".eml": ("eml", "one note: the message, its date, sender and recipients"),
    ".msg": ("msg", "one note: the Outlook message, read as its .eml would be"),
    ".mbox": ("mbox", "one note per thread (Message-ID, In-Reply-To, References)"),
    ".zip": ("slack", "a Slack export: one note per channel and day, replies under parents"),
    ".docx": ("docx", "one note: the document, dated and attributed by its properties"),
    ".pptx": ("pptx", "one note: the deck's slides and notes, by its properties"),
    ".xlsx": ("xlsx", "one note: a table per sheet, by the workbook's properties"),
    ".pdf": ("pdf", "one note (a long one split by headings or pages), by its info"),
    ".html": ("html", "one note: the page's text, by its <meta> author and date"),
    ".htm": ("html", "one note: the page's text, by its <meta> author and date"),
    ".epub": ("epub", "one note: the book's chapters, by its dc:creator and dc:date"),
}


def kind_of(name: str) -> str | None:
    """The converter kind of a file name ("vtt", "pdf", ...), None for other files."""
    found = FORMATS.get(PurePosixPath(name).suffix.lower())
    return found[0] if found else None


def _slack(name: str, data: bytes) -> list[Note]:
    return convert_slack(zip_files(data, name), name)


def _document(kind: str) -> Callable[[str, bytes], list[Note]]:
    return lambda name, data: convert_document(name, data, kind)


def _transcript(kind: str) -> Callable[[str, bytes], list[Note]]:
    return lambda name, data: convert_transcript(name, data, kind)


# kind -> the genre of what it holds (memserver.convert.clean.GENRES)
GENRE = {
    "vtt": clean.TRANSCRIPT,
    "srt": clean.TRANSCRIPT,
    "eml": clean.EMAIL,
    "mbox": clean.EMAIL,
    "msg": clean.EMAIL,
    "slack": clean.CHAT,
    "pptx": clean.SLIDES,
    "xlsx": clean.SPREADSHEET,
    **{kind: clean.DOCUMENT for kind in ("docx", "pdf", "html", "epub")},
}
UNSTRUCTURED = frozenset({"pdf"})  # plain text: headings are inferred


def convert(kind: str, name: str, data: bytes) -> list[Note]:
    """The notes of one original of ``kind``, their text cleaned
    (:func:`memserver.convert.clean.clean_text`) and their genre set."""
    genre = GENRE[kind]
    structured = kind not in UNSTRUCTURED
    return [
        replace(
            note,
            body=clean.without_title(
                clean.clean_text(note.body, genre=genre, structured=structured), note.title
            ),
            genre=genre,
        )
        for note in CONVERTERS[kind](name, data)
    ]


CONVERTERS: dict[str, Callable[[str, bytes], list[Note]]] = {
    "vtt": _transcript("vtt"),
    "srt": _transcript("srt"),
    "eml": convert_eml,
    "mbox": convert_mbox,
    "msg": convert_msg,
    "slack": _slack,
    **{kind: _document(kind) for kind in ("docx", "pptx", "xlsx", "pdf", "html", "epub")},
}
