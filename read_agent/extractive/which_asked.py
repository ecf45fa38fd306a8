"""The page asked for by its kind: "which customer pays 900₮ per delivery?" is answered
by the sentence that says it, led by the page of that kind it is said of. That is the
sentence's own page when it is of the kind, else the one page of the kind its page links
to (a decision's company); a note's sentence has no fields, so the first other sentence
found that gives one of its amounts and is said of one such page names it (the decision
that set the 900₮)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from read_agent.extractive.evidence import Evidence
from read_agent.extractive.page_reader import PageReader
from read_agent.extractive.ranking import AMOUNT


async def of_kind(
    reader: PageReader, folder: str, lead: Evidence, pieces: Sequence[Evidence]
) -> str | None:
    """The title of the one page of ``folder`` the lead is said of, or None."""
    amounts = _amounts(lead.text)
    sharing = [p for p in pieces if p is not lead and amounts & _amounts(p.text)]
    for piece in [lead, *sharing]:
        page = await reader.page(piece.page) if not piece.page.startswith("source/") else None
        if page is None:
            continue
        if page.folder == folder:
            return page.title
        spec = reader.folder(page.folder)
        linked = [
            str(page.fields[f.name])
            for f in (spec.fields if spec is not None else ())
            if f.type == "link" and f.folder == folder and page.fields.get(f.name)
        ]
        if len(linked) == 1:
            return linked[0]
    return None


def _amounts(text: str) -> set[str]:
    """The amounts a text gives, as their digits ("900₮" and "900 төгрөг" are one)."""
    return {re.sub(r"\D", "", m.group()) for m in AMOUNT.finditer(text)}
