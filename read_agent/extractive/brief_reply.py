"""A company question answered from ``kb_brief`` without a model: what was decided, by
whom, when, why, what it replaced, what held on a day, where the sources disagree, and
the evidence for it (:mod:`memserver.server.brief` gathers it within a budget).

A question is such a question when its reading (:mod:`read_agent.reading`) says it asks
about a decision (who decided, why, the alternatives), a change (what it replaced,
whether it still holds), a past state (as of a day), the evidence for something, or
whether the sources agree. The brief's lines then come first, each dated and cited::

    - 2026-07-15 · Per-seat pricing for Acme Track: reversed; decided by Maria Lopez,
      Alex Kim; why: ... ; replaced by “Usage-based pricing” (2026-10-07) [decisions/...]
    - Earlier status of Per-seat ...: accepted (2026-07-15 to 2026-10-07) [decisions/...]
    - The sources disagree on contract_value of [companies/initech]: 96000 (a.md) vs ...
    - 2026-07-15 · We settle on $49 per user ... (direct: source/x.md, by Maria Lopez)

After the first, the lines are ranked (:func:`ranked`) by how many of the question's
topical words they say (any ending, either language) and whether they are dated or name
the day it asks about, so a telling line is not pushed past the answer's length by its
place. Text quoted from a note is data: it is shown, never followed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from memserver.kb.glossary import other_language
from memserver.kb.lifecycle import DRAFT_VALUES, REVERSAL_VALUES
from memserver.kb.translit import same_name_across_scripts
from memserver.kb.words import STOPWORDS, words
from read_agent.extractive.line import DIRECT, INFERRED, Line
from read_agent.extractive.question import matched
from read_agent.reading import topical
from read_agent.tools.wire import Brief, Change, Conflict, Earlier, Quote, Subject

BRIEF_BUDGET = 2_400  # tokens asked of kb_brief: the answer shows a part of it
SUBJECT_LINES = 4
HISTORY_SUBJECTS = 2  # the subjects whose earlier values are said
EVIDENCE_LINES = 8
ENOUGH_LINES = 3  # lines saying some of the question: then those saying none go
VALUE_CHARS = 160
QUOTE_CHARS = 240
REPLACED = REVERSAL_VALUES
NOT_HOLDING = REPLACED | frozenset(DRAFT_VALUES)  # a proposed decision is not decided yet
SKIPPED_FIELDS = frozenset({"aliases", "sources", "type", "title"})


class Briefed(NamedTuple):
    said: list[Line]  # what the subjects and conflicts say
    quotes: list[Line]  # the direct evidence
    answers: bool  # the first line answers the question (it may lead)


def brief_lines(
    brief: Brief,
    aside: Callable[[Subject], bool] = lambda s: False,
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
    subjects = list(brief.subjects)
    kept = [s for s in subjects if not aside(s)] or subjects
    dropped = {s.id for s in subjects if s not in kept}
    # what holds first: a decision a later one reversed or superseded, or one still
    # proposed, after it; a replacement the brief holds takes the place of what it
    # replaced (the search found the old one: what holds now is said there)
    kept = _replacements_first(kept)
    kept.sort(
        key=lambda s: (
            _not_holding(s) and not _replaced_by_one_of(s, kept),
            bool(decisions) and s.folder not in decisions,
            bool(events) and s.folder not in events,
        )
    )
    titles = {s.id: s.title for s in subjects}
    dates = {s.id: s.date or "" for s in subjects}
    shown = {s.id for s in kept[:SUBJECT_LINES]}
    conflicts = [_conflict_line(c) for c in brief.conflicts if disputed or str(c.page) in shown]
    said = list(conflicts) if disputed else []  # the answer must not pick one side
    for rank, s in enumerate(kept[:SUBJECT_LINES]):
        said.append(subject_line(s, titles, dates))
        if rank < HISTORY_SUBJECTS:  # the history of what the answer is about
            said += [_earlier_line(s, e) for e in s.earlier]
            said += [_later_line(s, c) for c in s.changed_since]
    said += [] if disputed else conflicts
    quotes = [
        _evidence_line(e)
        for e in brief.evidence
        if e.label == "direct" and e.text and str(e.page) not in dropped
    ]
    # the first line answers when it is a disagreement asked about, or a subject with a
    # status or deciders (a decision), not a page's bare fields ("kind: prospect")
    top = kept[0] if kept else None
    decided = top is not None and bool(top.status or top.deciders) and _about(top, question)
    answers = (disputed and bool(conflicts)) or decided
    return Briefed(said, quotes[:EVIDENCE_LINES], bool(said) and answers)


def _not_holding(subject: Subject) -> bool:
    return bool(subject.superseded_by) or subject.status in NOT_HOLDING


def _replaced_by_one_of(subject: Subject, subjects: Sequence[Subject]) -> bool:
    ids = {s.id for s in subjects}
    return any(r in ids for r in subject.superseded_by)


def _replacements_first(subjects: Sequence[Subject]) -> list[Subject]:
    """The subjects in order, each replacement the list holds moved to just before the
    first subject it replaced."""
    by_id = {s.id: s for s in subjects}
    out: list[Subject] = []
    for s in subjects:
        for new in s.superseded_by:
            found = by_id.get(new)
            if found is not None and found not in out:
                out.append(found)
        if s not in out:
            out.append(s)
    return out


def _about(subject: Subject, question: str | None) -> bool:
    """Whether the subject's title or values say a word of the question (always, when
    no question is given): a page the search found for nothing it says may not lead."""
    if question is None:
        return True
    asked = {w for w in words(question) if len(w) > 2 and w not in STOPWORDS}
    said = f"{subject.title} {' '.join(map(str, subject.current.values()))}"
    starts = asked | {s for w in asked for s in other_language(w)}  # "үнийн" is "pricing"
    told = set(words(said))
    return any(w.startswith(s) for w in told for s in starts) or any(
        same_name_across_scripts(a, w)
        for a in asked
        for w in told  # "Глобекс" is Globex
    )


def subject_line(
    s: Subject, titles: Mapping[str, str], dates: Mapping[str, str], tag: str = ""
) -> Line:
    """A subject as one line: its date, title, status, deciders, values and the decisions
    it replaced or that replaced it (``tag`` before its title: "Then: ")."""
    parts = []
    if s.status:
        parts.append(s.status)
    if s.deciders:
        parts.append("decided by " + ", ".join(s.deciders))
    for name, value in s.current.items():
        shown = text_of(value)
        if name in SKIPPED_FIELDS or not shown or name == "decided_by":
            continue
        if shown == s.date:
            continue
        parts.append(f"{name.replace('_', ' ')}: {shown}")
    for way, ids in (("replaced", s.supersedes), ("replaced by", s.superseded_by)):
        for other in ids:
            when = f" of {dates[other]}" if dates.get(other) else ""
            parts.append(f"{way} “{titles.get(other) or other}”{when}")
    said = f"{tag}{s.title}: {'; '.join(parts)}"
    return inferred(said, s.date, s.id)


def inferred(text: str, day: Any, page: Any) -> Line:
    """A line of what the memory holds (not a note's words), dated ``day`` if any."""
    return Line(text, str(day) if day else None, (str(page),), INFERRED)


def _earlier_line(s: Subject, e: Earlier) -> Line:
    then = f", then {text_of(e.replaced_by)}" if e.replaced_by else ""
    why = f"; {cut(e.reason)}" if e.reason else ""
    field = e.field.replace("_", " ")
    said = f"Earlier {field} of {s.title}: {text_of(e.value)} (from {e.valid_from}{then}{why})"
    return inferred(said, str(e.valid_to), s.id)


def _later_line(s: Subject, c: Change) -> Line:
    field = c.field.replace("_", " ")
    said = f"Changed later: {field} of {s.title} to {text_of(c.to)}"
    return inferred(said, str(c.date), s.id)


def _conflict_line(c: Conflict) -> Line:
    sides = " vs ".join(f"{text_of(x.value)} ({x.source or '?'})" for x in c.sides)
    field = c.field.replace("_", " ")
    when = c.date or c.recorded  # the sources' day, else when it was seen
    return inferred(f"The sources disagree on {field}: {sides}", when, c.page)


def _evidence_line(e: Quote) -> Line:
    return Line(
        cut(e.text.replace("**", ""), QUOTE_CHARS),
        e.date,
        (e.page,) if e.page else (),
        DIRECT,
        f"source/{e.source}" if e.source else "",
        e.author,
    )


def key_words(text: str) -> set[str]:
    """The words of ``text`` that say a topic: three letters or more, no stop word."""
    return {w for w in words(text) if len(w) > 2 and w not in STOPWORDS}


def topic_words(question: str) -> set[str]:
    """The question's words that say its topic (:func:`read_agent.reading.topical`): not
    a number, a day, nor a word that only says a change or a past state."""
    return {w for w in topical(question) if not w.isdigit()}


def said_of(asked: set[str], text: str) -> set[str]:
    """The ``asked`` words ``text`` says, in any ending or the other language."""
    return matched(asked, key_words(text))


def text_of(value: Any) -> str:
    """A field's value as short text (a list joined by commas)."""
    if isinstance(value, list | tuple):
        return cut(", ".join(str(v) for v in value if str(v).strip()))
    return cut(str(value)) if value is not None else ""


def cut(text: str, limit: int = VALUE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_HANDLE = re.compile(r"(?<=[a-z])(?=[A-Z])")


def ranked(
    lines: Sequence[Line],
    question: str,
    days: Sequence[str] = (),
    quoted_first: bool = False,
    kept: Collection[Line] = (),
) -> list[Line]:
    """``lines`` with those saying the most of the question first: one point a topical
    word of it (any ending, either language), three when the line is dated a day it
    names (or ``days``, the day it asks about: what was said that day), one a day it
    names that the line mentions; ties keep their order, or with ``quoted_first`` (do
    the sources agree: what each note said) a note's own words come first. Lines saying
    nothing of the question go when enough say something, except those ``kept`` (the
    answer's own lines: what it listed or read out). When the
    question names several days, the best line said on each of them follows the first."""
    asked = topic_words(question)
    wanted = set(_ISO_DAY.findall(question)) | set(days)

    def score(line: Line) -> int:
        # what the line shows but its citation; "@AlexKim" is Alex Kim
        text = _HANDLE.sub(" ", replace(line, cited=()).render())
        dated = line.date in wanted
        named = wanted & set(_ISO_DAY.findall(text)) - {line.date}
        return len(said_of(asked, text)) + 3 * dated + len(named)

    scores = {line: score(line) for line in lines}
    order = sorted(lines, key=lambda line: (-scores[line], quoted_first and line.label != DIRECT))
    # as long as the evidence needs: lines saying nothing of the question go when enough
    # lines say something of it
    if sum(1 for x in order if scores[x] > 0) >= ENOUGH_LINES:
        order = [x for x in order if scores[x] > 0 or x in kept]
    if len(wanted) < 2:
        return order
    # several days asked ("what did A say on D1, and B on D2?"): after the best line, the
    # best said on each day (one dated the day, not told later), so every account shows
    told = [
        next((x for x in order if x.date == day and not x.said), None) for day in sorted(wanted)
    ]
    head = order[:1] + [x for x in order if x in told and x not in order[:1]]
    return head + [x for x in order if x not in head]


def interleaved(ours: Sequence[Line], theirs: Sequence[Line]) -> list[Line]:
    """Two ranked lists of lines as one: the first of each, then the second of each ..."""
    out: list[Line] = []
    for pair in itertools.zip_longest(ours, theirs):
        out += [x for x in pair if x is not None]
    return out
