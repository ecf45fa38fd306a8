"""Email (``.eml``, one message; ``.mbox``, many), read by the standard library's
``email`` parser: one note per thread.

Messages join a thread through ``Message-ID``, ``In-Reply-To`` and ``References``. A
thread's note is titled by its first subject (without "Re:"/"Fwd:"), dated by its first
message, written by that message's sender, and its participants are everyone in a
``From``, ``To`` or ``Cc``. Each message is a section with its sender and time, its
recipients (its subject only when a reply renamed the thread: the note's title is the
thread's), its plain text (an HTML-only message's text is read out of the HTML) without
the quoted lines of the messages before it nor its signature, then its attachments. A message marked ``Sensitivity: Private`` or ``Company-Confidential``
(Outlook) has its text inside ``<private>``, so the usual redaction hides it.
Attachments are named, never opened.
"""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import email.utils
import re
from dataclasses import dataclass
from email.message import EmailMessage

from memserver.convert import budget
from memserver.convert.errors import ConversionError
from memserver.convert.message_words import (
    ALL_CLOSINGS,
    SIGNATURE_LINE_WORDS,
    SIGNATURE_LINES,
    SIGNATURE_MARK,
)
from memserver.convert.note import Note, slug

_FROM_LINE = re.compile(rb"^From \S", re.MULTILINE)
# A body line "From ..." is written ">From ..." in an mbox (">>From" for ">From"): undone.
_ESCAPED_FROM = re.compile(rb"^>(>*From )", re.MULTILINE)
_SUBJECT_PREFIX = re.compile(r"^\s*((re|fw|fwd|aw|sv|antw)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)
_MESSAGE_ID = re.compile(r"<[^<>\s]+>")
_WROTE = re.compile(r"^\s*(On|Le|Am) .{4,200} (wrote|a écrit|schrieb)\s*:\s*$")
_PRIVATE = ("private", "company-confidential", "confidential")


@dataclass(frozen=True)
class _Mail:
    ident: str
    links: tuple[str, ...]
    subject: str
    sent: dt.datetime | None
    sender: str
    people: tuple[str, ...]
    text: str
    private: bool
    attachments: tuple[str, ...]


def convert_eml(name: str, data: bytes) -> list[Note]:
    """The note of one ``.eml`` message (its own thread)."""
    return _threads([_read(data, f"{name}#1")], name)


def convert_mbox(name: str, data: bytes) -> list[Note]:
    """One note per thread of an ``.mbox`` (messages split at their ``From `` lines)."""
    starts = [m.start() for m in _FROM_LINE.finditer(data)]
    if not starts or data[: starts[0]].strip():
        raise ConversionError(
            f"{name} is not an mbox file (it does not start with a 'From ' line)",
            "export the mailbox again as mbox, or save single messages as .eml",
        )
    chunks = [data[a:b] for a, b in zip(starts, [*starts[1:], len(data)], strict=True)]
    mails = [
        _read(_ESCAPED_FROM.sub(rb"\1", chunk.split(b"\n", 1)[-1]), f"{name}#{i}")
        for i, chunk in enumerate(chunks, 1)
    ]
    return _threads(mails, name)


def _read(data: bytes, fallback_id: str) -> _Mail:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    if not isinstance(msg, EmailMessage) or not any(k in msg for k in ("From", "Date", "Subject")):
        raise ConversionError(
            f"{fallback_id.split('#')[0]} holds no email headers (From, Date, Subject)",
            "save the message as .eml (RFC 822) from the mail client",
        )
    ids = _MESSAGE_ID.findall(str(msg.get("Message-ID", "")))
    links = tuple(_MESSAGE_ID.findall(f"{msg.get('In-Reply-To', '')} {msg.get('References', '')}"))
    sender = _names(msg.get_all("From") or [])
    people = _names(
        [*(msg.get_all("From") or []), *(msg.get_all("To") or []), *(msg.get_all("Cc") or [])]
    )
    sensitivity = str(msg.get("Sensitivity", "")).strip().lower()
    return _Mail(
        ident=ids[0] if ids else f"<{fallback_id}>",
        links=links,
        subject=" ".join(str(msg.get("Subject", "")).split()),
        sent=_date(msg),
        sender=sender[0] if sender else "",
        people=tuple(people),
        text=_unquoted(_body_text(msg)),
        private=sensitivity in _PRIVATE,
        attachments=tuple(
            str(part.get_filename()) for part in msg.iter_attachments() if part.get_filename()
        ),
    )


def _names(values: list[str]) -> list[str]:
    """Display names (else addresses) of address headers, in order, once each."""
    out: list[str] = []
    for display, address in email.utils.getaddresses([str(v) for v in values]):
        who = " ".join(display.split()) or address
        if who and who not in out:
            out.append(who)
    return out


def _date(msg: EmailMessage) -> dt.datetime | None:
    try:
        return email.utils.parsedate_to_datetime(str(msg.get("Date", "")))
    except (TypeError, ValueError, IndexError):
        return None


def _body_text(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):  # an unknown charset: read what can be read
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if part.get_content_subtype() == "html":
        from bs4 import BeautifulSoup

        content = BeautifulSoup(content, "html.parser").get_text("\n")
    return str(content)


def _unquoted(text: str) -> str:
    """The message's own words: no ``>`` quoted lines, no "On ... wrote:" line before them,
    no signature."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    kept = [line for line in lines if not line.lstrip().startswith(">")]
    while kept and (not kept[-1].strip() or _WROTE.match(kept[-1])):
        kept.pop()
    kept = _unsigned(kept)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def _unsigned(lines: list[str]) -> list[str]:
    """The lines without the signature: from a ``-- `` line, or from a closing ("Best,",
    "Хүндэтгэсэн,") followed only by a few short lines (a name, a title, a phone)."""
    for i, line in enumerate(lines):
        if line == SIGNATURE_MARK or line == SIGNATURE_MARK.strip():
            return lines[:i]
        if line.strip().rstrip(",.!").casefold() not in ALL_CLOSINGS:
            continue
        rest = [x for x in lines[i + 1 :] if x.strip()]
        if len(rest) <= SIGNATURE_LINES and all(
            len(x.split()) <= SIGNATURE_LINE_WORDS for x in rest
        ):
            return lines[:i]
    return lines


def _threads(mails: list[_Mail], name: str) -> list[Note]:
    """Mails grouped into threads (union of the ids they name), one note per thread."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for mail in mails:
        for link in mail.links:
            parent[root(link)] = root(mail.ident)
    groups: dict[str, list[_Mail]] = {}
    for mail in mails:
        groups.setdefault(root(mail.ident), []).append(mail)
    notes = [_thread_note(group) for group in groups.values()]
    if len(notes) > 1:
        notes = [
            Note(n.title, n.body, n.date, n.author, n.attendees, _unit_name(n, i))
            for i, n in enumerate(notes, 1)
        ]
    return notes


def _unit_name(note: Note, index: int) -> str:
    day = note.date.isoformat() if note.date else "undated"
    return f"{day}-{slug(note.title, 50)}-{index:03d}"


def _thread_note(group: list[_Mail]) -> Note:
    far_past = dt.datetime.min.replace(tzinfo=dt.UTC)
    group = sorted(group, key=lambda m: m.sent.astimezone(dt.UTC) if m.sent else far_past)
    first = group[0]
    title = _SUBJECT_PREFIX.sub("", first.subject).strip() or "(no subject)"
    sections = []
    for mail in group:
        when = mail.sent.strftime("%Y-%m-%d %H:%M") if mail.sent else "undated"
        head = f"## {mail.sender or 'Unknown sender'} — {when}"
        meta = [f"From: {mail.sender}"] if mail.sender else []
        meta.append(f"To: {', '.join(p for p in mail.people if p != mail.sender)}")
        # the note's title is the thread's subject: a message's is written only when it
        # says something else (a reply that renamed the thread)
        if mail.subject and _SUBJECT_PREFIX.sub("", mail.subject).strip() != title:
            meta.append(f"Subject: {mail.subject}")
        text = mail.text or "(no text)"
        if mail.private:
            text = f"<private>\n{text}\n</private>"
        # the message's words, then what came with it
        files = [f"Attachments (not opened): {', '.join(mail.attachments)}"] * bool(
            mail.attachments
        )
        sections.append("\n".join([head, "", *meta, "", text, *(["", *files] if files else [])]))
    people = tuple(dict.fromkeys(p for m in group for p in m.people))
    body = "\n\n".join(sections)
    budget.current().note(body)  # stops a mailbox of too many threads or too much text
    return Note(
        title,
        body,
        first.sent.date() if first.sent else None,
        first.sender or None,
        people,
    )
