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
   the pages that are ("decisions since ..." -> the meetings' Decisions);
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

import re
from collections.abc import Mapping, Sequence
from typing import Any

from memserver.kb.schema import FolderSpec
from memserver.kb.words import STOPWORDS, normalize_name, words
from read_agent.extractive.brief_reply import (
    company_question,
)
from read_agent.extractive.company_answer import PAGES_READ, CompanyAnswers, past_day
from read_agent.extractive.evidence import (
    Evidence,
    changes,
    from_page,
    label,
    show,
)
from read_agent.extractive.evidence import score as score_piece
from read_agent.extractive.listing import listing
from read_agent.extractive.question import (
    Reading,
    attendance,
    claim_of,
    matched,
    read,
    same_word,
)
from read_agent.extractive.ranking import AMOUNT, EVIDENCE_LINES, newest_first
from read_agent.extractive.reply import (
    NO_ANSWER,
    NO_SENTENCE,
    Reply,
    ingesting,
    not_yet,
    notes_for,
    since,
)
from read_agent.tools.citations import CitedPage, normalize_id

DISPUTED = "The sources disagree: "
HELD_QUESTION = "Review: "  # a change held for a person, not two sources disagreeing
REPLACED = frozenset({"reversed", "superseded"})  # a decision's status once replaced
SECTION_LINES = 8  # a section the question names, read out whole up to this
LATER_READ = 6  # pages dated after a first page read for what they say about it
# "when did you first learn / hear of it": when the memory learned it, not a list's order
_LEARNED = re.compile(r"\bfirst\s+(?:learn|hear|heard|know|knew|told|found)\w*", re.IGNORECASE)
_ORDER_WORDS = {"newest": "Latest", "oldest": "First", "next": "Next"}
# Words that say an order, not a subject ("the most recent Globex pilot review").
_ORDER_TERMS = frozenset(
    {"first", "latest", "last", "recent", "most", "newest", "oldest", "earliest", "next",
     "upcoming", "previous", "анхны", "эхний", "сүүлийн", "сүүлд", "дараагийн", "хамгийн"}
)  # fmt: skip


class Extractive(CompanyAnswers):
    """One extractive answer over the read tools (see the module docstring)."""

    # -- the answer

    async def answer(self, question: str, query_argument: str) -> tuple[str, list[CitedPage]]:
        asked = question
        claim = claim_of(question)  # "what supports X?": the evidence for X
        if claim is not None:
            question = claim
        result = await self._query(question, query_argument)
        if result is None:
            return f"{NO_ANSWER.split(' (')[0]} (the search failed).", []
        results = [r for r in result.get("results") or () if isinstance(r, Mapping)]
        reworded = self._attendance(question, result, results)
        if reworded is not None:  # "who was at ...": asked again as "who attended ..."
            again = await self._query(reworded, query_argument)
            if again is not None:
                first = [r for r in results if _named(r)]
                question, result = reworded, again
                results = [r for r in result.get("results") or () if isinstance(r, Mapping)]
                results += [r for r in first if r.get("id") not in {x.get("id") for x in results}]
        verb = self._holder_missing(result, results)
        if verb:  # the attendees found, not the meeting: the meeting asked for by its name
            subject = re.sub(rf"(?i)\b{re.escape(verb)}\b", " ", question)
            wider = await self._query(" ".join(subject.split()), query_argument)
            more = [r for r in (wider or {}).get("results") or () if isinstance(r, Mapping)]
            results += [
                r for r in more if _named(r) and r.get("id") not in {x.get("id") for x in results}
            ]
        named = [r for r in results if _named(r)]
        for item in [*named, *results][: PAGES_READ + len(named)]:
            pid = normalize_id(str(item.get("id") or ""))
            if pid and not pid.startswith("source/") and len(self.pages) < PAGES_READ + 2:
                await self.page(pid)
        names = [n for r in named for n in self.names(str(r.get("id")))]
        self.asked = names
        reading = read(question, result, names)
        if claim is not None:
            reply: Reply | None = self._support(reading, results, named)
        else:
            reply = self._relation_of_named(reading, results, names, question)
            reply = reply or await self._reply(reading, results, named, question)
        # decided, by whom, why, as of, disagree (not "the first decision": an order)
        ordered = reading.order is not None and not _LEARNED.search(asked)
        if (company_question(asked) or past_day(reading.as_of)) and not ordered:
            reply = await self._briefed(reading, asked, reply, claim is not None)
        if reply is None:
            progress = ingesting(result)
            return (NO_ANSWER if progress is None else not_yet(progress)), []
        text = reply.text(self._notes(result))
        return text, self._cited(text, results)

    def _support(
        self,
        reading: Reading,
        results: list[Mapping[str, Any]],
        named: list[Mapping[str, Any]],
    ) -> Reply | None:
        """ "What supports X?": the sentences that hold most of X's words, those a note
        states (direct) before those the memory inferred, each labelled."""
        best = self._best(reading, results=results, named=named)
        best.sort(key=lambda p: not p.direct)
        if not best:
            return None
        direct = sum(p.direct for p in best)
        lead = (
            f"Evidence for “{reading.question}”: {direct} stated by notes (direct), "
            f"{len(best) - direct} inferred by the memory."
        )
        return Reply(lead, [p.line() for p in best])

    async def _query(
        self, question: str, query_argument: str, limit: int | None = None
    ) -> Mapping[str, Any] | None:
        arguments: dict[str, Any] = {query_argument: question}
        if self.tools.accepts("kb_query", "limit"):
            arguments["limit"] = limit or self.limit
        return await self.call("kb_query", arguments)

    def _holder_missing(
        self, result: Mapping[str, Any], results: Sequence[Mapping[str, Any]]
    ) -> str | None:
        """The relation's verb, when a relation asked ("who attended the pricing
        review?") led to its pages (the attendees) but not to the page the question names
        that holds it (the server returns only the relation's ends)."""
        intent = result.get("intent") if isinstance(result.get("intent"), Mapping) else {}
        assert isinstance(intent, Mapping)
        verb = intent.get("relation")
        if not verb or self.schema is None:
            return None
        holders = {spec.name for spec in self.schema.folders for f in spec.fields if f.verb == verb}
        followed = any(f"graph:{verb}" in (r.get("labels") or ()) for r in results)
        if not followed or any(_named(r) and r.get("folder") in holders for r in results):
            return None
        return str(verb)

    def _attendance(
        self, question: str, result: Mapping[str, Any], results: Sequence[Mapping[str, Any]]
    ) -> str | None:
        """The question with attendance in other words ("was at", "took part in",
        "оролцсон") written as the schema's verb for an event's attendees, when it has
        one and the search did not read that relation already."""
        found = next(
            (
                (spec.name, f.verb)
                for spec in (self.schema.folders if self.schema is not None else ())
                for f in spec.fields
                if f.is_link and f.verb and f.verb.startswith("attend")
            ),
            None,
        )
        intent = result.get("intent") if isinstance(result.get("intent"), Mapping) else {}
        assert isinstance(intent, Mapping)
        if found is None or intent.get("relation") == found[1]:
            return None
        folder, verb = found
        about_event = folder in (intent.get("folders") or ()) or any(
            _named(r) and r.get("folder") == folder for r in results
        )
        return attendance(question, verb, about_event)

    async def _reply(
        self,
        reading: Reading,
        results: list[Mapping[str, Any]],
        named: list[Mapping[str, Any]],
        question: str,
    ) -> Reply | None:
        if reading.listing:
            listed = await listing(self, reading)
            if listed is not None:
                return listed
        if not results:
            return None
        as_of = await self._as_of(reading)
        if as_of is not None:
            return as_of
        if reading.order is not None:
            ordered = await self._ordered(reading, results)
            if ordered is not None:
                return ordered
        current = await self._current(reading)
        if current is not None:
            return current
        pages = [p for item in named if (p := self.pages.get(str(item.get("id")))) is not None]
        # A named page of the folder the question is about comes first: "the Initech
        # renewal call" names the company too, but asks about the meeting.
        pages.sort(key=lambda page: str(page.get("folder")) not in reading.folders)
        for page in pages:  # the named page that has the field asked about
            found = self._field_answer(reading, page, question)
            if found is not None and found.lead and found.lead.startswith(DISPUTED):
                # the sources' own figures say the disagreement best, when they give them
                quoted = await self._evidence_answer(reading, results, named)
                return quoted if quoted.lead and quoted.lead.startswith(DISPUTED) else found
            if found is not None:
                return found
        if pages and not reading.terms and not reading.identifiers and reading.wants != "amount":
            return self._section_asked(reading, pages[0]) or self._profile(pages[0])
        return await self._evidence_answer(reading, results, named)

    # -- 0. a relation of the page linked to a named one ("who attended the Initech
    # meeting in October?": the attendees of the best meeting that links to Initech)

    def _relation_of_named(
        self,
        reading: Reading,
        results: list[Mapping[str, Any]],
        names: Sequence[str],
        question: str,
    ) -> Reply | None:
        if reading.relation is None or reading.order is not None or not names:
            return None  # "the latest meeting with Initech" is an order over the meetings
        own = self._own_relation(reading, results)
        if own is not None:  # "who owns the Globex account": Globex's own account owner
            return own
        wanted = {normalize_name(n) for n in names}
        for item in results:
            page = self.pages.get(str(item.get("id")))
            spec = self.folder(str(item.get("folder")))
            if page is None or spec is None or spec.name not in (reading.folders or (spec.name,)):
                continue
            asked = next((f for f in spec.fields if f.verb == reading.relation), None)
            if asked is None:
                continue
            fields = page.get("fields") or {}
            value = fields.get(asked.name)
            if {normalize_name(str(v)) for v in (value if isinstance(value, list) else [value])} & (
                wanted
            ):
                return None  # the named page is the relation's own value: not this question
            if {normalize_name(n) for n in self.link_names(page)} & wanted:
                return self._field_answer(reading, page, question)
        return None

    def _own_relation(self, reading: Reading, results: Sequence[Mapping[str, Any]]) -> Reply | None:
        """The subject decides the folder: when the page the question names has a field
        that says the relation with the question's other words ("owns" + "account" ->
        account_owner), that field answers, even empty, not another folder's ("owner" of
        a project about the company)."""
        assert reading.relation is not None
        relation = words(reading.relation.replace("_", " "))
        for item in results:
            page = self.pages.get(str(item.get("id")))
            spec = self.folder(str(item.get("folder")))
            if not _named(item) or page is None or spec is None:
                continue
            for f in spec.fields:
                name = words(f.name.replace("_", " "))
                rest = [w for w in name if not matched(relation, [w])]
                if not f.is_link or len(rest) == len(name) or not matched(reading.terms, rest):
                    continue
                value = (page.get("fields") or {}).get(f.name)
                lead = f"{page.get('title')} — {label(f.name)}: "
                lead += show(value) if value not in (None, "", []) else "not recorded"
                change = changes(page).get(f.name)
                lines = [p.line() for p in self._best(reading, exclude_field=f.name)]
                return Reply(f"{lead}{since(change)} [{page.get('id')}]", lines)
        return None

    # -- 1. a window: list what is in it

    # -- 2. latest / first / next

    async def _ordered(self, reading: Reading, results: list[Mapping[str, Any]]) -> Reply | None:
        lead = _by_subject(reading, results)
        if lead is None:
            if reading.order == "next":
                return Reply(f"Nothing is dated after {self.today()} for this question.")
            return None
        pid = str(lead.get("id"))
        page = self.pages.get(pid)
        spec = self.folder(str(lead.get("folder")))
        kind = spec.type if spec is not None else str(lead.get("folder"))
        first = f"{_ORDER_WORDS.get(reading.order or '', 'Latest')} {kind}: {lead.get('date')} · "
        first += str(lead.get("title"))
        if page is not None:
            links = _links(page, spec)
            first += f" — {links}" if links else ""
        lines: list[str] = []
        if page is not None:
            skip = [spec.date_field] if spec is not None and spec.date_field else []
            own = from_page(page, 0, True, skip_fields=skip)
            body = [p for p in own if p.kind == "section"]
            if reading.terms:
                ranked = sorted(
                    (p for p in body if score_piece(p, reading)[1] > 0),
                    key=lambda p: -score_piece(p, reading)[0],
                )
                lines = [p.line() for p in _in_order(body, ranked[:EVIDENCE_LINES])]
            if not lines:
                lines = [p.line() for p in body[:2]]
            if reading.order == "oldest":
                lines += await self._later(page, str(lead.get("date") or ""))
        return Reply(f"{first} [{pid}]", lines)

    async def _later(self, page: Mapping[str, Any], day: str) -> list[str]:
        """What pages dated after the first one say about it (its title or date named):
        the first pricing decision, and the review that reversed it."""
        found = self._mentions(page, day)
        if found:
            return found
        result = await self.call("kb_query", {"question": str(page.get("title")), "limit": 10})
        later = [
            pid
            for item in (result or {}).get("results") or ()
            if isinstance(item, Mapping)
            and str(item.get("date") or "") > day
            and (pid := normalize_id(str(item.get("id") or ""))) is not None
            and pid != page.get("id")
            and not pid.startswith("source/")
        ]
        for pid in later[:LATER_READ]:
            await self.page(pid)
        return self._mentions(page, day)

    def _mentions(self, page: Mapping[str, Any], day: str) -> list[str]:
        title = " ".join(words(str(page.get("title"))))
        out = []
        for other_id, other in self.pages.items():
            if other_id == page.get("id"):
                continue
            for piece in from_page(other, 0, self.dated(other)):
                text = " ".join(words(piece.text))
                later = piece.date is not None and piece.date > day
                if later and (title in text or f"the {day}" in piece.text):
                    out.append(f"- Later: {piece.date} · {piece.text} [{piece.page}]")
        return out[:2]

    # -- 3. a field of a named page

    def _field_answer(
        self, reading: Reading, page: Mapping[str, Any], question: str
    ) -> Reply | None:
        spec = self.folder(str(page.get("folder")))
        if spec is None:
            return None
        target = self._field_asked(reading, spec, page) or self._when_field(reading, spec, page)
        if target is None:
            return None
        fspec = spec.field(target)
        verb = (fspec.verb if fspec is not None else None) or target
        if reading.relation == verb and self._inward(spec, fspec, question, page):
            return self._linked_to(page, verb, target)
        value = (page.get("fields") or {}).get(target)
        if value in (None, "", []):
            return None
        change = changes(page).get(target)
        dated = self.dated(page)
        head = f"{page.get('effective_date')} · " if dated and page.get("effective_date") else ""
        lead = f"{head}{page.get('title')} — {label(target)}: {show(value)}{since(change)}"
        conflict = _open_question(page, target)
        if conflict is not None:  # the page itself says its sources disagree on it
            lead = f"{DISPUTED}{page.get('title')} — {label(target)}: {conflict}"
        # What happened the day it changed ("promoted ..., effective 2026-09-21"), then
        # the sentences that best match the question.
        same_day = [
            p
            for p in from_page(page, 0, dated)
            if change is not None
            and p.kind == "timeline"
            and p.date == change.date
            and not p.text.startswith(f"{target} changed from")
        ]
        rest = [p for p in self._best(reading, exclude_field=target) if p not in same_day]
        lines = [p.line() for p in [*same_day, *rest] if not p.text.startswith(f"{target} changed")]
        return Reply(f"{lead} [{page.get('id')}]", lines[:EVIDENCE_LINES])

    def _field_asked(
        self, reading: Reading, spec: FolderSpec, page: Mapping[str, Any]
    ) -> str | None:
        """The field the question asks about: the relation's, the one its words name
        most ("role", "renew" -> renewal_date; a date field first for "when": "When does
        Initech's contract renew?" names contract_value and renewal_date once each), or
        the one an enum value names ("customer")."""
        for f in spec.fields:
            if reading.relation is not None and f.verb == reading.relation:
                return f.name
        best: tuple[int, bool] = (0, False)
        chosen: str | None = None
        for f in spec.fields:
            names = set(words(f.name.replace("_", " "))) - {"date"}
            if f.verb:
                names |= set(words(f.verb.replace("_", " ")))
            if f.type == "enum":
                names |= {v.lower() for v in f.values}
            score = (
                len(matched(reading.terms, names)),
                reading.wants == "when" and f.type == "date",
            )
            if score[0] and score > best:
                best, chosen = score, f.name
        return chosen

    def _when_field(
        self, reading: Reading, spec: FolderSpec, page: Mapping[str, Any]
    ) -> str | None:
        """ "When will X be ready?": the one date field of X after today ("when did": the
        one before it), when the question says which."""
        if reading.wants != "when" or reading.tense is None or spec.date_field:
            return None
        today = self.today()
        fields = page.get("fields") or {}
        dates = [f.name for f in spec.fields if f.type == "date" and fields.get(f.name)]
        after = [n for n in dates if str(fields[n]) > today]
        side = after if reading.tense == "future" else [n for n in dates if n not in after]
        return side[0] if len(side) == 1 else None

    def _inward(self, spec: FolderSpec, fspec: Any, question: str, page: Mapping[str, Any]) -> bool:
        """ "Who reports to X" asks for the pages linking to X, "who does X report to" for
        X's own value: the name after the relation's words, or X in the target folder."""
        if fspec is None or fspec.folder is None:
            return False
        if fspec.folder != spec.name:
            return False  # X holds the field: its own value
        tokens = words(question)
        relation = set(words(fspec.name.replace("_", " "))) | set(
            words((fspec.verb or "").replace("_", " "))
        )
        rel_at = next((i for i, t in enumerate(tokens) if matched([t], relation)), None)
        names = [str(page.get("title")), *(page.get("aliases") or ())]
        name_words = {w for n in names for w in words(str(n))}
        name_at = next((i for i, t in enumerate(tokens) if t in name_words), None)
        return rel_at is not None and name_at is not None and name_at > rel_at

    def _linked_to(self, page: Mapping[str, Any], verb: str, target: str) -> Reply | None:
        title = str(page.get("title"))
        linked = []
        for other_id, other in self.pages.items():
            value = (other.get("fields") or {}).get(target)
            values = value if isinstance(value, list) else [value]
            if any(str(v) == title for v in values if v):
                linked.append(f"{other.get('title')} [{other_id}]")
        if not linked:
            return None
        lead = f"{label(target).capitalize()} {title}: {', '.join(linked)}"
        return Reply(lead, [])

    def _section_asked(self, reading: Reading, page: Mapping[str, Any]) -> Reply | None:
        """ "What was decided at the pricing review?": the named page's section whose name
        the question says ("decided" ~ Decisions, "шийдсэн" ~ Шийдвэрүүд), all of it."""
        title_words = set(words(str(page.get("title"))))
        asked = [w for w in words(reading.question) if w not in STOPWORDS | title_words]
        own = from_page(page, 0, self.dated(page))
        for section in page.get("sections") or {}:
            if not matched(asked, words(str(section))):
                continue
            body = [p.line() for p in own if p.kind == "section" and p.heading.startswith(section)]
            if body:
                head = f"{page.get('effective_date')} · " if self.dated(page) else ""
                lead = f"{head}{page.get('title')} — {section} [{page.get('id')}]"
                return Reply(lead, body[:SECTION_LINES])
        return None

    def _profile(self, page: Mapping[str, Any]) -> Reply:
        """ "Who is X": the page's fields in one line, then its newest facts."""
        fields = page.get("fields") or {}
        parts = [f"{label(k)}: {show(v)}" for k, v in fields.items() if v not in (None, "", [])]
        lead = f"{page.get('title')} — {'; '.join(parts)}" if parts else str(page.get("title"))
        own = from_page(page, 0, self.dated(page))
        body = [p.line() for p in own if p.kind == "section"][:2]
        dated = [p for p in own if p.kind == "timeline" and "changed from" not in p.text]
        return Reply(f"{lead} [{page.get('id')}]", body + [p.line() for p in dated[:3]])

    # -- 4. the sentences that best match

    async def _evidence_answer(
        self,
        reading: Reading,
        results: list[Mapping[str, Any]],
        named: list[Mapping[str, Any]],
    ) -> Reply:
        best = self._best(reading, results=results, named=named)
        # A question for a figure is answered only by a sentence that gives one.
        answers = [p for p in best if reading.wants != "amount" or AMOUNT.search(p.text)]
        answered = max((score_piece(p, reading)[1] for p in answers), default=0.0) >= 0.999
        # Not answered by the results: the pages linked to the one the question names
        # (the meetings about a company) are where its facts are written.
        if named and not answered and await self.read_linked(str(named[0].get("id"))):
            best = self._best(reading, results=[*results, *self._read_results()], named=named)
        if not reading.terms and not reading.identifiers:
            return Reply(None, [p.line() for p in best] or self._summaries(results))
        scored = [(score_piece(p, reading), p) for p in best]
        full = [p for (_, coverage), p in scored if coverage >= 0.999]
        top_cover = max((c for (_, c), _ in scored), default=0.0)
        if reading.wants == "amount" or any(
            same_word(t, "value") or same_word(t, "amount") for t in reading.terms
        ):
            tied = [p for (_, c), p in scored if c >= top_cover - 1e-9]
            disputed = _disagreement(tied) if self._recorded_dispute(tied) else None
            if disputed is not None:
                return Reply(disputed, [p.line() for p in best])
        if reading.wants == "amount":
            # A figure answers "what price ...": the best piece that gives one leads, if it
            # holds at least half the question's words ("Үнэ: нэг хүргэлтэд 900 төгрөг").
            priced = [(c, p) for (_, c), p in scored if c >= 0.5 and AMOUNT.search(p.text)]
            # the fullest first, then the newest: the figure agreed last holds
            priced.sort(key=lambda cp: (-cp[0], newest_first(cp[1].date or "")))
            ranked = [p for _, p in priced]
            full = [p for p in ranked if p in full] or ranked[:1] or full
        if full:
            # a decision a newer one reversed is history, not what holds: it comes after
            full.sort(key=lambda p: self._replaced(p.page))
            lead = full[0]
            rest = [p.line() for p in best if p is not lead]
            return Reply(lead.line().removeprefix("- "), rest + self._dates_of(reading, named))
        if top_cover < 0.5:
            closest = [p.line() for p in best[:3]]
            return Reply(NO_SENTENCE + (" The closest:" if closest else ""), closest)
        return Reply(None, [p.line() for p in best] + self._dates_of(reading, named))

    def _dates_of(self, reading: Reading, named: list[Mapping[str, Any]]) -> list[str]:
        """For "when" about a named page: its date fields, with what they replaced."""
        if reading.wants != "when":
            return []
        out = []
        for item in named:
            page = self.pages.get(str(item.get("id")))
            spec = self.folder(str(item.get("folder")))
            if page is None or spec is None or spec.date_field:
                continue
            recorded = changes(page)
            for f in spec.fields:
                value = (page.get("fields") or {}).get(f.name)
                if f.type == "date" and value:
                    change = recorded.get(f.name)
                    day = f"{change.date} · " if change and change.date else ""
                    text = f"{page.get('title')} — {label(f.name)}: {value}{since(change)}"
                    out.append(f"- {day}{text} [{page.get('id')}]")
        return out

    def _summaries(self, results: Sequence[Mapping[str, Any]]) -> list[str]:
        lines = []
        for item in results[:EVIDENCE_LINES]:
            day = f"{item.get('date')} · " if item.get("date") else ""
            lines.append(f"- {day}{item.get('title')} [{item.get('id')}]")
        return lines

    # -- helpers

    def _recorded_dispute(self, pieces_: Sequence[Evidence]) -> bool:
        """Whether a page the pieces come from holds an open conflict: two sources of the
        same subject, field and period that neither supersedes (its Open Questions). Two
        figures in two sentences are no disagreement by themselves: a list price and a
        customer's price, an old price and a new one are different facts."""
        for piece in pieces_:
            page = self.pages.get(piece.page) or {}
            listed = page.get("open_questions")
            if isinstance(listed, list) and any(
                not str(q).startswith(HELD_QUESTION) for q in listed
            ):
                return True
        return False

    def _replaced(self, page_id: str) -> bool:
        """The page is a decision a newer one reversed or superseded."""
        fields = (self.pages.get(page_id) or {}).get("fields") or {}
        return bool(fields.get("superseded_by")) or fields.get("status") in REPLACED

    def _notes(self, result: Mapping[str, Any]) -> list[str]:
        reasons = [*self.log.degraded, *(result.get("degraded") or ())]
        return notes_for(reasons, ingesting(result))

    def _cited(self, text: str, results: Sequence[Mapping[str, Any]]) -> list[CitedPage]:
        from read_agent.tools.citations import extract_citations

        known = {str(r.get("id")): r for r in results}
        out = []
        for pid in extract_citations(text):
            found = self.log.pages.get(pid)
            if found is None and pid in known:
                item = known[pid]
                found = CitedPage(pid, str(item.get("title") or ""), item.get("date"))
            if found is not None:
                out.append(found)
        return out


# --- helpers without state ----------------------------------------------------------


def _named(result: Mapping[str, Any]) -> bool:
    """A page the question names: found by its title or an alias, not fuzzily."""
    labels = result.get("labels") or ()
    ranks = result.get("ranks") or {}
    exact = "exact_title_match" in labels or "alias_hit" in labels
    return exact or ("title" in ranks and "fuzzy_title_match" not in labels)


def _by_subject(reading: Reading, results: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The result an order word picks: of the pages ``kb_query`` ordered (first, latest,
    next, in that order), the first whose title says the most of the question's subject.
    "The first pricing review" is the first meeting titled so, not the first meeting
    that mentions pricing; "the latest product roadmap review" is the newer of the two
    roadmap reviews. A title must say at least half the question's topical words; a
    question naming no subject ("the latest meeting") takes the first."""
    ordered = [r for r in results if "date_ordered" in (r.get("labels") or ())]
    asked = [w for w in words(reading.question) if w not in STOPWORDS and w not in _ORDER_TERMS]
    best: tuple[int, int] = (0, 0)
    chosen = ordered[0] if ordered else None
    for item in ordered:
        title = words(str(item.get("title") or ""))
        score = (len(matched(reading.terms, title)), len(matched(asked, title)))
        if 2 * score[0] < len(reading.terms):
            continue  # a long question's one word in a title is no subject
        if score > best:
            best, chosen = score, item
    return chosen


def _links(page: Mapping[str, Any], spec: FolderSpec | None) -> str:
    if spec is None:
        return ""
    fields = page.get("fields") or {}
    parts = [
        f"{label(f.name)}: {show(fields[f.name])}"
        for f in spec.fields
        if f.is_link and fields.get(f.name)
    ]
    return "; ".join(parts)


def _in_order(body: Sequence[Evidence], chosen: Sequence[Evidence]) -> list[Evidence]:
    wanted = {id(p) for p in chosen}
    return [p for p in body if id(p) in wanted]


def _open_question(page: Mapping[str, Any], field: str) -> str | None:
    """The page's unresolved conflict on ``field``: its Open Questions line that starts
    with the field's name ("- contract_value: sources of the same date ... disagree")."""
    listed = page.get("open_questions")
    if isinstance(listed, list):
        lines = [str(x) for x in listed]
    else:  # a server that returns it as a section
        sections = page.get("sections") or {}
        body = next((str(v) for k, v in sections.items() if str(k).lower() == "open questions"), "")
        lines = body.splitlines()
    for line in lines:
        text = line.strip().lstrip("-*• ").strip()
        if text.startswith(f"{field}: "):
            return text.removeprefix(f"{field}: ")
    return None


def _disagreement(pieces_: Sequence[Evidence]) -> str | None:
    """Two sources giving different figures for the same thing, as one line."""
    seen: dict[str, Evidence] = {}
    for piece in pieces_:
        amounts = AMOUNT.findall(piece.text)
        if amounts:  # the figure a sentence gives first is the one it is about
            seen.setdefault(re.sub(r"[^\d.]", "", amounts[0]).rstrip("."), piece)
    if len(seen) < 2 or len({p.page for p in seen.values()} | {p.date for p in seen.values()}) < 2:
        return None
    shown = [
        f"{AMOUNT.findall(p.text)[0]} ({p.date + ', ' if p.date else ''}[{p.page}])"
        for p in list(seen.values())[:2]
    ]
    return DISPUTED + " vs ".join(shown) + "."
