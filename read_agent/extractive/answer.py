"""The answer without a language model: evidence sentences from the pages, each with one
date and its citation, and a short direct first line when the pages clearly answer.

::

    Bob Martinez — reports to: Dana Whitfield (since 2026-09-21; before: Karen Lee) [people/bob-martinez]
    Extractive answer (no language model): the sentences below are quoted from the pages.
    - 2026-09-21 · Bob has been promoted to VP of Operations at Globex, effective 2026-09-21. [people/bob-martinez]

What leads, in order of what the question asks (read by ``kb_query``, see
:mod:`read_agent.extractive.question`):

1. **a window and nothing else** ("what happened last week", "meetings in September"):
   the folder's pages in the window (``kb_list_pages``), or every dated event in it
   (``kb_timeline``); a folder with nothing in the window is looked for as a section of
   the pages that are ("decisions since ..." -> the meetings' Decisions). A window with
   other words no sentence holds is listed the same way (those words say no topic);
2. **latest / first / next**: the page ``kb_query`` ordered first, its date and links,
   then its sentences that match the question ("what was decided"), and for the first
   one what later pages say about it;
3. **a field of a page the question names** ("who does Bob report to", "Globex became
   a customer"): the page's value, since when and what it replaced; "who reports to X"
   lists the pages whose field is X;
4. **anything else**: the sentences that hold the most of the question's words; the
   best one leads when it holds them all, two sources giving different figures lead as
   a disagreement, and when none holds the question's words the answer says so.

Every citation is a page a tool returned in this answer. Degraded reasons the tools
reported (``ingest_in_progress``, ``embedding_pending`` ...) end the answer in words.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from memserver.kb.lifecycle import DRAFT_VALUES, REVERSAL_VALUES, lifecycle_field
from memserver.kb.schema import FolderSpec
from memserver.kb.words import STOPWORDS, normalize_name, words
from read_agent.extractive.company_answer import PAGES_READ, CompanyAnswers, past_day
from read_agent.extractive.decided_at import decided_at, decided_lines, set_by
from read_agent.extractive.evidence import (
    Evidence,
    changes,
    days_said,
    from_page,
    label,
    show,
)
from read_agent.extractive.evidence import score as score_piece
from read_agent.extractive.field_support import belongs, stating
from read_agent.extractive.line import CLOSEST, LATER, Line, Part
from read_agent.extractive.listing import listing, valued, window_dates
from read_agent.extractive.other_script import in_other_script
from read_agent.extractive.page_reader import PageReader
from read_agent.extractive.question import Reading, half_said, matched, read
from read_agent.extractive.ranking import (
    AMOUNT,
    COUNT,
    DEFAULT_RESULTS,
    EVIDENCE_LINES,
    WHOLE,
    Ranker,
    amounts_of,
    counts,
    names_things,
    newest_first,
)
from read_agent.extractive.reply import (
    NO_ANSWER,
    NO_SENTENCE,
    Digest,
    Reply,
    bare,
    ingesting,
    not_found,
    not_yet,
    notes_for,
    since,
)
from read_agent.extractive.role_holders import role_holders
from read_agent.extractive.routes import (
    Asked,
    Route,
    a_named_page,
    a_past_day,
    a_value,
    a_window,
    an_order,
    the_current_state,
    who_or_what,
)
from read_agent.extractive.short_names import with_full_names
from read_agent.extractive.source_evidence import is_source
from read_agent.extractive.state_at import StateAt
from read_agent.extractive.which_asked import of_kind
from read_agent.reading import (
    Context,
    Kind,
    Subject,
    Wants,
    name_candidates,
    name_spans,
    section_of,
)
from read_agent.reading import read as read_question
from read_agent.reading.fields import fits
from read_agent.reading.lexicon import decided_heading, lexicon, says, tokens
from read_agent.tools.citations import CitedPage, normalize_id
from read_agent.tools.raw_notes import QUERY_TOOL
from read_agent.tools.wire import Found, Hit, Page, Resolved, edges

DISPUTED = "The sources disagree: "
RESOLVED_NAMES = 4  # the question's names asked of the entity index at most
MEANT_RESULTS = 3  # times the usual results asked of the folder a question's words mean
SURE_NAMES = frozenset({"exact_slug", "exact_title", "alias_hit", "transliteration"})
FUZZY_NAME = 0.7  # a fuzzy title match this close is the page the name means
NEAR_COMPARED = 8  # closest sentences the embedder compares with the question
SAME_PERIOD_DAYS = 7  # figures this far apart or nearer are of one period
REPLACED = REVERSAL_VALUES  # a decision's status once replaced
# A decision nobody accepted yet (one a note below trusted proposed waits for a person,
# memserver.kb.trust_gate) does not hold either.
NOT_HOLDING = REPLACED | frozenset(DRAFT_VALUES)
LEAD_READS = 3  # candidates for the lead whose page is read to see whether it holds
HELD_QUESTION = "Review: "  # a change held for a person, not two sources disagreeing
SECTION_LINES = 8  # a section the question names, read out whole up to this
LEAD_CHARS = 200  # of a section's first item on the first line
LATER_READ = 6  # pages dated after a first page read for what they say about it
ORDERED_READ = 30  # pages an order word may pick read to see whom they are about
_ORDER_WORDS = {"newest": "Latest", "oldest": "First", "next": "Next"}


class Extractive:
    """One extractive answer over the read tools (see the module docstring), made of
    parts: the pages read (``reader``), their pieces ranked (``ranker``), the state on a
    day (``state``) and the brief's answers (``company``); :attr:`routes` is the table
    from what the question asks to the part that answers it."""

    def __init__(self, reader: PageReader, limit: int = DEFAULT_RESULTS) -> None:
        self.reader = reader
        self.ranker = Ranker(reader, limit)
        self.state = StateAt(reader, self.ranker)
        self.company = CompanyAnswers(reader, self.state)
        self.routes = (
            Route(
                "a field's value", a_value, lambda a: valued(reader, a.reading), needs_results=False
            ),
            Route("a window", a_window, lambda a: listing(reader, a.reading), needs_results=False),
            Route("the state on a day", a_past_day, lambda a: self.state.state_on_day(a.reading)),
            Route("latest, first or next", an_order, lambda a: self._ordered(a.reading, a.results)),
            Route("the current state", the_current_state, lambda a: self.state.current(a.reading)),
            Route("a field of a named page", a_named_page, self._named_field),
            Route("a section of a named page", a_named_page, self._named_section),
            Route("who or what a named page is", who_or_what, self._named_profile),
        )

    # -- the answer

    async def answer(self, question: str, query_argument: str) -> tuple[Digest, list[CitedPage]]:
        asked = read_question(question, Context())  # its kinds, and "what supports X?"'s X
        if asked.claim is not None:
            question = asked.claim
        result = await self._query(question, query_argument)
        if result is None:
            return bare(f"{NO_ANSWER.split(' (')[0]} (the search failed)."), []
        results = list(result.results)
        verb = self._holder_missing(result, results)
        if verb:  # the attendees found, not the meeting: the meeting asked for by its name
            subject = re.sub(rf"(?i)\b{re.escape(verb)}\b", " ", question)
            wider = await self._query(" ".join(subject.split()), query_argument)
            more = wider.results if wider is not None else ()
            results += [r for r in more if _named(r) and r.id not in {x.id for x in results}]
        named = [r for r in results if _named(r) or _title_said(question, r)]
        unclear: list[str] = []  # the folders of a name the index could not tell apart
        named += await self._resolved(question, named, unclear)
        for item in [*named, *results][: PAGES_READ + len(named)]:
            pid = normalize_id(item.id)
            if pid and not pid.startswith("source/") and len(self.reader.pages) < PAGES_READ + 2:
                await self.reader.page(pid)
        names = [n for r in named for n in self.reader.names(r.id)]
        self.reader.asked = names
        subjects = [Subject(r.id, r.title, r.folder) for r in named]
        reading = read(
            question,
            {"time": result.time, "intent": result.intent},
            subjects,
            {s.id: self.reader.names(s.id) for s in subjects},
            self.reader.schema,
            self.reader.earlier,
            self.reader.embed,
            unclear,
        )
        reading = replace(reading, kinds=reading.kinds | asked.kinds)
        results += await role_holders(self.reader, reading, query_argument, results)
        noted = any(is_source(r) for r in results)
        if reading.focus and not noted and not self.ranker.name_focus(reading, results):
            results += await self._notes_too(question, query_argument, results)
            noted = True
        if not noted and not self.ranker.holds_all(reading, results):
            results += await self._notes_too(question, query_argument, results)
        reply = await self._composed(reading, results, named, names, asked.claim is not None)
        if reply is not None and reading.wants is Wants.AMOUNT:
            reply = self._disputed_figure(reading, reply)
        # decided, by whom, why, as of, disagree (not "the first decision": an order)
        ordered = reading.order is not None and not reading.is_(Kind.LEARNED)
        if (reading.company or past_day(reading.as_of)) and not ordered:
            reply = await self.company.briefed(reading, question, reply, asked.claim is not None)
        if reply is None:
            progress = ingesting(result)
            return bare(NO_ANSWER if progress is None else not_yet(progress)), []
        if reply.lead is not None and reply.lead.label is not None and reading.wants == Wants.WHO:
            # "who ...?" quoted with a first name: whose it is
            known = frozenset(s.id for s in reading.subjects)
            reply = replace(reply, lead=await with_full_names(self.reader, reply.lead, known))
        digest = reply.digest(self._notes(result))
        return digest, self._cited(digest.text(), results)

    def _disputed_figure(self, reading: Reading, reply: Reply) -> Reply:
        """A figure asked for whose lead gives a value a subject's page records as
        disputed (its sources disagree on that field): the disagreement leads, the
        sentence after it ("how much revenue does the Initech account bring in?" quotes
        $120,000, which Priya's $96,000 contradicts)."""
        if reply.lead is None or reply.leads_with(DISPUTED):
            return reply
        given = amounts_of(reply.lead.text)
        for subject in reading.subjects:
            page = self.reader.pages.get(subject.id)
            spec = self.reader.folder(subject.folder)
            if page is None or spec is None:
                continue
            for f in spec.fields:
                conflict = _open_question(page, f.name)
                if conflict is not None and given & _numbers(conflict):
                    lead = Line(f"{DISPUTED}{page.title} — {label(f.name)}: {conflict}")
                    return Reply(lead, [replace(reply.lead, tag=""), *reply.lines], reply.window)
        return reply

    async def _composed(
        self, reading: Reading, results: list[Hit], named: list[Hit], names: list[str], claim: bool
    ) -> Reply | None:
        """The answer from ``results``, before the brief's lines."""
        if claim:
            return self._support(reading, results, named)
        reply = await self._relation_of_named(reading, results, names)
        return reply or await self._reply(reading, results, named)

    def _support(self, reading: Reading, results: list[Hit], named: list[Hit]) -> Reply | None:
        """ "What supports X?": the sentences that hold most of X's words, those a note
        states (direct) before those the memory inferred, each labelled."""
        best = self.ranker.best(reading, results=results, named=named)
        best.sort(key=lambda p: not p.direct)
        if not best:
            return None
        direct = sum(p.direct for p in best)
        lead = (
            f"Evidence for “{reading.question}”: {direct} stated by notes (direct), "
            f"{len(best) - direct} inferred by the memory."
        )
        return Reply(Line(lead), [p.line() for p in best])

    async def _query(
        self, question: str, query_argument: str, limit: int | None = None
    ) -> Found | None:
        """``kb_query``'s answer, read once (None when the call failed)."""
        arguments: dict[str, Any] = {query_argument: question}
        if self.reader.tools.accepts("kb_query", "limit"):
            arguments["limit"] = limit or self.ranker.limit
        found = await self.reader.call("kb_query", arguments)
        return Found.parse(found) if found is not None else None

    async def _notes_too(self, question: str, query_argument: str, results: list[Hit]) -> list[Hit]:
        """The raw notes the search finds for the question, when the pages found name
        none of the kind of thing it asks for ("what monthly minimum did we agree with
        Globex?": the pages hold the agreement, a note the minimum) or no sentence of
        them holds every word asked: a detail the ingest agent left out is only in
        ``source/`` (:mod:`read_agent.tools.raw_notes`)."""
        if not self.reader.tools.accepts(QUERY_TOOL, "include_sources"):
            return []
        arguments: dict[str, Any] = {query_argument: question, "include_sources": True}
        if self.reader.tools.accepts(QUERY_TOOL, "limit"):
            arguments["limit"] = self.ranker.limit
        found = await self.reader.call(QUERY_TOOL, arguments)
        seen = {r.id for r in results}
        more = Found.parse(found).results if found is not None else ()
        return [r for r in more if is_source(r) and r.id not in seen]

    def _holder_missing(self, result: Found, results: Sequence[Hit]) -> str | None:
        """The relation's verb, when a relation asked ("who attended the pricing
        review?") led to its pages (the attendees) but not to the page the question names
        that holds it (the server returns only the relation's ends)."""
        verb = result.intent.get("relation")
        if not verb or self.reader.schema is None:
            return None
        holders = {
            spec.name for spec in self.reader.schema.folders for f in spec.fields if f.verb == verb
        }
        followed = any(f"graph:{verb}" in r.labels for r in results)
        if not followed or any(_named(r) and r.folder in holders for r in results):
            return None
        return str(verb)

    async def _reply(
        self,
        reading: Reading,
        results: list[Hit],
        named: list[Hit],
    ) -> Reply | None:
        """The first route (:data:`ROUTES`) the reading asks for that finds an answer;
        else the sentences that hold the most of the question's words."""
        pages = [p for item in named if (p := self.reader.pages.get(item.id)) is not None]
        # A named page of the folder the question is about comes first: "the Initech
        # renewal call" names the company too, but asks about the meeting.
        pages.sort(key=lambda page: page.folder not in reading.folders)
        asked = Asked(reading, results, named, pages)
        for route in self.routes:
            if (results or not route.needs_results) and route.applies(reading, pages):
                found = await route.handler(asked)
                if found is not None:
                    return found
        quoted = await self._evidence_answer(reading, results, named) if results else None
        if reading.window is not None and _none_within(quoted, reading.window):
            # A window whose other words no sentence in it holds ("which meeting did we
            # hold on 2026-10-07?"): those words say no topic, the window is what is asked.
            listed = await listing(self.reader, replace(reading, terms=(), identifiers=()))
            if listed is not None and listed.lines:
                return listed
        return quoted

    async def _named_field(self, asked: Asked) -> Reply | None:
        """The named page that has the field asked about: its value. A date field a
        "when" alone picked (a company's one date field), or the embedder picked among
        several, is a guess: a sentence holding every word asked answers instead ("when
        was Initech's quarterly check-in?": not its renewal date; "what's the target date
        ...?": the sentence saying the new target, not a start date)."""
        reading = asked.reading
        guessed = reading.field is not None and reading.field.by in ("type", "embedder")
        if guessed and reading.wants is Wants.WHEN and self._said_whole(asked):
            return None
        for page in asked.pages:
            found = await self._field_answer(asked.reading, page)
            if found is not None and found.leads_with(DISPUTED):
                # the sources' own figures say the disagreement best, when they give them
                quoted = await self._evidence_answer(asked.reading, asked.results, asked.named)
                return quoted if quoted.leads_with(DISPUTED) else found
            if found is not None:
                return found
        return None

    def _said_whole(self, asked: Asked) -> bool:
        """A sentence of the results holds every word the question asks."""
        best = self.ranker.best(asked.reading, results=asked.results, named=asked.named)
        return any(score_piece(p, asked.reading)[1] >= WHOLE for p in best[:EVIDENCE_LINES])

    async def _named_section(self, asked: Asked) -> Reply | None:
        """ "What came out of the pricing review": its Decisions (a company question about
        a decision's own page is the brief's to answer: what was decided, what replaced
        it)."""
        reading = asked.reading
        for page in asked.pages:
            section = self._section_asked(reading, page)
            spec = self.reader.folder(page.folder)
            if section is not None and (not reading.company or (spec and spec.type != "decision")):
                return section
        return None

    async def _named_profile(self, asked: Asked) -> Reply | None:
        return self._profile(asked.pages[0])

    # -- 0. a relation of the page linked to a named one ("who attended the Initech
    # meeting in October?": the attendees of the best meeting that links to Initech)

    async def _relation_of_named(
        self,
        reading: Reading,
        results: list[Hit],
        names: Sequence[str],
    ) -> Reply | None:
        # the field of another folder than the subjects' the reading found ("was at" an
        # event's attendees), else the relation the search read
        subject_folders = {s.folder for s in reading.subjects}
        other = (
            reading.field if reading.field and reading.field.folder not in subject_folders else None
        )
        if (reading.relation is None and other is None) or reading.order is not None or not names:
            return None  # "the latest meeting with Initech" is an order over the meetings
        if reading.relation is not None:
            own = self._own_relation(reading, results)
            if own is not None:  # "who owns the Globex account": Globex's own account owner
                return own
        wanted = {normalize_name(n) for n in names}
        for item in results:
            page = self.reader.pages.get(item.id)
            spec = self.reader.folder(item.folder)
            if page is None or spec is None or spec.name not in (reading.folders or (spec.name,)):
                continue
            asked = next(
                (
                    f
                    for f in spec.fields
                    if (other is not None and other.folder == spec.name and f.name == other.name)
                    or (reading.relation is not None and f.verb == reading.relation)
                ),
                None,
            )
            if asked is None or not fits(asked, reading.wants, self.reader.schema):
                continue  # "when did work on X begin": the team cannot say when
            value = page.fields.get(asked.name)
            if {normalize_name(str(v)) for v in (value if isinstance(value, list) else [value])} & (
                wanted
            ):
                return None  # the named page is the relation's own value: not this question
            if {normalize_name(n) for n in self.reader.link_names(page)} & wanted:
                return await self._field_answer(reading, page, asked.name)
        return None

    def _own_relation(self, reading: Reading, results: Sequence[Hit]) -> Reply | None:
        """The subject decides the folder: when the page the question names has a field
        that says the relation with the question's other words ("owns" + "account" ->
        account_owner), that field answers, even empty, not another folder's ("owner" of
        a project about the company)."""
        assert reading.relation is not None
        relation = words(reading.relation.replace("_", " "))
        for item in results:
            page = self.reader.pages.get(item.id)
            spec = self.reader.folder(item.folder)
            if not _named(item) or page is None or spec is None:
                continue
            for f in spec.fields:
                name = words(f.name.replace("_", " "))
                rest = [w for w in name if not matched(relation, [w])]
                if not f.is_link or len(rest) == len(name) or not matched(reading.terms, rest):
                    continue
                value = page.fields.get(f.name)
                lead = f"{page.title} — {label(f.name)}: "
                lead += show(value) if value not in (None, "", []) else "not recorded"
                change = changes(page).get(f.name)
                lines = [p.line() for p in self.ranker.best(reading, exclude_field=f.name)]
                return Reply(Line(f"{lead}{since(change)}", cited=_id(page)), lines)
        return None

    # -- 1. a window: list what is in it

    # -- 2. latest / first / next

    def _date_field_named(self, reading: Reading) -> bool:
        """The question's own words name a date field of a subject's folder."""
        asked = reading.field
        if asked is None or asked.by != "words":
            return False
        spec = self.reader.folder(asked.folder)
        field = spec.field(asked.name) if spec is not None else None
        subjects = {s.folder for s in reading.subjects}
        return field is not None and field.type == "date" and asked.folder in subjects

    async def _ordered(self, reading: Reading, results: list[Hit]) -> Reply | None:
        results = await self._in_meant_folder(reading, results)
        lead = await self._own_first(reading, results)
        if lead is None:
            # "when does the Initech contract come up for renewal?": no page is dated
            # after today, but the date field its words name may say the day
            if reading.order == "next" and not self._date_field_named(reading):
                return Reply(
                    Line(f"Nothing is dated after {self.reader.today()} for this question.")
                )
            return None
        pid = lead.id
        page = await self.reader.page(pid) if not pid.startswith("source/") else None
        spec = self.reader.folder(lead.folder)
        kind = spec.type if spec is not None else lead.folder
        tag = f"{_ORDER_WORDS.get(reading.order or '', 'Latest')} {kind}"
        # a decision taken at a meeting: which one, and everything that meeting decided
        event = None
        if page is not None and spec is not None and spec.type == "decision":
            event = await decided_at(self.reader, page)
        title = f"{lead.title} — decided at: {event.title}" if event else lead.title
        first = title
        if page is not None:
            links = self.reader.links_said(page)
            first += f" — {links}" if links else ""
        lines: list[Line] = []
        if page is not None:
            skip = [spec.date_field] if spec is not None and spec.date_field else []
            own = from_page(page, 0, True, skip_fields=skip)
            body = [p for p in own if p.kind == "section"]
            # the section the question asks ("what was decided": its Decisions), whole
            headings = list(dict.fromkeys(p.heading for p in body if p.heading))
            asked = section_of(reading.question, headings)
            lines = [p.line() for p in body if asked and p.heading == asked]
            lines = lines[:SECTION_LINES]
            if reading.terms and not lines:
                ranked = sorted(
                    (p for p in body if score_piece(p, reading)[1] > 0),
                    key=lambda p: -score_piece(p, reading)[0],
                )
                lines = [p.line() for p in _in_order(body, ranked[:EVIDENCE_LINES])]
            if not lines:  # what it is: its opening, and what it decided
                decided = [p for p in body if p.heading and decided_heading(p.heading)]
                shown = [*body[:2], *(p for p in decided[:SECTION_LINES] if p not in body[:2])]
                lines = [p.line() for p in shown]
            if asked and lines and reading.wants != Wants.WHEN:
                # what it decided is asked, not when: its first item is the first line's
                first = f"{title} — {asked}: {_cut(lines[0].text, LEAD_CHARS)}"
            if reading.order == "oldest":
                lines += await self._later(page, (lead.date or ""))
            if event is not None:
                taken = decided_lines(event)
                lines = [*taken, *(x for x in lines if x not in taken)]
        day = lead.date
        return Reply(Line(first, day, (pid,), tag=tag), lines)

    async def _own_first(self, reading: Reading, results: list[Hit]) -> Hit | None:
        """:func:`_by_subject`, first among the pages not about a company the question does
        not name, when it asks of a topic ("the latest decision on pricing" is ours, not
        one customer's price; "the latest decision" is whichever is newest)."""
        ordered = [r for r in results if "date_ordered" in r.labels][:ORDERED_READ]
        other = set()
        for item in ordered if reading.topic else ():
            page = None if is_source(item) else await self.reader.page(item.id)
            if page is not None and self.state.about_other(reading, page.folder, page.fields):
                other.add(item.id)
        own = _by_subject(reading, [r for r in results if r.id not in other])
        if own is not None and (own.id not in other) and _says_topic(reading, own):
            return own
        return _by_subject(reading, results)

    async def _in_meant_folder(self, reading: Reading, results: list[Hit]) -> list[Hit]:
        """The search's order over the dated folder the question's words mean ("when did
        we last meet Globex and what was decided": the meetings, not the decisions), asked
        again in that folder when the search ordered another first or none ("which
        pricing did we settle on most recently": the decisions), or ordered none of the
        pages found whose titles say the topic ("our latest roadmap review": the
        reviews, not the latest meeting)."""
        dated = [f for f in reading.meant if (spec := self.reader.folder(f)) and spec.date_field]
        if not dated:
            return results
        first = next((r for r in results if "date_ordered" in r.labels), None)
        ordered = [r for r in results if "date_ordered" in r.labels and r.folder == dated[0]]
        titled = [r for r in results if r.folder == dated[0] and _says_topic(reading, r)]
        ordered_titled = not reading.topic or not titled or any(r in titled for r in ordered)
        if first is not None and first.folder == dated[0] and ordered_titled:
            return results
        if not self.reader.tools.accepts(QUERY_TOOL, "folders"):
            return results
        wide = MEANT_RESULTS * self.ranker.limit
        again = await self.reader.call(
            QUERY_TOOL, {"question": reading.question, "folders": dated[:1], "limit": wide}
        )
        found = [r for r in Found.parse(again).results if r.folder == dated[0]]  # no note
        names = [n for s in reading.subjects for n in self.reader.names(s.id)]
        if names:  # about the subject: its name in the title or the text found
            found = [r for r in found if name_spans(tokens(f"{r.title} {r.snippet}"), names)]
        if reading.order in ("newest", "oldest"):  # every one found, in the order asked
            found.sort(key=lambda r: r.date or "", reverse=reading.order == "newest")
            found = [replace(r, labels=(*r.labels, "date_ordered")) for r in found]
        return found or results

    async def _later(self, page: Page, day: str) -> list[Line]:
        """What pages dated after the first one say about it (its title or date named):
        the first pricing decision, and the review that reversed it."""
        found = self._mentions(page, day)
        if found:
            return found
        result = Found.parse(
            await self.reader.call("kb_query", {"question": page.title, "limit": 10})
        )
        later = [
            pid
            for item in result.results
            if (item.date or "") > day
            and (pid := normalize_id(item.id)) is not None
            and pid != page.id
            and not pid.startswith("source/")
        ]
        for pid in later[:LATER_READ]:
            await self.reader.page(pid)
        return self._mentions(page, day)

    def _mentions(self, page: Page, day: str) -> list[Line]:
        title = " ".join(words(page.title))
        out = []
        for other_id, other in self.reader.pages.items():
            if other_id == page.id:
                continue
            for piece in from_page(other, 0, self.reader.dated(other)):
                text = " ".join(words(piece.text))
                later = piece.date is not None and piece.date > day
                if later and (title in text or f"the {day}" in piece.text):
                    out.append(Line(piece.text, piece.date, (piece.page,), tag=LATER))
        return out[:2]

    # -- 3. a field of a named page

    async def _field_answer(
        self, reading: Reading, page: Page, field: str | None = None
    ) -> Reply | None:
        """The page's value of the field the question asks (``field``, else the
        reading's, else the one date field a "when will / when did" question means), since
        when and what it replaced; or, read from its other end ("who reports to X"), the
        pages whose field links to it."""
        spec = self.reader.folder(page.folder)
        if spec is None:
            return None
        field_ = reading.field
        if field_ is not None and field_.folder != spec.name and field is None:
            # another folder's link to this page ("who works at Globex?": people's
            # company; "which project is Priya the owner of?": projects' owner)
            linking = self.reader.folder(field_.folder)
            link = linking.field(field_.name) if linking is not None else None
            to_page = link is not None and link.is_link and link.folder == spec.name
            if field_.inward and not to_page:
                return None
            if to_page and linking is not None:
                return await self._linked_in(page, linking, field_.name, by_field=not field_.inward)
        asked = reading.field if reading.field and reading.field.folder == spec.name else None
        target = field or (asked.name if asked else None) or self._when_field(reading, spec, page)
        if target is None:
            return None
        if asked is not None and asked.inward and field is None:
            return await self._linked_in(page, spec, target)
        value = page.fields.get(target)
        if value in (None, "", []):
            return None
        change = changes(page).get(target)
        dated = self.reader.dated(page)
        day = (page.effective_date or "") if dated else ""
        said = f"{page.title} — {label(target)}: {show(value)}{since(change)}"
        schema = self.reader.schema
        where = belongs(schema, spec, page.fields, target) if schema is not None else ""
        lead = Line(f"{said}; {where}" if where else said, day or None)
        conflict = _open_question(page, target)
        if conflict is not None:  # the page itself says its sources disagree on it
            lead = Line(f"{DISPUTED}{page.title} — {label(target)}: {conflict}")
        # What happened the day it changed ("promoted ..., effective 2026-09-21"), then
        # the sentences that best match the question.
        own = from_page(page, 0, dated)
        same_day = [
            p
            for p in own
            if change is not None
            and p.kind == "timeline"
            and p.date == change.date
            and not p.text.startswith(f"{target} changed from")
        ]
        # Then where a note states the value, then the sentences that best match.
        said_so = [p for p in stating(own, value) if p not in same_day]
        first = [*same_day, *said_so]
        rest = [p for p in self.ranker.best(reading, exclude_field=target) if p not in first]
        lines = [p.line() for p in [*first, *rest] if not p.text.startswith(f"{target} changed")]
        return Reply(replace(lead, cited=_id(page)), lines[:EVIDENCE_LINES], firm=True)

    def _when_field(self, reading: Reading, spec: FolderSpec, page: Page) -> str | None:
        """ "When will X be ready?": the one date field of X after today ("when did": the
        one before it), when the question says which."""
        if reading.wants != "when" or reading.tense is None or spec.date_field:
            return None
        today = self.reader.today()
        fields = page.fields
        dates = [f.name for f in spec.fields if f.type == "date" and fields.get(f.name)]
        after = [n for n in dates if str(fields[n]) > today]
        side = after if reading.tense == "future" else [n for n in dates if n not in after]
        return side[0] if len(side) == 1 else None

    async def _linked_in(
        self, page: Page, spec: FolderSpec, target: str, by_field: bool = False
    ) -> Reply | None:
        """The pages of ``spec``'s folder whose ``target`` field links to ``page`` ("who
        reports to Alex Kim", "who works at Globex"): the graph's edges into it of the
        field's verb, else the pages read that hold it; said by the verb ("Works at
        Globex: ..."), or ``by_field``, by the field ("Projects whose owner is Priya
        Shah: ...", when the field, not its verb, was asked)."""
        fspec = spec.field(target)
        verb = (fspec.verb if fspec is not None else None) or target
        title = page.title
        found = await self.reader.call(
            "kb_neighbors", {"id": page.id, "verbs": [verb], "direction": "in"}
        )
        linked = [
            Part(f"{edge.from_title} ", edge.from_id)
            for edge in edges(found)
            if edge.verb == verb and edge.depth == 1 and edge.from_id.startswith(f"{spec.name}/")
        ]
        for other_id, other in self.reader.pages.items():
            if other.folder != spec.name:
                continue  # a decision's company is no one's employer
            value = other.fields.get(target)
            values = value if isinstance(value, list) else [value]
            shown = Part(f"{other.title} ", other_id)
            if any(str(v) == title for v in values if v) and shown not in linked:
                linked.append(shown)
        if not linked:
            return None
        for part in linked:  # cited pages: read, so their citations hold
            await self.reader.page(part.cited)
        listed = sorted(linked, key=Part.render)
        parts = [listed[0], *(replace(p, text=f", {p.text}") for p in listed[1:])]
        said = label(verb).capitalize()  # "Reports to Maria Lopez: ", "Works at Globex: "
        if by_field:
            said = f"{label(spec.name).capitalize()} whose {label(target)} is"
        return Reply(Line(f"{said} {title}: ", parts=tuple(parts)), [])

    def _section_asked(self, reading: Reading, page: Page) -> Reply | None:
        """ "What was decided at the pricing review?": the named page's section the
        question asks (``reading.section``: "decided" ~ Decisions, "шийдсэн" ~
        Шийдвэрүүд), all of it."""
        if reading.section is None:
            return None
        own = from_page(page, 0, self.reader.dated(page))
        for section in page.sections:
            if not section.startswith(reading.section):
                continue
            body = [p for p in own if p.kind == "section" and p.heading.startswith(section)]
            if body:  # its first item says what was asked on the first line
                day = (page.effective_date or "") if self.reader.dated(page) else ""
                said = _cut(body[0].text, LEAD_CHARS)
                lead = Line(f"{page.title} — {section}: {said}", day or None, _id(page))
                return Reply(lead, [p.line() for p in body[:SECTION_LINES]], firm=True)
        return None

    def _profile(self, page: Page) -> Reply:
        """ "Who is X": the page's fields in one line, each with when it last changed and
        what it was before, then its newest facts."""
        fields = page.fields
        recorded = changes(page)
        parts = [
            f"{label(k)}: {show(v)}{since(recorded.get(k))}"
            for k, v in fields.items()
            if v not in (None, "", [])
        ]
        lead = f"{page.title} — {'; '.join(parts)}" if parts else page.title
        own = from_page(page, 0, self.reader.dated(page))
        body = [p.line() for p in own if p.kind == "section"][:2]
        dated = [p for p in own if p.kind == "timeline" and "changed from" not in p.text]
        return Reply(Line(lead, cited=_id(page)), body + [p.line() for p in dated[:3]])

    # -- 4. the sentences that best match

    async def _evidence_answer(
        self,
        reading: Reading,
        results: list[Hit],
        named: list[Hit],
    ) -> Reply:
        best = self.ranker.best(reading, results=results, named=named)
        # A question for a figure or a count is answered only by a sentence that gives one.
        answers = [p for p in best if _gives(p, reading.wants)]
        answered = max((score_piece(p, reading)[1] for p in answers), default=0.0) >= 0.999
        # Not answered by the results: the pages linked to the one the question names
        # (the meetings about a company) are where its facts are written.
        if named and not answered and await self.reader.read_linked(named[0].id):
            best = self.ranker.best(
                reading, results=[*results, *self.ranker.read_results()], named=named
            )
        if not reading.terms and not reading.identifiers:
            if reading.wants == Wants.AMOUNT and not answers:
                # "how much does Alex Kim make?": no sentence on the subject gives a figure
                subjects = [s.title for s in reading.subjects]
                closest = [p.line() for p in best[:3]]
                return Reply(Line(not_found(subjects, [], bool(closest))), closest)
            return Reply(None, [p.line() for p in best] or self._summaries(results))
        scored = [(score_piece(p, reading), p) for p in best]
        full = [p for (_, coverage), p in scored if coverage >= 0.999]
        top_cover = max((c for (_, c), _ in scored), default=0.0)
        said_of = self._about_subject(reading, single=True)
        if reading.wants == Wants.AMOUNT:
            on_subject = [p for (_, c), p in scored if c >= top_cover - 1e-9]
            disputed = (
                _disagreement(on_subject, self._about_subject(reading))
                if self._recorded_dispute(on_subject, reading.subjects)
                else None
            )
            if disputed is not None:
                return Reply(disputed, [p.line() for p in best])
        # a decision a newer one reversed is history, and one still proposed is not
        # decided: what holds leads (the decisions that could lead are read to know)
        leading = [p.page for (_, c), p in scored if c >= 0.5 and p.page]
        for page_id in list(dict.fromkeys(leading))[:LEAD_READS]:
            if self.is_decision(page_id):
                await self.reader.page(page_id)
        if reading.wants == "amount":
            # A figure answers "what price ...": the best piece that gives one leads, if it
            # holds at least half the question's words ("Үнэ: нэг хүргэлтэд 900 төгрөг")
            # and is said of the subject the question names, if it names one.
            priced = [
                (c, p)
                for (_, c), p in scored
                if c >= 0.5 and AMOUNT.search(p.text) and (not reading.subjects or said_of(p))
            ]
            # the fullest first, then what holds, then the newest: the figure agreed last
            priced.sort(
                key=lambda cp: (-cp[0], self._replaced(cp[1].page), newest_first(cp[1].date or ""))
            )
            ranked = [p for _, p in priced]
            full = [p for p in ranked if p in full] or ranked[:1] or full
        if reading.wants == Wants.COUNT:
            # "how many ...": of the full sentences that give a count, those giving it next
            # to what is counted first, then the newest (a count changes; the last one said
            # holds), as for a figure
            given = [p for p in full if p in answers]
            counted = [p for p in given if counts(p.text, reading.focus)]
            full = sorted(counted or given, key=lambda p: newest_first(p.date or "")) or full
        if reading.wants == Wants.WHAT and reading.focus:
            # "which warehouses did the pilot cover?": a sentence naming them next to the
            # kind asked answers, before one holding more of the other words asked
            asked = [
                *words(reading.question),
                *(w for s in reading.subjects for w in words(s.title)),
            ]
            listed = [
                p
                for (_, c), p in scored
                if c >= 0.5
                and names_things(p.text, reading.focus, asked)
                and (p.kind != "source" or self._leads(p, reading, said_of))
                and (not reading.subjects or said_of(p))
            ]
            full = listed or full
        # a note's sentence leads only when it is said of the subject asked about, and
        # dated in the window asked about
        full = [p for p in full if p.kind != "source" or self._leads(p, reading, said_of)]
        if full and reading.subjects:
            # every word asked, said of someone else ("Alice worried about ..." for what
            # Initech's team is worried about): no answer about this subject
            await self._read_pages(full[:NEAR_COMPARED])
            full = full if any(said_of(p) for p in full) else []
        if full:
            if not reading.subjects:
                await self._read_pages(full[:NEAR_COMPARED])
            # what holds first; then a sentence said of the subject asked about, then one
            # dated in the window asked about (a pilot another customer started in July
            # does not answer when this one's started in September)
            full.sort(
                key=lambda p: (
                    self._replaced(p.page),
                    *self._off(p, reading, said_of),
                    not opens_with(p.text, reading),
                )
            )
            lead = full[0]
            rest = [p.line() for p in best if p is not lead]
            if reading.wants == Wants.WHEN:  # the decision that set the day: its terms
                days = days_said(lead.text) or {lead.date or ""}
                terms = await set_by(self.reader, [s.id for s in reading.subjects], days)
                rest = [*terms, *(x for x in rest if x not in terms)]
            kind = await of_kind(self.reader, reading.which, lead, best) if reading.which else None
            return Reply(lead.line(tag=kind or ""), rest + self._dates_of(reading, named))
        # a question of several parts: the best sentence for each part, first among the lines
        parted = self._parts(reading, results, named)
        best = [*parted, *(p for p in best if p not in parted)]
        # the words asked may be said in the other script, where no word of them matches
        typed = [p for p in best if _gives(p, reading.wants)]
        across = in_other_script(reading, typed, said_of, self.reader.embed)
        if across is not None and not any(
            c >= 0.5 and p.kind != "source" and p is not across for (_, c), p in scored
        ):
            rest = [p.line() for p in best if p is not across]
            return Reply(across.line(tag=CLOSEST), rest + self._dates_of(reading, named))
        if top_cover < 0.5 and not parted:
            return _not_found(reading, best)
        # No sentence holds every word asked: the best of the memory's pages that holds
        # most of them leads, said to be the closest (for a figure, the best that gives
        # one). A raw note's sentence does only where it gives the day a "when" asks
        # and no page's sentence does; else what a note says, an untrusted one too, is
        # quoted below.
        # The closest is said of the subject asked about: a sentence on someone else
        # is no answer about this one, however many of the words it holds.
        candidates = closest_candidates(
            reading, scored, answers, lambda p: self._leads(p, reading, said_of)
        )
        near = [p for p in candidates if not reading.subjects or said_of(p)]
        if not reading.subjects:  # ours before one customer's (see _off)
            await self._read_pages(near[:NEAR_COMPARED])
            near = [p for p in near if not self._of_other(p, reading)] or near
        if not near and reading.subjects:
            # the closest sentences are said of others, or nothing said of the subject
            # holds half the words: the answer is not there, and all that was found shows
            halves = [p for (_, c), p in scored if c >= 0.5]
            if candidates or not any(said_of(p) for p in halves):
                return _not_found(reading, best, len(best))
        cover = {id(p): c for (_, c), p in scored}
        if not near and not reading.subjects:
            # the sentences holding half the words are notes' or give no answer of the
            # type asked: of the memory's that do, those holding the most words
            given = [p for (_, c), p in scored if p in answers and p.kind != "source" and c > 0]
            most = max((cover[id(p)] for p in given), default=0.0)
            near = [p for p in given if cover[id(p)] >= most - 1e-9]
        if not near:
            return Reply(None, [p.line() for p in best] + self._dates_of(reading, named))
        nearest = self._nearest_in_meaning(reading, [(cover[id(p)], p) for p in near])
        rest = [p.line() for p in best if p is not nearest]
        return Reply(nearest.line(tag=CLOSEST), rest + self._dates_of(reading, named))

    def _nearest_in_meaning(
        self, reading: Reading, near: Sequence[tuple[float, Evidence]]
    ) -> Evidence:
        """Of the sentences that hold the most of the words asked, none all, the one the
        embedder puts nearest those words and the folders the question means (not the
        subject's names: every one of them is about it; "the meeting with ...": meetings):
        the words they miss are said in other words, and only the meaning tells which
        says them."""
        most = max(c for c, _ in near)  # (coverage, piece), in the ranker's order
        shown = [p for c, p in near if c >= most - 1e-9][:NEAR_COMPARED]
        if len(shown) < 2 or self.reader.embed is None:
            return shown[0]
        query, vectors = self.reader.embed(compared_words(reading), [p.text for p in shown])
        scores = [float(np.dot(query, v)) for v in vectors]
        return shown[max(range(len(shown)), key=lambda i: scores[i])]

    def _parts(self, reading: Reading, results: list[Hit], named: list[Hit]) -> list[Evidence]:
        """For a question of several parts, the sentence holding most of each part's
        words (at least half), in the parts' order, each once."""
        out: list[Evidence] = []
        for terms in reading.parts:
            part = replace(
                reading, terms=terms, focus=tuple(f for f in reading.focus if f in terms)
            )
            found = next(
                (
                    p
                    for p in self.ranker.best(part, results=results, named=named)
                    if score_piece(p, part)[1] >= 0.5
                ),
                None,
            )
            if found is not None and found not in out:
                out.append(found)
        return out

    def _dates_of(self, reading: Reading, named: list[Hit]) -> list[Line]:
        """For "when" about a named page: its date fields, with what they replaced."""
        if reading.wants != "when":
            return []
        out = []
        for item in named:
            page = self.reader.pages.get(item.id)
            spec = self.reader.folder(item.folder)
            if page is None or spec is None or spec.date_field:
                continue
            recorded = changes(page)
            for f in spec.fields:
                value = page.fields.get(f.name)
                if f.type == "date" and value:
                    change = recorded.get(f.name)
                    day = change.date if change else None
                    text = f"{page.title} — {label(f.name)}: {value}{since(change)}"
                    out.append(Line(text, day, _id(page)))
        return out

    def _summaries(self, results: Sequence[Hit]) -> list[Line]:
        return [Line(item.title, item.date, (item.id,)) for item in results[:EVIDENCE_LINES]]

    # -- helpers

    async def _resolved(
        self, question: str, named: Sequence[Hit], unclear: list[str] | None = None
    ) -> list[Hit]:
        """The pages the entity index resolves the question's names to that the search did
        not find by their names ("Боб Мартинезийн": Bob Martinez, by his name in the other
        script with a case ending), as results the question names; the folders of a name
        it cannot tell apart go to ``unclear`` ("Alex": two people)."""
        if "kb_resolve" not in self.reader.tools.tools:
            return []
        known = [r.title for r in named]
        out: list[Hit] = []
        done: list[str] = []
        for name in name_candidates(question)[:RESOLVED_NAMES]:
            if any(name.startswith(d) or d.startswith(name) for d in done):
                continue  # a run already resolved: not its longer stretch
            if name_spans(tokens(name), known):
                continue  # the search found it by its name
            found = Resolved.parse(await self.reader.call("kb_resolve", {"name": name, "limit": 3}))
            best = next(iter(found.candidates), None)
            if found.ambiguous and unclear is not None:
                unclear += [c.folder for c in found.candidates if c.folder not in unclear]
            if best is None or found.ambiguous:
                continue
            sure = best.why in SURE_NAMES or (
                best.why == "fuzzy_title" and best.score >= FUZZY_NAME
            )
            if sure and best.id not in {r.id for r in [*named, *out]}:
                hit = Hit(best.id, best.title, best.folder, score=best.score, labels=("alias_hit",))
                out.append(replace(hit, resolved=name))
                known.append(best.title)
                done.append(name)
        return out

    def _about_subject(self, reading: Reading, single: bool = False) -> Callable[[Evidence], bool]:
        """Whether a piece is about the question's subject: on its page, on a page that
        links to it (``single``: by a field that holds one page, as a meeting's company,
        not among its attendees), naming it, or in a note whose title names it ("Initech
        renewal prep"). No subject: nothing is (no disagreement is told)."""
        ids = {s.id for s in reading.subjects}
        names = {normalize_name(n) for s in reading.subjects for n in self.reader.names(s.id) if n}
        people = {  # a person's page is about them, not about the manager it links to
            normalize_name(n)
            for s in reading.subjects
            if (subject := self.reader.pages.get(s.id)) and self.reader.is_person(subject)
            for n in self.reader.names(s.id)
        }

        def about(piece: Evidence) -> bool:
            if piece.page in ids:
                return True
            page = self.reader.pages.get(piece.page)
            held = self.reader.link_names(page, single) if page else ()
            linked = {normalize_name(n) for n in held}
            if page is not None and self.reader.is_person(page):
                linked -= people
            text = normalize_name(piece.text)
            if piece.kind == "source":
                text = f"{text} {normalize_name(piece.title)}"
            elif piece.origin:  # the note it is quoted from, by its file's name
                text = f"{text} {normalize_name(_note_name(piece.origin))}"
            return bool(linked & names) or any(n and n in text for n in names)

        return about

    def _off(
        self, piece: Evidence, reading: Reading, said_of: Callable[[Evidence], bool]
    ) -> tuple[bool, bool]:
        """Whether a piece is off the subject asked about (with none asked: on a page of
        or about a company the question does not name, "the monthly minimum we charge" is
        ours, not one customer's), and off the window asked about (False when none is):
        neither dated in it nor saying one of its days."""
        off_subject = not said_of(piece) if reading.subjects else self._of_other(piece, reading)
        window = reading.window
        off_window = window is not None and not any(  # dated in it, or saying a day of it
            _in_window(day, window) for day in [piece.date or "", *days_said(piece.text)] if day
        )
        return off_subject, off_window

    async def _read_pages(self, pieces: Sequence[Evidence]) -> None:
        """Read the memory's pages the pieces are on (not notes), to see whom they are about."""
        for piece in pieces:
            if piece.page and not piece.page.startswith("source/"):
                await self.reader.page(piece.page)

    def _of_other(self, piece: Evidence, reading: Reading) -> bool:
        """A piece on a company's page, or on a page linking to a company, that the
        question does not name."""
        page = self.reader.pages.get(piece.page)
        if page is None:
            return False
        spec = self.reader.folder(page.folder)
        if spec is not None and spec.type == "company":
            asked = {normalize_name(n) for n in self.reader.asked}
            return not asked & {normalize_name(n) for n in self.reader.names(page.id)}
        return self.state.about_other(reading, page.folder, page.fields)

    @staticmethod
    def _leads(piece: Evidence, reading: Reading, said_of: Callable[[Evidence], bool]) -> bool:
        """Whether a note's sentence may lead: said of the subject, if one is asked
        about, and dated in the window, if one is asked about."""
        if reading.subjects and not said_of(piece):
            return False
        return reading.window is None or not piece.date or _in_window(piece.date, reading.window)

    def is_decision(self, page_id: str) -> bool:
        """The page is in a folder whose pages a lifecycle field can end (decisions)."""
        spec = self.reader.folder(page_id.split("/", 1)[0])
        return spec is not None and lifecycle_field(spec) is not None

    def _recorded_dispute(
        self, pieces_: Sequence[Evidence], subjects: Sequence[Subject] = ()
    ) -> bool:
        """Whether a page the pieces come from, or the question's subject's page (the
        pieces may be a note's sentences), holds an open conflict: two sources of the
        same subject, field and period that neither supersedes (its Open Questions). Two
        figures in two sentences are no disagreement by themselves: a list price and a
        customer's price, an old price and a new one are different facts."""
        for pid in [*(p.page for p in pieces_), *(s.id for s in subjects)]:
            page = self.reader.pages.get(pid)
            if page is not None and any(
                not q.startswith(HELD_QUESTION) for q in page.open_questions
            ):
                return True
        return False

    def _replaced(self, page_id: str) -> bool:
        """The page is a decision a newer one reversed or superseded, or one still
        proposed (waiting for a person)."""
        page = self.reader.pages.get(page_id)
        fields = page.fields if page is not None else {}
        return bool(fields.get("superseded_by")) or fields.get("status") in NOT_HOLDING

    def _notes(self, result: Found) -> list[str]:
        return notes_for([*self.reader.log.degraded, *result.degraded], ingesting(result))

    def _cited(self, text: str, results: Sequence[Hit]) -> list[CitedPage]:
        from read_agent.tools.citations import extract_citations

        known = {r.id: r for r in results}
        out = []
        for pid in extract_citations(text):
            found = self.reader.log.pages.get(pid)
            if found is None and pid in known:
                item = known[pid]
                found = CitedPage(pid, item.title, item.date)
            if found is not None:
                out.append(found)
        return out


# --- helpers without state ----------------------------------------------------------


def closest_candidates(
    reading: Reading,
    scored: Sequence[tuple[tuple[float, float], Evidence]],
    answers: Sequence[Evidence],
    leads: Callable[[Evidence], bool],
) -> list[Evidence]:
    """The sentences holding half the words asked that may lead as the closest: the
    memory's pages'; for a "when" that no page's sentence writes a day for, a note's
    (that ``leads``: on the subject, in the window) that writes one and holds as many of
    the words asked (see ``Extractive._evidence_answer``)."""
    halves = [(round(c, 3), p) for (_, c), p in scored if c >= 0.5 and p in answers]
    pages = [p for _, p in halves if p.kind != "source"]
    if reading.wants != Wants.WHEN or any(days_said(p.text) for p in pages):
        return pages
    most = max((c for c, p in halves if p.kind != "source"), default=0.0)
    notes = [
        p for c, p in halves if p.kind == "source" and c >= most and days_said(p.text) and leads(p)
    ]
    return notes or pages


def compared_words(reading: Reading) -> str:
    """What the embedder compares sentences with to find the nearest of the closest: the
    words asked and the folders the question means ("the meeting with the logistics
    company in Darkhan": logistics, darkhan, meetings), never the subject's names."""
    return " ".join([*reading.terms, *reading.meant])


OPENING = 2  # the words a sentence's subject is read from


def opens_with(text: str, reading: Reading) -> bool:
    """Whether the sentence's first words, after stop words, are words asked ("A
    **tracked shipment** is a shipment that ..." for "what counts as a tracked
    shipment?"): it is about what the question asks, as its subject, where another
    sentence holding the words only mentions it."""
    said = [w for w in words(text) if w not in STOPWORDS][:OPENING]
    return len(said) == OPENING and len(matched(reading.terms, said, reading.sense_of)) == OPENING


def _gives(piece: Evidence, wants: Wants) -> bool:
    """Whether a piece gives what a question for a figure or a count wants."""
    if wants == Wants.AMOUNT:
        return AMOUNT.search(piece.text) is not None
    if wants == Wants.COUNT:
        return COUNT.search(piece.text) is not None
    return True


def _id(page: Page) -> tuple[str]:
    """A page's citation."""
    return (page.id,)


def _named(result: Hit) -> bool:
    """A page the question names: found by its title or an alias, not fuzzily."""
    labels, ranks = result.labels, result.ranks
    exact = "exact_title_match" in labels or "alias_hit" in labels
    return exact or ("title" in ranks and "fuzzy_title_match" not in labels)


def _title_said(question: str, result: Hit) -> bool:
    """A page whose title of several words the question says, in any order ("the review
    of the Globex pilot": the page "Globex pilot review")."""
    return (
        len(tokens(result.title)) > 1
        and not is_source(result)
        and bool(name_spans(tokens(question), [result.title]))
    )


def _none_within(quoted: Reply | None, window: Mapping[str, Any]) -> bool:
    """Whether ``quoted`` found no sentence that answers (it leads with none, or says
    so) and none dated in ``window``."""
    if quoted is None:
        return True
    if quoted.lead is not None and not quoted.leads_with(NO_SENTENCE):
        return False
    return not any(line.date and _in_window(line.date, window) for line in quoted.lines)


def _in_window(date: str, window: Mapping[str, Any]) -> bool:
    """Whether a line's or a piece's day is inside ``window``."""
    first, last = window_dates(window)
    day = date[:10]
    return (first is None or day >= first) and (last is None or day < last)


def _says_topic(reading: Reading, item: Hit) -> bool:
    """Whether a page's title says at least half the question's topical words."""
    return half_said(reading.topic, item.title)


def _by_subject(reading: Reading, results: Sequence[Hit]) -> Hit | None:
    """The result an order word picks: of the pages ``kb_query`` ordered (first, latest,
    next, in that order), the first whose title says the most of the question's subject.
    "The first pricing review" is the first meeting titled so, not the first meeting
    that mentions pricing; "the latest product roadmap review" is the newer of the two
    roadmap reviews. A title must say at least half the question's topical words (not
    the words of a kind of page: "decision", "meeting"); a question naming no subject
    ("the latest meeting") takes the first."""
    ordered = [r for r in results if "date_ordered" in r.labels]
    order_words = [w for phrases in lexicon().order.values() for p in phrases for w in tokens(p)]
    asked = [
        w for w in words(reading.question) if w not in STOPWORDS and not says([w], order_words)
    ]
    best: tuple[int, int] = (0, 0)
    chosen = ordered[0] if ordered else None
    named = {s.id for s in reading.subjects}
    for item in ordered:
        title = words(item.title)
        score = (len(matched(reading.topic, title)), len(matched(asked, title)))
        if not _says_topic(reading, item) and item.id not in named:
            continue  # a long question's one word in a title is no subject (the page
            # the question names by its title is)
        if score > best:
            best, chosen = score, item
    return chosen


def _note_name(path: str) -> str:
    """A note's file name without its folders and extension
    ("source/meetings/2026-11-12-globex-review.md": "2026-11-12-globex-review")."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _not_found(reading: Reading, best: Sequence[Evidence], shown: int = 3) -> Reply:
    """No sentence answers: what was searched for, and the ``shown`` closest sentences."""
    closest = [p.line() for p in best[:shown]]
    subjects = [s.title for s in reading.subjects]
    words = [*reading.identifiers, *reading.terms]
    return Reply(Line(not_found(subjects, words, bool(closest))), closest)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _in_order(body: Sequence[Evidence], chosen: Sequence[Evidence]) -> list[Evidence]:
    wanted = {id(p) for p in chosen}
    return [p for p in body if id(p) in wanted]


def _numbers(text: str) -> set[str]:
    """Every number a text writes, as its digits (a conflict's values: “120000”)."""
    return {re.sub(r"\D", "", n) for n in re.findall(r"\d[\d,.]*\d|\d", text)}


def _open_question(page: Page, field: str) -> str | None:
    """The page's unresolved conflict on ``field``: its Open Questions line that starts
    with the field's name ("- contract_value: sources of the same date ... disagree")."""
    lines = list(page.open_questions)
    if not lines:  # a server that returns them as a section
        body = next((v for k, v in page.sections.items() if k.lower() == "open questions"), "")
        lines = body.splitlines()
    for line in lines:
        text = line.strip().lstrip("-*• ").strip()
        if text.startswith(f"{field}: "):
            return text.removeprefix(f"{field}: ")
    return None


def _disagreement(pieces_: Sequence[Evidence], about: Callable[[Evidence], bool]) -> Line | None:
    """Two sources giving different figures for the same thing, as one line: both about
    the question's subject (``about``) and of the same period (a week apart at most: a
    later figure replaces an earlier one, it does not contradict it)."""
    seen: dict[str, Evidence] = {}
    # a page's line before a note's own sentence of the same figure: the page's is dated
    # by its event, a note's sentence by a day it mentions ("renewal date 2027-01-31")
    for piece in sorted(pieces_, key=lambda p: p.kind == "source"):
        amounts = AMOUNT.findall(piece.text)
        if amounts and about(piece):  # the figure a sentence gives first is what it says
            seen.setdefault(re.sub(r"[^\d.]", "", amounts[0]).rstrip("."), piece)
    found = list(seen.values())
    for i, first in enumerate(found):
        for second in found[i + 1 :]:
            apart = _days_apart(first.date, second.date)
            if apart is None or apart > SAME_PERIOD_DAYS:
                continue
            if first.page == second.page and first.date == second.date:
                continue
            one, other = (
                f"{AMOUNT.findall(p.text)[0]} ({p.date + ', ' if p.date else ''}"
                for p in (first, second)
            )
            sides = (Part(one, first.page), Part(f") vs {other}", second.page), Part(")."))
            return Line(DISPUTED, parts=sides)
    return None


def _days_apart(a: str | None, b: str | None) -> int | None:
    try:
        return abs((dt.date.fromisoformat(str(a)[:10]) - dt.date.fromisoformat(str(b)[:10])).days)
    except ValueError:
        return None
