"""Applying or dropping a proposal held back for review.

The ingest agent (``ingest_agent/llm/review.py``) and the server's write gate
(``memserver.kb.trust_gate``) keep a page's content, add the Open Question
``Review: <source> proposes <why>; held back until a person checks it`` and record the
proposed value in an ``unresolved`` conflicts row whose note is
``review: <source> proposes <why>`` (``field``: the field name, ``## <Section>`` for a
section, ``_timeline`` for dated lines, ``_aliases`` for names). Accepting sets that
field, replaces that section's text or adds the lines or names; both accepting and
rejecting take the Open Question off the page (unless another held row still needs it).
Only pure page arithmetic lives here; the callers write through the guarded put.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from memserver.errors import UserError
from memserver.kb.page import Page
from memserver.kb.page_model import TimelineEntry, add_timeline_entries
from memserver.store.reviews import HELD_NOTE, Conflict

NOTE_PREFIX = f"{HELD_NOTE} "
QUESTION_PREFIX = "Review: "  # the ingest agent's Open Question (ingest_agent/llm/review.py)
SECTION_PREFIX = "## "
# What the server's write gate holds besides fields and sections (memserver.kb.trust_gate).
TIMELINE_FIELD = "_timeline"
ALIASES_FIELD = "_aliases"


def is_held(conflict: Conflict) -> bool:
    """A change the ingest agent held back (resolved or not)."""
    return (conflict.note or "").startswith(NOTE_PREFIX.strip())


def question_of(conflict: Conflict) -> str:
    """The start of the Open Question the agent wrote for this row."""
    return QUESTION_PREFIX + (conflict.note or "").removeprefix(NOTE_PREFIX)


def require_open(conflict: Conflict) -> None:
    """UserError unless this is a held change nobody has decided yet."""
    if not is_held(conflict):
        raise UserError(
            f"conflict {conflict.id} is not a change the ingest agent held back",
            "mark it resolved with a note instead",
        )
    if conflict.status != "unresolved":
        raise UserError(
            f"the held change {conflict.id} to {conflict.page_id} ({conflict.field}) was "
            f"already decided: {conflict.note}; nothing was written",
            "reload the review list",
        )


def applied(page: Page, conflict: Conflict, shared: Collection[str] = ()) -> Page:
    """``page`` with the held proposal applied and its Open Question gone."""
    field = conflict.field
    if field.startswith(SECTION_PREFIX):
        name = field.removeprefix(SECTION_PREFIX)
        sections = dict(page.sections)
        if conflict.new_value is None:
            sections.pop(name, None)
        else:
            sections[name] = str(conflict.new_value)
        page = dataclasses.replace(page, sections=sections)
    elif field == TIMELINE_FIELD:  # dated lines the server's write gate held
        entries = [_entry(e) for e in conflict.new_value or ()]
        page = add_timeline_entries(page, [e for e in entries if e is not None])
    elif field == ALIASES_FIELD:
        added = [str(a) for a in conflict.new_value or ()]
        page = dataclasses.replace(page, aliases=(*page.aliases, *added))
    elif field.startswith("_"):
        raise UserError(
            f"the held change {conflict.id} proposes a whole page ({field}), not one value",
            "edit the page to take what you want from it, then reject this row",
        )
    else:
        fields = dict(page.fields)
        if conflict.new_value is None:
            fields.pop(field, None)
        else:
            fields[field] = conflict.new_value
        page = dataclasses.replace(page, fields=fields)
    return without_question(page, conflict, shared)


def without_question(page: Page, conflict: Conflict, shared: Collection[str] = ()) -> Page:
    """``page`` without the row's Open Question; ``shared``: the notes of the page's other
    open held rows (several rows can share one question: it stays while one is open)."""
    if conflict.note in shared:
        return page
    start = question_of(conflict)
    questions = tuple(q for q in page.open_questions if not q.startswith(start))
    return dataclasses.replace(page, open_questions=questions)


def _entry(value: object) -> TimelineEntry | None:
    """A held timeline line ({date, text, source}) back as an entry (None: not one)."""
    if not isinstance(value, dict):
        return None
    try:
        return TimelineEntry(value["date"], str(value.get("text") or ""), value.get("source"))
    except (KeyError, UserError):
        return None
