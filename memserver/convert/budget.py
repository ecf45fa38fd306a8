"""How much text and how many notes one conversion may produce, counted as it goes.

A small original can stand for a huge text (a 300 KB workbook whose 150,000 cells share
one 2,000-character string is 300 MB of table; a 4 MB Slack export is 20,000 notes).
Checking the size after converting costs that memory and time first, so the
converters charge :func:`current` as they write (a row, a page, a note) and stop with a
ConversionError the moment it is spent. The worker process sets it from its
environment (``MEMSERVER_CONVERT_MAX_TEXT``, ``MEMSERVER_CONVERT_MAX_NOTES``): a file
dropped into ``source/`` may make text within the source size limit (and is refused
past ``DROPPED_MAX_NOTES`` notes: it must make one), ``memserver import`` gets the
import limits. Called in this process (tests), it is unlimited.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from memserver.convert.errors import ConversionError

IMPORT_MAX_TEXT = 256 * 1024 * 1024
IMPORT_MAX_NOTES = 50_000
DROPPED_MAX_NOTES = 100  # a dropped-in file of more notes is refused without counting on
TEXT_ENV = "MEMSERVER_CONVERT_MAX_TEXT"
NOTES_ENV = "MEMSERVER_CONVERT_MAX_NOTES"
DROPPED_ENV = "MEMSERVER_CONVERT_DROPPED"


@dataclass
class Budget:
    """The text (UTF-8 bytes) and notes one conversion may still produce; ``dropped``:
    for a file dropped into ``source/`` (the limit is the source size limit)."""

    max_text: int | None = None
    max_notes: int | None = None
    name: str = "the file"
    dropped: bool = False
    text: int = 0
    notes: int = 0

    def spend(self, piece: str | int) -> None:
        """Charge a piece of text (or its size in bytes); ConversionError past the limit."""
        self.text += piece if isinstance(piece, int) else len(piece.encode("utf-8"))
        if self.max_text is None or self.text <= self.max_text:
            return
        if self.dropped:
            raise ConversionError(
                f"its text is larger than the limit of {self.max_text:,} bytes "
                "(sources.max_bytes; the conversion stopped there)",
                "move it out of source/ and run `memserver import folder DIR`, which "
                "splits it by headings or pages into notes that fit",
            )
        raise ConversionError(
            f"{self.name} converts to more than {self.max_text:,} bytes of text, over the "
            "import limit (the conversion stopped there)",
            "split the original into smaller files and import them one by one",
        )

    def note(self, body: str) -> None:
        """Charge one more note and its text."""
        self.notes += 1
        if self.max_notes is not None and self.notes > self.max_notes:
            raise ConversionError(
                f"{self.name} holds more than {self.max_notes:,} notes (the conversion "
                "stopped there)",
                "move it out of source/ and run `memserver import email FILE` (mail), "
                "`memserver import slack DIR` (a Slack export) or `memserver import folder "
                "DIR`, which write one note each into source/"
                if self.dropped
                else "split the original into smaller files and import them one by one",
            )
        self.spend(body)


_budget = Budget()


def from_environment(name: str) -> Budget:
    """The worker's budget, from the variables its parent set; also :func:`current`."""
    global _budget
    text, notes = os.environ.get(TEXT_ENV), os.environ.get(NOTES_ENV)
    dropped = os.environ.get(DROPPED_ENV) == "1"
    _budget = Budget(int(text) if text else None, int(notes) if notes else None, name, dropped)
    return _budget


def current() -> Budget:
    """The budget of the conversion under way."""
    return _budget
