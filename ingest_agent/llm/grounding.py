"""A model's values checked against the note they were read from.

A model, small ones most of all, writes things the note does not say: an attendee who
was only mentioned, a date from nowhere, a job title of the wrong person. Every value
an LLM extraction proposes is checked here before it reaches a page, where the text
can tell (``Grounds.check``):

- a name (a page's title, a link field's value) must be written in the note, in either
  script (``Алекс Ким`` for ``Alex Kim``), or be the title of a page a name in the note
  resolves to (``Nomin Trade`` -> ``Номин Трейд``, by its aliases), or a known page whose
  first name the note writes (when no other known page shares it);
- a date must be one the note states or implies (an ISO date, "December 3",
  "yesterday" read against the note's date) or the note's own date;
- a number must be written in the note (``$120,000``, ``120k``, ``1,500,000₮``);
- an address (e-mail, URL) must be written as is, and any other text mostly (two
  thirds of its words, by their first five letters); each item of a list (a decision's
  alternatives) on its own;
- with ``about`` (the small profile), a value about an entity (a person's role, a
  company's website) must stand in the same paragraph or list item as one of that
  page's names, outside the frontmatter (a date however the note writes it): a value
  the note states about someone else (or the note's own company, next to its
  attendees; another company's meeting day) is not this page's;
- a link value about an entity must be stated *with its relation* (``Grounds.related``):
  a page the note names in the link's folder, written after the page's own name in one
  clause (a sentence, or a part of one between ";" or ": "; a sentence opening with
  "he", "she" or "they" continues the one before) with no other page of
  either folder named between them, and either the link verb's wording between them
  ("Alex Novak ... reports to Joanna") or, for a link to another folder, at most
  ``CLOSE_WORDS`` words that attach the value to the name: in brackets after it
  ("Joanna Price (VP Supply Chain, Initech)"), in an apposition ("Энхтуяа Ганбаатар —
  Номин Трейдийн ..."), or after "at", "from" or "of" ("Director of Operations at
  Globex"); not "Priya can focus on Globex", nor "Alex presented the new model: at
  Globex's volume". Two people named side by side are a list, not a manager and a
  report, so a link within one folder always needs the wording;
- a link of the note's own event (a meeting) must be a page the note names, not the
  meeting itself, and a single link among several pages of its folder that the note
  names must be the one its title, first heading or frontmatter names (the internal
  pricing review that goes through three customers is none's meeting).

Enums and booleans are choices, not quotes, and pass. A value that fails is dropped and
listed (``Extraction.dropped``, counted in the ledger); the rest of the page is kept.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from ingest_agent.extract.dates import day_mentions
from ingest_agent.extract.text import blocks, split_sentences
from ingest_agent.names import norm
from memserver.kb.frontmatter import frontmatter_end
from memserver.kb.page import as_date
from memserver.kb.schema import FieldSpec
from memserver.kb.translit import name_key

_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:[,\s]\d{3})+|\d+)(?:\.(\d+))?\s*([kKmM])?(?!\w)")
_ADDRESS = re.compile(r"@|://|^www\.|\.(?:com|org|net|io|mn)\b", re.IGNORECASE)
STEM = 5  # words compare by their first letters, so inflections match
TEXT_SHARE = 2 / 3  # of a text value's words the note must hold
MIN_FIRST_NAME = 3
CLOSE_WORDS = 6  # words between a name and a link value that stand for the relation
_CLAUSE_END = re.compile(r";\s+|:\s+")
_ATTACH = re.compile(r"\s*([(,—–])\s*")  # kept through norm() as the words below
_MARKS = {"(": "zzbracket", ",": "zzcomma", "—": "zzdash", "–": "zzdash"}
_MARK_WORDS = frozenset(_MARKS.values())
_PREPOSITIONS = frozenset({"at", "from", "of"})  # "VP at Globex", "Karen from Globex"
_PRONOUN = re.compile(r"^(?:he|she|they|тэр|тэд)\b", re.IGNORECASE)


def _stems(text: str) -> list[str]:
    """Words by their first letters; short words ("of", "VP") only when nothing else is."""
    found = norm(text).split()
    long = [w for w in found if len(w) >= 3 or w.isdigit()]
    return [w[:STEM] for w in long or found]


def _numbers(text: str) -> set[float]:
    found: set[float] = set()
    for match in _NUMBER.finditer(text):
        whole = re.sub(r"[,\s]", "", match.group(1))
        value = float(f"{whole}.{match.group(2)}" if match.group(2) else whole)
        scale = {"k": 1e3, "m": 1e6}.get((match.group(3) or "").lower(), 1.0)
        found.update({value, value * scale})
    return found


@dataclass(frozen=True)
class About:
    """The entity page a value is about: its names and folder; the names of the pages
    the note names, by folder (``rivals``, normalised with ``norm``: the pages a link's
    value may be, and the ones that must not stand between); each link verb's wording
    that stands before the linked name (``patterns``: "reports to" from the folder's
    ``link_verbs``)."""

    names: tuple[str, ...]
    folder: str = ""
    rivals: Mapping[str, frozenset[str]] = field(default_factory=dict)
    patterns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # False for the note's own event (a meeting): the note is about it as a whole, so
    # only "a page the note names" and "not the page itself" apply to its links, and a
    # single link among several such pages must be the one its title or frontmatter names
    entity: bool = True


def _forms(names: Iterable[str]) -> set[str]:
    """Normalised names and the first names of the longer ones ("Joanna" for Joanna Price)."""
    found: set[str] = set()
    for name in names:
        key = norm(name)
        if key:
            found.add(key)
            if " " in key and len(key.split()[0]) >= MIN_FIRST_NAME:
                found.add(key.split()[0])
    return found


def _spans(clause: str, starts: set[str], ends: set[str], others: set[str]) -> Iterable[str]:
    """The text (space-padded) between each occurrence of a ``starts`` form in
    ``clause`` and the first ``ends`` form after it; a short form that begins one of
    ``others`` there ("alex" of "alex novak" for Alex Kim) is not an occurrence."""
    for start in starts:
        at = clause.find(f" {start} ")
        while at >= 0:
            after = at + len(start) + 1
            hits = [j for e in ends if (j := clause.find(f" {e} ", after)) >= 0]
            longer = any(clause.startswith(f" {o} ", at) for o in others if len(o) > len(start))
            if hits and not longer:
                yield clause[after : min(hits) + 1]
            at = clause.find(f" {start} ", after)


def _clauses(sentence: str, wording: Sequence[str]) -> list[str]:
    """``sentence`` split at ";" and ": " (normalised, space-padded); a part that opens
    with the link's wording stays with the one before ("Head of Product; reports to")."""
    parts: list[str] = []
    for piece in _CLAUSE_END.split(sentence):
        marked = " ".join(_MARKS.get(bit, norm(bit)) for bit in _ATTACH.split(piece))
        text = f" {' '.join(marked.split())} "
        if parts and any(text.startswith(w) for w in wording):
            parts[-1] += text[1:]
        else:
            parts.append(text)
    return parts


def _attached(span: str) -> bool:
    """Whether the words between a name and a value attach the value to the name."""
    words = span.split()
    plain = [w for w in words if w not in _MARK_WORDS]
    if len(plain) > CLOSE_WORDS:
        return False
    opens = bool(words) and words[0] in ("zzcomma", "zzdash")
    return "zzbracket" in words or opens or (bool(plain) and plain[-1] in _PREPOSITIONS)


@dataclass(frozen=True)
class Verdict:
    """A checked value: what is kept (None: nothing) and why the rest was dropped."""

    value: Any
    dropped: tuple[str, ...] = ()


class Grounds:
    """What one note states: its words, names, days, numbers and paragraphs."""

    def __init__(
        self,
        text: str,
        doc_date: dt.date,
        tz: ZoneInfo,
        known: Iterable[str] = (),
        resolved: Iterable[str] = (),
    ) -> None:
        """``known``: titles of existing pages; ``resolved``: the titles of the pages the
        note's own names resolve to."""
        self.raw = text.casefold()
        self.resolved = {norm(t) for t in resolved}
        self.words = f" {norm(text)} "
        self.keys = f" {name_key(text)} "
        self.stems = {w[:STEM] for w in norm(text).split()}
        self.numbers = _numbers(text)
        self.paragraphs = [f" {norm(b)} " for b in blocks(_body(text))]
        self.head = f" {norm(_head(text))} "
        self.sentences: list[str] = []
        for block in blocks(_body(text)):
            for i, sentence in enumerate(split_sentences(block)):
                if i and _PRONOUN.match(sentence):  # "Bob ... . He reports to Karen Lee."
                    self.sentences[-1] += f" {sentence}"
                else:
                    self.sentences.append(sentence)
        self.days = {doc_date}
        for paragraph in blocks(text):
            for sentence in split_sentences(paragraph):
                self.days.update(m.day for m in day_mentions(sentence, doc_date, tz))
        self.paragraph_days = [
            {m.day for s in split_sentences(b) for m in day_mentions(s, doc_date, tz)}
            for b in blocks(_body(text))
        ]
        firsts: dict[str, list[str]] = {}
        for title in known:
            parts = norm(title).split()
            if len(parts) > 1 and len(parts[0]) >= MIN_FIRST_NAME:
                firsts.setdefault(parts[0], []).append(norm(title))
        # A first name stands for a known page only when no other known page shares it.
        self._first_names = {first: names[0] for first, names in firsts.items() if len(names) == 1}

    # -- single checks

    def names(self, name: str) -> bool:
        """Whether the note writes ``name`` (either script), or the first name of the
        one known page of that name."""
        key = norm(name)
        if not key:
            return False
        if f" {key} " in self.words or key in self.resolved:
            return True
        sound = name_key(name)
        if sound and f" {sound} " in self.keys:
            return True
        first = key.split()[0]
        return self._first_names.get(first) == key and f" {first} " in self.words

    def states_day(self, day: dt.date) -> bool:
        return day in self.days

    def states_number(self, number: float) -> bool:
        return float(number) in self.numbers

    def states_text(self, value: str) -> bool:
        if _ADDRESS.search(value):
            return value.strip().casefold() in self.raw
        stems = _stems(value)
        if not stems:
            return False
        return sum(1 for s in stems if s in self.stems) >= TEXT_SHARE * len(stems)

    def near(self, value: str | dt.date, names: Sequence[str]) -> bool:
        """Whether ``value`` (a text, or a day however the note writes it) and one of
        ``names`` share a paragraph or list item."""
        forms = {f" {norm(n)} " for n in names if norm(n)}
        forms |= {f" {norm(n).split()[0]} " for n in names if len(norm(n).split()) > 1}
        for paragraph, days in zip(self.paragraphs, self.paragraph_days, strict=True):
            holds = value in days if isinstance(value, dt.date) else f" {norm(value)} " in paragraph
            if holds and any(form in paragraph for form in forms):
                return True
        return False

    def related(self, spec: FieldSpec, value: str, about: About) -> str | None:
        """None when the note states link ``value`` of ``spec`` about the ``about`` page
        (see the module docstring), else why not."""
        if about.rivals and norm(value) not in about.rivals.get(spec.folder or "", ()):
            return f"is no {spec.folder} page the note names"
        if not about.entity:
            named = about.rivals.get(spec.folder or "", frozenset())
            headline = self.head + " ".join(norm(n) for n in about.names) + " "
            if spec.type == "link" and len(named) > 1 and f" {norm(value)}" not in headline:
                # "Globex ..., Nomin Trade ..., Initech: 60 users": which one the meeting
                # is with, only its title or frontmatter says (inflected: "Номин Трейдтэй").
                return (
                    f"is one of {len(named)} {spec.folder} pages the note names, none in its title"
                )
            return None
        own, wanted = _forms(about.names), _forms([value])
        between = about.rivals.get(about.folder, frozenset()) | about.rivals.get(
            spec.folder or "", frozenset()
        )
        others = _forms(between) - own - wanted
        wording = [f" {norm(p)} " for p in about.patterns.get(spec.verb or "", ()) if norm(p)]
        close = spec.folder != about.folder
        for sentence in self.sentences:
            for clause in _clauses(sentence, wording):
                for span in _spans(clause, own, wanted, others):
                    if any(f" {o} " in span for o in others):
                        continue
                    if any(w in span for w in wording) or (close and _attached(span)):
                        return None
        return f"is not stated as {about.names[0]!r}'s {spec.name}"

    def stated_next_to(self, spec: FieldSpec, value: Any, names: Sequence[str]) -> bool:
        """Whether value ``value`` of ``spec`` stands, whole, in a paragraph with one of
        ``names`` (a day however the note writes it; a number of many spellings passes)."""
        shown: str | dt.date | None = str(value)
        if spec.type == "number":
            shown = _number_text(value)
        elif spec.type == "date":
            shown = as_date(value)  # "Darkhan meeting on 2026-11-03" is not Nomin's renewal
        return shown is None or self.near(shown, names)

    # -- a field's value

    def check(self, spec: FieldSpec, value: Any, at: str, about: About | None = None) -> Verdict:
        """``value`` of field ``spec``, checked (see the module docstring). ``about``
        is the page an entity's value must be stated about (None: anywhere in the note)."""
        if spec.type in ("enum", "bool"):
            return Verdict(value)
        if spec.type in ("links", "list"):  # each name, each option, checked on its own
            kept: list[Any] = []
            dropped: list[str] = []
            for name in value if isinstance(value, list) else [value]:
                verdict = self._one(spec, name, f"{at}[{name!r}]", about)
                kept += [verdict.value] if verdict.value is not None else []
                dropped += verdict.dropped
            return Verdict(kept or None, tuple(dropped))
        return self._one(spec, value, at, about)

    def _one(self, spec: FieldSpec, value: Any, at: str, about: About | None) -> Verdict:
        text = str(value)
        if spec.is_link and about is not None and norm(text) in {norm(a) for a in about.names}:
            ok, why = False, "is the page itself"  # "Maria Lopez reports to Maria Lopez"
        elif spec.is_link:
            ok, why = self.names(text), "names no one the note names"
            if ok and about is not None and (unrelated := self.related(spec, text, about)):
                ok, why = False, unrelated
        elif spec.type == "date":
            day = as_date(value)
            ok, why = day is not None and self.states_day(day), "is a date the note does not state"
        elif spec.type == "number":
            ok = isinstance(value, int | float) and self.states_number(value)
            why = "is a number the note does not state"
        else:
            ok, why = self.states_text(text), "is not what the note says"
        entity = about is not None and about.entity and spec.type in ("string", "number", "date")
        if ok and entity and about and not self.stated_next_to(spec, value, about.names):
            ok, why = False, f"is not stated next to {about.names[0]!r}"
        if ok:
            return Verdict(value)
        return Verdict(None, (f"{at}: {text[:80]!r} {why}",))

    def fields(
        self,
        specs: Mapping[str, FieldSpec],
        values: Mapping[str, Any],
        at: str,
        about: About | None = None,
    ) -> tuple[dict[str, Any], list[str]]:
        """Every field value checked: (kept values, dropped lines)."""
        kept: dict[str, Any] = {}
        dropped: list[str] = []
        for key, value in values.items():
            verdict = self.check(specs[key], value, f"{at}.fields.{key}", about)
            dropped += verdict.dropped
            if verdict.value is not None:
                kept[key] = verdict.value
        return kept, dropped


def _body(text: str) -> str:
    """``text`` without its frontmatter: the note's own fields (its company, its
    attendees) are not statements about each person they name."""
    lines = text.replace("\r\n", "\n").split("\n")
    end = frontmatter_end(lines)
    return "\n".join(lines[end + 1 :]) if end is not None else text


def _head(text: str) -> str:
    """What a note says it is: its frontmatter and its first heading."""
    lines = text.replace("\r\n", "\n").split("\n")
    end = frontmatter_end(lines)
    front = lines[1:end] if end is not None else []
    rest = lines[end + 1 :] if end is not None else lines
    heading = next((line for line in rest if line.lstrip().startswith("#")), "")
    return "\n".join([*front, heading])


def _number_text(value: Any) -> str | None:
    """A number as it can stand in a note for ``near`` (None: too many spellings to say)."""
    if isinstance(value, float) and not value.is_integer():
        return None
    return None if int(value) >= 1000 else str(int(value))
