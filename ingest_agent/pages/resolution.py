"""Which existing page each name of a note is, for the ingest agent, over MCP only.

Entities (people, companies ...) are looked up by title and alias (locally among the
names read once per run, then ``kb_resolve``), fuzzily when one candidate is close, and
through the other script (a Cyrillic name and its Latin transliteration); a name two
pages fit equally well is "ambiguous" and its draft is dropped rather than guessed. Events
(meetings, decisions) are the page of that title on that date, or a new one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ingest_agent.memory import Memory, Resolved
from ingest_agent.names import has_cyrillic, norm, transliterated_alias
from ingest_agent.pages.drafts import Work
from ingest_agent.records import is_dated
from memserver.errors import UserError
from memserver.kb.page import as_date, page_slug
from memserver.kb.schema import Schema
from memserver.kb.translit import transliterate

MAX_LOOKUPS = 120  # names per source the rules extractor looks up
PRELOAD_LIMIT = 300  # up to this many entity pages, their names are read once per run
FUZZY_ACCEPT = 0.85  # a single fuzzy candidate this close is the same entity
TRANSLITERATED_ACCEPT = 0.5  # ... and this close, when found through the other script
LOCAL_TRANSLITERATED_ACCEPT = 0.8  # difflib ratio for names seen in this run
AMBIGUOUS = "ambiguous"
# Capitalised words that start sentences or name dates, never worth a lookup.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "as",
        "at",
        "but",
        "by",
        "for",
        "from",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "it",
        "its",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "us",
        "we",
        "what",
        "when",
        "where",
        "who",
        "why",
        "with",
        "you",
        "your",
        "next",
        "notes",
        "action",
        "items",
        "summary",
        "decision",
        "decisions",
        "discussion",
        "context",
        "outcome",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "week",
        "weekly",
        "today",
        "yesterday",
        "tomorrow",
        "new",
        "yes",
        "ok",
        "thanks",
        "thank",
        "please",
        "also",
    ]
)


class Resolver:
    """Names to pages for one run; what it learnt is kept until :meth:`reset`."""

    def __init__(self, memory: Memory, schema: Schema) -> None:
        self.memory = memory
        self.schema = schema
        self._known: dict[str, tuple[str, str]] = {}
        self._unknown: set[str] = set()

    def reset(self) -> None:
        """Forget what the last run learnt (pages may have changed since)."""
        self._known.clear()
        self._unknown.clear()

    def remember(self, folder: str, title: str) -> None:
        """An entity page this run wrote: later notes find it without a lookup."""
        self._known[norm(title)] = (folder, title)

    def entity_folders(self) -> list[str]:
        return [f.name for f in self.schema.folders if not is_dated(f)]

    async def entity_titles(self) -> list[str]:
        """Titles of existing entity pages, so the model reuses names."""
        return sorted({title for _, _, title in await self.memory.titles(self.entity_folders())})

    async def lookup(self, names: Sequence[str]) -> dict[str, tuple[str, str]]:
        """norm(name) -> (folder, title) for names of existing entity pages (titles, aliases)."""
        entity = self.entity_folders()
        if await self.memory.preload_names(entity, PRELOAD_LIMIT):
            return self.memory.names_in(entity)  # every title and alias: match locally
        for _, folder, title in await self.memory.titles(entity):
            self._known.setdefault(norm(title), (folder, title))
        for name in names[:MAX_LOOKUPS]:
            key = norm(name)
            if key in self._known or key in self._unknown or len(key) < 3 or key in STOPWORDS:
                continue
            local = next(
                (hit for f in entity if (hit := self.memory.local(name, f)) is not None), None
            )
            if local is not None:
                self._known[key] = (local.folder, local.title)
                continue
            verdict, candidates, ambiguous = await self.memory.resolve(name)
            best = candidates[0] if candidates else None
            if verdict == "exists" and not ambiguous and best and best["folder"] in entity:
                self._known[key] = (best["folder"], best["title"])
            else:
                # Not a page now; pages this run writes are found through memory.local.
                self._unknown.add(key)
        return dict(self._known)

    async def resolve_entity(self, work: Work, names: dict[tuple[str, str], str | None]) -> None:
        draft = work.draft
        spec = self.schema.folder(work.draft.folder)
        found = await self.find(draft.title, draft.page.aliases, spec.name)
        keys = {norm(n) for n in (draft.title, *draft.page.aliases)}
        if isinstance(found, str):  # ambiguous: two pages fit equally well
            work.dropped = True
            for key in keys:
                names[(spec.name, key)] = None
            return
        page = draft.page
        if found is not None:
            work.page_id = found.id
            title = found.title
            if norm(title) != norm(draft.title):
                page = replace(page, title=title, aliases=(*page.aliases, draft.title))
        else:
            title = draft.title
            latin = transliterated_alias(title)
            if latin is not None:
                page = replace(page, aliases=(*page.aliases, latin))
        work.draft = replace(draft, page=page)
        for key in keys:
            names[(spec.name, key)] = title

    async def find(self, title: str, aliases: Sequence[str], folder: str) -> Resolved | str | None:
        """The existing page a name is, None for a new page, "ambiguous" when unclear."""
        for name in (title, *aliases):
            hit = self.memory.local(name, folder)
            if hit is not None:
                return hit
        verdict, candidates, ambiguous = await self.memory.resolve(title, folder)
        if ambiguous:
            return AMBIGUOUS
        if candidates:
            best = candidates[0]
            strong = verdict == "exists"
            close = best.get("why") == "fuzzy_title" and float(best.get("score", 0)) >= FUZZY_ACCEPT
            if strong or close:
                return Resolved(best["id"], best["title"], folder, str(best.get("why")))
        for alias in aliases:
            verdict, candidates, ambiguous = await self.memory.resolve(alias, folder)
            if verdict == "exists" and candidates and not ambiguous:
                return Resolved(candidates[0]["id"], candidates[0]["title"], folder, "alias")
        if has_cyrillic(title):
            latin = transliterate(title) or title
            hit = self.memory.local(latin, folder) or self.memory.similar(
                latin, folder, LOCAL_TRANSLITERATED_ACCEPT
            )
            if hit is not None:
                return hit
            verdict, candidates, ambiguous = await self.memory.resolve(latin, folder)
            if candidates and not ambiguous:
                best = candidates[0]
                if verdict == "exists" or (
                    best.get("why") == "fuzzy_title"
                    and float(best.get("score", 0)) >= TRANSLITERATED_ACCEPT
                ):
                    return Resolved(best["id"], best["title"], folder, "transliterated")
        return None

    async def resolve_event(self, work: Work) -> None:
        spec = self.schema.folder(work.draft.folder)
        page = work.draft.page
        day = as_date(page.fields.get(spec.date_field)) if spec.date_field else None
        hit = self.memory.local(page.title, spec.name, day)
        if hit is not None:
            work.page_id = hit.id
            return
        verdict, candidates, ambiguous = await self.memory.resolve(page.title, spec.name, day)
        if verdict == "exists" and candidates and not ambiguous:
            work.page_id = candidates[0]["id"]
            return
        try:
            work.page_id = f"{spec.name}/{page_slug(page, spec)}"
        except UserError:
            work.page_id = None  # no usable date: validation will say so
