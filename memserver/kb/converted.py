"""A source in a known format (``memserver.convert.formats``) as the note the rest of the
system reads: converted once per version of the original, the result (its notes, or
why it cannot be converted) cached under ``.memserver/converted/`` (git-ignored), never
written beside the original. The ledger keeps the original's path and hash, so an
unchanged original is never converted again and a changed one is converted once.

A dropped-in original must make one note that fits the source size limit; one that
makes several (an mbox of many threads, a Slack export) or a longer one (a 300-page PDF)
is refused with the command that splits it (``memserver import``). The converter stops
at that limit as it writes (``memserver.convert.budget``), and what is cached is the
note's text or the reason it has none: never a text over the limit.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path, PurePosixPath
from typing import BinaryIO, NamedTuple

from memserver.convert.budget import DROPPED_MAX_NOTES
from memserver.convert.errors import ConversionError
from memserver.convert.isolated import convert_isolated
from memserver.convert.note import Note
from memserver.kb.layout import write_atomic

# "2": a failure keeps the original's date, and DOCX is read by mammoth directly. "3":
# the converter stops at the source size limit, and only a note that fits is kept (a
# text over the limit is cached as its failure). "4": notes cleaned, with their genre.
CACHE_FORMAT = "4"
# An original in a known format may be larger than a note (a deck with pictures);
# its converted text must still fit sources.max_bytes.
MAX_ORIGINAL_BYTES = 64 * 1024 * 1024
_IMPORT = {"mbox": "email", "eml": "email", "slack": "slack"}


def cache_path(state: Path, rel: str, kind: str, digest: str, max_bytes: int) -> Path:
    """Where the conversion of this version of ``rel`` is kept (its name is in the key:
    a transcript's title and date come from it; so is the limit it was converted for)."""
    key = f"{CACHE_FORMAT}\0{kind}\0{rel}\0{digest}\0{max_bytes}"
    return state / "converted" / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


class NoteText(NamedTuple):
    """What a dropped-in original gives the ledger: its note's ``text``, else ``error`` (why
    not); ``date`` is the original's own date when it could be read even so."""

    text: str | None
    error: str | None
    date: dt.date | None = None


def note_text(
    state: Path,
    rel: str,
    kind: str,
    data: bytes | BinaryIO,
    digest: str,
    max_bytes: int,
    fresh: bool,
) -> NoteText:
    """The text of a dropped-in original that makes one note within ``max_bytes``, from
    the cache (unless ``fresh``) or converted now; else why not. Either is cached: a
    failure is not tried again until the file changes or is reset, and no text over the
    limit is ever kept."""
    path = cache_path(state, rel, kind, digest, max_bytes)
    try:
        cached = None if fresh else json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        cached = None
    if isinstance(cached, dict) and "error" in cached:
        return NoteText(None, str(cached["error"]), _day(cached.get("date")))
    if isinstance(cached, dict) and isinstance(cached.get("text"), str):
        return NoteText(cached["text"], None, _day(cached.get("date")))
    try:
        notes = convert_isolated(
            kind,
            rel.rsplit("/", 1)[-1],
            data,
            max_text=max_bytes,
            max_notes=DROPPED_MAX_NOTES,
            dropped=True,
        )
        found = _one_note(notes, kind, max_bytes)
    except ConversionError as exc:
        found = NoteText(None, f"{exc.message}; {exc.fix}", exc.date)
    body = {"text": found.text} if found.text is not None else {"error": found.error}
    _store(path, {**body, "date": found.date and found.date.isoformat()})
    return found


def _one_note(notes: list[Note], kind: str, max_bytes: int) -> NoteText:
    """The one note's text, if it fits; ConversionError saying why not otherwise."""
    command = _IMPORT.get(kind, "folder")
    if not notes:
        raise ConversionError("it converts to no note", "check the file holds text")
    if len(notes) > 1:
        raise ConversionError(
            f"it holds {len(notes)} notes ({', '.join(n.title for n in notes[:3])}, ...), "
            "and a file in source/ makes one",
            f"move it out of source/ and run `memserver import {command} FILE`, which writes "
            "one note each into source/",
        )
    text = notes[0].render()
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise ConversionError(
            f"its text is {size:,} bytes, larger than the limit of {max_bytes:,} bytes "
            "(sources.max_bytes)",
            "move it out of source/ and run `memserver import folder DIR`, which splits it "
            "by headings or pages into notes that fit",
            notes[0].date,
        )
    return NoteText(text, None, notes[0].date)


def slack_export_part(root: Path, rel: str) -> str | None:
    """The folder under ``root`` (source/) of the Slack export that the JSON file ``rel``
    belongs to (a folder holding ``users.json`` and ``channels.json``), else None."""
    if not rel.endswith(".json"):
        return None
    parts = PurePosixPath(rel).parts[:-1]
    for depth in range(len(parts), -1, -1):
        folder = root.joinpath(*parts[:depth])
        if (folder / "users.json").is_file() and (folder / "channels.json").is_file():
            return "/".join(parts[:depth]) or "."
    return None


def slack_export_error(export: str) -> str:
    return (
        f"part of the Slack export {export}/ (it holds users.json and channels.json), which "
        "is imported whole; move the export out of source/ and run `memserver import slack "
        "DIR`, which writes a note per channel and day"
    )


def _day(value: object) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _store(path: Path, body: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(body, ensure_ascii=False) + "\n").encode("utf-8"))
