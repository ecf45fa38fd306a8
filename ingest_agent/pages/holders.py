"""One-holder roles: a note that names someone the one holder of a role ("Marcus Hale is
Globex's new COO", :class:`~ingest_agent.records.RoleClaim`) ends the earlier holder's
claim to it.

The earlier holders are the people the organisation's page is linked from by the field
that names it (``works_at``: ``kb_neighbors``, inward) whose job title is that role. For
each, when the note is newer than every source of their page, their claim ends: the field
is emptied, a dated timeline entry says who holds it now, and the old value is recorded as
``superseded`` by the note; nothing else of their page changes. Anything less clear waits
for a person (:mod:`ingest_agent.pages.held`): a job title that holds the role among other
words ("COO and co-founder"), a page with a source as new as the note, or a role the note
names no organisation for (who held it cannot be known then: nothing is changed, and the
ledger says so).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence

from ingest_agent.memory import Memory, is_version_conflict
from ingest_agent.names import norm
from ingest_agent.pages.held import held, review_reason
from ingest_agent.pages.merge import Conflict, add_entries
from ingest_agent.records import RoleClaim, StoredView
from memserver.errors import ToolCallError
from memserver.kb.field_change import ended_text
from memserver.kb.page import Page, TimelineEntry
from memserver.kb.schema import Schema

log = logging.getLogger(__name__)

WRITE_ATTEMPTS = 3  # a page changed meanwhile: read it again, this many times at most
CLOSE, REVIEW = "close", "review"


class Holders:
    """Ends earlier holders' claims to the roles a note names a new one holder of."""

    def __init__(self, memory: Memory, schema: Schema) -> None:
        self.memory = memory
        self.schema = schema

    async def record(
        self, claims: Sequence[RoleClaim], written: Mapping[tuple[str, str], str]
    ) -> tuple[list[str], list[str]]:
        """For each claim, the earlier holders' claims ended or held for review.
        ``written``: (folder, norm(name)) -> the page id the note's pages resolved to.
        Returns (the pages changed, what was done, one line each for the ledger)."""
        changed: list[str] = []
        said: list[str] = []
        for claim in claims:
            holder = written.get((claim.folder, norm(claim.holder)))
            if not claim.org or claim.link is None:
                said.append(
                    f"{claim.holder} is the one {claim.value}, but the note names no "
                    "organisation: no earlier holder's claim was ended"
                )
                continue
            for earlier in await self._holders(claim, holder):
                verdict = _verdict(claim, earlier, await self._newest(earlier, claim))
                if verdict is None:
                    continue
                if await self._write(claim, earlier, verdict):
                    changed.append(earlier.id)
                    done = "ended" if verdict == CLOSE else "held for review"
                    said.append(
                        f"{earlier.page.title}'s {claim.field} “{earlier.page.fields.get(claim.field)}”"
                        f" {done}: {claim.holder} is now {claim.org}'s {claim.value}"
                    )
        return changed, said

    async def _holders(self, claim: RoleClaim, holder: str | None) -> list[StoredView]:
        """The pages of people the organisation is linked from by the claim's field."""
        spec = self.schema.folder(claim.folder)
        link = spec.field(claim.link or "")
        if link is None or link.folder is None or "kb_neighbors" not in self.memory.tools:
            return []
        org = self.memory.local(claim.org, link.folder)
        if org is None:
            return []
        found = await self.memory.call(
            "kb_neighbors",
            {"id": org.id, "verbs": [link.verb or link.name], "direction": "in"},
        )
        ids = {
            str(e.get("from_id"))
            for e in found.get("edges") or ()
            if str(e.get("from_id", "")).startswith(f"{claim.folder}/")
        }
        out = []
        for page_id in sorted(ids - {holder or ""}):
            stored = await self.memory.get(page_id)
            same_org = stored is not None and norm(str(stored.page.fields.get(link.name))) == norm(
                claim.org
            )
            if stored is not None and same_org:
                out.append(stored)
        return out

    async def _newest(self, earlier: StoredView, claim: RoleClaim) -> bool:
        """Whether a source of the earlier holder's page is as new as the claim."""
        others = [s for s in earlier.page.sources if s != claim.source]
        dates = await self.memory.doc_dates(others)
        return any(d is not None and d >= claim.day for d in dates.values())

    async def _write(self, claim: RoleClaim, earlier: StoredView, verdict: str) -> bool:
        """End (or hold for review) the earlier holder's claim; whether it was written."""
        spec = self.schema.folder(claim.folder)
        stored: StoredView | None = earlier
        for _ in range(WRITE_ATTEMPTS):
            if stored is None:
                return False
            page, rows = _changed(stored, claim, verdict, spec.timeline)
            if page == stored.page:
                return False
            try:
                await self.memory.put(
                    claim.folder, page, stored.id, stored.version,
                    [r.record() for r in rows], review=review_reason(rows),
                )  # fmt: skip
                return True
            except ToolCallError as exc:
                if not is_version_conflict(exc):
                    raise
                stored = await self.memory.get(earlier.id)
        log.warning("%s kept changing: its %s was left as it is", earlier.id, claim.field)
        return False


def _verdict(claim: RoleClaim, earlier: StoredView, as_new: bool) -> str | None:
    """CLOSE, REVIEW or None (the page holds no such claim)."""
    value = earlier.page.fields.get(claim.field)
    if not isinstance(value, str) or not value.strip():
        return None
    if norm(value) == norm(claim.value):
        return REVIEW if as_new else CLOSE
    if norm(claim.value) in norm(value).split() or f" {norm(claim.value)} " in f" {norm(value)} ":
        return REVIEW  # "COO and co-founder": does the new COO end all of it?
    return None


def _changed(
    stored: StoredView, claim: RoleClaim, verdict: str, timeline: bool
) -> tuple[Page, list[Conflict]]:
    """The earlier holder's page with their claim ended (or held), and the rows to record."""
    page = stored.page
    old = page.fields.get(claim.field)
    why = f"{claim.holder} is now {claim.org}'s {claim.value} (one holder): “{claim.said}”"
    if verdict == REVIEW:
        proposal = f"that {page.title}'s {claim.field} “{old}” ends: {why}"
        return held(
            page, stored.id, claim.folder, claim.source, [(claim.field, old, None, proposal)]
        )
    fields = {k: v for k, v in page.fields.items() if k != claim.field}
    sources = tuple(dict.fromkeys((*page.sources, claim.source)))
    page = dataclasses.replace(page, fields=fields, sources=sources)
    if timeline:
        text = ended_text(claim.field, old, f"{claim.holder} is now {claim.org}'s {claim.value}")
        page = add_entries(page, [TimelineEntry(claim.day, text, claim.source)])
    row = Conflict(
        stored.id, claim.folder, claim.field, old, None, None, claim.source, "superseded",
        f"a newer source ({claim.day}) names another one holder: {why}",
    )  # fmt: skip
    return page, [row]
