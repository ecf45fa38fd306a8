"""Facts a note states for a schema field in running text, named by the field's words.

"the current contract value is $120,000 per year", "Initech's annual contract is
$96,000", "renewal date: 2027-01-31", "the due date is now 2026-12-15", "Alex Kim now owns the Initech account": a field is
named by its own name's words ("contract value", "renewal date", "renewal") or by the
phrase its description or the folder's rules give it ("`contract_value` is the annual
contract value ..." -> "annual contract value", "annual contract"); then a verb ("is",
"was", "stands at", ":") and a value that fits the field's type right after it (a
number, a date, an allowed enum value, a known page). Nothing else is read.

The page it is about: the one named last before the words in the sentence ("Initech's
annual contract"), else the one the list item's heading names, else the one named last
in the paragraph's sentences before it ("Initech signed. ... the signed annual contract
value is $108,000"), else the one the note's title names (an e-mail's subject), else the
note's own page when it has the field, else the one page of that folder the note's own
page links to (a call with Initech). A field no page can be found for is not read.

:func:`is_change` says whether a paragraph states its value as a change ("moved to",
"now", "updated", "corrected"): two sources of about the same time that state
different values as plain facts disagree (:mod:`ingest_agent.pages.merge`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from functools import cache
from zoneinfo import ZoneInfo

from ingest_agent.extract.prose_patterns import Statement, field_value
from ingest_agent.names import norm
from memserver.kb.schema import FieldSpec, FolderSpec

VALUE_TYPES = ("number", "date", "enum", "link")
_CHANGE = re.compile(
    r"\b(?:now|new|updated?|correct(?:ed|ion|s)?|moves?|moved|chang(?:e|es|ed)|shift(?:s|ed)?"
    r"|slip(?:s|ped)?|promot\w+|becomes?|became|replac\w+|instead|revis\w+|no\s+longer"
    r"|takes?\s+over|took\s+over|effective|from\s+now|renegotiated|raised|lowered|cut\s+to)\b"
    r"|одоо|шинэчил|өөрчил|засвар",
    re.IGNORECASE,
)
_VERB = (
    r"(?:\s*(?::|=|[—–-]{1,2})\s*|\s+(?:is|was|of|are|stands\s+at|comes\s+to|totals?|will\s+be"
    r"|confirmed\s+(?:at|as)|set\s+at)\s+)(?:now\s+|currently\s+|still\s+|about\s+)?"
)
_GENERIC = frozenset({"date", "value", "the", "a", "of", "in", "status", "name"})
_SCALE = {"k": 1_000, "thousand": 1_000, "m": 1_000_000, "million": 1_000_000, "сая": 1_000_000}
_NUMBER = re.compile(
    r"^[$€£₮]?\s?(?P<n>\d[\d,]*(?:\.\d+)?)\s*(?P<scale>k|m|thousand|million|сая)?(?!\w)",
    re.IGNORECASE,
)
_NAME_RUN = re.compile(r"(?<!\w)[A-ZА-ЯЁӨҮ][\w'’-]*(?:[ \t]+[A-ZА-ЯЁӨҮ][\w'’-]*){0,3}")
_NAME = r"[A-ZА-ЯЁӨҮ][\w'’-]*(?:[ \t]+[A-ZА-ЯЁӨҮ][\w'’-]*){0,3}"
# "Alex Kim now owns the Initech account", "Sofia took over Usage Metering"
_OWNS = re.compile(
    rf"(?P<who>{_NAME})\s+(?:now\s+)?(?:owns|took\s+over|takes\s+over|has\s+taken\s+over"
    rf"|is\s+(?:now\s+)?(?:the\s+)?owner\s+of)\s+(?:the\s+)?(?P<what>{_NAME})"
)


def is_change(block: str) -> bool:
    """Whether the paragraph states a value as a change rather than as a plain fact."""
    return bool(_CHANGE.search(block))


def field_labels(spec: FieldSpec, folder: FolderSpec) -> tuple[str, ...]:
    """The words that name a field in prose (see the module docstring)."""
    return _labels(spec.name, spec.type, spec.description, folder.rules)


@cache
def _labels(name: str, kind: str, description: str, rules: str) -> tuple[str, ...]:
    own = name.replace("_", " ").lower().split()
    out = [" ".join(own)]
    if kind == "date" and len(own) > 1 and own[-1] == "date":
        out.append(" ".join(own[:-1]))
    phrases = [description]
    phrases += re.findall(rf"`{re.escape(name)}`\s+is\s+([^.,;(]+)", rules or "")
    for phrase in phrases:
        said = re.findall(r"[\w-]+", phrase.lower())
        hits = [i for i, w in enumerate(said) if w in own]
        if not hits:
            continue
        # the run of words around the field's own words: "annual contract value"
        start, end = hits[0], hits[-1] + 1
        while start > 0 and said[start - 1] not in _GENERIC and len(said[start - 1]) > 2:
            start -= 1
            if end - start >= 4:
                break
        run = said[start:end]
        for size in range(len(run), 1, -1):
            for at in range(len(run) - size + 1):
                part = run[at : at + size]
                if any(w in own and w not in _GENERIC for w in part):
                    out.append(" ".join(part))
    return tuple(sorted(dict.fromkeys(out), key=lambda label: -len(label)))


def stated_facts(
    blocks: Iterable[tuple[str, bool, str]],
    pages: Mapping[str, tuple[str, str]],
    folders: Mapping[str, FolderSpec],
    own: tuple[str, str] | None,
    linked: Mapping[str, str],
    note_date: dt.date,
    tz: ZoneInfo,
    title: str = "",
) -> list[Statement]:
    """Field values stated in ``blocks`` (text, is an item, heading) for known pages.

    ``pages``: norm(name) -> (folder, title); ``own``: the note's own entity page;
    ``linked``: folder -> the one page of it the note's own page links to; ``title``: the
    note's title."""
    out: list[Statement] = []
    for block, _, heading in blocks:
        sentences = re.split(r"(?<=[.!?])\s+(?=[A-ZА-ЯЁӨҮ])", block)
        for i, sentence in enumerate(sentences):
            out += [Statement(*found, block) for found in _owners(sentence, pages, folders)]
            # where the sentence names no page: the paragraph before it, the note's title
            around = (heading, " ".join(sentences[:i]), title)
            for folder in folders.values():
                for spec in folder.fields:
                    if spec.type not in VALUE_TYPES:
                        continue
                    found = _one(sentence, around, spec, folder, pages, own, linked, note_date, tz)
                    if found is not None:
                        out.append(Statement(folder.name, found[0], spec.name, found[1], block))
    return out


def _one(
    sentence: str,
    around: tuple[str, ...],
    spec: FieldSpec,
    folder: FolderSpec,
    pages: Mapping[str, tuple[str, str]],
    own: tuple[str, str] | None,
    linked: Mapping[str, str],
    note_date: dt.date,
    tz: ZoneInfo,
) -> tuple[str, object] | None:
    for label in field_labels(spec, folder):
        verb = rf"(?:{_VERB}|\s+(?=\d))" if spec.type == "date" else _VERB
        pattern = rf"(?<![\w-]){re.escape(label)}{verb}(?P<rest>.+)"
        match = re.search(pattern, sentence, re.IGNORECASE)
        if match is None:
            continue
        value = _value(spec, match.group("rest"), pages, note_date, tz)
        if value is None:
            continue
        subject = _subject(sentence[: match.start()], around, folder, pages, own, linked)
        return (subject, value) if subject is not None else None
    return None


def _owners(
    sentence: str, pages: Mapping[str, tuple[str, str]], folders: Mapping[str, FolderSpec]
) -> list[tuple[str, str, str, str]]:
    """(folder, title, field, person) for "<person> now owns <page>": the page's link
    field to people whose name says owner (``owner``, ``account_owner``)."""
    out = []
    for match in _OWNS.finditer(sentence):
        who, what = _page(match.group("who"), pages), _page(match.group("what"), pages)
        if who is None or what is None or what[0] not in folders:
            continue
        field = next(
            (
                f
                for f in folders[what[0]].fields
                if f.type == "link" and f.folder == who[0] and "owner" in f.name
            ),
            None,
        )
        if field is not None:
            out.append((what[0], what[1], field.name, who[1]))
    return out


def _page(run: str, pages: Mapping[str, tuple[str, str]]) -> tuple[str, str] | None:
    """The known page a run of capitalised words names: its longest part, "Since Monday
    Tom Becker" -> Tom Becker."""
    words = re.sub(r"['’]s$", "", run).split()
    for size in range(len(words), 0, -1):
        for start in range(len(words) - size + 1):
            hit = pages.get(norm(" ".join(words[start : start + size])))
            if hit is not None:
                return hit
    return None


def _value(
    spec: FieldSpec,
    rest: str,
    pages: Mapping[str, tuple[str, str]],
    note_date: dt.date,
    tz: ZoneInfo,
) -> object | None:
    if spec.type == "number":
        match = _NUMBER.match(rest.strip())
        if match is None:
            return None
        number = float(match.group("n").replace(",", ""))
        number *= _SCALE.get((match.group("scale") or "").lower(), 1)
        return int(number) if number.is_integer() else number
    return field_value(spec, rest, pages, note_date, tz)


def _subject(
    before: str,
    around: tuple[str, ...],
    folder: FolderSpec,
    pages: Mapping[str, tuple[str, str]],
    own: tuple[str, str] | None,
    linked: Mapping[str, str],
) -> str | None:
    for where in (before, *around):
        for run in reversed(_NAME_RUN.findall(where)):
            words = re.sub(r"['’]s$", "", run).split()
            for start in range(len(words)):
                hit = pages.get(norm(" ".join(words[start:])))
                if hit is not None and hit[0] == folder.name:
                    return hit[1]
    if own is not None and own[0] == folder.name:
        return own[1]
    return linked.get(folder.name)
