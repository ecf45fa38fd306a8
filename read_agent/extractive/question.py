"""A question read without a model: what kind of answer it wants, and its topical words
matched loosely against a sentence's words.

The search server already reads the question (``kb_query``'s ``time`` and ``intent``:
the window, latest/first/next, topical terms, folders named, a typed relation); this
adds what an extractive answer needs on top:

- ``wants``: ``when`` (a date), ``who`` (a name), ``amount`` (a figure) or ``what``;
- ``terms``: the topical words minus the names of the pages the question names and the
  words that only say a change ("become", "current");
- :func:`same_word`: two words are the same word when equal, or one is the other with
  an English or Mongolian ending ("decided" ~ "Decisions", "renew" ~ "renewal",
  "шийдсэн" ~ "Шийдвэрүүд"): a shared start of four letters or more, an English
  verb's irregular past ("go" ~ "went"), or the same business word in the other
  language ("price" ~ "Үнэ", :mod:`memserver.kb.glossary`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memserver.kb.glossary import same_meaning
from memserver.kb.translit import same_name_across_scripts
from memserver.kb.words import STOPWORDS, is_cyrillic, mn_stems, words

WHEN = frozenset({"when", "date", "day", "хэзээ", "хэдэнд", "хэдний"})
WHO = frozenset({"who", "whom", "whose", "хэн", "хэнд", "хэнтэй", "хэний"})
AMOUNT = frozenset({"much", "cost", "costs", "price", "value", "хэд", "хэдэн", "үнэ"})
# Words that say a change or a state rather than a topic.
CHANGE_WORDS = frozenset(
    {
        "become", "became", "becomes", "current", "currently", "now", "still", "ever",
        "start", "started", "starts", "begin", "began", "болох", "болсон", "болно",
        "одоо", "одоогийн",
        # Mongolian words of the question's frame, not its topic ("our", "what kind")
        "манай", "бидний", "ямар",
    }
)  # fmt: skip
_SUFFIXES = ("er", "ers", "s", "es", "ed", "ing", "ership", "ment", "al")
MIN_SHARED = 4
# English verbs whose past is another word: "When did she go ..." is answered by "she
# went ...". Base form, then its past and past participle (either may be missing).
_IRREGULAR = """
go went gone; meet met; buy bought; run ran; take took taken; get got gotten;
give gave given; make made; see saw seen; have had; find found; lose lost; win won;
begin began begun; teach taught; feel felt; leave left; hold held; think thought;
bring brought; tell told; say said; come came; write wrote written; sing sang sung;
swim swam swum; drive drove driven; ride rode ridden; eat ate eaten; drink drank drunk;
fly flew flown; grow grew grown; know knew known; draw drew drawn; throw threw thrown;
break broke broken; choose chose chosen; speak spoke spoken; wear wore worn;
fall fell fallen; forget forgot forgotten; sell sold; send sent; spend spent;
build built; catch caught; fight fought; seek sought; sleep slept; keep kept;
lead led; pay paid; hear heard; stand stood; understand understood; sit sat;
lend lent; become became; rise rose risen; wake woke woken; hide hid hidden; bite bit bitten;
shake shook shaken; steal stole stolen; freeze froze frozen; weave wove woven;
dig dug; hang hung; light lit; shoot shot; stick stuck; strike struck; swing swung;
feed fed; flee fled; bleed bled; breed bred; deal dealt; dream dreamt; mean meant;
burn burnt; learn learnt; spell spelt; lay laid; tear tore torn
"""
BASE_FORM = {
    form: forms.split()[0]
    for forms in _IRREGULAR.replace("\n", " ").split(";")
    for form in forms.split()[1:]
    if form != forms.split()[0]
}


# Attendance in other words: "who was at", "took part in", "participated", "joined" (the
# last only about an event: "who joined Globex" is a hire), Mongolian "оролцсон",
# "хуралд суусан". :func:`attendance` writes them as the schema's own verb.
_ATTENDANCE = re.compile(
    r"(?<=\bwho )(?:was|were|is|are) (?:at|in)\b|\b(?:was|were) present at\b"
    r"|\b(?:took|take|takes|taking) part in\b|\bparticipated(?: in)?\b"
    r"|\bparticipants (?:of|in)\b|\bjoined\b"
    r"|(?<!\w)(?:оролцсон|оролцов|оролцож|оролцох)(?!\w)"
    r"|(?<!\w)(?P<at>(?:хуралд|уулзалтад)(?:\s+хэн){0,2}\s+)суусан(?!\w)",
    re.IGNORECASE,
)


def attendance(question: str, verb: str, events_only: bool) -> str | None:
    """``question`` with an attendance phrase written as ``verb`` (the schema's verb for
    an event's attendees, "attended"), or None when it has none; "joined" only when
    ``events_only`` says the question is about an event."""

    def put(found: re.Match[str]) -> str:
        if found[0].lower() == "joined" and not events_only:
            return found[0]
        return (found["at"] or "") + verb  # "хуралд хэн суусан": the meeting word stays

    text = _ATTENDANCE.sub(put, question)
    return text if text != question else None


@dataclass(frozen=True)
class Reading:
    """What a question asks, as the extractive answer needs it."""

    question: str
    wants: str  # "when" | "who" | "amount" | "what"
    terms: tuple[str, ...]  # topical words, the named pages' names removed
    identifiers: tuple[str, ...]
    folders: tuple[str, ...]  # folders the question names
    relation: str | None  # a typed edge the question asks about ("reports_to")
    order: str | None  # newest | oldest | next
    window: Mapping[str, str] | None
    soft: bool  # "current", "recently": newer facts first
    tense: str | None = None  # "future" ("when will ...", "хэзээ бэлэн болох вэ"), "past"
    as_of: str | None = None  # an ISO date the question asks about the state at, or BEFORE_CHANGE

    @property
    def listing(self) -> bool:
        """Only a window and folders, nothing else asked: list what is in the window."""
        return self.window is not None and not self.terms and not self.identifiers


def read(question: str, result: Mapping[str, Any], names: Iterable[str] = ()) -> Reading:
    """The reading of ``question`` from a ``kb_query`` result and the names of the pages
    the question names (their words are not topical: "Bob" in "who does Bob report to")."""
    time = result.get("time") if isinstance(result.get("time"), Mapping) else {}
    intent = result.get("intent") if isinstance(result.get("intent"), Mapping) else {}
    assert isinstance(time, Mapping) and isinstance(intent, Mapping)
    all_words = words(question)
    named = {w for name in names for w in words(name)}
    raw_terms = intent.get("terms")
    if isinstance(raw_terms, list):
        base = [str(t) for t in raw_terms]
    else:
        base = [w for w in words(str(result.get("query") or question)) if w not in STOPWORDS]
    terms = [
        t
        for t in base
        if t not in CHANGE_WORDS
        and t not in WHEN | WHO | {"much"}
        and not any(same_word(t, n) for n in named)
    ]
    window = time.get("window") if isinstance(time.get("window"), Mapping) else None
    as_of = reference_date(question, time, window)
    if as_of is not None:
        terms = [t for t in terms if t not in AS_OF_WORDS]
    return Reading(
        question=question,
        wants=_wants(all_words),
        terms=tuple(dict.fromkeys(terms)),
        identifiers=tuple(str(i) for i in intent.get("identifiers") or ()),
        folders=tuple(str(f) for f in intent.get("folders") or ()),
        relation=str(intent["relation"]) if intent.get("relation") else None,
        order=str(time["order"]) if time.get("order") else None,
        window=window,
        soft=bool(time.get("soft_recency")),
        tense=_tense(question),
        as_of=as_of,
    )


_SUPPORTS = re.compile(
    r"^\s*(?:what|which\s+\w+)\s+(?:supports?|backs?(?:\s+up)?|justif(?:y|ies)|shows?)\s+(?:that\s+)?(?P<a>.+?)\s*[?.!]*\s*$"
    r"|^\s*(?:what\s+is|what's|where\s+is|show\s+(?:me\s+)?)?\s*(?:the\s+)?(?:evidence|sources?|proof)"
    r"\s+(?:for|of|that|behind)\s+(?:the\s+claim\s+(?:that\s+)?)?(?P<b>.+?)\s*[?.!]*\s*$"
    r"|^\s*(?P<c>.+?)\s+(?:гэдгийг|гэсэн\s+дүгнэлтийг|гэдэг)\s+(?:юу|ямар\s+\S+)\s+"
    r"(?:нотол|батал|дэмж)\S*(?:\s+\S+)?\s*[?.!]*\s*$"
    r"|^\s*(?P<d>.+?)\s+(?:гэдгийн|гэсэн)\s+нотол\S*\s*(?:юу|ямар)?\s*\S*\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def claim_of(question: str) -> str | None:
    """The claim a question asks the evidence for ("what supports the switch to
    usage-based pricing?", "what is the evidence for X?", "X гэдгийг юу нотолж байна?"),
    or None when it asks something else."""
    found = _SUPPORTS.match(question)
    if found is None:
        return None
    claim = next(g for g in found.groups() if g)
    return claim if len(words(claim)) >= 1 else None


BEFORE_CHANGE = "before-change"
# A question about what held at a date, not what happened in it: "as of", "байдлаар";
# "what was our pricing in August?", "what did we think in June?", "what would your answer
# have been on 2022-01-15?"; "before the change",
# "өмнө нь" (the day before the newest change on the topic).
_AS_OF = re.compile(r"\bas\s+(?:of|at)\b|байдлаар", re.IGNORECASE)
_STATE = re.compile(
    r"\bwhat\s+(?:was|were)\s+(?:our|the|its|their|his|her)\b"
    r"|\bwhat\s+did\s+(?:we|they|you|it|he|she)\s+(?:charge|pay|cost|bill|price|ask)\b"
    r"|\bhow\s+much\s+(?:did|was|were)\b"
    r"|\b(?:think|thought|believe|believed|know|knew)\b"
    r"|\bwould\s+(?:your|the)\s+answer\s+have\s+been\b|\bwould\s+you\s+have\s+(?:said|answered)\b"
    r"|\bif\s+asked\s+(?:on|in|at)\b"
    r"|(?:бодож|үзэж|мэдэж)\s+байсан|\bямар\s+байсан",
    re.IGNORECASE,
)
_BEFORE_CHANGE = re.compile(
    r"\bbefore\s+(?:the|that|this|it|we)\s+(?:change|changed|switch|switched|reversal|revers\w*)\b"
    r"|(?<!\w)өмнө\s+нь(?!\w)|(?<!\w)өөрчл\w*\s+өмнө(?!\w)",
    re.IGNORECASE,
)
AS_OF_WORDS = frozenset(
    {"байдлаар", "think", "thought", "believe", "believed", "know", "knew", "change",
     "changed", "switch", "switched", "reversal", "before", "өмнө", "бодож", "байсан",
     "мэдэж", "өөрчлөлт", "өөрчлөгдөхөөс", "answer", "answered", "asked"}
)  # fmt: skip


def reference_date(
    question: str, time: Mapping[str, Any], window: Mapping[str, Any] | None
) -> str | None:
    """The day a question asks the state at (the last day of its window: "as of March
    2023" is 2023-03-31, "on 2026-08-01" that day), BEFORE_CHANGE for "before the
    change", or None for a question about what happened in a window."""
    if _BEFORE_CHANGE.search(question):
        return BEFORE_CHANGE
    phrase = str(time.get("phrase") or "")
    if window is None or not (
        _AS_OF.search(phrase) or _AS_OF.search(question) or _STATE.search(question)
    ):
        return None
    end = str(window.get("end") or "")[:10]
    try:
        last = dt.date.fromisoformat(end) - dt.timedelta(days=1)
    except ValueError:
        return None
    return last.isoformat()


def _wants(tokens: Sequence[str]) -> str:
    if any(t in WHEN for t in tokens):
        return "when"
    if any(t in WHO for t in tokens):
        return "who"
    if ("how" in tokens and "much" in tokens) or any(t in AMOUNT - {"much"} for t in tokens):
        return "amount"
    return "what"


_FUTURE = frozenset({"will", "shall", "going", "expected", "planned", "due"})
_PAST = frozenset({"did", "was", "were", "happened", "became"})
_MN_FUTURE = re.compile(r"[а-яөүё]+х\s+(?:вэ|бэ|уу|үү)\b|[а-яөүё]+(?:на|нэ|но|нө)\b", re.IGNORECASE)
_MN_PAST = re.compile(r"[а-яөүё]+(?:сэн|сан|сон|сөн)\b", re.IGNORECASE)


def _tense(question: str) -> str | None:
    """Whether the question asks about what will happen or what happened, if it says."""
    tokens = set(words(question))
    if tokens & _FUTURE or _MN_FUTURE.search(question):
        return "future"
    if tokens & _PAST or _MN_PAST.search(question):
        return "past"
    return None


def stem(word: str) -> str:
    """A crude stem: English endings off, or the shortest Mongolian stem."""
    if is_cyrillic(word):
        stems = mn_stems(word)
        return stems[-1] if stems else word
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def same_word(a: str, b: str) -> bool:
    """Whether two normalised words are one word with different endings, or one is
    the other's irregular past ("go" ~ "went", "meet" ~ "met")."""
    if a == b or BASE_FORM.get(a, a) == BASE_FORM.get(b, b) or same_meaning(a, b):
        return True
    if same_name_across_scripts(a, b):  # one name in two scripts: "прия" ~ "priya"
        return True
    sa, sb = stem(a), stem(b)
    if sa == sb:
        return True
    short, long = sorted((sa, sb), key=len)
    if len(short) >= MIN_SHARED and long.startswith(short):
        return True
    if len(short) >= 3 and any(long == short + s for s in _SUFFIXES):
        return True  # "own" ~ "owner"
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared >= max(MIN_SHARED, min(len(a), len(b)) - 3) and min(len(a), len(b)) >= 5


def matched(terms: Iterable[str], text_words: Iterable[str]) -> set[str]:
    """The ``terms`` found among ``text_words`` (see :func:`same_word`)."""
    pool = set(text_words)
    return {t for t in terms if t in pool or any(same_word(t, w) for w in pool)}
