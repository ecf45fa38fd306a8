"""Audit replay without a model: what the memory held on a past day, and for each thing
it held, whether it still holds or what became of it since, when, by whom, from which
note.

A question is such a question when it names a past day (``Reading.as_of``) and asks
about the time since too: "is it still current", "what has changed since", "what became
of it", "and now?", "what holds now, and what held on 2026-08-01?", "түүнээс хойш
юу өөрчлөгдсөн бэ", "одоо ч хүчинтэй юу". ``kb_brief`` asked ``as_of`` that day gives the
subjects as they were, and for each the values that changed after it
(``changed_since``); the pages that replaced one are read as they are now. The answer::

    As of 2026-08-31 the memory held 2 records on this: 1 has since changed or been
    replaced, 1 still holds.
    - 2026-07-15 · Then: Per-seat pricing for Acme Track: accepted; decided by ... [decisions/a]
    - 2026-10-07 · Since then: reversed; replaced by “Usage-based pricing” (2026-10-07),
      decided by Maria Lopez, Alex Kim; it says: ...; noted in source/n.md (inferred)
      [decisions/b]
    - 2026-07-15 · Then: Price list by the end of July: accepted (inferred) [decisions/c]
    - 2026-07-15 · Still current: nothing recorded after 2026-08-31 changed it (inferred)
      [decisions/c]

Each "Since then" line follows the line of what it became of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from read_agent.extractive.brief_reply import (
    REPLACED,
    SKIPPED_FIELDS,
    SUBJECT_LINES,
    cut,
    inferred,
    said_of,
    subject_line,
    text_of,
    topic_words,
)
from read_agent.extractive.line import Line
from read_agent.tools.wire import Brief, Change, Page, Subject, listed

CHAIN = frozenset({"supersedes", "superseded_by", "decided_by", "decided_on"})
BODY_CHARS = 240  # of what a replacing page says
REPLACEMENT_FIELDS = 2  # a replacement's own values said beside its deciders


class Replay(NamedTuple):
    lead: str
    lines: list[Line]


def replaced_ids(subjects: Sequence[Subject], day: str) -> list[str]:
    """The pages that replaced a subject after ``day``: to be read as they are now."""
    out = []
    for s in subjects:
        for c in _since(s, day):
            if c.field == "superseded_by":
                out += [str(v) for v in listed(c.to) if "/" in str(v)]
    return list(dict.fromkeys(out))


def subject_then(view: Page) -> Subject | None:
    """A page read ``as_of`` a day (``kb_get_page``) as a brief's subject then: its values
    on the day and what changed after; None when nothing of it was known then."""
    then = view.as_of
    if then is None or then.known is False or not view.id:
        return None
    fields = view.fields  # the values held on the day asked about
    status = fields.get("status")
    return Subject(
        view.id,
        view.title,
        view.folder,
        then.date,
        str(status) if status else None,
        tuple(str(d) for d in listed(fields.get("decided_by"))),
        {k: v for k, v in fields.items() if k not in ("status", "decided_by")},
        changed_since=then.changed_since,
    )


def replay(
    brief: Brief,
    day: str,
    now: Mapping[str, Page],
    question: str,
    named: Sequence[Subject] = (),
) -> Replay | None:
    """Each subject of a ``kb_brief`` asked ``as_of`` ``day`` (what held then) and of
    ``named`` (the pages the question names, as :func:`subject_then` makes them), then
    what became of it: the values changed after the day, the pages that replaced it
    (``now``: those pages as they are today, by id), or that nothing recorded changed it.
    Those saying the most of the question come first; those saying less than half of
    what the best one says are left out."""
    known = {s.id for s in brief.subjects}
    extra = [s for s in named if s.id not in known]
    subjects = _on_topic([*brief.subjects, *extra], question)[:SUBJECT_LINES]
    if not subjects:
        return None
    titles = {s.id: s.title for s in subjects}
    dates = {s.id: s.date or "" for s in subjects}
    lines: list[Line] = []
    changed = 0
    for s in subjects:
        lines.append(subject_line(s, titles, dates, tag="Then: "))
        since = _since(s, day)
        said = _became(s, since, day, now)
        if said:
            changed += 1
            lines += said
        else:
            still = f"Still current: nothing recorded after {day} changed it"
            lines.append(inferred(still, s.date, s.id))
    held = len(subjects)
    lead = (
        f"As of {day} the memory held {held} record{'s' if held != 1 else ''} on this: "
        f"{changed} {'has' if changed == 1 else 'have'} since changed or been replaced, "
        f"{held - changed} still {'holds' if held - changed == 1 else 'hold'}."
    )
    return Replay(lead, lines)


def _became(
    s: Subject,
    since: Sequence[Change],
    day: str,
    now: Mapping[str, Page],
) -> list[Line]:
    """What became of ``s`` after ``day``: a line per page that replaced it (cited by
    that page), then one for its other changed values (cited by it)."""
    status = next((c for c in since if c.field == "status"), None)
    how = f" {text_of(status.to)};" if status is not None else ""
    if status is None and s.status in REPLACED:
        how = f" {s.status};"
    out = []
    for c in since:
        if c.field != "superseded_by":
            continue
        for pid in (str(v) for v in listed(c.to) if "/" in str(v)):
            page = now.get(pid) or Page(pid)  # not read: its id, and nothing it says
            other = page.title or pid
            when = (page.effective_date or c.date or "")[:10]
            about = _about_page(page)
            note = f"; noted in source/{c.source}" if c.source else ""
            became = (
                f"Since then:{how or ' it was'} replaced by “{other}”"
                f"{f' ({when})' if when else ''}{about}{note}"
            )
            out.append(inferred(became, str(c.date), pid))
    values = []
    for c in since:
        if c.field in CHAIN or c.field in SKIPPED_FIELDS or (c.field == "status" and out):
            continue
        shown = text_of(c.to)
        name = c.field.replace("_", " ")
        note = f" (source/{c.source})" if c.source else ""
        values.append(
            f"{name} removed{note}" if not shown else f"{name} became {shown} on {c.date}{note}"
        )
    if values:
        first = next(c for c in since if c.field not in CHAIN)
        became = f"Since then: {'; '.join(values)}"
        out.append(inferred(became, str(first.date), s.id))
    return out


def _about_page(page: Page) -> str:
    """A replacing page's deciders and first values, as ", decided by ...; rationale: ..."""
    fields = page.fields
    parts = []
    deciders = text_of(fields.get("decided_by"))
    if deciders:
        parts.append(f"decided by {deciders}")
    shown = 0
    for name, value in fields.items():
        if (
            name in CHAIN
            or name in SKIPPED_FIELDS
            or name == "status"
            or shown >= REPLACEMENT_FIELDS
        ):
            continue
        said = text_of(value)
        if said and said != page.effective_date:
            parts.append(f"{name.replace('_', ' ')}: {said}")
            shown += 1
    body = _first_paragraph(page)
    if body:
        parts.append(f"it says: {body}")
    return f", {'; '.join(parts)}" if parts else ""


def _first_paragraph(page: Page) -> str:
    """The start of a page's first section: what the page itself says."""
    for heading, body in page.sections.items():
        if heading.lower() in ("timeline", "open questions") or not body.strip():
            continue
        return cut(body.replace("**", ""), BODY_CHARS)
    return ""


def _since(s: Subject, day: str) -> list[Change]:
    """The subject's values that changed after ``day`` (not what it itself replaced)."""
    return [c for c in s.changed_since if (c.date or "")[:10] > day and c.field != "supersedes"]


def _on_topic(subjects: list[Subject], question: str) -> list[Subject]:
    """The subjects saying at least half as many of the question's words as the best."""
    asked = topic_words(question)

    def said(s: Subject) -> int:
        values = " ".join(f"{k} {text_of(v)}" for k, v in s.current.items())
        return len(said_of(asked, f"{s.title} {values}"))

    scores = [said(s) for s in subjects]
    best = max(scores, default=0)
    kept = {i for i, n in enumerate(scores) if 2 * n > best or best == 0}
    # what a kept one replaced or was replaced by is part of its story
    ids = {subjects[i].id for i in kept}
    for i, s in enumerate(subjects):
        if ids & {*s.supersedes, *s.superseded_by}:
            kept.add(i)
    return [subjects[i] for i in sorted(kept, key=lambda i: (-scores[i], i))]
