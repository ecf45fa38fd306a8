"""Names a question writes in the other script: "Глобекстэй" in a Mongolian question
finds the page titled Globex and the notes that say "Globex".

A Cyrillic word of the question (or its stem without a case ending, "Глобекстэй" ->
"Глобекс") is compared with the words of page titles written in Latin letters by their
sound-alike key (:func:`memserver.kb.translit.name_key`: "Глобекс" and "Globex" are both
``globeks``). Candidates come from the titles' full-text index, by the first two letters
of the key in each Latin spelling they may have ("ak" is "ak", "ac" or "aq"), and are
then compared in Python. A match gives the question's word the Latin word as one more
prefix for the keyword arms (:meth:`memserver.search.text_query.TextQuery.of`), and a
title that is the name as a whole a title hit. Words of three letters or fewer, and
business words the glossary already carries across (:mod:`memserver.kb.glossary`), are
left alone: they are not names.

The other way, a page with a Cyrillic title carries its Latin spelling as an alias from
the ingest ("Номин Трейд", alias "Nomin Trade"). A name a question writes in Latin letters
that a note writes in Cyrillic in its text (a town, "Darkhan": "Дархан дахь ...") is
searched by its Cyrillic spellings too (:func:`cyrillic_names`).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from typing import Any

import psycopg

from memserver.kb.glossary import other_language
from memserver.kb.translit import cyrillic_spellings, name_key, word_keys
from memserver.kb.words import is_cyrillic, normalize_name
from memserver.search.fusion import Hit

Conn = psycopg.Connection[Any]

MIN_NAME_LETTERS = 5  # a shorter Latin name ("Tom") spelled in Cyrillic is often a word
MOST_CANDIDATES = 2000  # titles compared a question: a bound, far above a real match's

# The Latin letters a key's letter may have been written with (translit._SOUND, reversed).
_SPELLINGS = {"k": ("k", "c", "q"), "s": ("s", "c"), "f": ("f", "ph"), "v": ("v", "w")}
_SPELLINGS |= {"i": ("i", "y"), "h": ("h", "kh"), "a": ("a", "e")}  # "a": translit.loose_key

_CANDIDATES = """
SELECT id, folder, title, effective_date FROM pages
WHERE folder = ANY(%(folders)s) AND title_tsv @@ to_tsquery('simple', %(starts)s)
LIMIT %(most)s
"""


def _starts(keys: set[str]) -> list[str]:
    """``to_tsquery`` prefixes for the Latin spellings of the keys' first two letters."""
    out: set[str] = set()
    for key in keys:
        firsts = [_SPELLINGS.get(letter, (letter,)) for letter in key[:2]]
        out.update("".join(p) for p in itertools.product(*firsts))
    return sorted(s for s in out if s.isalpha())


def latin_names(
    conn: Conn,
    terms: Sequence[str],
    folders: Sequence[str],
    people: Collection[str] = (),
    asked: Sequence[str] = (),
) -> tuple[dict[str, tuple[str, ...]], list[Hit]]:
    """For each Cyrillic name among ``terms``, the Latin title words that sound like it
    (lower case), and the pages whose whole title does, or, in the ``people`` folders,
    whose first word does (title hits, score 0.5 + 0.45 / the words ``asked``)."""
    wanted = {
        term: keys
        for term in terms
        if is_cyrillic(term) and not other_language(term) and (keys := word_keys(term))
    }
    if not wanted or not folders:
        return {}, []
    starts = _starts(set().union(*wanted.values()))
    rows = conn.execute(
        _CANDIDATES,
        {
            "folders": list(folders),
            "starts": " | ".join(f"{s}:*" for s in starts),
            "most": MOST_CANDIDATES,
        },
    ).fetchall()
    words: dict[str, dict[str, None]] = {term: {} for term in wanted}
    hits: dict[str, Hit] = {}
    # as the title arm scores a name among the question's words, never an exact name's
    # 1.0 (which pins the page first): a name by its sound is not the name as written
    share = 0.5 + 0.45 / max(1, len(asked))
    for page_id, folder, title, day in rows:
        if is_cyrillic(title):
            continue
        title_words = normalize_name(title).split()
        if not title_words:
            continue  # a title of signs only names nothing
        whole = name_key(title)
        for term, keys in wanted.items():
            # the whole title, or a person's first name ("Прия" is Priya Shah)
            if whole in keys or (folder in people and word_keys(title_words[0]) & keys):
                hits[page_id] = Hit(
                    page_id, folder, share, None, day, "transliterated_title", title
                )
            for word in title_words:
                if word_keys(word) & keys:
                    words[term][word] = None
    found = {term: tuple(w) for term, w in words.items() if w}
    return found, sorted(hits.values(), key=lambda h: h.id)


def cyrillic_names(terms: Sequence[str], names: Collection[str]) -> dict[str, tuple[str, ...]]:
    """For each term written in Latin letters as a name (``names``: capitalised in the
    question), the Cyrillic spellings a Mongolian note may give it ("darkhan" ->
    ``("дархан",)``): more prefixes for the keyword arms."""
    return {
        term: spellings
        for term in terms
        if term in names
        and len(term) >= MIN_NAME_LETTERS
        and (spellings := cyrillic_spellings(term))
    }
