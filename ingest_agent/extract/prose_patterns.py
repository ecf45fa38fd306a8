"""What the rules extractor reads in running text besides dated sentences: who a short
name or a pronoun is, job titles, and plain statements of a field.

Only what the text says unambiguously is read; anything else is left out, never guessed.

- :class:`NotePeople`: the people a note names (its link fields, known person pages,
  full names in the text). A first name alone ("Bob") is one of them when exactly one
  person of the note *and* of the known pages has that first name ("Alex" with Alex Kim
  and Alex Novak around is nobody); "He"/"She" at the start of a sentence is the person
  named last before it in the same paragraph.
- :func:`role_statements`: job titles in the usual shapes: "Bob Martinez (Director of
  Operations, Globex)", "Bob Martinez is Director of Operations at Globex", "Sofia Rossi
  joins as Backend Engineer", "Bob has been promoted to VP of Operations", a list item
  "Maria Lopez — CEO and co-founder".
- :func:`field_statements`: "<page> <field> moves to <value>" ("Mongolian Localization
  due date moves to 2026-12-15"), "<page> status: prospect", "<page> is now a
  customer", "Номин Трейд одоо ... (customer)": the value must fit the field's type
  (a date, an allowed enum value, a number, a known page), else nothing is read.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ingest_agent.extract.dates import day_mentions
from ingest_agent.extract.note import Known, coerce
from ingest_agent.extract.role_words import ALL_NEW, ALL_SHARED, ALL_SOLE, alternation
from ingest_agent.extract.text import full_name, split_sentences
from ingest_agent.names import norm
from memserver.kb.schema import FieldSpec, FolderSpec

ROLE_FIELDS = ("role", "position", "job_title", "job")
PLACE_FIELDS = ("location", "city", "based_in", "office")
PRONOUNS = frozenset({"he", "she", "тэр"})
_CAP = r"[A-ZА-ЯЁӨҮ][\w'’.&/-]*"
_NAME_WORD = r"[A-ZА-ЯЁӨҮ][\w'’-]*"
_NAME = rf"{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,3}}"
_ROLE = rf"{_CAP}(?:\s+(?:of|and|for|&|{_CAP}))*"
_ORG = rf"{_NAME_WORD}(?:\s+{_NAME_WORD})*"
_WORD_RUN = re.compile(rf"(?<![\w]){_NAME}")
_DET = rf"(?:(?P<det>{alternation(ALL_SOLE | ALL_SHARED)})\s+)?"
_NEW = rf"(?:(?P<new>{alternation(ALL_NEW)})\s+)?"
_ORG_OWNER = r"[A-ZА-ЯЁӨҮ][\w&-]*(?:[ \t]+[A-ZА-ЯЁӨҮ][\w&-]*)*"  # "Globex" of "Globex's"
_ROLE_PATTERNS = (
    # Bob Martinez (Director of Operations, Globex) / (Procurement Manager, Initech — ...);
    # what follows the role is an organisation's name, so "(Acme, Монгол дахь менежер)"
    # (an organisation, then a description) is not read.
    re.compile(
        rf"(?P<name>{_NAME})\s*\((?P<role>{_ROLE})(?:,\s*(?P<org>{_ORG}))?(?:\s*[;—–][^()]*)?\)"
    ),
    re.compile(
        rf"(?P<name>{_NAME})\s+is\s+(?:now\s+)?{_DET}{_NEW}(?P<role>{_ROLE})\s+at\s+"
        rf"(?P<org>{_ORG})?"
    ),
    # "Marcus Hale is Globex's new COO": the organisation's one holder of the role
    re.compile(
        rf"(?P<name>{_NAME})\s+is\s+(?:now\s+)?(?P<owner>{_ORG_OWNER})['’]s\s+{_NEW}"
        rf"(?P<role>{_ROLE})"
    ),
    re.compile(
        rf"(?P<name>{_NAME})(?:\s*\([^)]*\))?\s+(?:joins|joined|has\s+joined|will\s+join)"
        rf"(?:\s+(?P<org>{_ORG}))?\s+as\s+{_DET}{_NEW}"
        rf"(?P<role>{_ROLE}(?:,\s*{_CAP}(?=[\s,.;]|$))?)"
    ),
    re.compile(
        rf"(?P<name>{_NAME})\s+(?:has\s+been\s+|was\s+|is\s+|got\s+|gets\s+)?promoted\s+to\s+"
        rf"{_DET}(?P<role>{_ROLE})"
    ),
)
# "... based in our Ulaanbaatar office": where the person named before works.
_BASED = re.compile(rf"\bbased\s+in\s+(?:our\s+|the\s+)?(?P<place>{_ORG})")
# A list item "Maria Lopez — CEO and co-founder." (the role up to ";" or ".").
_ROLE_ITEM = re.compile(rf"^(?P<name>{_NAME})\s+[—–]\s+(?P<role>[^;.—–()]{{2,60}}?)\s*(?:[;.(]|$)")
_ROLE_MAX_WORDS = 6
_CHANGE = (
    r"(?::|\s+(?:moves?|moved|changes?|changed|shifts?|shifted|slips?|slipped|is\s+now"
    r"|is|becomes|became|was\s+moved|has\s+moved)\b)\s*(?:to\s+)?"
)
_BECOMES = re.compile(
    r"^\s+(?:is\s+now|has\s+become|became|becomes|has\s+been|is)\s+(?:a|an|our|now)?\s*"
    r"(?P<value>[\w-]+)",
    re.IGNORECASE,
)
_MN_NOW = re.compile(
    r"^\s+(?:нь\s+)?одоо(?:гоор)?\s[^.]{0,60}?\((?P<value>[\w-]+)\)", re.IGNORECASE
)


@dataclass(frozen=True)
class Statement:
    """A field value a note states for a page, and the paragraph that says it."""

    folder: str
    title: str
    field: str
    value: object
    block: str
    # a job title named as its one holder's ("Globex's new COO"): the organisation's
    # title ("" when the note does not say which)
    sole: str | None = None


class NotePeople:
    """The people of one note in one folder, and who a short name or pronoun is."""

    def __init__(self, folder: str, linked: Iterable[str], known: Known, text: str) -> None:
        self.folder = folder
        self.names: dict[str, str] = {}  # norm(name) -> title, people this note names
        for name in linked:
            self.names.setdefault(norm(name), name)
        runs = [m.group(0) for m in _WORD_RUN.finditer(text)]
        for run in runs:
            hit = known.get(norm(run))
            if hit is not None and hit[0] == folder:
                self.names.setdefault(norm(run), hit[1])
        known_people = {title for f, title in known.values() if f == folder}
        full_runs = {full for run in runs if (full := full_name(run)) is not None}
        firsts: dict[str, set[str]] = {}
        for title in {*self.names.values(), *known_people, *full_runs}:
            words = title.split()
            if len(words) >= 2:
                firsts.setdefault(norm(words[0]), set()).add(norm(title))
        self.short: dict[str, str] = {}
        taken = {k for k, (f, _) in known.items() if f != folder}
        for key, title in self.names.items():
            first = norm(title.split()[0])
            if len(title.split()) >= 2 and firsts.get(first) == {key} and first not in taken:
                self.short[first] = title
        self.used_short = {
            self.short[norm(run)]: run for run in runs if norm(run) in self.short
        }  # title -> the short form written alone

    def person(self, run: str) -> str | None:
        """The person a name run is: a name of the note, or a unique first name."""
        key = norm(run)
        return self.names.get(key) or self.short.get(key)

    def subject(self, before: str) -> str | None:
        """The person a phrase is about: the one named last before it in its sentence, or,
        when the sentence starts with a pronoun, the one named last before that."""
        sentences = split_sentences(before) or [before]
        current = sentences[-1]
        found = self._last_person(current)
        if found is not None:
            return found
        first = norm(current.split()[0]) if current.split() else ""
        if first in PRONOUNS:
            for sentence in reversed(sentences[:-1]):
                found = self._last_person(sentence)
                if found is not None:
                    return found
        return None

    def _last_person(self, text: str) -> str | None:
        for run in reversed(list(_runs(text))):
            found = self.person(run)
            if found is not None:
                return found
        return None


def _runs(text: str) -> Iterator[str]:
    """Capitalised runs, and for each its leading sub-runs ("Bob has" -> "Bob")."""
    for match in _WORD_RUN.finditer(text):
        words = match.group(0).split()
        for size in range(len(words), 0, -1):
            yield " ".join(words[:size])


def role_field(folder: FolderSpec) -> FieldSpec | None:
    """The folder's job-title field (a string field named role, position ...), if any."""
    return _string_field(folder, ROLE_FIELDS)


def _string_field(folder: FolderSpec, names: Iterable[str]) -> FieldSpec | None:
    for name in names:
        spec = folder.field(name)
        if spec is not None and spec.type == "string":
            return spec
    return None


def role_statements(
    blocks: Iterable[tuple[str, bool, bool]],
    people: NotePeople,
    folder: FolderSpec,
    known: Known,
) -> list[Statement]:
    """Job titles the note states for its people, the organisation of "(Role, Org)" when
    it is a known page, and "based in <place>" (see the module docstring)."""
    spec = role_field(folder)
    if spec is None:
        return []
    place = _string_field(folder, PLACE_FIELDS)
    out: list[Statement] = []
    for block, is_item, labelled in blocks:
        # each sentence alone: a role never runs on into the next ("... Data Engineer. Gil")
        matches = [
            m
            for sentence in split_sentences(block)
            for pattern in _ROLE_PATTERNS
            for m in pattern.finditer(sentence)
        ]
        if is_item and (item := _ROLE_ITEM.match(block)) is not None:
            matches.append(item)
        for match in sorted(matches, key=lambda m: m.start()):
            person = people.person(match.group("name"))
            # a step or field of a list ("3. **Docker Image** – Build ...") names no one new
            if person is None and not (labelled and match.re is _ROLE_ITEM):
                person = _new_person(match, known)
            role = _role(match.group("role"), known)
            if person is None or role is None:
                continue
            found = match.groupdict()
            org = known.get(norm(found.get("org") or found.get("owner") or ""))
            link = (
                next((f for f in folder.fields if f.type == "link" and f.folder == org[0]), None)
                if org
                else None
            )
            out.append(Statement(folder.name, person, spec.name, role, block, _sole(found, org)))
            if org is not None and link is not None:
                out.append(Statement(folder.name, person, link.name, org[1], block))
            based = _BASED.search(match.string, match.end())
            if place is not None and based is not None:
                out.append(Statement(folder.name, person, place.name, based.group("place"), block))
    return out


def _sole(found: Mapping[str, str | None], org: tuple[str, str] | None) -> str | None:
    """The organisation a role is named the one holder of ("" when it says none), or None
    when the words name one holder among several, or do not say."""
    det = " ".join((found.get("det") or "").lower().split())
    if det in ALL_SHARED:
        return None
    if found.get("owner") or det in ALL_SOLE:
        return org[1] if org is not None else ""
    return None


def _new_person(match: re.Match[str], known: Known) -> str | None:
    """A full name not yet known as a page of another folder (only for explicit shapes)."""
    name = full_name(match.group("name"))
    if name is None or match.re is _ROLE_PATTERNS[0] or norm(name) in known:
        return None
    return name


def _role(text: str, known: Known) -> str | None:
    role = " ".join(text.split()).strip(" ,;:")
    words = role.split()
    if not words or len(words) > _ROLE_MAX_WORDS or not words[0][:1].isupper():
        return None
    if norm(role) in known:
        return None  # "(Globex)" names a page, not a job
    return role


def field_statements(
    blocks: Iterable[tuple[str, bool, bool]],
    pages: Mapping[str, tuple[str, str]],
    folders: Mapping[str, FolderSpec],
    note_date: dt.date,
    tz: ZoneInfo,
) -> list[Statement]:
    """Field values stated in prose for the ``pages`` named (norm name -> folder, title)."""
    out: list[Statement] = []
    for block, _, _ in blocks:
        for match in _WORD_RUN.finditer(block):
            words = match.group(0).split()
            for size in range(len(words), 0, -1):
                name = " ".join(words[:size])
                hit = pages.get(norm(name))
                if hit is None or hit[0] not in folders:
                    continue
                end = match.start() + len(name)
                found = _statement(block[end:], folders[hit[0]], pages, note_date, tz)
                if found is not None:
                    out.append(Statement(hit[0], hit[1], found[0], found[1], block))
                break
    return out


def _labels(spec: FieldSpec) -> list[str]:
    label = spec.name.replace("_", " ")
    out = [label]
    if spec.type == "date" and label.endswith(" date"):
        out.append(label.removesuffix(" date"))
    return out


def _statement(
    after: str,
    folder: FolderSpec,
    pages: Mapping[str, tuple[str, str]],
    note_date: dt.date,
    tz: ZoneInfo,
) -> tuple[str, object] | None:
    enums = [f for f in folder.fields if f.type == "enum"]
    for pattern in (_BECOMES, _MN_NOW):
        m = pattern.match(after)
        if m is not None:
            fits = [f for f in enums if coerce(f, m.group("value")) is not None]
            if len(fits) == 1:
                return fits[0].name, coerce(fits[0], m.group("value"))
    for spec in folder.fields:
        for label in _labels(spec):
            m = re.match(
                rf"^(?:['’]s)?\s+{re.escape(label)}{_CHANGE}(?P<rest>.*)", after, re.IGNORECASE
            )
            if m is None:
                continue
            value = field_value(spec, m.group("rest"), pages, note_date, tz)
            if value is not None:
                return spec.name, value
    return None


def field_value(
    spec: FieldSpec,
    rest: str,
    pages: Mapping[str, tuple[str, str]],
    note_date: dt.date,
    tz: ZoneInfo,
) -> object | None:
    rest = rest.strip()
    if spec.type == "date":
        days = day_mentions(rest[:60], note_date, tz)
        return days[0].day.isoformat() if days and days[0].start <= 2 else None
    if spec.type in ("enum", "bool"):
        word = re.match(r"[\w-]+", rest)
        return coerce(spec, word.group(0)) if word else None
    if spec.type == "number":
        number = re.match(r"[$€£₮]?\s?\d[\d,.]*", rest)
        return coerce(spec, number.group(0)) if number else None
    if spec.type == "link" and spec.folder is not None:
        run = _WORD_RUN.match(rest)
        hit = pages.get(norm(run.group(0))) if run else None
        return hit[1] if hit is not None and hit[0] == spec.folder else None
    return None  # free text: no way to tell where the value ends
