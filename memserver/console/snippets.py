"""The sentence of a search result that matched, with the query's words marked.

A result's snippet is the head of the chunk it came from (``Title — Fields, Summary``,
field lines, ``## Section`` headings, then text): a person wants the one sentence that
answers, not the chunk's outline. The sentence with the most of the query's words wins
(the first on a tie; the first sentence of text when no word matches, as for a match by
meaning). Words are marked by the template, which escapes every piece.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# Words that say nothing about which sentence answers (English question words and glue).
_GLUE = (
    "a an and are as at be by did do does for from had has have he her his how in is it its "
    "me my of on or our she that the their them they this to was we were what when where "
    "which who whom whose why will with you your about latest last newest first"
)
STOPWORDS = frozenset(_GLUE.split())
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_WORD = re.compile(r"\w+")
_FIELD = re.compile(r"^[a-z_]+: ")


@dataclass(frozen=True)
class Mark:
    text: str
    hit: bool = False


def query_terms(query: str) -> list[str]:
    """The words of the searched text worth marking, lower-cased, longest first."""
    words = {w for w in _WORD.findall(query.casefold()) if w not in STOPWORDS and len(w) > 1}
    return sorted(words, key=len, reverse=True)


def matched_sentence(snippet: str, title: str, query: str) -> list[Mark]:
    """The best sentence of ``snippet`` for ``query``, cut into marked and plain pieces."""
    terms = query_terms(query)
    sentences = list(_sentences(snippet, title))
    if not sentences:
        return [Mark(snippet.strip())] if snippet.strip() else []
    best = max(
        enumerate(sentences),
        key=lambda item: (len(_found(item[1], terms)), not _FIELD.match(item[1]), -item[0]),
    )[1]
    return _marked(best, terms)


def _sentences(snippet: str, title: str) -> Iterable[str]:
    lines = snippet.replace("**", "").splitlines()
    if lines and lines[0].startswith(f"{title} — "):
        lines = lines[1:]  # the chunk's head: the title and the sections it holds
    text: list[str] = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or _FIELD.match(line):
            yield from _split(" ".join(text))
            text = []
            if _FIELD.match(line):
                yield line
            continue
        text.append(line)
    yield from _split(" ".join(text))


def _split(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _pattern(terms: list[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, terms)) + r")\w*", re.IGNORECASE)


def _found(sentence: str, terms: list[str]) -> set[str]:
    """The terms ``sentence`` holds (as a word or a word's start: "meet" in "meetings")."""
    words = _WORD.findall(sentence.casefold())
    return {t for t in terms if any(w.startswith(t) for w in words)}


def _marked(sentence: str, terms: list[str]) -> list[Mark]:
    pattern = _pattern(terms)
    if pattern is None:
        return [Mark(sentence)]
    out: list[Mark] = []
    at = 0
    for found in pattern.finditer(sentence):
        if found.start() > at:
            out.append(Mark(sentence[at : found.start()]))
        out.append(Mark(found.group(0), hit=True))
        at = found.end()
    if at < len(sentence):
        out.append(Mark(sentence[at:]))
    return out
