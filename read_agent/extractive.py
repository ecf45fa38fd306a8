"""The answer without a language model: evidence sentences from the pages, each with one
date and its citation, and a short direct first line when the pages clearly answer.

::

    Bob Martinez — reports to: Dana Whitfield (since 2026-09-21; before: Karen Lee) [people/bob-martinez]
    Extractive answer (no language model): the sentences below are quoted from the pages.
    - 2026-09-21 · Bob has been promoted to VP of Operations at Globex, effective 2026-09-21. [people/bob-martinez]

What leads, in order of what the question asks (read by ``kb_query``, see
:mod:`read_agent.reading`):

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

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memserver.kb.schema import FolderSpec, Schema
from memserver.kb.words import is_cyrillic, words
from read_agent.citations import Source, normalize_id
from read_agent.evidence import (
    Change,
    Evidence,
    changes,
    from_page,
    from_result,
    label,
    pieces,
    show,
)
from read_agent.evidence import score as score_piece
from read_agent.reading import Reading, matched, read, same_word
from read_agent.toolset import CallLog, Toolset

DEFAULT_RESULTS = 10
PAGES_READ = 8  # the best results read in full
LINKED_READ = 4  # pages linked to the named page read when the results do not answer
EVIDENCE_LINES = 6
LISTED = 20
HEADER = "Extractive answer (no language model): the sentences below are quoted from the pages."
NO_ANSWER = "The knowledge base has no answer to this question (the search found no pages)."
NO_SENTENCE = "The knowledge base has no sentence that answers this directly."
_AMOUNT = re.compile(r"[$€£]\s?\d[\d,.]*\d|\d[\d,.]*\d\s?(?:₮|төгрөг|MNT|USD)")
_ORDER_WORDS = {"newest": "Latest", "oldest": "First", "next": "Next"}
NOTES = {
    "ingest_in_progress": "the knowledge base is still being ingested; newer notes may be "
    "missing from this answer",
    "embedding_pending": "some pages are not embedded yet; matches by meaning may be missing",
    "no_llm": "",
    "llm_unavailable": "the language model did not answer, so this answer is extractive",
    "budget_exceeded": "the token budget is spent, so this answer is extractive",
}


@dataclass
class Reply:
    """The answer's lines and the pages they cite (in order of first citation)."""

    lead: str | None = None
    lines: list[str] = field(default_factory=list)
    window: str | None = None

    def text(self, notes: Sequence[str]) -> str:
        out = [self.lead] if self.lead else []
        out.append(HEADER if not self.window else f"{HEADER} Dates: {self.window}.")
        out.extend(self.lines)
        out.extend(f"Note: {n}." for n in notes if n)
        return "\n".join(out)


class Extractive:
    """One extractive answer over the read tools (see the module docstring)."""

    def __init__(
        self,
        tools: Toolset,
        log: CallLog,
        schema: Schema | None,
        now: dt.datetime | None,
        limit: int = DEFAULT_RESULTS,
    ) -> None:
        self.tools = tools
        self.log = log
        self.schema = schema
        self.now = now
        self.limit = limit
        self.pages: dict[str, Mapping[str, Any]] = {}

    # -- tools

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any] | None:
        if name not in self.tools.tools:
            return None
        args = self.tools.with_now(name, arguments, self.now)
        ok, _, result = await self.tools.call(name, args, self.log)
        return result if ok and isinstance(result, Mapping) else None

    async def page(self, page_id: str) -> Mapping[str, Any] | None:
        if page_id not in self.pages:
            found = await self.call("kb_get_page", {"id": page_id})
            if found is None:
                return None
            self.pages[page_id] = found
        return self.pages[page_id]

    # -- the answer

    async def answer(self, question: str, query_argument: str) -> tuple[str, list[Source]]:
        arguments: dict[str, Any] = {query_argument: question}
        if self.tools.accepts("kb_query", "limit"):
            arguments["limit"] = self.limit
        result = await self.call("kb_query", arguments)
        if result is None:
            return f"{NO_ANSWER.split(' (')[0]} (the search failed).", []
        results = [r for r in result.get("results") or () if isinstance(r, Mapping)]
        named = [r for r in results if _named(r)]
        for item in [*named, *results][: PAGES_READ + len(named)]:
            pid = normalize_id(str(item.get("id") or ""))
            if pid and not pid.startswith("source/") and len(self.pages) < PAGES_READ + 2:
                await self.page(pid)
        names = [n for r in named for n in self._names(str(r.get("id")))]
        reading = read(question, result, names)
        reply = await self._reply(reading, results, named, question)
        if reply is None:
            return NO_ANSWER, []
        text = reply.text(self._notes(result))
        return text, self._cited(text, results)

    async def _reply(
        self,
        reading: Reading,
        results: list[Mapping[str, Any]],
        named: list[Mapping[str, Any]],
        question: str,
    ) -> Reply | None:
        if reading.listing:
            listed = await self._listing(reading)
            if listed is not None:
                return listed
        if not results:
            return None
        if reading.order is not None:
            ordered = await self._ordered(reading, results)
            if ordered is not None:
                return ordered
        pages = [p for item in named if (p := self.pages.get(str(item.get("id")))) is not None]
        for page in pages:  # the named page that has the field asked about
            found = self._field_answer(reading, page, question)
            if found is not None:
                return found
        if pages and not reading.terms and not reading.identifiers and reading.wants != "amount":
            return self._profile(pages[0])
        return await self._evidence_answer(reading, results, named)

    # -- 1. a window: list what is in it

    async def _listing(self, reading: Reading) -> Reply | None:
        window = reading.window or {}
        start, end = _dates(window)
        shown = _shown_window(window)
        if reading.folders:
            lines: list[str] = []
            for folder in reading.folders:
                lines += await self._folder_pages(folder, start, end)
            if not lines:
                lines = await self._sections_named(reading.folders, start, end)
            if not lines:
                return Reply(f"No {', '.join(reading.folders)} between {shown}.", [], shown)
            return Reply(_first_line(lines, reading), lines[:LISTED], shown)
        events = await self.call("kb_timeline", {"window": reading.question, "limit": 200})
        if events is None:
            return None
        lines = self._event_lines(events)
        if not lines:
            return Reply(f"Nothing is recorded between {shown}.", [], shown)
        return Reply(None, lines[:LISTED], shown)

    async def _folder_pages(self, folder: str, start: str | None, end: str | None) -> list[str]:
        args: dict[str, Any] = {"folder": folder, "limit": 50}
        args.update({k: v for k, v in (("start", start), ("end", end)) if v})
        listed = await self.call("kb_list_pages", args)
        rows = sorted(
            (p for p in (listed or {}).get("pages") or () if isinstance(p, Mapping)),
            key=lambda p: (str(p.get("effective_date") or ""), str(p.get("id"))),
        )
        lines = []
        for row in rows:
            pid, day = str(row.get("id")), str(row.get("effective_date") or "")[:10]
            gist = ""
            if len(rows) <= 3 and (page := await self.page(pid)) is not None:
                gist = _gist(page)
            line = f"- {day} · {row.get('title')}" + (f" — {gist}" if gist else "")
            lines.append(f"{line} [{pid}]")
        return lines

    async def _sections_named(
        self, folders: Sequence[str], start: str | None, end: str | None
    ) -> list[str]:
        """ "Decisions since ...": the sections so named of the dated pages in the window."""
        if self.schema is None:
            return []
        wanted = set().union(*(_folder_words(self.schema.folder(f)) for f in folders))
        lines = []
        for spec in self.schema.folders:
            if not spec.date_field or spec.name in folders:
                continue
            args: dict[str, Any] = {"folder": spec.name, "limit": 20}
            args.update({k: v for k, v in (("start", start), ("end", end)) if v})
            listed = await self.call("kb_list_pages", args)
            for row in sorted(
                (p for p in (listed or {}).get("pages") or () if isinstance(p, Mapping)),
                key=lambda p: str(p.get("effective_date") or ""),
            ):
                page = await self.page(str(row.get("id")))
                if page is None:
                    continue
                for piece in from_page(page, 0, True):
                    if piece.kind == "section" and matched(wanted, words(piece.heading)):
                        lines.append(piece.line())
        return lines

    def _event_lines(self, events: Mapping[str, Any]) -> list[str]:
        dated = self.schema is not None and {f.name for f in self.schema.folders if f.date_field}
        seen: set[str] = set()
        out: list[tuple[str, str]] = []
        for event in events.get("events") or ():
            if not isinstance(event, Mapping):
                continue
            kind, text = str(event.get("kind")), str(event.get("text") or "")
            if kind == "page" and dated and event.get("folder") not in dated:
                continue  # an entity page dated by its newest entry, not an event
            if text.startswith(("Attended ", "Meeting “")) and kind == "timeline":
                continue  # the meeting itself is listed as a page
            key = " ".join(words(text))
            if key in seen:
                continue
            seen.add(key)
            shown = text if kind == "timeline" else str(event.get("title"))
            day = str(event.get("date"))[:10]
            out.append((day, f"- {day} · {_clean(shown)} [{event.get('id')}]"))
        return [line for _, line in sorted(out, key=lambda x: x[0])]

    # -- 2. latest / first / next

    async def _ordered(self, reading: Reading, results: list[Mapping[str, Any]]) -> Reply | None:
        lead = next((r for r in results if "date_ordered" in (r.get("labels") or ())), None)
        if lead is None:
            if reading.order == "next":
                return Reply(f"Nothing is dated after {self._today()} for this question.")
            return None
        pid = str(lead.get("id"))
        page = self.pages.get(pid)
        spec = self._folder(str(lead.get("folder")))
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
        result = await self.call("kb_query", {"question": str(page.get("title")), "limit": 5})
        for item in (result or {}).get("results") or ():
            pid = normalize_id(str(item.get("id") or "")) if isinstance(item, Mapping) else None
            if pid and pid != page.get("id") and not pid.startswith("source/"):
                await self.page(pid)
        return self._mentions(page, day)

    def _mentions(self, page: Mapping[str, Any], day: str) -> list[str]:
        title = " ".join(words(str(page.get("title"))))
        out = []
        for other_id, other in self.pages.items():
            if other_id == page.get("id"):
                continue
            for piece in from_page(other, 0, self._dated(other)):
                text = " ".join(words(piece.text))
                later = piece.date is not None and piece.date > day
                if later and (title in text or f"the {day}" in piece.text):
                    out.append(f"- Later: {piece.date} · {piece.text} [{piece.page}]")
        return out[:2]

    # -- 3. a field of a named page

    def _field_answer(
        self, reading: Reading, page: Mapping[str, Any], question: str
    ) -> Reply | None:
        spec = self._folder(str(page.get("folder")))
        if spec is None:
            return None
        target = self._field_asked(reading, spec, page)
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
        dated = self._dated(page)
        head = f"{page.get('effective_date')} · " if dated and page.get("effective_date") else ""
        lead = f"{head}{page.get('title')} — {label(target)}: {show(value)}{_since(change)}"
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
        """The field the question asks about: the relation's, one its words name
        ("role", "renew" -> renewal_date), or the one an enum value names ("customer")."""
        for f in spec.fields:
            if reading.relation is not None and f.verb == reading.relation:
                return f.name
        for f in spec.fields:
            names = set(words(f.name.replace("_", " "))) - {"date"}
            if f.verb:
                names |= set(words(f.verb.replace("_", " ")))
            if matched(reading.terms, names):
                return f.name
            if f.type == "enum" and matched(reading.terms, [v.lower() for v in f.values]):
                return f.name
        return None

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

    def _profile(self, page: Mapping[str, Any]) -> Reply:
        """ "Who is X": the page's fields in one line, then its newest facts."""
        fields = page.get("fields") or {}
        parts = [f"{label(k)}: {show(v)}" for k, v in fields.items() if v not in (None, "", [])]
        lead = f"{page.get('title')} — {'; '.join(parts)}" if parts else str(page.get("title"))
        own = from_page(page, 0, self._dated(page))
        body = [p.line() for p in own if p.kind == "section"][:2]
        dated = [p for p in own if p.kind == "timeline" and "changed from" not in p.text]
        return Reply(f"{lead} [{page.get('id')}]", body + [p.line() for p in dated[:3]])

    # -- 4. the sentences that best match

    def _candidates(self, results: Sequence[Mapping[str, Any]]) -> list[Evidence]:
        out: list[Evidence] = []
        for rank, item in enumerate(results):
            pid = str(item.get("id"))
            page = self.pages.get(pid)
            if page is not None:
                out += from_page(page, rank, self._dated(page))
            else:
                spec = self._folder(str(item.get("folder")))
                names = spec.field_names if spec is not None else ()
                out += from_result(item, rank, bool(spec and spec.date_field), names)
        return out

    def _best(
        self, reading: Reading, exclude_field: str | None = None, results: Sequence[Any] = ()
    ) -> list[Evidence]:
        pool = self._candidates(results) if results else self._candidates(self._read_results())
        scored = []
        seen: set[str] = set()
        for piece in pool:
            if piece.field is not None and piece.field == exclude_field:
                continue
            value, coverage = score_piece(piece, reading)
            key = " ".join(words(piece.text))
            if coverage <= 0 or key in seen:
                continue
            seen.add(key)
            scored.append((round(coverage, 3), value, piece))
        if reading.soft:  # "current", "recently": of the fullest matches, the newest first
            scored.sort(key=lambda x: (-x[0], _newer(x[2].date or "", reading), -x[1]))
        else:
            scored.sort(key=lambda x: -x[1])
        return [p for _, _, p in scored[:EVIDENCE_LINES]]

    def _read_results(self) -> list[Mapping[str, Any]]:
        return [{"id": pid, "folder": page.get("folder")} for pid, page in self.pages.items()]

    async def _evidence_answer(
        self,
        reading: Reading,
        results: list[Mapping[str, Any]],
        named: list[Mapping[str, Any]],
    ) -> Reply:
        best = self._best(reading, results=results)
        answered = max((score_piece(p, reading)[1] for p in best), default=0.0) >= 0.999
        # Not answered by the results: the pages linked to the one the question names
        # (the meetings about a company) are where its facts are written.
        if named and not answered and await self._read_linked(str(named[0].get("id"))):
            best = self._best(reading, results=[*results, *self._read_results()])
        if not reading.terms and not reading.identifiers:
            return Reply(None, [p.line() for p in best] or self._summaries(results))
        scored = [(score_piece(p, reading), p) for p in best]
        full = [p for (_, coverage), p in scored if coverage >= 0.999]
        top_cover = max((c for (_, c), _ in scored), default=0.0)
        if reading.wants == "amount" or any(
            same_word(t, "value") or same_word(t, "amount") for t in reading.terms
        ):
            disputed = _disagreement([p for (_, c), p in scored if c >= top_cover - 1e-9])
            if disputed is not None:
                return Reply(disputed, [p.line() for p in best])
        if full:
            lead = full[0]
            rest = [p.line() for p in best if p is not lead]
            return Reply(lead.line().removeprefix("- "), rest + self._dates_of(reading, named))
        if top_cover < 0.5:
            closest = [p.line() for p in best[:3]]
            return Reply(NO_SENTENCE + (" The closest:" if closest else ""), closest)
        return Reply(None, [p.line() for p in best] + self._dates_of(reading, named))

    async def _read_linked(self, page_id: str) -> bool:
        """Read the pages linking to ``page_id`` (kb_neighbors, inward); True if any."""
        found = await self.call("kb_neighbors", {"id": page_id, "direction": "in"})
        others = [
            str(edge.get("from_id"))
            for edge in (found or {}).get("edges") or ()
            if isinstance(edge, Mapping) and edge.get("from_id")
        ]
        # Events first (the meetings about it), then the rest, each read once.
        events = {f.name for f in self.schema.folders if f.date_field} if self.schema else set()
        others.sort(key=lambda pid: pid.split("/", 1)[0] not in events)
        read = 0
        for other in dict.fromkeys(others):
            if other not in self.pages and read < LINKED_READ:
                read += await self.page(other) is not None
        return read > 0

    def _dates_of(self, reading: Reading, named: list[Mapping[str, Any]]) -> list[str]:
        """For "when" about a named page: its date fields, with what they replaced."""
        if reading.wants != "when":
            return []
        out = []
        for item in named:
            page = self.pages.get(str(item.get("id")))
            spec = self._folder(str(item.get("folder")))
            if page is None or spec is None or spec.date_field:
                continue
            recorded = changes(page)
            for f in spec.fields:
                value = (page.get("fields") or {}).get(f.name)
                if f.type == "date" and value:
                    change = recorded.get(f.name)
                    day = f"{change.date} · " if change and change.date else ""
                    text = f"{page.get('title')} — {label(f.name)}: {value}{_since(change)}"
                    out.append(f"- {day}{text} [{page.get('id')}]")
        return out

    def _summaries(self, results: Sequence[Mapping[str, Any]]) -> list[str]:
        lines = []
        for item in results[:EVIDENCE_LINES]:
            day = f"{item.get('date')} · " if item.get("date") else ""
            lines.append(f"- {day}{item.get('title')} [{item.get('id')}]")
        return lines

    # -- helpers

    def _names(self, page_id: str) -> list[str]:
        page = self.pages.get(page_id)
        if page is None:
            return []
        return [str(page.get("title") or ""), *(str(a) for a in page.get("aliases") or ())]

    def _folder(self, name: str) -> FolderSpec | None:
        if self.schema is None or name not in self.schema.folder_names:
            return None
        return self.schema.folder(name)

    def link_names(self, page: Mapping[str, Any]) -> tuple[str, ...]:
        """The names a page's link fields hold ("company: Globex")."""
        spec = self._folder(str(page.get("folder")))
        fields = page.get("fields") or {}
        out: list[str] = []
        for f in spec.fields if spec is not None else ():
            value = fields.get(f.name)
            if f.is_link and value:
                out += [str(v) for v in value] if isinstance(value, list) else [str(value)]
        return tuple(out)

    def is_person(self, page: Mapping[str, Any]) -> bool:
        """A page about a person: of type person, or of a folder with a job-title field."""
        spec = self._folder(str(page.get("folder")))
        roles = ("role", "position", "job_title")
        return page.get("type") == "person" or bool(
            spec is not None and any(spec.field(r) is not None for r in roles)
        )

    def _dated(self, page: Mapping[str, Any]) -> bool:
        spec = self._folder(str(page.get("folder")))
        return bool(spec is not None and spec.date_field)

    def _today(self) -> str:
        moment = self.now or dt.datetime.now().astimezone()
        return moment.date().isoformat()

    def _notes(self, result: Mapping[str, Any]) -> list[str]:
        return notes_for([*self.log.degraded, *(result.get("degraded") or ())])

    def _cited(self, text: str, results: Sequence[Mapping[str, Any]]) -> list[Source]:
        from read_agent.citations import extract_citations

        known = {str(r.get("id")): r for r in results}
        out = []
        for pid in extract_citations(text):
            found = self.log.sources.get(pid)
            if found is None and pid in known:
                item = known[pid]
                found = Source(pid, str(item.get("title") or ""), item.get("date"))
            if found is not None:
                out.append(found)
        return out


# --- helpers without state ----------------------------------------------------------


def notes_for(reasons: Sequence[Any]) -> list[str]:
    """Degraded reasons as words for the end of an answer (routing fallbacks and the
    answer's own mode are not news to the reader)."""
    out = []
    for reason in dict.fromkeys(str(r) for r in reasons):
        note = NOTES.get(reason, f"the search reported {reason}")
        if note and not reason.startswith("routing_"):
            out.append(note)
    return out


def _named(result: Mapping[str, Any]) -> bool:
    """A page the question names: found by its title or an alias, not fuzzily."""
    labels = result.get("labels") or ()
    ranks = result.get("ranks") or {}
    exact = "exact_title_match" in labels or "alias_hit" in labels
    return exact or ("title" in ranks and "fuzzy_title_match" not in labels)


def _dates(window: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """A window's [start, end) as the dates kb_list_pages takes (a partial last day counts)."""
    start, end = str(window.get("start") or ""), str(window.get("end") or "")
    first = start[:10] if start and not start.startswith("0001") else None
    last = None
    if end and not end.startswith("9999"):
        last = end[:10]
        if end[11:19] not in ("", "00:00:00"):
            last = (dt.date.fromisoformat(last) + dt.timedelta(days=1)).isoformat()
    return first, last


def _shown_window(window: Mapping[str, Any]) -> str:
    """The window as the days it holds: "2026-11-09 and 2026-11-15", inclusive."""
    first, last = _dates(window)
    if last is not None:
        last = (dt.date.fromisoformat(last) - dt.timedelta(days=1)).isoformat()
    if first and last:
        return first if first == last else f"{first} and {last}"
    return f"{first} and now" if first else f"the start and {last}"


def _first_line(lines: Sequence[str], reading: Reading) -> str:
    names = [re.sub(r"^- ", "", line).rsplit(" [", 1)[0].split(" — ")[0] for line in lines[:4]]
    more = f" (and {len(lines) - 4} more)" if len(lines) > 4 else ""
    return f"{len(lines)} found: {'; '.join(names)}{more}."


def _gist(page: Mapping[str, Any]) -> str:
    for body in (page.get("sections") or {}).values():
        for _, piece in pieces(str(body)):
            if len(piece.split()) >= 4:
                return piece
    return ""


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


def _since(change: Change | None) -> str:
    if change is None:
        return ""
    when = f"since {change.date}; " if change.date else ""
    return f" ({when}before: {change.old})"


def _in_order(body: Sequence[Evidence], chosen: Sequence[Evidence]) -> list[Evidence]:
    wanted = {id(p) for p in chosen}
    return [p for p in body if id(p) in wanted]


def _newer(day: str, reading: Reading) -> str:
    """A sort key: with "current"/"recently" newer first (inverted characters)."""
    if not reading.soft or not day:
        return ""
    return "".join(chr(0x10FFFF - ord(c)) for c in day)


def _disagreement(pieces_: Sequence[Evidence]) -> str | None:
    """Two sources giving different figures for the same thing, as one line."""
    seen: dict[str, Evidence] = {}
    for piece in pieces_:
        amounts = _AMOUNT.findall(piece.text)
        if amounts:  # the figure a sentence gives first is the one it is about
            seen.setdefault(re.sub(r"[^\d.]", "", amounts[0]).rstrip("."), piece)
    if len(seen) < 2 or len({p.page for p in seen.values()} | {p.date for p in seen.values()}) < 2:
        return None
    shown = [
        f"{_AMOUNT.findall(p.text)[0]} ({p.date + ', ' if p.date else ''}[{p.page}])"
        for p in list(seen.values())[:2]
    ]
    return "The sources disagree: " + " vs ".join(shown) + "."


def _folder_words(spec: FolderSpec) -> set[str]:
    out = {spec.name, spec.type}
    out |= {w for w in words(spec.description) if is_cyrillic(w) and len(w) >= 4}
    return out


def _clean(text: str) -> str:
    return " ".join(re.sub(r"\s*\[source: [^\]]*\]\s*$", "", text).split())
