"""Outlook messages (``.msg``), read as the RFC 822 message they stand for and then as an
``.eml`` is (``memserver.convert.email_thread``): one note, its thread's, dated by its
``Date``, written by its sender, its ``From``, ``To`` and ``Cc`` as attendees.

A ``.msg`` is an OLE2 compound file of MAPI properties. ``olefile`` (markitdown's
``[outlook]`` extra) opens it, and markitdown's own Outlook reader decodes its string
properties (Unicode or the message's code page). The message's saved internet headers
(``PR_TRANSPORT_MESSAGE_HEADERS``, on a received message) give the addresses and ids;
the MAPI properties fill in what they lack (a draft or sent message has none): subject,
sender, the recipients' display names, the submit, delivery or creation time, and
``PR_SENSITIVITY`` (private, confidential). The text is the plain body, else the HTML
body's; an RTF-only body is not read. Attachments are named, never opened.
"""

from __future__ import annotations

import datetime as dt
import email.policy
import email.utils
import io
import struct
from collections.abc import Callable
from email.message import EmailMessage
from email.parser import HeaderParser
from typing import Any

from memserver.convert.email_thread import convert_eml
from memserver.convert.errors import ConversionError
from memserver.convert.note import Note

_PROPERTIES = "__properties_version1.0"
_ENTRY = 16  # a property stream's entries: tag, flags, 8 bytes of value
_HEADER = 32  # the top-level message's property stream header
_PT_SYSTIME = 0x0040
_TIMES = (0x0039, 0x0E06, 0x3007)  # client submit, delivery, creation
_CODEPAGES = (0x3FFD, 0x3FDE)  # the message's, else the internet one
_SENSITIVITY = {2: "Private", 3: "Company-Confidential"}
_STRINGS = {  # header: the MAPI string property that holds it
    "Subject": "0037",
    "Message-ID": "1035",
    "In-Reply-To": "1042",
    "References": "1039",
}
_FIX = "save the message again from Outlook (Save As, Outlook Message Format), or as .eml"


def convert_msg(name: str, data: bytes) -> list[Note]:
    """The note of one ``.msg`` message, made as its ``.eml`` would be."""
    return convert_eml(name, msg_as_eml(name, data))


def msg_as_eml(name: str, data: bytes) -> bytes:
    """The RFC 822 bytes of an Outlook message: its headers and its text."""
    import olefile

    if not olefile.isOleFile(data=data):  # as data: given bare, short bytes are a path
        raise ConversionError(f"{name} is not an Outlook message (no OLE2 header)", _FIX)
    try:
        ole = olefile.OleFileIO(io.BytesIO(data))
    except Exception as exc:
        raise ConversionError(
            f"{name} is a corrupt Outlook message ({type(exc).__name__}: {exc})"[:500], _FIX
        ) from None
    with ole:
        if not ole.exists(_PROPERTIES):
            raise ConversionError(f"{name} is an OLE2 file but not an Outlook message", _FIX)
        message = _message(ole)
    if not any(header in message for header in ("From", "To", "Subject", "Date")):
        raise ConversionError(
            f"{name} holds no message properties (a truncated or damaged Outlook message?)", _FIX
        )
    return message.as_bytes(policy=email.policy.default)


def _message(ole: Any) -> EmailMessage:
    from markitdown.converters import OutlookMsgConverter

    # Its helpers read a string property in either type and its code page; markitdown is
    # pinned below 0.2, and the tests read a real .msg through them.
    reader = OutlookMsgConverter()
    longs: dict[int, int] = reader._get_long_properties(ole)
    codec = next(filter(None, (reader._get_codec_name(longs.get(c)) for c in _CODEPAGES)), None)

    def text(tag: str, folder: str = "") -> str:
        stream = f"{folder}__substg1.0_{tag}"
        found = reader._get_stream_data(ole, f"{stream}001F")
        found = found or reader._get_ansi_stream_data(ole, f"{stream}001E", codec)
        return (found or "").replace("\x00", "").strip()

    saved = HeaderParser(policy=email.policy.default).parsestr(text("007D"))
    out = EmailMessage()
    sender = email.utils.formataddr((text("0C1A") or text("0042"), text("0C1F")))
    wanted = {
        **{header: text(tag) for header, tag in _STRINGS.items()},
        "From": sender if sender.strip("<> ") else "",
        "To": _addresses(text("0E04")),
        "Cc": _addresses(text("0E03")),
        "Date": _date(ole),
        "Sensitivity": _SENSITIVITY.get(longs.get(0x0036, 0), ""),
    }
    for header, value in wanted.items():
        value = str(saved.get(header, "")) or value  # the saved headers have the addresses
        if value.strip():
            out[header] = " ".join(value.split())
    out.set_content(text("1000") or _html_text(ole))
    for attachment in _attachment_names(ole, text):
        out.add_attachment(b"", maintype="application", subtype="octet-stream", filename=attachment)
    return out


def _addresses(display: str) -> str:
    """Outlook's "Name; Name" display list as an address header (names, or addresses)."""
    names = [" ".join(n.split()) for n in display.split(";") if n.strip()]
    return ", ".join(
        email.utils.formataddr(("", n) if "@" in n and " " not in n else (n, "")) for n in names
    )


def _date(ole: Any) -> str:
    """The first of the submit, delivery and creation times, as a ``Date`` header."""
    raw = ole.openstream(_PROPERTIES).read()
    found: dict[int, int] = {}
    for offset in range(_HEADER, len(raw) - _ENTRY + 1, _ENTRY):
        tag, _flags, value = struct.unpack_from("<IIQ", raw, offset)
        if tag & 0xFFFF == _PT_SYSTIME and value:
            found[tag >> 16] = value
    for prop in _TIMES:
        if prop in found:
            when = dt.datetime(1601, 1, 1, tzinfo=dt.UTC) + dt.timedelta(
                microseconds=found[prop] // 10
            )
            return email.utils.format_datetime(when)
    return ""


def _html_text(ole: Any) -> str:
    """An HTML-only message's text (``PR_HTML``), the markup dropped as an .eml's is."""
    stream = "__substg1.0_10130102"
    if not ole.exists(stream):
        return ""
    from bs4 import BeautifulSoup

    return str(BeautifulSoup(ole.openstream(stream).read(), "html.parser").get_text("\n"))


def _attachment_names(ole: Any, text: Callable[[str, str], str]) -> list[str]:
    """Each attachment's long file name, else its display name."""
    folders = sorted({e[0] for e in ole.listdir() if e[0].startswith("__attach_version1.0")})
    return [text("3707", f"{f}/") or text("3001", f"{f}/") or "(unnamed)" for f in folders]
