"""A note's genre, read in one place, and what it means for reading the note.

The genre is what the note's converter says (frontmatter ``genre``: transcript, email,
chat, document, slides, spreadsheet, :mod:`memserver.kb.genres`). A note written by hand
says none; its shape can still say it is an exchange of messages: a mail's header lines
(``From:``, ``To:``, ``Subject:``, in any language :mod:`memserver.convert.message_words`
lists), or chat lines (``**Name** 16:02``, ``[2026-10-21 10:15] @Name: ...``, a
``channel`` in its frontmatter). Anything else is a plain note.

An exchange of messages (e-mail, chat) is read message by message (:func:`messages`):

- each message is dated by when it was said (its chat line's or header's date, else the
  note's); a date its words mention is an event inside it and never moves it;
- its frame is not its words: header lines, the chat line's name and time, a signature
  after a closing ("Best,") are never facts nor timeline lines;
- the people who wrote and were written to (``participants``) took part in an exchange,
  they attended nothing: that is no evidence the note records a meeting.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ingest_agent.extract.note import NoteBody, split_source
from ingest_agent.extract.role_words import ALL_UNPERSONAL
from ingest_agent.extract.text import full_name
from ingest_agent.records import Source
from memserver.kb.genres import (
    ALL_CLOSINGS,
    ALL_HEADERS,
    CHAT,
    EMAIL,
    GENRES,
    MESSAGE_GENRES,
    SENDER,
    SENT,
)
from memserver.kb.page import as_date

NOTE = "note"  # a note that says no genre and has none of a message's shape
PEOPLE_HEADERS = frozenset({SENDER, "to", "cc"})  # headers that name a message's people
PEOPLE_KEYS = ("attendees", "participants")  # frontmatter keys that list a note's people
_ISO = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")
_HEADER = re.compile(r"^\s*\**(?P<name>[^\W\d][\w -]{0,20}?)\**\s*:\**\s*(?P<value>.*?)\s*$")
# "**Priya Shah** 16:02" (a Slack export's day), "↳ **Tom** 2026-10-21 09:14" (a reply);
# never a labelled line ("**Started:** 2026-10-21 14:00")
_BOLD_CHAT = re.compile(
    r"^(?:↳\s*)?\*{1,2}(?P<who>[^*:]{1,60})\*{1,2}\s+(?:(?P<day>\d{4}-\d{2}-\d{2})\s+)?"
    r"\d{1,2}:\d{2}(?:\s*[AaPp]\.?[Mm]\.?)?\s*$"
)
# "[2026-10-21 10:15] @Tom: text", "[10:15] @Tom: text"
_STAMPED_CHAT = re.compile(
    r"^\[(?:(?P<day>\d{4}-\d{2}-\d{2})[ T])?\d{1,2}:\d{2}(?::\d{2})?\]\s*"
    r"@(?P<who>[^:]{1,60}?):\s*(?P<text>.*)$"
)
_HEADING = re.compile(r"^#{1,6}\s+(?P<text>.*)$")
SIGNATURE_LINES = 6  # a closing followed by at most this many short lines is a sign-off
SIGNATURE_LINE_WORDS = 8
CHAT_LINES = 2  # this many chat lines make a note a chat
HEADER_LINES = 2  # this many header lines in a row, one naming the sender, make a mail


@dataclass(frozen=True)
class Genre:
    """The genre of a note and why it was read so."""

    name: str
    why: str = ""

    @property
    def message(self) -> bool:
        """An exchange of messages (e-mail, chat): dated message by message."""
        return self.name in MESSAGE_GENRES


@dataclass(frozen=True)
class Message:
    """One message of an exchange: when it was said, by whom, its words (no frame)."""

    day: dt.date
    lines: tuple[str, ...]
    sender: str | None = None
    people: tuple[str, ...] = ()  # who wrote it and to whom, by name (no address)


@dataclass
class _Open:
    day: dt.date
    sender: str | None
    lines: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)


def read_genre(front: Mapping[str, Any], lines: Sequence[str]) -> Genre:
    """The note's genre (see the module docstring)."""
    said = str(front.get("genre") or "").strip().casefold()
    if said in GENRES:
        return Genre(said, f"its converter says it is {said}")
    chat = sum(1 for line in lines if _chat_line(line) is not None)
    if "channel" in front or chat >= CHAT_LINES:
        return Genre(CHAT, "it is a channel's messages, each with its writer and time")
    if _header_blocks(lines):
        return Genre(EMAIL, "it is mail: header lines name its sender and recipients")
    return Genre(NOTE)


def header(line: str) -> tuple[str, str] | None:
    """(what the header holds, its value) for a mail header line ("From: Ann <a@b>")."""
    match = _HEADER.match(line)
    if match is None:
        return None
    what = ALL_HEADERS.get(" ".join(match.group("name").split()).casefold())
    return (what, match.group("value")) if what is not None else None


def _header_runs(lines: Sequence[str]) -> list[range]:
    """Where ``lines`` hold a mail's frame: runs of header lines, one naming a sender."""
    runs: list[range] = []
    start, held = 0, list[str]()
    for n, line in enumerate([*lines, ""]):
        found = header(line)
        if found is not None:
            if not held:
                start = n
            held.append(found[0])
            continue
        if len(held) >= HEADER_LINES and SENDER in held:
            runs.append(range(start, n))
        held = []
    return runs


def _header_blocks(lines: Sequence[str]) -> bool:
    return bool(_header_runs(lines))


def without_frames(lines: Sequence[str]) -> list[str]:
    """``lines`` without the mail frames they quote (a thread pasted into meeting notes
    or a chat): a header block is who sent what to whom, never a fact of the note."""
    framed = {n for run in _header_runs(lines) for n in run}
    return [line for n, line in enumerate(lines) if n not in framed]


def _chat_line(line: str) -> tuple[str, str | None, str] | None:
    """(writer, its day if written, the words on the line) of a chat line."""
    stripped = line.strip()
    bold = _BOLD_CHAT.match(stripped)
    if bold is not None:
        return bold.group("who").strip(), bold.group("day"), ""
    stamped = _STAMPED_CHAT.match(stripped)
    if stamped is not None:
        return stamped.group("who").strip(), stamped.group("day"), stamped.group("text")
    return None


def messages(genre: Genre, lines: Sequence[str], note_date: dt.date) -> list[Message]:
    """The messages of an exchange, each dated by when it was said, without its frame."""
    found: list[_Open] = [_Open(note_date, None)]
    in_headers = False
    for line in lines:
        if genre.name == CHAT and (chat := _chat_line(line)) is not None:
            who, written, said = chat
            found.append(_Open(as_date(written) or note_date, who, [said] if said else []))
            continue
        if genre.name == EMAIL:
            heading = _HEADING.match(line.strip())
            sent = _day_of(heading.group("text")) if heading else None
            if sent is not None:  # "## Alex Kim — 2026-12-03 02:30": one message of a thread
                found.append(_Open(sent, None))
                continue
            head = header(line)
            if head is not None:
                current = found[-1]
                if not in_headers and (current.sender or any(x.strip() for x in current.lines)):
                    found.append(_Open(current.day, None))  # a header block opens a message
                if head[0] == SENDER:
                    found[-1].sender = head[1]
                if head[0] in PEOPLE_HEADERS:
                    found[-1].people += _named_people(head[1])
                elif head[0] == SENT:
                    found[-1].day = _day_of(head[1]) or found[-1].day
                in_headers = True
                continue
            in_headers = False
        found[-1].lines.append(line)
    out = []
    for item in found:
        kept = _unsigned(item.lines, item.sender)
        if genre.name == EMAIL:  # a quoted earlier message is that message's, not this one's
            own = [w for w in kept if not w.lstrip().startswith(">")]
            # a message written all as a quote block is its own words, unquoted
            kept = own if any(w.strip() for w in own) else [_unquoted(w) for w in kept]
        if any(w.strip() for w in kept):
            people = item.people or ([item.sender] if item.sender and genre.name == CHAT else [])
            out.append(Message(item.day, tuple(kept), item.sender, tuple(people)))
    return out


def _named_people(value: str) -> list[str]:
    """The display names of a header's addresses ("Ann Lee <ann@x>, Bo <bo@x>"); an
    address alone, a name without one ("All Engineering") or a team's or role's name
    ("Product Team <product@x>") is nobody's name."""
    return [
        " ".join(name.split())
        for name, address in email.utils.getaddresses([value.replace("*", "")])
        if name.strip()
        and "@" in address
        and not {w.casefold() for w in name.split()} & ALL_UNPERSONAL
    ]


def _unquoted(line: str) -> str:
    return re.sub(r"^\s*>\s?", "", line)


def _day_of(text: str) -> dt.date | None:
    """The day a heading or a ``Date:`` header gives (ISO, or as mail writes dates)."""
    iso = _ISO.search(text)
    if iso is not None:
        return as_date(iso.group(1))
    try:
        return email.utils.parsedate_to_datetime(text).date()
    except (TypeError, ValueError, IndexError):
        return None


def _unsigned(lines: Sequence[str], sender: str | None = None) -> list[str]:
    """A message's lines without its sign-off: from a closing ("Best,"), or a line that is
    the sender's name or first name, followed only by a few short lines (a name, a
    title, a phone) to its end."""
    names = _names_of(sender)
    for i, line in enumerate(lines):
        said = " ".join(line.strip().strip("*_").rstrip(",.!").split()).casefold()
        if said not in ALL_CLOSINGS and said not in names:
            continue
        rest = [x for x in lines[i + 1 :] if x.strip() and x.strip() != "---"]
        if len(rest) <= SIGNATURE_LINES and all(
            len(x.split()) <= SIGNATURE_LINE_WORDS for x in rest
        ):
            return list(lines[:i])
    return list(lines)


def _names_of(sender: str | None) -> frozenset[str]:
    """A sender's display name and first name ("Luis Hernandez <luis@...>")."""
    if not sender:
        return frozenset()
    name = email.utils.parseaddr(sender)[0] or sender
    words = name.split()
    return frozenset(" ".join(w).casefold() for w in (words, words[:1]) if w)


@dataclass(frozen=True)
class Said:
    """A part of a note read at one date: a message (dated by when it was said) or the
    whole of a note that is no exchange of messages."""

    day: dt.date
    text: str
    message: bool = False


def read_note(source: Source) -> tuple[NoteBody, Genre, list[Said]]:
    """The note split for reading, its genre, and its parts by the date each was said: an
    exchange of messages is its messages, without their frame (:mod:`~ingest_agent.extract.genre`)."""
    body = split_source(source.content)
    genre = read_genre(body.front, body.lines)
    if genre.name != EMAIL:  # a mail's frame read out of mail is no part of its words
        body = NoteBody(body.front, body.heading, without_frames(body.lines))
    if not genre.message:
        return body, genre, [Said(source.doc_date, "\n".join(body.lines))]
    said = messages(genre, body.lines, source.doc_date)
    lines = [line for m in said for line in (*m.lines, "")]
    parts = [Said(m.day, "\n".join(m.lines), message=True) for m in said]
    front = dict(body.front)
    named = [p for m in said for p in m.people if full_name(p)]  # whom its frame names
    if named:
        front["participants"] = list(dict.fromkeys([*participants_of(body), *named]))
    return NoteBody(front, body.heading, lines), genre, parts


def participants_of(body: NoteBody) -> list[str]:
    """The people an exchange of messages names in its frontmatter (``participants``)."""
    names = body.front.get("participants")
    if not isinstance(names, list):
        return []
    return [" ".join(n.split()) for n in names if isinstance(n, str) and n.strip()]
