"""Company questions answered with ``kb_brief``: what was decided, by whom, when and why,
what it replaced, what held on a day and whether the sources agree
(:attr:`read_agent.reading.Reading.company`), and the audit replay of a
past day ("what did we know on DAY, and what has changed since?",
:mod:`read_agent.extractive.replay`). :class:`CompanyAnswers` is the part of the
extractive answer (:class:`read_agent.extractive.answer.Extractive`) that asks the brief
and merges its lines with the answer's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from memserver.kb.schema import FolderSpec
from read_agent.extractive.brief_reply import (
    BRIEF_BUDGET,
    brief_lines,
    interleaved,
    ranked,
    said_of,
    topic_words,
)
from read_agent.extractive.line import CLOSEST, Line
from read_agent.extractive.page_reader import PageReader
from read_agent.extractive.question import Reading
from read_agent.extractive.replay import replaced_ids, replay, subject_then
from read_agent.extractive.reply import NO_SENTENCE, Reply
from read_agent.extractive.state_at import StateAt
from read_agent.reading import Kind
from read_agent.tools.wire import BRIEF_TOOL, Page, Subject

PAGES_READ = 8  # the best results read in full
REPLACEMENTS_READ = 4  # pages that replaced what held on a past day, read as they are now
_CHAIN_LINE = re.compile(r" — (?:supersedes|superseded by): ")  # a page's chain field


class CompanyAnswers:
    """The brief's part of an extractive answer (see the module docstring)."""

    def __init__(self, reader: PageReader, state: StateAt) -> None:
        self.reader = reader
        self.state = state

    async def briefed(
        self, reading: Reading, question: str, reply: Reply | None, claim: bool
    ) -> Reply | None:
        """The answer with ``kb_brief``'s lines first (the decision, its deciders, dates,
        reason and what it replaced; the open conflicts) and its direct evidence after
        the answer's own lines; the brief's first line leads when nothing else does."""
        arguments: dict[str, Any] = {"question": question, "budget": BRIEF_BUDGET}
        past = reading.as_of if past_day(reading.as_of) else None
        # what became of it since: a change or the current state asked too
        if past is not None and reading.since_then:
            replayed = await self._replayed(reading, question, past, reply)
            if replayed is not None:
                return replayed
        # what the memory knew then; a question asking the current state too ("what
        # holds now, and what held on 2026-08-01?") gets the history instead
        then = past if not reading.soft else None
        if then is not None and self.reader.tools.accepts(BRIEF_TOOL, "as_of"):
            arguments["as_of"] = then
        brief = await self.reader.brief(arguments)
        said, evidence, answers = brief_lines(
            brief,
            lambda s: self.state.about_other(reading, s.folder, s.current),
            reading.is_(Kind.AGREEMENT),
            self._folders(lambda f: bool(f.date_field)),
            self._folders(lambda f: f.type == "decision"),
            question,
        )
        day = self.reader.as_of or then
        if day is not None:  # nothing dated after the day asked about (nor undated)
            said = [x for x in said if _on_or_before(x, day)]
            evidence = [x for x in evidence if _on_or_before(x, day)]
        if not said and not evidence:
            return reply
        reply = reply or Reply(None, [])
        if claim:  # the evidence for a claim: direct quotes before the memory's reading
            # (a quote saying no word of the claim is not evidence for it)
            asked = topic_words(question)
            evidence = [x for x in evidence if said_of(asked, replace(x, cited=()).render())]
            return Reply(reply.lead, [*evidence, *reply.lines, *said], reply.window)

        # the brief's first line, then its other lines, the answer's lines and the
        # brief's quotes, those saying the most of the question (and its day) first, in
        # turn when they say as much: a telling line is not pushed past the answer's end
        own = {*reply.lines, *([reply.lead] if reply.lead else [])}

        def rank(lines: Sequence[Line]) -> list[Line]:
            return ranked(lines, question, [then] if then else [], disputed, own)

        disputed = reading.is_(Kind.AGREEMENT)
        lead = reply.lead
        if answers and lead is not None and lead.tag == CLOSEST:
            # the sentence closest to the question, none answering it whole: the brief's
            # answer leads, the closest sentence goes back among the answer's lines
            reply = Reply(None, [replace(lead, tag=""), *reply.lines], reply.window)
            lead = None
        mixed = interleaved(reply.lines, evidence)
        if answers and lead is not None and lead.from_note():
            # a raw note's sentence: the memory's record of it (the brief's) leads, the
            # note's sentence among the answer's lines
            reply, lead = Reply(None, [lead, *reply.lines], reply.window), None
            mixed = interleaved(reply.lines, evidence)
        if answers and (lead is None or reply.leads_with(NO_SENTENCE)):
            return Reply(said[0], rank([*said[1:], *mixed]))
        decided = reading.kinds & {Kind.DECISION, Kind.CHANGE} and not reply.firm
        # what was decided or what replaced it, and "who decided": the brief's decision
        # (its deciders) leads, the answer's own first line follows
        if answers and lead is not None and (decided or reading.wants == "who"):
            return Reply(said[0], rank([*said[1:], lead, *mixed]))
        return Reply(reply.lead, [*said[:1], *rank([*said[1:], *mixed])], reply.window)

    async def _replayed(
        self, reading: Reading, question: str, day: str, reply: Reply | None
    ) -> Reply | None:
        """ "What did we know on DAY, and what has changed since?": ``kb_brief`` as of the
        day, each subject then and what became of it (:mod:`read_agent.extractive.replay`),
        the pages that replaced one read as they are now; then the day's own quotes and
        the answer's lines, those saying the most of the question first."""
        if not self.reader.tools.accepts(BRIEF_TOOL, "as_of"):
            return None
        arguments = {"question": question, "budget": BRIEF_BUDGET, "as_of": day}
        brief = await self.reader.brief(arguments)
        named: list[Subject] = []  # the pages the question names, on the day
        for pid, page in list(self.reader.pages.items())[:PAGES_READ]:
            if pid not in {s.id for s in brief.subjects} and page.title in self.reader.asked:
                view = await self.reader.call("kb_get_page", {"id": pid, "as_of": day})
                then = subject_then(Page.parse(view)) if view is not None else None
                named += [then] if then is not None else []
        saved, self.reader.as_of = self.reader.as_of, None  # the replacements as they are now
        try:
            now = {
                pid: Page.parse(found)
                for pid in replaced_ids([*brief.subjects, *named], day)[:REPLACEMENTS_READ]
                if (found := await self.reader.call("kb_get_page", {"id": pid})) is not None
            }
        finally:
            self.reader.as_of = saved
        replayed = replay(brief, day, now, question, named)
        if replayed is None:
            return None
        _, evidence, _ = brief_lines(brief, question=question)
        evidence = [x for x in evidence if _on_or_before(x, day)]  # quoted then, not later
        reply = reply or Reply(None, [])
        lead = reply.lead if not reply.leads_with(NO_SENTENCE) else None
        own = [*([lead] if lead else []), *reply.lines]
        own = [x for x in own if not _CHAIN_LINE.search(x.text)]  # the replay says those
        rest = ranked(interleaved(own, evidence), question, [day])
        return Reply(Line(replayed.lead), [*replayed.lines, *rest])

    def _folders(self, which: Callable[[FolderSpec], bool]) -> frozenset[str]:
        return (
            frozenset(f.name for f in self.reader.schema.folders if which(f))
            if self.reader.schema
            else frozenset()
        )


def _on_or_before(line: Line, day: str) -> bool:
    return line.date is not None and line.date[:10] <= day


def past_day(as_of: str | None) -> bool:
    """An as-of reading that is a day (not "before the change")."""
    return bool(as_of) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(as_of)) is not None
