"""A change held back for a person: the page keeps its value, an Open Question says what a
source proposes, and an ``unresolved`` conflicts row whose note starts ``review:`` holds
the proposed value (the memory server applies it when a person accepts it,
:mod:`memserver.store.held`). One format for every part of the agent that holds a change
(the model's proposals, :mod:`ingest_agent.llm.review`; an ambiguous end of a one-holder
role, :mod:`ingest_agent.pages.holders`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ingest_agent.pages.merge import Conflict
from memserver.kb.page import Page

REVIEW_PREFIX = "Review: "
NOTE_PREFIX = "review: "


def held(
    page: Page,
    page_id: str,
    folder: str,
    source: str,
    changes: Sequence[tuple[str, Any, Any, str]],
) -> tuple[Page, list[Conflict]]:
    """``page`` with an Open Question for each (field, value kept, value proposed, why)
    ``source`` proposes, and the review row of each."""
    questions = list(page.open_questions)
    rows: list[Conflict] = []
    for field, current, proposed, why in changes:
        question = f"{REVIEW_PREFIX}{source} proposes {why}; held back until a person checks it"
        if question not in questions:
            questions.append(question)
        rows.append(
            Conflict(
                page_id, folder, field, current, proposed, None, source, "unresolved",
                f"{NOTE_PREFIX}{source} proposes {why}",
            )
        )  # fmt: skip
    return dataclasses.replace(page, open_questions=tuple(questions)), rows


def review_reason(conflicts: Sequence[Conflict]) -> str | None:
    """The ``review`` reason of a write that holds changes back (None when it holds none)."""
    notes = [
        c.note.removeprefix(NOTE_PREFIX)
        for c in conflicts
        if c.note.startswith(NOTE_PREFIX.strip())
    ]
    return "; ".join(dict.fromkeys(notes)) or None
