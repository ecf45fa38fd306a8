"""An answer's text as the Ask view shows it: line by line, each evidence line's date
apart, and every ``[folder/slug]`` citation the answer kept turned into a link.

Only ids the read agent reports as citations become links (the page view, or the note
view for ``source/...``); any other bracket stays text. The pieces are plain strings:
the template escapes them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memserver.console.agent_link import Citation
from memserver.console.web import url

_CITED = re.compile(r"\[([^\[\]\n]{3,300})\]")
_SPLIT = re.compile(r"\s*[,;]\s*|\s+and\s+")
# "- 2026-11-12 · ..." or "- Later: 2026-11-12 · ..." (the extractive answer's evidence).
_DATED = re.compile(r"^(?:- )?((?:Later: )?\d{4}-\d{2}-\d{2})\s*·\s*")
SOURCE = "source/"


@dataclass(frozen=True)
class Piece:
    text: str
    href: str = ""  # a citation: where it opens
    title: str = ""


@dataclass(frozen=True)
class Line:
    pieces: tuple[Piece, ...]
    date: str = ""  # an evidence line's date
    bullet: bool = False


def cited_href(page_id: str) -> str:
    """Where a citation opens: a note's view for ``source/...``, else the page."""
    if page_id.startswith(SOURCE):
        return url(f"note/{page_id.removeprefix(SOURCE)}")
    return url(f"page/{page_id}")


def answer_lines(text: str, citations: Sequence[Citation]) -> list[Line]:
    known = {c.id: c for c in citations}
    lines = []
    for raw in text.splitlines():
        dated = _DATED.match(raw)
        bullet = raw.startswith("- ")
        rest = raw[dated.end() :] if dated else raw.removeprefix("- ")
        lines.append(Line(_pieces(rest, known), dated.group(1) if dated else "", bullet))
    return lines


def _pieces(text: str, known: dict[str, Citation]) -> tuple[Piece, ...]:
    out: list[Piece] = []
    at = 0
    for found in _CITED.finditer(text):
        ids = [i.strip() for i in _SPLIT.split(found.group(1)) if i.strip()]
        if not ids or any(i not in known for i in ids):
            continue  # not a citation the agent kept: left as text
        if found.start() > at:
            out.append(Piece(text[at : found.start()]))
        for page_id in ids:
            out.append(Piece(page_id, cited_href(page_id), known[page_id].title))
        at = found.end()
    if at < len(text):
        out.append(Piece(text[at:]))
    return tuple(out)
