"""Accepting a held change applies it: a field, a section, and (held by the server's
write gate) dated timeline lines and names."""

from __future__ import annotations

import datetime as dt

from memserver.kb.page import Page, TimelineEntry
from memserver.store.held import applied
from memserver.store.reviews import Conflict

NOTE = "slack/random/2026-11-01.md"
WHY = f"{NOTE} proposes 1 timeline line(s) (source/slack/random is untrusted)"


def held(field: str, proposed: object) -> Conflict:
    return Conflict(
        id=1,
        page_id="people/bob",
        folder="people",
        field=field,
        old_value=None,
        new_value=proposed,
        old_source=None,
        new_source=NOTE,
        status="unresolved",
        created_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
        title="Bob",
        note=f"review: {WHY}",
    )


def test_accepting_held_timeline_lines_and_names_adds_them_and_takes_the_question_off() -> None:
    page = Page(
        title="Bob",
        type="person",
        aliases=("Bobby",),
        timeline=(TimelineEntry(dt.date(2026, 6, 18), "Met at the intro call."),),
        open_questions=(f"Review: {WHY}; held back until a person checks it",),
    )
    line = {"date": "2026-11-01", "text": "Visited the depot.", "source": NOTE}
    after = applied(page, held("_timeline", [line, "not a line"]))
    assert TimelineEntry(dt.date(2026, 11, 1), "Visited the depot.", NOTE) in after.timeline
    assert len(after.timeline) == 2 and after.open_questions == ()
    named = applied(page, held("_aliases", ["Roberto"]))
    assert named.aliases == ("Bobby", "Roberto")
