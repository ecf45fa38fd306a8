"""A note's running text as both extractors read it: blocks, sentences, names, dates.

- ``blocks`` / ``marked_blocks``: paragraphs and list items on one line, without markup,
  with the heading each stands under; ``split_sentences`` cuts one into sentences.
- ``resolve_date``: an ISO date, or a relative phrase ("yesterday", "last Friday")
  resolved against the *source's* document date, never the run date.
- ``dated_sentences``: the sentences of a text that name a day, each with its entry date
  (:mod:`ingest_agent.extract.dates`).
- ``name_candidates``: capitalised word runs ("Bob Martinez", "Номин Трейд");
  ``full_name``: a text as a person-like name. (Comparing names: ``ingest_agent.names``.)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ingest_agent.extract.dates import day_mentions, entry_date
from memserver.kb.page import as_date

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“*(\[]?[A-ZА-ЯЁӨҮ0-9])")
_CAPITAL_WORD = r"[A-ZА-ЯЁӨҮ][\w'’-]*"
_NAME_RUN = re.compile(rf"(?<![\w]){_CAPITAL_WORD}(?:[ \t]+{_CAPITAL_WORD}){{0,3}}")
_MARKDOWN = re.compile(r"(\*\*|__|`|^#+\s*|^>\s*|^\s*(?:[-*+]|\d+[.)])\s+)", re.MULTILINE)


def plain(text: str) -> str:
    """Text without markdown emphasis, bullets and heading marks, on one line."""
    return " ".join(_MARKDOWN.sub("", text).split())


def resolve_date(value: object, doc_date: dt.date, tz: ZoneInfo) -> dt.date | None:
    """A date from an ISO value or a phrase naming one day, relative to ``doc_date``.

    "yesterday", "on Monday", "өчигдөр" are read against the note's date; a month and
    day without a year ("December 3") is the occurrence nearest it. A month or a range
    gives None.
    """
    found = as_date(value)
    if found is not None:
        return found
    text = str(value or "").strip()
    if not text:
        return None
    days = {m.day for m in day_mentions(text, doc_date, tz)}
    return next(iter(days)) if len(days) == 1 else None


def blocks(text: str) -> Iterator[str]:
    """Paragraphs and list items of a markdown text, each on one line without markup."""
    for block in marked_blocks(text):
        yield block.text


@dataclass(frozen=True)
class Block:
    """A paragraph or list item on one line, whether it is a list item, and the heading
    (a ``#`` heading or a bold-only line such as ``**Globex**``) it stands under;
    ``labelled``: a list item that opens with a label of its own (``**Security**: ...``,
    ``3. **Docker Image** – ...``: numbered, or led by a bold phrase), a step or a field
    of a list, not a statement about a person named there."""

    text: str
    item: bool
    heading: str = ""
    labelled: bool = False


_BOLD_LINE = re.compile(r"^\*\*([^*]+)\*\*:?$")


# A transcript's or a chat's time stamp opening a line: "[09:00:12] Maria Lopez: ...".
_STAMP = re.compile(r"^\[?(?:\d{4}-\d{2}-\d{2}[ T])?\d{1,2}:\d{2}(?::\d{2})?\]?\s+(?=\S)")
_LABELLED_ITEM = re.compile(r"^(?:\d+[.)]\s+|[-*+]\s+\*\*[^*]+\*\*\s*[:–—-])")


def marked_blocks(text: str) -> Iterator[Block]:
    """``blocks`` with whether each is a list item and the heading above it. A line
    opening with a time stamp is a turn of its own (the stamp goes: it is no word)."""
    lines: list[str] = []
    item = False
    labelled = False
    heading = ""

    def flush() -> Iterator[Block]:
        if lines:
            joined = plain(" ".join(lines))
            lines.clear()
            if joined:
                yield Block(joined, item, heading, labelled)

    for line in text.splitlines():
        stripped = line.strip()
        stamp = _STAMP.match(stripped)
        if stamp is not None:
            yield from flush()
            stripped, item, labelled = stripped[stamp.end() :], False, False
        if not stripped or stripped.startswith("#") or stripped == "---":
            yield from flush()
            item = False
            if stripped.startswith("#"):
                heading = plain(stripped)
            continue
        bold = _BOLD_LINE.match(stripped)
        if bold is not None:
            yield from flush()
            heading, item = bold.group(1).strip(), False
            continue
        if re.match(r"^([-*+]|\d+[.)])\s+", stripped) or stripped.startswith("**"):
            yield from flush()
            item = True
            labelled = _LABELLED_ITEM.match(stripped) is not None
        lines.append(stripped)
    yield from flush()


def split_sentences(block: str) -> list[str]:
    return [piece.strip() for piece in _SENTENCE_END.split(block) if piece.strip()]


def sentences(text: str) -> Iterator[str]:
    """Sentences of a markdown text: bullets and paragraphs split at sentence ends."""
    for block in blocks(text):
        yield from split_sentences(block)


_CHAT_PREFIX = re.compile(r"^(?:[^\W\d][\w'’-]*\s+){1,3}\d{1,2}:\d{2}\s+")


ENTRY_CHARS = 400  # a list item up to this long is one timeline entry, else its sentences


@dataclass(frozen=True)
class DatedText:
    """A timeline entry's text and day, with the block and heading it came from;
    ``mentioned``: the text names a day (else it is dated by when it was said)."""

    day: dt.date
    text: str
    block: Block
    mentioned: bool = True


def dated_sentences(
    text: str, doc_date: dt.date, tz: ZoneInfo, *, every: bool = False
) -> Iterator[DatedText]:
    """Every list item (up to ``ENTRY_CHARS``) or sentence that names a day; the day is
    the entry's (``dates.entry_date``: the event's when the text says it, else the
    note's). A short list item is one fact, so it stays whole: "Globex signed the pilot
    on 2026-08-25. ... Globex is now a customer." is one entry. With ``every``, the
    sentences that name no day too, dated ``doc_date`` (a message's: when it was said)."""
    for block in marked_blocks(text):
        body = _CHAT_PREFIX.sub("", block.text)
        short = block.item and len(body) <= ENTRY_CHARS
        for piece in [body] if short else split_sentences(body):
            if "[redacted]" in piece:
                continue
            line = _CHAT_PREFIX.sub("", piece)
            day = entry_date(line, doc_date, tz)
            if day is not None or every:
                yield DatedText(
                    day or doc_date, line, Block(body, block.item, block.heading), day is not None
                )


def name_candidates(text: str, *, sub_runs: bool = True) -> list[str]:
    """Runs of 1-4 capitalised words, in order of appearance, without duplicates.

    With ``sub_runs`` every contiguous part of a run counts too ("Bob Martinez",
    "Bob", "Martinez"); without, only the whole run, its first two words and each
    single word (what a short form or alias can be).
    """
    seen: dict[str, None] = {}
    for match in _NAME_RUN.finditer(plain(text)):
        words = match.group(0).split()
        if sub_runs:
            parts = [
                words[start : start + size]
                for size in range(len(words), 0, -1)
                for start in range(0, len(words) - size + 1)
            ]
        else:
            parts = [words, words[:2], *([w] for w in words)]
        for part in parts:
            name = " ".join(part).strip(".'’")
            if name:
                seen.setdefault(name)
    return list(seen)


def full_name(text: str) -> str | None:
    """The text as a person-like name (2-4 capitalised words), else None."""
    words = plain(text).strip(" .,;:").split()
    if not 2 <= len(words) <= 4:
        return None
    if all(re.fullmatch(_CAPITAL_WORD, w) for w in words):
        return " ".join(words)
    return None
