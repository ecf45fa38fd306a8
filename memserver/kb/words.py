"""Words and names as the index compares them: one normal form for names, the question's
words, stop words (English, Mongolian) and Mongolian stems (case and plural endings off).

Pure functions shared by the linker, the indexer, entity resolution and search, so a name
is normalised the same way wherever it is written or looked up.
"""

from __future__ import annotations

import re
import unicodedata

_CYRILLIC = re.compile(r"[\u0400-\u04ff]")

_STOPWORD_TEXT = """
    a an the and or but of to in on at by for from with without about into onto over under
    is are was were be been being am do does did done doing have has had having will would
    shall should can could may might must it its this that these those there here then than
    as if so not no yes i me my we us our you your he him his she her they them their who
    whom whose what which when where why how all any some each every both either neither
    one ones also just only very more most much many such same other tell show find
    give list please know get got let make made happen happened happening anything
    something everything thing things info information details detail say said says
    s t ll ve re d m
    юу вэ бэ уу үү нь ба болон хэн хэзээ хаана ямар энэ тэр эдгээр тэдгээр бол болсон
    хийсэн байсан байна байгаа дээр тухай талаар юм гэж хамт руу рүү луу лүү дахь хүртэл
    онд оны мэдээлэл ямарвэ гэсэн гэх өгөх харуул
    тай тэй той төй ын ийн ийг ыг аас ээс оос өөс
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# The words a question of each language asks with, and the words that join one question
# to the next in a sentence ("..., and why did it change?"): where a long question splits
# into its parts (memserver.search.parts).
QUESTION_WORDS = frozenset(
    [
        "what",
        "which",
        "when",
        "where",
        "why",
        "how",
        "who",
        "whom",
        "whose",
        "юу",
        "юуг",
        "юуны",
        "юунд",
        "хэн",
        "хэнийг",
        "хэний",
        "хэнд",
        "хэзээ",
        "хаана",
        "хаашаа",
        "яагаад",
        "яаж",
        "ямар",
        "аль",
        "хэд",
        "хэдэн",
    ]
)
CLAUSE_JOINERS = frozenset(
    ["and", "or", "but", "also", "then", "ба", "болон", "бас", "мөн", "тэгээд"]
)

# Mongolian case and plural endings, longest first (stripped to find the word's stem).
_MN_SUFFIXES = (
    "тайгаа",
    "тэйгээ",
    "тойгоо",
    "төйгөө",
    "уудын",
    "үүдийн",
    "ийнх",
    "тай",
    "тэй",
    "той",
    "төй",
    "ийн",
    "ийг",
    "аас",
    "ээс",
    "оос",
    "өөс",
    "иас",
    "иэс",
    "ууд",
    "үүд",
    "нуудыг",
    "ын",
    "ыг",
    "ад",
    "эд",
    "од",
    "өд",
    "д",
    "т",
    "г",
    "н",
)
_MN_MIN_STEM = 3


def normalize_name(text: str) -> str:
    """The form names are compared in (``page_aliases.alias_norm``, ``links.to_ref_norm``).

    NFKC, case-folded, every run of characters other than letters and digits becomes one
    space: "Bob Martinez", "bob-martinez" and " BOB_martinez " all give "bob martinez".
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.findall(r"[^\W_]+", folded))


def words(text: str) -> list[str]:
    """The question's words in :func:`normalize_name` form (case-folded, NFKC)."""
    return normalize_name(text).split()


def is_cyrillic(word: str) -> bool:
    return bool(_CYRILLIC.search(word))


def mn_stems(word: str) -> list[str]:
    """Stems of a Mongolian word with one case/plural ending removed (longest first)."""
    if not is_cyrillic(word):
        return []
    out = []
    for suffix in _MN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MN_MIN_STEM:
            out.append(word[: -len(suffix)])
    return out
