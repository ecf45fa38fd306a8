"""What kind of writing a note is, as the converters name it, for the agents (which stand
on ``kb``, not on ``convert``): the genres and the words of a message's frame, from the
one place they are defined (:mod:`memserver.convert.clean`,
:mod:`memserver.convert.message_words`)."""

from __future__ import annotations

from memserver.convert.clean import (
    CHAT,
    DOCUMENT,
    EMAIL,
    GENRES,
    SLIDES,
    SPREADSHEET,
    TRANSCRIPT,
)
from memserver.convert.message_words import ALL_CLOSINGS, ALL_HEADERS, SENDER, SENT
from memserver.convert.note import MESSAGE_GENRES

__all__ = [
    "ALL_CLOSINGS",
    "ALL_HEADERS",
    "CHAT",
    "DOCUMENT",
    "EMAIL",
    "GENRES",
    "MESSAGE_GENRES",
    "SENDER",
    "SENT",
    "SLIDES",
    "SPREADSHEET",
    "TRANSCRIPT",
]
