"""The people holding a role a "who heads ..." question asks about, searched for among
the pages of people: "who heads technology at our company?" names no word of "Tom Becker
— role: CTO", and "who leads Globex?" none of "Dana Whitfield — role: CEO", so the
question's own search may not return them. Asked only of a question about the team's
own organisation or the head of a whole one (:class:`read_agent.reading.Reading`'s
``ours`` and ``whole``), with the role's words (:func:`read_agent.reading.roles.role_words`).
"""

from __future__ import annotations

from collections.abc import Sequence

from read_agent.extractive.page_reader import PageReader
from read_agent.reading import Reading, Wants
from read_agent.reading.lexicon import lexicon
from read_agent.reading.roles import role_words
from read_agent.tools.raw_notes import QUERY_TOOL
from read_agent.tools.wire import Found, Hit

ROLE_PAGES = 5  # people's pages read in full for a role asked


async def role_holders(
    reader: PageReader, reading: Reading, query_argument: str, seen: Sequence[Hit]
) -> list[Hit]:
    """The pages of people the role's words find, each read (a page the question's own
    search found may not have been): those not among ``seen``."""
    if reading.wants is not Wants.WHO or not (reading.ours or reading.whole):
        return []
    people = [f.name for f in reader.schema.folders if f.type == "person"] if reader.schema else []
    asked = role_words(reading, lexicon())
    if not people or not asked or not reader.tools.accepts(QUERY_TOOL, "folders"):
        return []
    arguments = {query_argument: " ".join(asked), "folders": people, "limit": ROLE_PAGES}
    found = await reader.call(QUERY_TOOL, arguments)
    hits = list(Found.parse(found).results)[:ROLE_PAGES]
    for hit in hits:
        await reader.page(hit.id)
    known = {r.id for r in seen}
    return [r for r in hits if r.id not in known]
