"""A question as the extractive answer reads it: the reading of
:mod:`read_agent.reading` (what it asks, typed, read once) made from a ``kb_query``
result, and its topical words matched loosely against a sentence's words.

:func:`same_word`: two words are the same word when equal, or one is the other with an
English or Mongolian ending ("decided" ~ "Decisions", "renew" ~ "renewal", "шийдсэн" ~
"Шийдвэрүүд"): a shared start of four letters or more, an English verb's irregular past
("go" ~ "went", from the lexicon's data), the same business word in the other language
("price" ~ "Үнэ", :mod:`memserver.kb.glossary`), or one name in two scripts.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memserver.kb.abbreviations import spelled_in, spelled_out
from memserver.kb.glossary import same_meaning
from memserver.kb.schema import Schema
from memserver.kb.translit import same_name_across_scripts
from memserver.kb.words import is_cyrillic, mn_stems, words
from read_agent.reading import BEFORE_CHANGE, Context, Reading, Subject
from read_agent.reading import read as read_question
from read_agent.reading.fields import Embed
from read_agent.reading.lexicon import en_stem, lexicon, synonyms

__all__ = ["BEFORE_CHANGE", "Reading", "matched", "read", "same_word", "stem"]

_SUFFIXES = ("er", "ers", "s", "es", "ed", "ing", "ership", "ment", "al")
MIN_SHARED = 4


def read(
    question: str,
    result: Mapping[str, Any],
    subjects: Sequence[Subject] = (),
    names: Mapping[str, Sequence[str]] | None = None,
    schema: Schema | None = None,
    earlier: Sequence[Subject] = (),
    embed: Embed | None = None,
    unclear: Sequence[str] = (),
) -> Reading:
    """The reading of ``question`` with what a ``kb_query`` result says of it: the
    search's time and topic, the ``subjects`` it found by their names, and the folders
    of a name the index could not tell apart (``unclear``)."""
    time = result.get("time") if isinstance(result.get("time"), Mapping) else {}
    intent = result.get("intent") if isinstance(result.get("intent"), Mapping) else {}
    assert isinstance(time, Mapping) and isinstance(intent, Mapping)
    context = Context(schema, subjects, names, time, intent, earlier, embed, unclear)
    return read_question(question, context)


def stem(word: str) -> str:
    """A crude stem: English endings off, or the shortest Mongolian stem."""
    if is_cyrillic(word):
        stems = mn_stems(word)
        return stems[-1] if stems else word
    return en_stem(word, silent_e=False)  # a sentence's words: two long words sharing
    # their start are one already (same_word), a bare form's e kept


def same_word(a: str, b: str, by_meaning: bool = True, loose: bool = True) -> bool:
    """Whether two normalised words are one word with different endings, or one is
    the other's irregular past ("go" ~ "went", "meet" ~ "met"), or (``by_meaning``)
    words of one ``synonyms`` meaning ("charge" ~ "pricing"); ``loose``: or two long
    words sharing their start ("decided" ~ "decision"), which a sense's English word
    does not ("compensation" is not "company")."""
    base = lexicon().base_form
    if a == b or base.get(a, a) == base.get(b, b) or same_meaning(a, b):
        return True
    if same_name_across_scripts(a, b):  # one name in two scripts: "прия" ~ "priya"
        return True
    if by_meaning and synonyms(a, b):  # one meaning: "charge" ~ "pricing", "boss" ~ "manager"
        return True
    sa, sb = stem(a), stem(b)
    if sa == sb:
        return True
    short, long = sorted((sa, sb), key=len)
    if len(short) >= MIN_SHARED and long.startswith(short):
        return True
    if len(short) >= 3 and any(long == short + s for s in _SUFFIXES):
        return True  # "own" ~ "owner"
    if not loose and not is_cyrillic(a):  # a Mongolian ending may drop a vowel: "захирлаар"
        return False
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared >= max(MIN_SHARED, min(len(a), len(b)) - 3) and min(len(a), len(b)) >= 5


def matched(
    terms: Iterable[str],
    text_words: Iterable[str],
    senses: Mapping[str, Sequence[str]] | None = None,
) -> set[str]:
    """The ``terms`` found among ``text_words`` (see :func:`same_word`), an abbreviation
    also where the text spells it out, and the words of a phrase the terms spell out
    also where the text abbreviates it ("chief operating officer" in "role: COO",
    :mod:`memserver.kb.abbreviations`). A term with ``senses`` (the reading's: "charge"
    of "in charge") is found by one of their words instead, none by its synonyms."""
    asked, pool, senses = tuple(terms), set(text_words), senses or {}
    found = {
        t
        for t in asked
        if (t in pool and (t not in senses or t in senses[t]))  # "paid" of a person: a salary
        or (
            any(same_word(s, w, by_meaning=False, loose=False) for s in senses[t] for w in pool)
            if t in senses
            else any(same_word(t, w) for w in pool)
        )
    }
    found |= {t for t in asked if t not in found and spelled_out(t, pool)}
    for term, shorts in _spelled(asked).items():
        if term not in found and any(s in pool for s in shorts):
            found.add(term)
    return found


def half_said(topic: Sequence[str], title: str) -> bool:
    """Whether a title says at least half the ``topic`` words ("our current price per
    shipment": "Usage-based pricing replaces per-seat pricing"); an empty topic, yes."""
    return 2 * len(matched(topic, words(title))) >= len(topic)


@functools.lru_cache(maxsize=256)
def _spelled(terms: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return spelled_in(terms)
