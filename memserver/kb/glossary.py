"""The same business word in English and Mongolian, for a question asked in one language
about a note written in the other ("what price did we agree with Nomin Trade?" is
answered by "Үнэ: нэг хүргэлтэд 900 төгрөг").

Each line pairs the starts of English words with the starts of Mongolian words that mean
the same (a start covers the inflected forms: "үн" is "үнэ", "үнийн", "үнээр"; "agree" is
"agreed", "agreement"). :func:`same_meaning` says whether two words, one in each script,
are such a pair; :func:`other_language` gives a word's starts in the other language (the
keyword arms search them as prefixes). Pure data: the read agent and search compare words
with it, so both cross the languages alike.
"""

from __future__ import annotations

import functools

from memserver.kb.words import is_cyrillic

# English starts | Mongolian starts. A start is matched against the word's beginning, so
# keep each long enough not to catch unrelated words (at least four letters in English).
_PAIRS = """
price pricing | үнэ үнэт үний үнээ
cost | өртөг зардал
agree | тохиролц зөвшөөр
decide decision decided | шийд
contract | гэрээ
meeting meet | уулз
minimum | доод
maximum | дээд
delivery deliveries deliver | хүргэлт хүргэ
customer client | харилцагч үйлчлүүлэгч
payment fee pay | төлбөр төл
month | сар
year | жил
driver | жолооч
warehouse | агуулах
project | төсөл
pilot trial | пилот туршилт
launch go-live | нээлт эхлүүл
begin began start | эхэл эхл
deadline due | хугацаа
invoice | нэхэмжл
send | илгээ
discount | хөнгөлөлт
trucks truck vehicle | машин ачааны
translation localization localisation | орчуулга
product | бүтээгдэхүүн
attend participa | оролц
review | хяналт хэлэлцүүл
owner owned owns responsib | хариуц эзэмш
director | захирал
executive | гүйцэтгэх
manager | менежер
boss chief | дарга ахлах
logistic | логистик
sales | борлуулалт
finance financial | санхүү
engineer | инженер
procurement purchasing | худалдан
supply supplier | нийлүүл
technolog | технологи
information | мэдээлл
marketing | маркетинг
accountant accounting | нягтлан
employee staff | ажилтан
"""


@functools.cache
def _table() -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    rows = []
    for line in _PAIRS.strip().splitlines():
        english, mongolian = line.split("|")
        rows.append((tuple(english.split()), tuple(mongolian.split())))
    return tuple(rows)


def same_meaning(a: str, b: str) -> bool:
    """Whether lower-case words ``a`` and ``b``, one Latin and one Cyrillic, are a pair
    of the glossary (each starts with one of its line's starts)."""
    if is_cyrillic(a) == is_cyrillic(b):
        return False
    latin, cyrillic = (b, a) if is_cyrillic(a) else (a, b)
    return any(
        any(latin.startswith(e) for e in english) and any(cyrillic.startswith(m) for m in mongolian)
        for english, mongolian in _table()
    )


def other_language(word: str) -> tuple[str, ...]:
    """The starts in the other language of the glossary lines ``word`` belongs to
    ("price" -> "үнэ", "үнэт", ...; "үнийн" -> "price", "pricing"), none for other words."""
    out: list[str] = []
    for english, mongolian in _table():
        own, other = (mongolian, english) if is_cyrillic(word) else (english, mongolian)
        if any(word.startswith(s) for s in own):
            out += [s for s in other if s.isalnum() and s not in out]
    return tuple(out)
