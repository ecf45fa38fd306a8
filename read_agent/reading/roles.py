"""Roles read by their words: who heads what a role names.

A role at the head of a part of an organisation names the part ("Head of Product",
"VP Supply Chain", "CTO": chief technology officer); a role at the head of the whole
names none: every word of it is a word of a role that heads (``holders`` of the
lexicon's meanings: "CEO", chief executive officer; "President"; "гүйцэтгэх захирал").
"CEO and co-founder" holds such a role, "Country Manager, Mongolia" does not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memserver.kb.abbreviations import stands_for, with_words
from memserver.kb.words import STOPWORDS, words
from read_agent.reading.lexicon import Lexicon, same
from read_agent.reading.model import Reading

# a role's value may hold several roles ("CEO and co-founder", "CTO / co-founder"),
# apart at a mark or a joining word of the lexicon (``parts.join``)
_MARKS = re.compile(r"[,;/&+]")


def _holder(word: str, holders: Sequence[str]) -> bool:
    """A holder's word, or a phrase's start of one ("захир"; not a short word: "he")."""
    return any(
        same(word, h) or word.startswith(h) or (len(word) >= 4 and h.startswith(word))
        for h in holders
    )


def heads_whole(value: str, lex: Lexicon) -> bool:
    """Whether ``value`` (a role) holds a role at the head of a whole organisation: one
    whose every word, and every word of an abbreviation's phrase, is a holder's."""
    holders = lex.holders

    def heads(word: str) -> bool:
        phrases = stands_for(word)
        if phrases:
            return any(all(_holder(w, holders) for w in phrase) for phrase in phrases)
        return _holder(word, holders)

    joins = set(lex.parts.get("join", ()))
    for part in _MARKS.split(value):
        role: list[str] = []
        for word in [*words(part), ""]:
            if word and word not in joins:
                role.append(word)
                continue
            said = [w for w in role if w not in STOPWORDS]
            if said and all(heads(w) for w in said):
                return True
            role = []
    return False


def role_words(reading: Reading, lex: Lexicon) -> list[str]:
    """The words a role answering a "who heads ..." question is written with, to find
    the people holding it: the part the question names ("technology") and each
    abbreviation of a holder's role whose phrase holds it ("CTO"); for the head of a
    whole (``reading.whole``), the abbreviations of such roles and their phrases ("CEO",
    chief executive officer)."""
    holders = lex.holders
    by = reading.sense_of
    area = [t for t in reading.terms if not set(by.get(t, ())) & set(holders)]
    out = list(area)
    for short in with_words(area):
        if any(any(_holder(w, holders) for w in p) for p in stands_for(short)):
            out.append(short)
    if reading.whole:
        for short in with_words(holders):
            phrases = [p for p in stands_for(short) if all(_holder(w, holders) for w in p)]
            if phrases:
                out += [short, *(w for p in phrases for w in p)]
    return list(dict.fromkeys(out))
