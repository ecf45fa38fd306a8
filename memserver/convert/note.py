"""A converted note: what one unit of an original (a transcript, an email thread, a Slack
channel's day, a document or one part of it) becomes, and its markdown.

The note's frontmatter holds what the rest of the pipeline reads: ``title``, ``date``
(the manifest dates the source by it), ``author``, the people who spoke at a meeting
(``attendees``) or wrote and were written to in an exchange of messages
(``participants``: an e-mail thread's or a chat's people did not attend anything), and
``genre``, what kind of writing the note is (:data:`memserver.convert.clean.GENRES`:
transcript, email, chat, document, slides, spreadsheet), which only the converter knows
and the ingest agent reads in one place. Every value is written as a JSON string or
list, which YAML reads as it is, so a hostile title can never add a key.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from memserver.convert.clean import CHAT, EMAIL

_SLUG_DROP = re.compile(r"[^\w]+")
_ISO_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_HEADING_LINE = re.compile(r"^#{1,3}\s+\S")
_PAGE_MARK = "\f"
MESSAGE_GENRES = (EMAIL, CHAT)


@dataclass(frozen=True)
class Note:
    """One converted note. ``name`` tells it apart among its original's notes ("" when
    the original holds one); ``extra`` are further frontmatter keys (a Slack channel)."""

    title: str
    body: str
    date: dt.date | None = None
    author: str | None = None
    attendees: tuple[str, ...] = ()
    name: str = ""
    extra: dict[str, str] = field(default_factory=dict)
    genre: str = ""

    @property
    def people_key(self) -> str:
        """The frontmatter key of the note's people (see the module docstring)."""
        return "participants" if self.genre in MESSAGE_GENRES else "attendees"

    def render(self) -> str:
        """The note as markdown: frontmatter, its title as a heading (unless the body
        starts with its own), the body."""
        front: dict[str, Any] = {"title": " ".join(self.title.split())}
        if self.date is not None:
            front["date"] = self.date.isoformat()
        if self.author:
            front["author"] = self.author
        if self.attendees:
            front[self.people_key] = list(dict.fromkeys(self.attendees))
        if self.genre:
            front["genre"] = self.genre
        front.update(self.extra)
        lines = ["---"]
        for key, value in front.items():
            shown = value if key == "date" else json.dumps(value, ensure_ascii=False)
            lines.append(f"{key}: {shown}")
        body = self.body.replace(_PAGE_MARK, "\n\n").strip()
        heading = [] if body.startswith("# ") else [f"# {front['title']}", ""]
        lines += ["---", "", *heading, body, ""]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "body": self.body,
            "date": self.date.isoformat() if self.date else None,
            "author": self.author,
            "attendees": list(self.attendees),
            "name": self.name,
            "extra": dict(self.extra),
            "genre": self.genre,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Note:
        day = data.get("date")
        return cls(
            title=str(data["title"]),
            body=str(data["body"]),
            date=dt.date.fromisoformat(day) if day else None,
            author=data.get("author"),
            attendees=tuple(str(a) for a in data.get("attendees") or ()),
            name=str(data.get("name") or ""),
            extra={str(k): str(v) for k, v in (data.get("extra") or {}).items()},
            genre=str(data.get("genre") or ""),
        )


def slug(text: str, limit: int = 60) -> str:
    """A file-name-safe form of ``text`` (word characters joined by "-", any script)."""
    return _SLUG_DROP.sub("-", text.casefold()).strip("-")[:limit].strip("-") or "note"


def iso_day(text: str) -> dt.date | None:
    """The first ISO date (YYYY-MM-DD) written in ``text``, if any."""
    for match in _ISO_DAY.finditer(text):
        try:
            return dt.date(*(int(g) for g in match.groups()))
        except ValueError:
            continue
    return None


def split_to_fit(note: Note, max_bytes: int) -> list[Note]:
    """``note`` as parts whose markdown each fits ``max_bytes``: cut before headings and
    page breaks, else between paragraphs, else between lines; each part keeps the note's
    date and people, is titled "<title> (part i of n)" and says what it is part of."""
    if len(note.render().encode("utf-8")) <= max_bytes:
        return [note]
    room = max(1024, max_bytes - len(replace(note, body="").render().encode("utf-8")) - 200)
    pieces: list[str] = []
    for block in _blocks(note.body):
        if pieces and len((pieces[-1] + block).encode("utf-8")) <= room:
            pieces[-1] += block
        else:
            pieces.extend(_cut(block, room))
    total = len(pieces)
    return [
        replace(
            note,
            title=f"{note.title} (part {i} of {total})",
            body=f"Part {i} of {total} of {note.title}.\n\n{piece.strip()}",
            name=f"{note.name or 'part'}-{i:03d}",
        )
        for i, piece in enumerate(pieces, start=1)
    ]


def _blocks(body: str) -> list[str]:
    """The body cut before each heading and page break (each block keeps its newlines)."""
    blocks: list[str] = [""]
    for line in body.replace(_PAGE_MARK, "\n" + _PAGE_MARK).splitlines(keepends=True):
        if (_HEADING_LINE.match(line) or line.startswith(_PAGE_MARK)) and blocks[-1].strip():
            blocks.append("")
        blocks[-1] += line.replace(_PAGE_MARK, "")
    return [b for b in blocks if b.strip()]


def _cut(block: str, room: int) -> list[str]:
    """A block too large for one part, cut between paragraphs, lines or characters."""
    if len(block.encode("utf-8")) <= room:
        return [block]
    out: list[str] = [""]
    for unit in block.splitlines(keepends=True):
        while len(unit.encode("utf-8")) > room:  # one huge line: cut it by characters
            head = unit[: room // 4]
            out.append(head)
            unit = unit[len(head) :]
        if len((out[-1] + unit).encode("utf-8")) > room:
            out.append("")
        out[-1] += unit
    return [o for o in out if o.strip()]
