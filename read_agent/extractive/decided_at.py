"""Where a decision was taken: the page of another dated folder (a meeting) made the
same day from a note the decision came from too. "What was decided the last time we
met Globex?" is answered by the newest decision about Globex, said with the meeting it
was taken at, and that meeting's whole decided section."""

from __future__ import annotations

import datetime as dt

from read_agent.extractive.page_reader import PageReader
from read_agent.tools.wire import Page, listed_pages

SAME_DAY_READ = 50  # pages of the decision's day listed to find the meeting


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
        page = await reader.page(row.id)
        if page is not None and set(page.sources) & set(decision.sources):
            return page
    return None
