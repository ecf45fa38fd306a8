"""Text helpers shared by both extractors: names, dates and sentences.

- ``norm``: one comparable form of a name (case, accents' composition, punctuation).
- ``transliterate``: Mongolian Cyrillic -> Latin (``Батбаяр Дорж`` -> ``Batbayar Dorj``),
  so a name seen in both scripts resolves to one page.
- ``resolve_date``: an ISO date, or a relative phrase ("yesterday", "last Friday")
  resolved against the *source's* document date, never the run date.
- ``dated_sentences``: the sentences of a text that name exactly one day.
- ``name_candidates``: capitalised word runs ("Bob Martinez", "Номин Трейд").
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterator
from zoneinfo import ZoneInfo

from memserver.kb.page import as_date
from memserver.search.timeparse import parse_time

_ISO = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})(?![\d])")
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“*(\[]?[A-ZА-ЯЁӨҮ0-9])")
_CAPITAL_WORD = r"[A-ZА-ЯЁӨҮ][\w'’-]*"
_NAME_RUN = re.compile(rf"(?<![\w]){_CAPITAL_WORD}(?:[ \t]+{_CAPITAL_WORD}){{0,3}}")
_MARKDOWN = re.compile(r"(\*\*|__|`|^#+\s*|^>\s*|^\s*(?:[-*+]|\d+[.)])\s+)", re.MULTILINE)

_CYRILLIC = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "yo", "ж": "j",
    "з": "z", "и": "i", "й": "i", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o",
    "ө": "u", "п": "p", "р": "r", "с": "s", "т": "t", "у": "u", "ү": "u", "ф": "f",
    "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "sh", "ъ": "", "ы": "y", "ь": "i",
    "э": "e", "ю": "yu", "я": "ya",
}  # fmt: skip


def norm(name: str) -> str:
    """A comparable form of a name: NFKC, case-folded, punctuation as single spaces."""
    text = unicodedata.normalize("NFKC", str(name)).casefold()
    return " ".join(_NON_WORD.sub(" ", text).replace("_", " ").split())


def has_cyrillic(text: str) -> bool:
    return any("\u0400" <= ch <= "\u04ff" for ch in text)


def transliterate(name: str) -> str | None:
    """The Latin spelling of a Cyrillic (Mongolian) name, or None when it has no Cyrillic."""
    if not has_cyrillic(name):
        return None
    out = []
    for ch in name:
        low = ch.lower()
        if low in _CYRILLIC:
            latin = _CYRILLIC[low]
            out.append(latin.capitalize() if ch != low and latin else latin)
        else:
            out.append(ch)
    return " ".join("".join(out).split())


def plain(text: str) -> str:
    """Text without markdown emphasis, bullets and heading marks, on one line."""
    return " ".join(_MARKDOWN.sub("", text).split())


def _noon(day: dt.date, tz: ZoneInfo) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(12), tzinfo=tz)


def resolve_date(value: object, doc_date: dt.date, tz: ZoneInfo) -> dt.date | None:
    """A date from an ISO value or a relative phrase, relative to ``doc_date``.

    Only phrases naming exactly one day count ("yesterday", "on Monday", "өчигдөр");
    a month or a range gives None.
    """
    found = as_date(value)
    if found is not None:
        return found
    text = str(value or "").strip()
    if not text:
        return None
    match = _ISO.search(text)
    if match:
        return as_date(match.group(1))
    window = parse_time(text, now=_noon(doc_date, tz), tz=tz).window
    if window is None or window.open_start or window.open_end:
        return None
    start, end = window.start.date(), window.end.date()
    return start if (end - start).days == 1 else None


def sentence_date(sentence: str, doc_date: dt.date, tz: ZoneInfo) -> dt.date | None:
    """The one day a sentence is about: its single ISO date, else a relative day phrase.

    A sentence with two different ISO dates ("from 2026-09-14 to 2026-10-14") names no
    single day and gives None.
    """
    dates = {as_date(m.group(1)) for m in _ISO.finditer(sentence)} - {None}
    if len(dates) == 1:
        return next(iter(dates))
    if dates:
        return None
    window = parse_time(sentence, now=_noon(doc_date, tz), tz=tz).window
    if window is None or window.open_start or window.open_end:
        return None
    start, end = window.start.date(), window.end.date()
    return start if (end - start).days == 1 else None


def blocks(text: str) -> Iterator[str]:
    """Paragraphs and list items of a markdown text, each on one line without markup."""
    block: list[str] = []

    def flush() -> Iterator[str]:
        if block:
            joined = plain(" ".join(block))
            block.clear()
            if joined:
                yield joined

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            yield from flush()
            continue
        if re.match(r"^([-*+]|\d+[.)])\s+", stripped) or stripped.startswith("**"):
            yield from flush()
        block.append(stripped)
    yield from flush()


def split_sentences(block: str) -> list[str]:
    return [piece.strip() for piece in _SENTENCE_END.split(block) if piece.strip()]


def sentences(text: str) -> Iterator[str]:
    """Sentences of a markdown text: bullets and paragraphs split at sentence ends."""
    for block in blocks(text):
        yield from split_sentences(block)


_CHAT_PREFIX = re.compile(r"^(?:[^\W\d][\w'’-]*\s+){1,3}\d{1,2}:\d{2}\s+")


def dated_sentences(text: str, doc_date: dt.date, tz: ZoneInfo) -> Iterator[tuple[dt.date, str]]:
    """``(day, sentence)`` for every sentence that names exactly one day."""
    for sentence in sentences(text):
        if "[redacted]" in sentence:
            continue
        day = sentence_date(sentence, doc_date, tz)
        if day is not None:
            yield day, _CHAT_PREFIX.sub("", sentence)


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


def transliterated_alias(title: str) -> str | None:
    """The Latin spelling to add as an alias of a Cyrillic title (None otherwise)."""
    latin = transliterate(title) if has_cyrillic(title) else None
    return latin if latin and norm(latin) != norm(title) else None
