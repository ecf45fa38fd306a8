"""What held at a date: "what is our current pricing?" (today), "what was our pricing in
August 2026?", "as of 2026-08-01", "2026 оны 8-р сарын байдлаар" (that day) and "before
the change" / "өмнө нь" (the day before the newest change on the topic).

The newest event on or before the day titled by the question's words (a decision, the
pricing review) decides: its sentence that holds all the question's words leads, the
newest event after the day says what changed since::

    As of 2026-08-31: 2026-07-15 · Acme Track is priced per seat: $49 per user ... [decisions/...]
    - Changed later: 2026-10-07 · Usage-based pricing replaces per-seat pricing ... [meetings/...]

The day is passed as ``as_of`` to the tools whose input schema takes it (the server's
view of that day); whatever the server does with it, nothing dated after the day is
quoted as what held then (:meth:`read_agent.extractive.ranking.Ranker.held`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from memserver.kb.lifecycle import DRAFT_VALUES
from memserver.kb.words import normalize_name, words
from read_agent.extractive.evidence import Evidence, from_page
from read_agent.extractive.evidence import score as score_piece
from read_agent.extractive.line import Line
from read_agent.extractive.page_reader import PageReader
from read_agent.extractive.question import BEFORE_CHANGE, Reading, half_said
from read_agent.extractive.ranking import AMOUNT, EVIDENCE_LINES, Ranker
from read_agent.extractive.reply import Reply
from read_agent.reading.lexicon import decided_heading
from read_agent.tools.wire import Found, Hit, Page

EVENTS_READ = 10
CHANGED_LATER = "Changed later"  # the tag of the newest event after the day asked about


class StateAt:
    """Answers about the state on a day (see the module docstring), over the answer's
    pages (``reader``) and their ranking (``ranker``)."""

    def __init__(self, reader: PageReader, ranker: Ranker) -> None:
        self.reader = reader
        self.ranker = ranker

    async def current(self, reading: Reading) -> Reply | None:
        """ "What is our current pricing?": the newest event on or before now titled by the
        question's words (the pricing review) decides; its best sentence leads."""
        return await self._state(reading, self.reader.today(), None)

    async def state_on_day(self, reading: Reading) -> Reply | None:
        """The state on the day the question asks about (``reading.as_of``)."""
        day = reading.as_of
        if day is None:  # asked only with a day (read_agent.extractive.routes)
            return None
        changed = ""
        if day == BEFORE_CHANGE:  # the day before the newest event on the topic
            events = await self._events(reading, self.reader.today())
            newest = await self._deciding(reading, events, self.reader.today())
            if newest is None:
                return None
            changed = (newest.effective_date or "")[:10]
            try:
                day = (dt.date.fromisoformat(changed) - dt.timedelta(days=1)).isoformat()
            except ValueError:
                return None
            # the change's decision names the one it replaced: that one held before it
            replaced = newest.fields.get("supersedes")
            before = await self.reader.page(str(replaced)) if replaced else None
        self.reader.as_of = min(day, self.reader.today())
        head = f"Before {changed}" if changed else f"As of {self.reader.as_of}"
        return await self._state(reading, self.reader.as_of, head, before if changed else None)

    async def _state(
        self,
        reading: Reading,
        day: str,
        head: str | None,
        page: Page | None = None,
    ) -> Reply | None:
        if not reading.terms or self.reader.schema is None:
            return None
        if page is None:
            page = await self._deciding(reading, await self._events(reading, day), day)
        if page is None:
            return None
        own = [p for p in from_page(page, 0, True) if p.kind == "section"]
        # the sentences holding every word asked, else what the page titled by the topic
        # decided ("our pricing model": the decision, which does not say "model"), if it
        # is not about a company the question does not name
        full = [p for p in own if score_piece(p, reading)[1] >= 0.999]
        if not full and not self.about_other(reading, page.folder, page.fields):
            full = [p for p in own if p.heading and decided_heading(p.heading)]
        if not full:
            return None
        # What the event decided, and a figure, before its context ("no public price list")
        full.sort(key=lambda p: (not decided_heading(p.heading), AMOUNT.search(p.text) is None))
        rest = [p.line() for p in own if p in full[1:]] + [
            p.line() for p in self.ranker.best(reading) if p not in full
        ]
        if head is None:
            return Reply(full[0].line(), rest[:EVIDENCE_LINES])
        later = await self._changed_after(reading, day)
        return Reply(full[0].line(tag=head), later + rest[: EVIDENCE_LINES - len(later)])

    async def _events(self, reading: Reading, day: str) -> list[Hit]:
        """The dated pages (events) on or before ``day`` whose titles say the question's
        topic (:func:`_titled`)."""
        assert self.reader.schema is not None
        about = " ".join(reading.topic or reading.terms)
        moment = dt.datetime.combine(dt.date.fromisoformat(day), dt.time(23, 59))
        if self.reader.now is not None and self.reader.now.tzinfo is not None:
            moment = moment.replace(tzinfo=self.reader.now.tzinfo)
        events: list[Hit] = []
        for spec in self.reader.schema.folders:
            if not spec.date_field:
                continue
            arguments = {"folder": spec.name, "about": about, "limit": EVENTS_READ}
            if self.reader.tools.accepts("kb_latest", "now"):
                arguments["now"] = moment.isoformat()
            found = Found.parse(await self.reader.call("kb_latest", arguments))
            for item in found.results:
                if (item.date or "")[:10] > day:
                    continue
                if "date_ordered" in item.labels and _titled(reading, item.title):
                    events.append(item)
        return events

    async def _changed_after(self, reading: Reading, day: str) -> list[Line]:
        """The newest event on the topic after ``day``, as one line: what changed since."""
        saved, self.reader.as_of = self.reader.as_of, None
        try:
            events = [
                e
                for e in await self._events(reading, self.reader.today())
                if (e.date or "")[:10] > day
            ]
            page = await self._deciding(reading, events, self.reader.today())
        finally:
            self.reader.as_of = saved
        if page is None:
            return []
        own: list[Evidence] = [p for p in from_page(page, 0, True) if p.kind == "section"]
        best = max(own, key=lambda p: score_piece(p, reading)[0], default=None)
        if best is None or score_piece(best, reading)[1] <= 0:
            return []
        return [best.line(tag=CHANGED_LATER)]

    async def _deciding(self, reading: Reading, events: list[Hit], day: str) -> Page | None:
        """The page of the newest event that says the state on ``day``: not one about a
        company the question does not name ("what is our pricing?" is company-wide, a
        customer's own price is not it), not a decision still proposed (waiting for a
        person), and not a decision a newer one on or before the day replaced. None of
        them so: the newest event."""
        decision = (
            {f.name for f in self.reader.schema.folders if f.type == "decision"}
            if self.reader.schema
            else set()
        )
        # the same day, the decision's own record before the meeting that took it
        ordered = sorted(
            events,
            key=lambda e: (e.date or "", e.folder in decision),
            reverse=True,
        )
        for item in ordered:
            page = await self.reader.page(item.id)
            if (
                page is None
                or self.about_other(reading, page.folder, page.fields)
                or _proposed(page)
            ):
                continue
            if not await self._replaced_by(page, day):
                return page
        return await self.reader.page(ordered[0].id) if ordered else None

    def about_other(self, reading: Reading, folder: str, fields: Mapping[str, Any]) -> bool:
        """A page of ``folder`` whose ``fields`` link to a company (a link field into a
        folder of companies) that the question does not name."""
        spec = self.reader.folder(folder)
        if spec is None or self.reader.schema is None:
            return False
        companies = {f.name for f in self.reader.schema.folders if f.type == "company"}
        asked = set(words(reading.question))
        named = {normalize_name(n) for n in self.reader.asked}
        for f in spec.fields:
            if not f.is_link or f.folder not in companies:
                continue
            value = fields.get(f.name)
            for v in value if isinstance(value, list) else [value]:
                if not v:
                    continue
                if normalize_name(str(v)) not in named and not set(words(str(v))) <= asked:
                    return True
        return False

    async def _replaced_by(self, page: Page, day: str) -> bool:
        """A decision reversed or superseded by a newer one dated on or before ``day``."""
        newer = page.fields.get("superseded_by")
        if not newer:
            return False
        later = await self.reader.page(str(newer))
        when = (later.effective_date if later is not None else None) or ""
        # not found (the server's view of an earlier day): it was not known then
        return later is not None and (not when or when[:10] <= day)


def _titled(reading: Reading, title: str) -> bool:
    """A title that says at least half the question's topic, one word at least."""
    topic = reading.topic or reading.terms
    return bool(topic) and half_said(topic, title)


def _proposed(page: Page) -> bool:
    """A decision nobody accepted yet (its status the draft value): not what was decided."""
    return page.fields.get("status") in DRAFT_VALUES
