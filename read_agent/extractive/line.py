"""One line of an extractive answer, kept as an object until it is shown.

A line is what it says (``text``), the day it reports, the pages it cites and, for
evidence, whether a note states it (``direct``, with the note and who wrote it) or the
memory inferred it (``inferred``). :meth:`Line.render` writes it the one way the CLI
and HTTP answers show it::

    - 2026-11-12 · Ship the beta on Friday. (direct: source/standup.md, by Maria Lopez) [meetings/standup]
    - Later: 2026-11-20 · The beta slipped a week. [meetings/review]

and :meth:`Line.as_dict` is the same line as JSON (``lead`` and ``lines`` of ``POST
/ask`` and of the chat completion's ``memory`` extension), which the console renders
itself. A line that cites pages inside its words ("Reports to Alex Kim: Bob Martinez
[people/bob], Carol Diaz [people/carol]") keeps them as ``parts``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from read_agent.tools.raw_notes import SOURCE_PREFIX

DIRECT = "direct"  # a note states it: quoted from the note
INFERRED = "inferred"  # the memory inferred it: a page's field, summary or merged facts
LATER = "Later"  # the tag of what a later page says about a first one
CLOSEST = "Closest"  # the tag of a lead that holds most, not all, of the words asked
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Part:
    """Words inside a line, then the page they cite (if any)."""

    text: str
    cited: str = ""

    def render(self) -> str:
        return f"{self.text}[{self.cited}]" if self.cited else self.text


@dataclass(frozen=True)
class Line:
    """A lead or an evidence line (see the module docstring)."""

    text: str
    date: str | None = None
    cited: tuple[str, ...] = ()
    label: str | None = None  # DIRECT, INFERRED, or None (a listing, a heading line)
    source: str = ""  # the note that states it, when it is not the page cited
    author: str = ""  # who wrote or said it, when the note says
    said: str | None = None  # the note's date, when ``date`` is the day it speaks of
    tag: str = ""  # before the date: "Later", "Changed later", "As of 2026-08-31"
    parts: tuple[Part, ...] = ()  # words citing pages inside the line, after ``text``

    def render(self, bullet: bool = True) -> str:
        """The line as text: ``- `` (a bullet), tag, date, words, label, citation."""
        label = f" {self.shown_label()}" if self.label else ""
        cited = f" [{', '.join(self.cited)}]" if self.cited else ""
        return f"{'- ' if bullet else ''}{self.head()}{self.words()}{label}{cited}"

    def head(self) -> str:
        """``Later: 2026-11-20 (said on 2026-11-21) · `` or what of it the line has."""
        tag = f"{self.tag}: " if self.tag else ""
        said = f" (said on {self.said})" if self.said else ""
        return f"{tag}{self.date}{said} · " if self.date else tag

    def words(self) -> str:
        return self.text + "".join(part.render() for part in self.parts)

    def shown_label(self) -> str:
        """``(direct: note, by author)`` or ``(inferred)``."""
        if self.label != DIRECT:
            return f"({self.label})"
        source = f": {self.source}" if self.source else ""
        by = f", by {self.author}" if self.author else ""
        return f"({DIRECT}{source}{by})"

    def says(self) -> str:
        """What the line says, to tell a repeat: its words lowercased, without label or
        citations. A plain day before it goes too (the same sentence copied onto two
        pages is one), and so does "Later" or "Closest"; another tag or a "said on" day
        is part of what it says."""
        plain = (
            self.tag in ("", LATER, CLOSEST) and not self.said and _DAY.fullmatch(self.date or "")
        )
        head = "" if plain else self.head()
        words = self.text + "".join(part.text for part in self.parts)
        return " ".join(f"{head}{words}".split()).lower()

    def from_note(self) -> bool:
        """Whether the line quotes a raw note itself (it cites ``source/...``), not a page."""
        return any(c.startswith(SOURCE_PREFIX) for c in self.cited)

    def note(self) -> str:
        """The note that states it: ``source``, or the page cited when that is a note."""
        if self.label != DIRECT:
            return ""
        return self.source or (self.cited[0] if self.cited else "")

    def as_dict(self) -> dict[str, Any]:
        """The line as JSON (the same fields; ``source`` is :meth:`note`)."""
        return {
            "date": self.date,
            "said_on": self.said,
            "tag": self.tag or None,
            "text": self.text,
            "parts": [{"text": p.text, "cited": p.cited or None} for p in self.parts],
            "label": self.label,
            "source": self.note() or None,
            "author": self.author or None,
            "cited": list(self.cited),
        }
