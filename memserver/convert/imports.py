"""What ``memserver import`` writes: the notes of exports that are not dropped in by
hand, each with the path it takes under ``source/``, named after its original.

- ``slack EXPORT`` (a folder or ``.zip``): ``<channel>/<YYYY-MM-DD>.md``, as the export
  names its day files;
- ``email FILE`` (an ``.mbox``, an ``.eml``, an ``.msg`` or a folder of them): ``<file>/<date>-<subject>.md``
  a thread, or ``<file>.md`` for a file of one thread; a folder's ``.eml`` messages are
  threaded together (``<date>-<subject>-NNN.md``);
- ``folder DIR``: every file at any depth, ``<path>.md`` (``handbook.pdf.md``); a note
  longer than the source size limit is split into ``<path>/part-NNN.md``; markdown and
  text files are copied as they are.

Each note's frontmatter names its ``original``. A file no converter reads is reported
with the reason, never skipped silently.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

from memserver.convert.errors import ConversionError
from memserver.convert.formats import kind_of
from memserver.convert.isolated import convert_isolated
from memserver.convert.note import Note, split_to_fit

MAX_FOLDER_BYTES = 512 * 1024 * 1024
TEXT_SUFFIXES = (".md", ".markdown", ".txt")


@dataclass(frozen=True)
class Planned:
    """A note to write at ``rel`` (under the import's folder in ``source/``)."""

    rel: str
    text: str


@dataclass(frozen=True)
class Refused:
    path: str
    why: str


@dataclass(frozen=True)
class Plan:
    notes: tuple[Planned, ...]
    refused: tuple[Refused, ...]


def plan_import(what: str, path: Path, max_bytes: int) -> Plan:
    """The notes of the export ``path`` imported as ``what`` (slack, email, folder)."""
    if not path.exists():
        raise ConversionError(f"{path} does not exist", "give the path of the export")
    if what == "slack":
        data = _zip_folder(path) if path.is_dir() else _read(path)
        notes = convert_isolated("slack", path.name, data)
        return _plan([(f"{n.name}.md", _with_original(n, path.name)) for n in notes], (), max_bytes)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    base = path if path.is_dir() else path.parent
    out: list[tuple[str, Note]] = []
    copied: list[Planned] = []
    refused: list[Refused] = []
    if what == "email" and path.is_dir():
        messages = [f for f in files if kind_of(f.name) == "eml"]
        files = [f for f in files if f not in messages]
        if messages:  # the messages of a folder, threaded together
            try:
                notes = convert_isolated("mbox", path.name, _as_mbox(messages))
            except ConversionError as exc:
                refused.append(Refused(".", f"{exc.message}; {exc.fix}"))
            else:
                out.extend(
                    (f"{n.name or 'thread'}.md", _with_original(n, path.name)) for n in notes
                )
    for file in files:
        rel = file.relative_to(base).as_posix()
        if any(part.startswith(".") for part in Path(rel).parts):
            continue
        kind = kind_of(file.name)
        if what == "email" and kind not in ("eml", "msg", "mbox"):
            refused.append(Refused(rel, "not an email file (.eml, .msg or .mbox)"))
            continue
        if kind is None:
            if file.suffix.lower() in TEXT_SUFFIXES:
                copied.append(Planned(rel, _read(file).decode("utf-8", "replace")))
            else:
                refused.append(Refused(rel, f"no converter reads {file.suffix or 'this'} files"))
            continue
        try:
            notes = convert_isolated(kind, file.name, _read(file))
        except ConversionError as exc:
            refused.append(Refused(rel, f"{exc.message}; {exc.fix}"))
            continue
        if len(notes) == 1 and not notes[0].name:
            out.append((f"{rel}.md", _with_original(notes[0], rel)))
        else:
            out.extend((f"{rel}/{n.name}.md", _with_original(n, rel)) for n in notes)
    return _plan(out, tuple(copied) + tuple(refused), max_bytes)


def _plan(
    notes: list[tuple[str, Note]], rest: tuple[Planned | Refused, ...], max_bytes: int
) -> Plan:
    planned = [p for p in rest if isinstance(p, Planned)]
    for rel, note in notes:
        parts = split_to_fit(note, max_bytes)
        if len(parts) == 1:
            planned.append(Planned(rel, note.render()))
        else:
            stem = rel.removesuffix(".md")
            planned.extend(
                Planned(f"{stem}/part-{i:03d}.md", p.render()) for i, p in enumerate(parts, 1)
            )
    refused = tuple(r for r in rest if isinstance(r, Refused))
    return Plan(tuple(planned), refused)


def _with_original(note: Note, original: str) -> Note:
    return replace(note, extra={**note.extra, "original": original})


def _read(file: Path) -> bytes:
    size = file.stat().st_size
    if size > MAX_FOLDER_BYTES:
        raise ConversionError(
            f"{file} is {size:,} bytes, over the import limit of {MAX_FOLDER_BYTES:,}",
            "split it into smaller files",
        )
    return file.read_bytes()


def _as_mbox(messages: list[Path]) -> bytes:
    """``.eml`` files as one mbox, written by the standard library's ``mailbox``."""
    import mailbox
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        box = mailbox.mbox(str(Path(tmp) / "messages.mbox"))
        for message in messages:
            box.add(mailbox.mboxMessage(_read(message)))
        box.flush()
        box.close()
        return (Path(tmp) / "messages.mbox").read_bytes()


def _zip_folder(folder: Path) -> bytes:
    """A Slack export folder's JSON files as one stored zip (the worker reads zips)."""
    buffer = io.BytesIO()
    total = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for file in sorted(folder.rglob("*.json")):
            total += file.stat().st_size
            if total > MAX_FOLDER_BYTES:
                raise ConversionError(
                    f"{folder} holds over {MAX_FOLDER_BYTES:,} bytes of JSON",
                    "import the export's channels in parts",
                )
            archive.write(file, file.relative_to(folder).as_posix())
    return buffer.getvalue()
