"""Where a decision was taken: the page of another dated folder (a meeting) made the
same day from a note the decision came from too. "What was decided the last time we
met Globex?" is answered by the newest decision about Globex, said with the meeting it
was taken at, and that meeting's whole decided section.

A day can be set by a decision too: "when did the Nomin Trade pilot start?" is answered
by the sentence saying it started on 2026-10-12, and the decision about Nomin Trade
taken before that day which names it (the pilot agreed to run from 2026-10-12) holds
the terms it started on; :func:`set_by` gives the decided section where it was taken."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence

from read_agent.extractive.evidence import days_said, from_page
from read_agent.extractive.line import Line
from read_agent.extractive.page_reader import PageReader
from read_agent.reading.lexicon import decided_heading
from read_agent.tools.wire import Page, edges, listed_pages

SAME_DAY_READ = 50  # pages of the decision's day listed to find the meeting
SECTION_LINES = 8  # the decided items shown
DECISIONS_READ = 6  # decisions about a subject read to find the one that set a day


async def decided_at(reader: PageReader, decision: Page) -> Page | None:
    """The page (not a decision) dated on the decision's day that shares a source note
    with it, or None."""
    day = (decision.effective_date or "")[:10]
    listing = "kb_list_pages" in reader.tools.tools and reader.tools.accepts(
        "kb_list_pages", "start"
    )
    if not day or not decision.sources or not listing:
        return None
    try:
        after = (dt.date.fromisoformat(day) + dt.timedelta(days=1)).isoformat()
    except ValueError:
        return None
    found = await reader.call("kb_list_pages", {"start": day, "end": after, "limit": SAME_DAY_READ})
    for row in listed_pages(found):
        spec = reader.folder(row.id.split("/", 1)[0])
        if row.id == decision.id or spec is None or spec.type == decision.type:
            continue
        if not spec.date_field:  # a person's page changed that day is no event
            continue
        page = await reader.page(row.id)
        if page is not None and set(page.sources) & set(decision.sources):
            return page
    return None


def decided_lines(page: Page) -> list[Line]:
    """The items of a page's decided section ("Decisions", "Шийдвэр"), in its order."""
    return [
        p.line()
        for p in from_page(page, 0, True)
        if p.kind == "section" and p.heading and decided_heading(p.heading)
    ][:SECTION_LINES]


async def set_by(reader: PageReader, subjects: Sequence[str], days: Collection[str]) -> list[Line]:
    """The decided section of the meeting where a decision about one of ``subjects``,
    taken before one of ``days``, named that day (the decision's own sentences when no
    meeting shares its note); [] when no decision linking to a subject does."""
    days = [d for d in days if d]
    if not days:
        return []
    decisions: list[str] = []
    for subject in subjects:  # the decisions about it link to it; those titled with
        found = await reader.call("kb_neighbors", {"id": subject, "direction": "in"})
        linked = [  # the day first
            e
            for e in edges(found)
            if (spec := reader.folder(e.from_id.split("/", 1)[0])) and spec.type == "decision"
        ]
        linked.sort(key=lambda e: not any(day in e.from_title for day in days))
        decisions += [e.from_id for e in linked]
    for page_id in list(dict.fromkeys(decisions))[:DECISIONS_READ]:
        page = await reader.page(page_id)
        taken = ((page.effective_date if page else None) or "")[:10]
        if page is None or not taken:
            continue
        named = days_said(f"{page.title} {page.markdown}")
        if not any(day > taken and day in named for day in days):
            continue
        event = await decided_at(reader, page)
        lines = decided_lines(event) if event is not None else []
        return lines or [p.line() for p in from_page(page, 0, True) if p.kind == "section"][:3]
    return []
