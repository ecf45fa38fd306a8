"""Names across scripts: Mongolian Cyrillic in Latin letters, and one key for a name in
either script.

- ``transliterate("Батбаяр Дорж")`` -> ``"Batbayar Dorj"`` (None without Cyrillic): the
  Latin spelling the ingest agent adds as an alias.
- ``name_key``: a rough sound-alike form, the same for a name written in either script
  or in the usual Latin spellings: ``name_key("Алис") == name_key("Alice") == "alis"``,
  ``name_key("Алекс Ким") == name_key("Alex Kim")``, ``name_key("Батбаяр") ==
  name_key("Batbayar")``; across scripts a word's first "e" is also read as "a"
  (``loose_key``: "Элис" is Alice). Entity resolution compares keys as its ``transliteration``
  signal, after exact names and before meaning.
"""

from __future__ import annotations

import functools
import re

from memserver.kb.words import is_cyrillic, mn_stems, normalize_name

CYRILLIC = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "yo", "ж": "j",
    "з": "z", "и": "i", "й": "i", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o",
    "ө": "u", "п": "p", "р": "r", "с": "s", "т": "t", "у": "u", "ү": "u", "ф": "f",
    "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "sh", "ъ": "", "ы": "y", "ь": "i",
    "э": "e", "ю": "yu", "я": "ya",
}  # fmt: skip

# Latin spellings that sound alike, in order (after lower-casing).
_SOUND = (
    (re.compile(r"kh"), "h"),
    (re.compile(r"ph"), "f"),
    (re.compile(r"ck"), "k"),
    (re.compile(r"x"), "ks"),
    (re.compile(r"w"), "v"),
    (re.compile(r"q"), "k"),
    (re.compile(r"c(?=[eiy])"), "s"),
    (re.compile(r"c"), "k"),
    (re.compile(r"y"), "i"),
    (re.compile(r"(?<=\w{3})e$"), ""),  # a silent final e: "Alice" -> "alic"
    (re.compile(r"(\w)\1+"), r"\1"),  # doubled letters: "Rossi" -> "rosi"
)


def transliterate(name: str) -> str | None:
    """The Latin spelling of a Cyrillic (Mongolian) name, or None when it has no Cyrillic."""
    if not is_cyrillic(name):
        return None
    out = []
    for ch in name:
        low = ch.lower()
        if low in CYRILLIC:
            latin = CYRILLIC[low]
            out.append(latin.capitalize() if ch != low and latin else latin)
        else:
            out.append(ch)
    return " ".join("".join(out).split())


def name_key(name: str) -> str:
    """The sound-alike key of a name (see the module docstring); "" for no letters."""
    latin = transliterate(name) or name
    keys = []
    for word in normalize_name(latin).split():
        for pattern, repl in _SOUND:
            word = pattern.sub(repl, word)
        if word:
            keys.append(word)
    return " ".join(keys)


MIN_SOUND_KEY = 4  # letters of a word's key: shorter words are too often something else
# A word's first vowel "e" as "a": English writes with "A" what Mongolian writes with
# "Э" ("Alice" / "Элис", "Andrew" / "Эндрю"), so across scripts the two are one sound.
_FIRST_E = re.compile(r"(?:^|(?<= ))e")


def loose_key(key: str) -> str:
    """A sound-alike key with each word's first "e" as "a" (see ``_FIRST_E``): compared
    across scripts only, beside the key itself."""
    return _FIRST_E.sub("a", key)


@functools.lru_cache(maxsize=65536)
def word_keys(word: str) -> frozenset[str]:
    """The sound-alike keys of one word, and of a Mongolian word without its case ending
    ("Глобекстэй" -> ``globeks``, as "Globex"); keys under four letters are left out."""
    forms = (word, *mn_stems(word)) if is_cyrillic(word) else (word,)
    keys = {name_key(form) for form in forms}
    keys |= {loose_key(k) for k in keys}
    return frozenset(k for k in keys if len(k) >= MIN_SOUND_KEY and " " not in k)


def same_name_across_scripts(a: str, b: str) -> bool:
    """Whether two words, one in Cyrillic and one in Latin letters, are one name written
    in two scripts ("Прия" and "Priya", "Глобекстэй" and "Globex")."""
    return is_cyrillic(a) != is_cyrillic(b) and bool(word_keys(a) & word_keys(b))


# Latin letters as Mongolian Cyrillic writes them, the longest first; a vowel English
# writes one way and Mongolian two ("o": о or ө) has both.
_TO_CYRILLIC = (
    ("kh", ("х",)), ("sh", ("ш",)), ("ch", ("ч",)), ("ts", ("ц",)), ("ya", ("я",)),
    ("yu", ("ю",)), ("yo", ("ё",)), ("ye", ("е",)), ("ph", ("ф",)), ("oo", ("оо", "өө")),
    ("uu", ("уу", "үү")), ("ee", ("ээ",)), ("a", ("а",)), ("b", ("б",)), ("c", ("к", "с")),
    ("d", ("д",)), ("e", ("э", "е")), ("f", ("ф",)), ("g", ("г",)), ("h", ("х",)),
    ("i", ("и",)), ("j", ("ж",)), ("k", ("к",)), ("l", ("л",)), ("m", ("м",)), ("n", ("н",)),
    ("o", ("о", "ө")), ("p", ("п",)), ("q", ("к",)), ("r", ("р",)), ("s", ("с",)),
    ("t", ("т",)), ("u", ("у", "ү")), ("v", ("в",)), ("w", ("в",)), ("x", ("кс",)),
    ("y", ("й", "ы")), ("z", ("з",)),
)  # fmt: skip
MOST_SPELLINGS = 16  # Cyrillic spellings of one Latin word: a bound on the search's prefixes


@functools.lru_cache(maxsize=4096)
def cyrillic_spellings(word: str) -> tuple[str, ...]:
    """The ways Mongolian Cyrillic may write a Latin name ("Darkhan" -> ``("дархан",)``,
    "Erdenet" -> "эрдэнэт", "ердэнэт", ...), at most :data:`MOST_SPELLINGS`, the likeliest
    first; ``()`` for a word with a letter outside a-z. The other way round of
    :func:`transliterate`, for a question that writes in Latin letters a name a note
    writes in Cyrillic (a town, a person)."""
    low = word.lower()
    if not low.isascii() or not low.isalpha():
        return ()
    spellings = [""]
    i = 0
    while i < len(low):
        latin, cyrillic = next((p, c) for p, c in _TO_CYRILLIC if low.startswith(p, i))
        spellings = [s + c for s in spellings for c in cyrillic][:MOST_SPELLINGS]
        i += len(latin)
    return tuple(spellings)
