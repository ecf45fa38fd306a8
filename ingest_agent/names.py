"""One comparable form of a name, in either script, for every part of the agent.

- ``norm``: case, accents' composition and punctuation folded away, so "Bob  Martinez,"
  and "bob martinez" are one key.
- ``transliterated_alias``: the Latin spelling of a Cyrillic title (``Батбаяр Дорж`` ->
  ``Batbayar Dorj``, by ``memserver.kb.translit``), so a name seen in both scripts
  resolves to one page.
"""

from __future__ import annotations

import re
import unicodedata

from memserver.kb.translit import transliterate

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)


def norm(name: str) -> str:
    """A comparable form of a name: NFKC, case-folded, punctuation as single spaces."""
    text = unicodedata.normalize("NFKC", str(name)).casefold()
    return " ".join(_NON_WORD.sub(" ", text).replace("_", " ").split())


def has_cyrillic(text: str) -> bool:
    return any("\u0400" <= ch <= "\u04ff" for ch in text)


def transliterated_alias(title: str) -> str | None:
    """The Latin spelling to add as an alias of a Cyrillic title (None otherwise)."""
    latin = transliterate(title) if has_cyrillic(title) else None
    return latin if latin and norm(latin) != norm(title) else None
