"""An extractive answer's lines as the read agent sends them, for the Ask view to render.

The read agent's chat completion carries, in its ``memory`` extension, the lead and
the lines of an extractive answer as objects (``read_agent.extractive.line``): the
date apart, the words, whether a note states it or the memory inferred it, and the
pages it cites. The view renders those, never the answer's text (:mod:`ask`). The
fields are plain strings: the template escapes them. A model's answer has no lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Part:
    """Words inside a line, then the page they cite (if any)."""

    text: str
    cited: str = ""


@dataclass(frozen=True)
class Line:
    """A lead or an evidence line of an extractive answer."""

    text: str
    date: str = ""
    said_on: str = ""  # the note's date, when ``date`` is the day it speaks of
    tag: str = ""  # "Later", "As of 2026-08-31": said before the date
    parts: tuple[Part, ...] = ()
    label: str = ""  # direct (a note states it) or inferred (the memory's pages)
    source: str = ""  # the note that states it
    author: str = ""
    cited: tuple[str, ...] = ()

    @property
    def other_source(self) -> str:
        """The note that states it when it is not the page cited (said in the label)."""
        return self.source if self.source and self.source not in self.cited else ""


def read_line(raw: Any) -> Line | None:
    """One line of the ``memory`` extension (``lead`` or an item of ``lines``); None
    when it is not a line."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("text"), str):
        return None
    parts = tuple(
        Part(str(p["text"]), _text(p.get("cited")))
        for p in _listed(raw.get("parts"))
        if isinstance(p, Mapping) and isinstance(p.get("text"), str)
    )
    return Line(
        text=raw["text"],
        date=_text(raw.get("date")),
        said_on=_text(raw.get("said_on")),
        tag=_text(raw.get("tag")),
        parts=parts,
        label=_text(raw.get("label")),
        source=_text(raw.get("source")),
        author=_text(raw.get("author")),
        cited=tuple(str(c) for c in _listed(raw.get("cited")) if isinstance(c, str) and c),
    )


def read_lines(raw: Any) -> tuple[Line, ...]:
    return tuple(line for item in _listed(raw) if (line := read_line(item)) is not None)


def _listed(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return str(value) if isinstance(value, str | int | float) and value != "" else ""
