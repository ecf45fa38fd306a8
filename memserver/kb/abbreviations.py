"""Abbreviations and the words they stand for, in English and Mongolian: a question
written one way about a page written the other ("Who is Globex's chief operating
officer?" is answered by "Karen Lee — role: COO"; "Who is the CTO?" by a note saying
"chief technology officer").

Each line holds an abbreviation, then the phrases it stands for. A phrase's words are
starts, as in :mod:`memserver.kb.glossary` ("officer" covers "officers", "захирал" is
written "захир" to cover "захирлын"); the short words joining them are left out of the
comparison ("estimated time of arrival" asks "estimated", "time" and "arrival"). An
abbreviation that is itself a stop word ("IT") is not here: the search drops it from a
question, and every "it" of a note would match it.
Pure data: the search and the read agent compare words with it, so both read an
abbreviation alike.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Sequence

from memserver.kb.words import STOPWORDS

# abbreviation | phrase | phrase ...
_LINES = """
ceo | chief executive officer | chief executive | гүйцэтгэх захир
coo | chief operating officer | chief operations officer | үйл ажиллага хариуцсан захир
cfo | chief financial officer | chief finance officer | санхүүгийн захир
cto | chief technology officer | chief technical officer | технологи хариуцсан захир
cio | chief information officer
cmo | chief marketing officer | маркетингийн захир
cso | chief sales officer
vp | vice president | дэд ерөнхийлөгч
svp | senior vice president
evp | executive vice president
hr | human resources | хүний нөөц
qa | quality assurance | чанарын баталгаа
eta | estimated time of arrival | estimated arrival time
sla | service level agreement
kpi | key performance indicator
roi | return on investment
nda | non disclosure agreement
rfp | request for proposal
poc | proof of concept
mvp | minimum viable product
arr | annual recurring revenue
mrr | monthly recurring revenue
acv | annual contract value
crm | customer relationship management
erp | enterprise resource planning
pr | pull request
ga | general availability
api | application programming interface
ui | user interface
ux | user experience
sso | single sign on
pto | paid time off
okr | objectives and key results
qbr | quarterly business review
sow | statement of work
msa | master services agreement
rca | root cause analysis
gtm | go to market
eod | end of day
"""

Phrase = tuple[str, ...]


def _joining(word: str) -> bool:
    """A short stop word joining a phrase's words ("of", "on", "for"), left out."""
    return word in STOPWORDS and len(word) <= 3


@functools.cache
def _table() -> dict[str, tuple[Phrase, ...]]:
    table: dict[str, tuple[Phrase, ...]] = {}
    for line in _LINES.strip().splitlines():
        short, *phrases = (part.strip() for part in line.split("|"))
        kept = [tuple(w for w in p.split() if not _joining(w)) for p in phrases]
        table[short] = tuple(p for p in kept if len(p) >= 2)
    return table


def _has(words: Iterable[str], start: str) -> bool:
    return any(w.startswith(start) for w in words)


def stands_for(word: str) -> tuple[Phrase, ...]:
    """The phrases (their words' starts) the lower-case ``word`` abbreviates, none when it
    is no abbreviation ("coo" -> ("chief", "operating", "officer"), ...)."""
    return _table().get(word, ())


def spelled_out(short: str, words: Collection[str]) -> bool:
    """Whether ``words`` hold every word of a phrase ``short`` stands for, in any order
    ("coo" in "chief operating officer, Globex")."""
    return any(all(_has(words, s) for s in phrase) for phrase in stands_for(short))


def spoken(words: Iterable[str]) -> set[str]:
    """``words`` with the words of a phrase an abbreviation among them stands for that
    no other abbreviation's phrase holds: "role: cto" also says "technology", not
    "chief" or "officer", which every chief's title says."""
    said = set(words)
    owners = _owners()
    return said | {
        start
        for word in said
        for phrase in stands_for(word)
        for start in phrase
        if owners[start] == {word}
    }


def with_words(starts: Iterable[str]) -> tuple[str, ...]:
    """The abbreviations one of whose phrases holds one of ``starts`` ("chief" ->
    "ceo", "coo", ...; "захирал" -> the same by "захир")."""
    starts = tuple(starts)
    return tuple(
        short
        for short, phrases in _table().items()
        if any(w.startswith(s) or s.startswith(w) for p in phrases for s in p for w in starts)
    )


@functools.cache
def _owners() -> dict[str, set[str]]:
    """Each word of a phrase -> the abbreviations whose phrases hold it."""
    out: dict[str, set[str]] = {}
    for short, phrases in _table().items():
        for phrase in phrases:
            for start in phrase:
                out.setdefault(start, set()).add(short)
    return out


def abbreviated(words: Collection[str]) -> list[tuple[str, Phrase]]:
    """The abbreviations whose phrase ``words`` spell out, each with that phrase
    ("chief", "executive", "officer" -> [("ceo", ("chief", "executive", "officer")),
    ("ceo", ("chief", "executive"))])."""
    return [
        (short, phrase)
        for short, phrases in _table().items()
        for phrase in phrases
        if all(_has(words, s) for s in phrase)
    ]


def spelled_in(terms: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each of ``terms`` that is a word of a phrase the terms spell out -> the
    abbreviations of that phrase ("chief", "operating", "officer" -> each "coo")."""
    out: dict[str, tuple[str, ...]] = {}
    for short, phrase in abbreviated(terms):
        for term in terms:
            if term != short and any(term.startswith(s) for s in phrase):
                out[term] = tuple(dict.fromkeys((*out.get(term, ()), short)))
    return out


def shortened(words: Sequence[str]) -> list[str]:
    """``words`` with each run spelling out a phrase, in its order, replaced by the
    phrase's abbreviation ("globex estimated time of arrival rollout" -> "globex eta
    rollout"): a name written with the abbreviation is then found by its words."""
    out: list[str] = []
    i = 0
    while i < len(words):
        end, short = _run_at(words, i)
        out.append(short if short else words[i])
        i = end if short else i + 1
    return out


def _run_at(words: Sequence[str], i: int) -> tuple[int, str]:
    """(end, abbreviation) of the longest phrase spelled out from ``words[i]``, else
    (i, "")."""
    best = (i, "")
    for short, phrases in _table().items():
        for phrase in phrases:
            j = i
            for start in phrase:
                while j < len(words) and j > i and _joining(words[j]):
                    j += 1
                if j >= len(words) or not words[j].startswith(start):
                    break
                j += 1
            else:
                if j > best[0]:
                    best = (j, short)
    return best
