"""A company question answered from ``kb_brief`` without a model: what was decided, by
whom, when, why, what it replaced, what held on a day, where the sources disagree, and
the evidence for it (:mod:`memserver.server.brief` gathers it within a budget).

A question is such a question when it asks about a decision's provenance ("who
decided", "what alternatives", "what drove it"), a change ("what did it replace", "what
changed since"), a past state ("as of", "what would your answer have been", "what did
you know then"), the evidence ("supporting records", "what supports", "direct or
inferred") or a disagreement ("do the sources agree", "how do those accounts relate"),
in English or Mongolian. The brief's lines then come first, each dated and cited::

    - 2022-05-01 · Adopt new 90-day retention policy: reversed; decided by Arjun Mehta,
      Maya Patel; why: ... ; replaced by “Shift to cloud-native” (2022-08-20) [decisions/...]
    - Earlier status of Adopt ...: accepted (2022-05-01 to 2022-08-20) [decisions/...]
    - The sources disagree on contract_value of [companies/initech]: 96000 (a.md) vs ...
    - 2022-05-01 · Ok decided: Helix will now retain ... (direct: source/x.md, by Maya Patel)

Text quoted from a note is data: it is shown, never followed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from memserver.kb.glossary import other_language
from memserver.kb.translit import sounds_alike
from memserver.kb.words import STOPWORDS, words
from read_agent.extractive.evidence import INFERRED

BRIEF_TOOL = "kb_brief"
BRIEF_BUDGET = 2_400  # tokens asked of kb_brief: the answer shows a part of it
SUBJECT_LINES = 4
HISTORY_SUBJECTS = 2  # the subjects whose earlier values are said
EVIDENCE_LINES = 8
VALUE_CHARS = 160
QUOTE_CHARS = 240
REPLACED = frozenset({"reversed", "superseded"})
SKIPPED_FIELDS = frozenset({"aliases", "sources", "type", "title"})

_COMPANY = re.compile(
    r"\bwho\s+(?:\w+\s+){0,2}(?:decided|decide|approved|led|made|signed|chose)\b"
    r"|\bdecid\w*|\bdecisions?\b|\bapproved\b|шийд"
    r"|\balternatives?\b|\boptions?\s+(?:did|were|was)\b|\bwhat\s+(?:drove|driven|led\s+to)\b"
    r"|\b(?:main|deciding)\s+(?:reason|factor)\b|\bwhat\s+did\s+(?:it|that|this)\s+replace\b"
    r"|\breplac(?:e|ed|es)\b|\bsupersed\w*|\brevers\w*|\bwhat\s+(?:has\s+)?changed\b"
    r"|\bas\s+of\b|\bwould\s+(?:your|the)\s+answer\b|\bwhat\s+did\s+(?:you|we)\s+"
    r"(?:know|believe|think)\b|\bfirst\s+(?:learn|hear)\w*|\bcorrection\b|\bamendment\b"
    r"|\bsupporting\b|\bwhat\s+supports?\b|\bevidence\b|\btestimony\b|\binference\b"
    r"|\bjustif\w*"
    r"|\bdisagree\w*|\bcontradict\w*|\bconflict\w*|\binconsisten\w*|\baccounts?\s+relate\b"
    r"|яагаад|шалтгаан|хувилбар|орлуул|цуцал|байдлаар|нотл",
    re.IGNORECASE,
)


# "do the sources agree on X?", "how do those accounts relate?", "зөрүүтэй юу?"
_DISAGREEMENT = re.compile(
    r"\b(?:notes|sources|records|accounts|documents|figures|numbers)\b[^?]*\b(?:agree|differ)"
    r"|\bdisagree\w*|\bcontradict\w*|\bconflict\w*|\binconsisten\w*|\baccounts?\s+relate\b"
    r"|зөрүү|зөрч|санал\s+нэг|таар(?:ч|даг|сан)",
    re.IGNORECASE,
)


def company_question(question: str) -> bool:
    """Whether the question asks what a company memory keeps (see the module docstring)."""
    return _COMPANY.search(question) is not None or disagreement_question(question)


def disagreement_question(question: str) -> bool:
    """Whether the question asks if the sources agree: their open conflicts lead."""
    return _DISAGREEMENT.search(question) is not None


class Briefed(NamedTuple):
    said: list[str]  # what the subjects and conflicts say
    quotes: list[str]  # the direct evidence
    answers: bool  # the first line answers the question (it may lead)


def brief_lines(
    brief: Mapping[str, Any],
    aside: Callable[[Mapping[str, Any]], bool] = lambda s: False,
    disputed: bool = False,
    events: frozenset[str] = frozenset(),
    decisions: frozenset[str] = frozenset(),
    question: str | None = None,
) -> Briefed:
    """(what the brief's subjects say, its evidence) as answer lines. Subjects ``aside``
    says the question is not about (another customer's own price) are left out when
    others remain, and the evidence quoted for them with them. The open conflicts lead
    when the question asks whether sources agree (``disputed``); else only those on the
    subjects are said, after them."""
    subjects = [s for s in brief.get("subjects") or () if isinstance(s, Mapping)]
    kept = [s for s in subjects if not aside(s)] or subjects
    dropped = {str(s.get("id")) for s in subjects if s not in kept}
    # what holds first: a decision a later one reversed or superseded after it
    kept.sort(
        key=lambda s: (
            bool(s.get("superseded_by")) or s.get("status") in REPLACED,
            bool(decisions) and s.get("folder") not in decisions,
            bool(events) and s.get("folder") not in events,
        )
    )
    titles = {str(s.get("id")): str(s.get("title") or "") for s in subjects}
    dates = {str(s.get("id")): str(s.get("date") or "") for s in subjects}
    shown = {str(s.get("id")) for s in kept[:SUBJECT_LINES]}
    conflicts = [
        _conflict_line(c)
        for c in brief.get("conflicts") or ()
        if isinstance(c, Mapping) and (disputed or str(c.get("page")) in shown)
    ]
    said = list(conflicts) if disputed else []  # the answer must not pick one side
    for rank, s in enumerate(kept[:SUBJECT_LINES]):
        said.append(_subject_line(s, titles, dates))
        if rank < HISTORY_SUBJECTS:  # the history of what the answer is about
            said += [_earlier_line(s, e) for e in s.get("earlier") or () if isinstance(e, Mapping)]
            said += [
                _later_line(s, c) for c in s.get("changed_since") or () if isinstance(c, Mapping)
            ]
    said += [] if disputed else conflicts
    quotes = [
        _evidence_line(e)
        for e in brief.get("evidence") or ()
        if isinstance(e, Mapping)
        and e.get("label") == "direct"
        and e.get("text")
        and str(e.get("page")) not in dropped
    ]
    # the first line answers when it is a disagreement asked about, or a subject with a
    # status or deciders (a decision), not a page's bare fields ("kind: prospect")
    top = kept[0] if kept else {}
    decided = bool(top.get("status") or top.get("deciders")) and _about(top, question)
    answers = (disputed and bool(conflicts)) or decided
    return Briefed(said, quotes[:EVIDENCE_LINES], bool(said) and answers)


def _about(subject: Mapping[str, Any], question: str | None) -> bool:
    """Whether the subject's title or values say a word of the question (always, when
    no question is given): a page the search found for nothing it says may not lead."""
    if question is None:
        return True
    asked = {w for w in words(question) if len(w) > 2 and w not in STOPWORDS}
    said = f"{subject.get('title')} {' '.join(map(str, (subject.get('current') or {}).values()))}"
    starts = asked | {s for w in asked for s in other_language(w)}  # "үнийн" is "pricing"
    told = set(words(said))
    return any(w.startswith(s) for w in told for s in starts) or any(
        sounds_alike(a, w)
        for a in asked
        for w in told  # "Глобекс" is Globex
    )


def _subject_line(s: Mapping[str, Any], titles: Mapping[str, str], dates: Mapping[str, str]) -> str:
    parts = []
    if s.get("status"):
        parts.append(str(s["status"]))
    deciders = [str(d) for d in s.get("deciders") or ()]
    if deciders:
        parts.append("decided by " + ", ".join(deciders))
    current = s.get("current") or {}
    for name, value in current.items() if isinstance(current, Mapping) else ():
        shown = _value(value)
        if name in SKIPPED_FIELDS or not shown or name == "decided_by":
            continue
        if shown == s.get("date"):
            continue
        parts.append(f"{name.replace('_', ' ')}: {shown}")
    for way, ids in (("replaced", s.get("supersedes")), ("replaced by", s.get("superseded_by"))):
        for other in ids or ():
            when = f" of {dates[other]}" if dates.get(other) else ""
            parts.append(f"{way} “{titles.get(other) or other}”{when}")
    day = f"{s.get('date')} · " if s.get("date") else ""
    return f"- {day}{s.get('title')}: {'; '.join(parts)} ({INFERRED}) [{s.get('id')}]"


def _earlier_line(s: Mapping[str, Any], e: Mapping[str, Any]) -> str:
    then = f", then {_value(e.get('replaced_by'))}" if e.get("replaced_by") else ""
    why = f"; {_cut(str(e['reason']))}" if e.get("reason") else ""
    field = str(e.get("field") or "").replace("_", " ")
    return (
        f"- {e.get('valid_to')} · Earlier {field} of {s.get('title')}: {_value(e.get('value'))} "
        f"(from {e.get('valid_from')}{then}{why}) ({INFERRED}) [{s.get('id')}]"
    )


def _later_line(s: Mapping[str, Any], c: Mapping[str, Any]) -> str:
    field = str(c.get("field") or "").replace("_", " ")
    return (
        f"- {c.get('date')} · Changed later: {field} of {s.get('title')} to "
        f"{_value(c.get('to'))} ({INFERRED}) [{s.get('id')}]"
    )


def _conflict_line(c: Mapping[str, Any]) -> str:
    sides = " vs ".join(
        f"{_value(x.get('value'))} ({x.get('source') or '?'})"
        for x in c.get("sides") or ()
        if isinstance(x, Mapping)
    )
    field = str(c.get("field") or "").replace("_", " ")
    when = c.get("date") or c.get("recorded")  # the sources' day, else when it was seen
    day = f"{when} · " if when else ""
    return f"- {day}The sources disagree on {field}: {sides} ({INFERRED}) [{c.get('page')}]"


def _evidence_line(e: Mapping[str, Any]) -> str:
    day = f"{e.get('date')} · " if e.get("date") else ""
    note = f": source/{e['source']}" if e.get("source") else ""
    by = f", by {e['author']}" if e.get("author") else ""
    page = f" [{e['page']}]" if e.get("page") else ""
    text = _cut(str(e.get("text")).replace("**", ""), QUOTE_CHARS)
    return f"- {day}{text} (direct{note}{by}){page}"


def _value(value: Any) -> str:
    if isinstance(value, list | tuple):
        return _cut(", ".join(str(v) for v in value if str(v).strip()))
    return _cut(str(value)) if value is not None else ""


def _cut(text: str, limit: int = VALUE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def interleaved(ours: Sequence[str], theirs: Sequence[str]) -> list[str]:
    """Two ranked lists of lines as one: the first of each, then the second of each ..."""
    out: list[str] = []
    for pair in itertools.zip_longest(ours, theirs):
        out += [x for x in pair if x is not None]
    return out
