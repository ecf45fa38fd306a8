"""The page asked for by its kind: "which customer pays 900₮ per delivery?" is answered
by the sentence that says it, led by the page of that kind it is said of. That is the
sentence's own page when it is of the kind, else the one page of the kind its page links
to (a decision's company). A note's sentence has no fields: the pages read that were
made from the note name it ("which project is due on 2026-11-30?": the project's note),
else the first other sentence found that gives one of its amounts and is said of one
such page (the decision that set the 900₮)."""

from __future__ import annotations

from collections.abc import Sequence

from read_agent.extractive.evidence import Evidence
from read_agent.extractive.page_reader import PageReader
from read_agent.extractive.ranking import amounts_of
from read_agent.tools.raw_notes import SOURCE_PREFIX
from read_agent.tools.wire import Page


async def of_kind(
    reader: PageReader, folder: str, lead: Evidence, pieces: Sequence[Evidence]
) -> str | None:
    """The title of the one page of ``folder`` the lead is said of, or None."""
    amounts = amounts_of(lead.text)
    sharing = [p for p in pieces if p is not lead and amounts & amounts_of(p.text)]
    for piece in [lead, *sharing]:
        if piece.page.startswith(SOURCE_PREFIX):
            note = piece.page.removeprefix(SOURCE_PREFIX)
            made = {_named(reader, p, folder) for p in reader.pages.values() if note in p.sources}
            found = made - {None}
        else:
            page = await reader.page(piece.page)
            found = {_named(reader, page, folder)} - {None} if page is not None else set()
        if len(found) == 1:
            return found.pop()
    return None


def _named(reader: PageReader, page: Page, folder: str) -> str | None:
    """The page's title if it is of ``folder``, else that of the one page of ``folder``
    its fields link to."""
    if page.folder == folder:
        return page.title
    spec = reader.folder(page.folder)
    linked = [
        str(page.fields[f.name])
        for f in (spec.fields if spec is not None else ())
        if f.type == "link" and f.folder == folder and page.fields.get(f.name)
    ]
    return linked[0] if len(linked) == 1 else None
