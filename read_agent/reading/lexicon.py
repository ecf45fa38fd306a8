"""Each language's words that say what a question asks, loaded from ``lang/*.yaml``.

The files are data: a third language is one more file with the same keys. Words and
phrases are matched on the question's words (:func:`memserver.kb.words.words`) with
:func:`same`: equal, the same English word with another ending ("decided" ~ "decides"),
an irregular verb's forms ("met" ~ "meet"), or a Mongolian word with another ending
("тайлагнадаг" ~ "тайлагнах"). A phrase matches where its words stand one after the
other; :func:`find` takes the longest phrases first and never lets two share a word, so
"reports to" is read before "reports".
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from memserver.kb.words import STOPWORDS, is_cyrillic, words

LANG = Path(__file__).with_name("lang")
_EN_ENDINGS = ("ing", "ed", "es", "s")
_MN_SHARED = 4  # letters two Mongolian forms of one word share at least


@dataclass(frozen=True)
class Meaning:
    """A group of words that mean one thing (``manager``: boss, дарга ...), and the words
    that say the same link from its other end (``inverse``: manages ...)."""

    name: str
    words: tuple[str, ...]
    inverse: tuple[str, ...] = ()
    synonyms: bool = False  # its words are one word wherever words are compared
    # the words of a role whose holder does what the group says ("owner": head, manager)
    holders: tuple[str, ...] = ()
    # a question saying one of its words asks for the thing it names ("what broke ...":
    # a cause): those words are the question's focus
    asked: bool = False
    # words that say it only when said of a person ("paid": a salary; of a company, a price)
    of_person: tuple[str, ...] = ()
    # words that ask for what the group names without saying it ("why": a cause)
    asked_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lexicon:
    """Every language's words, merged key by key."""

    answer: Mapping[str, tuple[str, ...]]
    frame: tuple[str, ...]
    current: tuple[str, ...]
    tense: Mapping[str, tuple[str, ...]]
    tense_endings: Mapping[str, tuple[str, ...]]
    kinds: Mapping[str, tuple[str, ...]]
    order: Mapping[str, tuple[str, ...]]
    meanings: tuple[Meaning, ...]
    pronouns: Mapping[str, tuple[str, ...]]
    follow_up: tuple[str, ...]
    base_form: Mapping[str, str]
    follow_up_end: tuple[str, ...] = ()
    then: tuple[str, ...] = ()
    place: tuple[str, ...] = ()
    possessive: tuple[str, ...] = ()
    owner_mark: tuple[str, ...] = ()  # "Globex's": the name owns what follows
    contractions: Mapping[str, str] = field(default_factory=dict)  # "who s" -> "who is"
    # a question of several parts: the words a part asks with, and those joining parts
    parts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # words that say the answer's type only in a question of one piece, no comma nor
    # joining word ("what was the start date of the pilot?"); among several things
    # asked, one of them ("the date of the switch and the reason")
    answer_one_part: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # "what" ... "did": the words that ask for a thing by its kind, and those closing it
    focus: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # the team's own organisation: "own" words ("our") and "whole" ones ("company")
    ours: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def meaning(self, name: str) -> Meaning | None:
        return next((m for m in self.meanings if m.name == name), None)

    @functools.cached_property
    def holders(self) -> tuple[str, ...]:
        """Every meaning's ``holders``: the words of a role at the head of something."""
        return tuple(dict.fromkeys(h for m in self.meanings for h in m.holders))


@dataclass(frozen=True)
class Match:
    start: int
    end: int  # one past the last word
    key: str  # what the phrase says (a kind, a meaning's name ...)
    phrase: str


@functools.cache
def lexicon(folder: Path = LANG) -> Lexicon:
    """The words of every ``*.yaml`` in ``folder``, merged."""
    files = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml"))]

    def merged(key: str) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        for data in files:
            for name, listed in (data.get(key) or {}).items():
                out.setdefault(str(name), []).extend(str(w) for w in listed or ())
        return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}

    def flat(key: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(str(w) for data in files for w in data.get(key) or ()))

    meanings: dict[str, tuple[list[str], list[str], list[str]]] = {}
    of_person: dict[str, list[str]] = {}
    asked_by: dict[str, list[str]] = {}
    synonymous: set[str] = set()
    asked: set[str] = set()
    for data in files:
        for name, spec in (data.get("meanings") or {}).items():
            own, inverse, holders = meanings.setdefault(str(name), ([], [], []))
            own.extend(str(w) for w in spec.get("words") or ())
            inverse.extend(str(w) for w in spec.get("inverse") or ())
            holders.extend(str(w) for w in spec.get("holders") or ())
            of_person.setdefault(str(name), []).extend(str(w) for w in spec.get("of_person") or ())
            asked_by.setdefault(str(name), []).extend(str(w) for w in spec.get("asked_by") or ())
            if spec.get("synonyms"):
                synonymous.add(str(name))
            if spec.get("asked"):
                asked.add(str(name))
    base: dict[str, str] = {}
    for data in files:
        for forms in str(data.get("irregular") or "").replace("\n", " ").split(";"):
            listed = forms.split()
            base.update({form: listed[0] for form in listed[1:] if form != listed[0]})
    return Lexicon(
        answer=merged("answer"),
        frame=flat("frame"),
        current=flat("current"),
        tense=merged("tense"),
        tense_endings=merged("tense_endings"),
        kinds=merged("kinds"),
        order=merged("order"),
        meanings=tuple(
            Meaning(
                name,
                tuple(dict.fromkeys(w)),
                tuple(dict.fromkeys(i)),
                name in synonymous,
                tuple(dict.fromkeys(h)),
                name in asked,
                tuple(dict.fromkeys(of_person.get(name, ()))),
                tuple(dict.fromkeys(asked_by.get(name, ()))),
            )
            for name, (w, i, h) in meanings.items()
        ),
        pronouns=merged("pronouns"),
        follow_up=flat("follow_up"),
        base_form=base,
        follow_up_end=flat("follow_up_end"),
        then=flat("then"),
        place=flat("place"),
        possessive=flat("possessive"),
        owner_mark=flat("owner_mark"),
        contractions={
            str(k): str(v) for data in files for k, v in (data.get("contractions") or {}).items()
        },
        focus=merged("focus"),
        parts=merged("parts"),
        answer_one_part=merged("answer_one_part"),
        ours=merged("ours"),
    )


def en_stem(word: str, silent_e: bool = True) -> str:
    """An English word without its ending, and (``silent_e``) without the silent "e" its
    bare form ends in ("settle", "settled", "settles": "settl"; "price", "pricing":
    "pric")."""
    for ending in _EN_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[: -len(ending)]
            break
    if not silent_e:
        return word
    bare = word.rstrip("e")
    if len(bare) < 3:  # "free", "freed": "fre"; "fee" stays
        bare = word[:-1] if word.endswith("e") and len(word) > 3 else word
    return bare


def same(a: str, b: str, base_form: Mapping[str, str] | None = None) -> bool:
    """Whether two lower-case words are one word (see the module docstring)."""
    if a == b:
        return True
    if is_cyrillic(a) != is_cyrillic(b):
        return False
    if is_cyrillic(a):
        shared = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            shared += 1
        return shared >= max(_MN_SHARED, min(len(a), len(b)) - 3)
    forms = base_form or lexicon().base_form
    a, b = forms.get(a, a), forms.get(b, b)
    return a == b or en_stem(a) == en_stem(b)


def tokens(text: str) -> list[str]:
    """The words of ``text`` as the lexicon reads them."""
    return words(text.replace("_", " ").replace("-", " "))


def expanded(question: Sequence[str], lex: Lexicon) -> list[str]:
    """``question``'s words with each contracted form read as the words it stands for
    ("who s" -> "who is"): as many words, so every position stays."""
    out = list(question)
    for short, full in lex.contractions.items():
        was, now = tokens(short), tokens(full)
        if len(was) != len(now):
            continue
        for i in range(len(out) - len(was) + 1):
            if out[i : i + len(was)] == was:
                out[i : i + len(was)] = now
    return out


def find(
    question: Sequence[str],
    phrases: Mapping[str, Iterable[str]],
    taken: set[int] | None = None,
    exact: bool = False,
) -> list[Match]:
    """Where ``phrases`` (key -> phrases) stand in the ``question``'s words, longest phrase
    first, no word read twice (``taken``: words already read, updated); ``exact``: each
    word as written (the forms a tense tells apart: "wrote", not "write")."""
    used = taken if taken is not None else set()
    listed = sorted(
        ((key, phrase, tokens(phrase)) for key, group in phrases.items() for phrase in group),
        key=lambda item: -len(item[2]),
    )
    found: list[Match] = []
    for key, phrase, parts in listed:
        if not parts:
            continue
        for start in range(len(question) - len(parts) + 1):
            span = range(start, start + len(parts))
            if any(i in used for i in span):
                continue
            pairs = zip(span, parts, strict=True)
            if all(question[i] == p if exact else same(question[i], p) for i, p in pairs):
                used.update(span)
                found.append(Match(start, start + len(parts), key, phrase))
    return sorted(found, key=lambda m: m.start)


def says(question: Sequence[str], phrases: Iterable[str], exact: bool = False) -> bool:
    """Whether any of ``phrases`` stands in the question's words."""
    return bool(find(question, {"": list(phrases)}, exact=exact))


def meaning_words(meaning: Meaning) -> set[str]:
    """Every word of a meaning's phrases (its own and its inverse)."""
    return {w for phrase in (*meaning.words, *meaning.inverse) for w in tokens(phrase)}


def meanings_of(text_words: Iterable[str], lex: Lexicon | None = None) -> list[Meaning]:
    """The meanings whose own words (not their inverse) include one of ``text_words``
    (a schema field's name, verb and patterns)."""
    lex = lex or lexicon()
    pool = list(text_words)
    return [
        m
        for m in lex.meanings
        if any(same(w, p) for phrase in m.words for p in tokens(phrase) for w in pool)
    ]


def decided_heading(heading: str) -> bool:
    """Whether a page's heading names what was decided ("Decisions", "Шийдвэрүүд"): a
    word of the lexicon's ``decided`` meaning."""
    meaning = lexicon().meaning("decided")
    return meaning is not None and says(tokens(heading), meaning.words)


@functools.cache
def _known_words() -> frozenset[str]:
    """Every word the lexicon holds (frame, answers, kinds, orders, meanings)."""
    lex = lexicon()
    phrases = [
        *lex.frame,
        *lex.current,
        *(
            p
            for group in (lex.answer, lex.kinds, lex.order, lex.tense)
            for v in group.values()
            for p in v
        ),
        *(p for m in lex.meanings for p in (*m.words, *m.inverse)),
    ]
    return frozenset(w for p in phrases for w in tokens(p))


def is_label(name: str) -> bool:
    """Whether what opens a line ("Why:", "Decision:", "Шийдвэр:") is a label, not a
    speaker: each of its words a stop word or a word the lexicon holds, or several words
    the last of which is written in lower case ("For everyone:", "Root cause:"; a name
    ends in a capital: "Luis de la Cruz")."""
    found = tokens(name)
    if not found:
        return False
    written = name.split()
    if len(written) > 1 and written[-1][:1].islower():
        return True
    return all(w in STOPWORDS or w in _known_words() for w in found)


@functools.cache
def synonym_groups(word: str) -> frozenset[str]:
    """The ``synonyms`` meanings one of whose single words is ``word`` (any ending)."""
    return frozenset(
        m.name
        for m in lexicon().meanings
        if m.synonyms and any(" " not in w and same(word, w) for w in m.words)
    )


def synonyms(a: str, b: str) -> bool:
    """Whether two words are one word by a ``synonyms`` meaning ("charge" ~ "price")."""
    return bool(synonym_groups(a) & synonym_groups(b))
