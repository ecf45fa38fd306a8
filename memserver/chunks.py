"""Chunks of a page for the index: its fields, each section in overlapping windows, each
timeline entry alone, the open questions; and the content hash of a page file."""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Collection
from dataclasses import dataclass

from memserver.page_model import OPEN_QUESTIONS, TIMELINE, Page


@dataclass(frozen=True)
class Chunk:
    """A piece of a page for the index; ``text`` starts with ``"<title> — <section>\\n"``."""

    section: str
    text: str
    ordinal: int
    date: datetime.date | None = None


FIELDS_SECTION = "Fields"


def _windows(body: str, max_words: int, overlap: int) -> list[str]:
    """Slices of ``body`` of at most ``max_words`` words, overlapping, formatting kept."""
    spans = [m.span() for m in re.finditer(r"\S+", body)]
    if not spans:
        return []
    step = max(1, max_words - max(0, min(overlap, max_words - 1)))
    out = []
    for start in range(0, len(spans), step):
        end = min(start + max_words, len(spans))
        out.append(body[spans[start][0] : spans[end - 1][1]])
        if end == len(spans):
            break
    return out


def _fields_text(page: Page) -> str:
    lines = []
    for key, value in page.fields.items():
        shown = ", ".join(map(str, value)) if isinstance(value, tuple) else str(value)
        lines.append(f"{key}: {shown}")
    if page.aliases:
        lines.append(f"aliases: {', '.join(page.aliases)}")
    return "\n".join(lines)


def drop_field_lines(text: str, names: Collection[str]) -> str:
    """``text`` (a chunk or snippet) without the ``name: value`` lines that
    :func:`chunk_page` writes for the fields ``names`` into its Fields chunk."""
    if not names:
        return text
    prefixes = tuple(f"{name}: " for name in names)
    return "\n".join(line for line in text.split("\n") if not line.startswith(prefixes))


def chunk_page(page: Page, max_words: int = 300, overlap: int = 50) -> list[Chunk]:
    """Chunks for the index: fields, each section in windows, each timeline entry alone."""
    chunks: list[Chunk] = []

    def add(section: str, body: str, date: datetime.date | None = None) -> None:
        for piece in _windows(body, max_words, overlap):
            chunks.append(Chunk(section, f"{page.title} — {section}\n{piece}", len(chunks), date))

    add(FIELDS_SECTION, _fields_text(page))
    for heading, body in page.sections.items():
        add(heading, body)
    for entry in page.timeline:
        source = f" [source: {entry.source}]" if entry.source else ""
        add(TIMELINE, f"{entry.date.isoformat()}: {entry.text}{source}", entry.date)
    if page.open_questions:
        add(OPEN_QUESTIONS, "\n".join(f"- {q}" for q in page.open_questions))
    return chunks


def content_hash(text: str) -> str:
    """SHA-256 (hex) of the text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
