"""What every extractive answer reads with: the read tools (called with the answer's
``now``), the pages read so far (each read once, parsed into a
:class:`read_agent.tools.wire.Page` where ``kb_get_page`` answered), and the schema's view
of a page."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from memserver.kb.field_change import show
from memserver.kb.schema import FolderSpec, Schema
from read_agent.extractive.evidence import label
from read_agent.reading import Subject
from read_agent.reading.fields import Embed
from read_agent.tools.raw_notes import QUERY_TOOL, query_with_sources
from read_agent.tools.toolset import CallLog, Toolset
from read_agent.tools.wire import BRIEF_TOOL, Brief, Page, edges

LINKED_READ = 4  # pages linked to a named page read when the results do not answer


class PageReader:
    """The read tools of one answer, and the pages they returned."""

    def __init__(
        self, tools: Toolset, log: CallLog, schema: Schema | None, now: dt.datetime | None
    ) -> None:
        self.tools = tools
        self.log = log
        self.schema = schema
        self.now = now
        self.pages: dict[str, Page] = {}
        self.as_of: str | None = None  # an ISO date the question is asked as of
        self.asked: list[str] = []  # the names of the pages the question names
        self.earlier: tuple[Subject, ...] = ()  # the conversation's subjects
        self.embed: Embed | None = None  # what the reading asks when words leave it open

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any] | None:
        if name not in self.tools.tools:
            return None
        args = self.tools.with_now(name, arguments, self.now)
        if self.as_of is not None and self.tools.accepts(name, "as_of"):
            args.setdefault("as_of", self.as_of)  # the server's view of that day
        if name == QUERY_TOOL:  # no page answers: the raw notes too (read_agent.tools.raw_notes)
            ok, _, result = await query_with_sources(self.tools, args, self.log)
        else:
            ok, _, result = await self.tools.call(name, args, self.log)
        return result if ok and isinstance(result, Mapping) else None

    async def brief(self, arguments: Mapping[str, Any]) -> Brief:
        """``kb_brief``'s answer, parsed once (an empty brief when it gave none)."""
        return Brief.parse(await self.call(BRIEF_TOOL, arguments))

    async def page(self, page_id: str) -> Page | None:
        """``kb_get_page``'s answer, parsed once and kept (None when it gave none)."""
        if page_id not in self.pages:
            found = await self.call("kb_get_page", {"id": page_id})
            if found is None:
                return None
            self.pages[page_id] = Page.parse(found)
        return self.pages[page_id]

    async def read_linked(self, page_id: str) -> bool:
        """Read the pages linking to ``page_id`` (kb_neighbors, inward); True if any."""
        found = await self.call("kb_neighbors", {"id": page_id, "direction": "in"})
        others = [edge.from_id for edge in edges(found) if edge.from_id]
        # Events first (the meetings about it), then the rest, each read once.
        events = {f.name for f in self.schema.folders if f.date_field} if self.schema else set()
        others.sort(key=lambda pid: pid.split("/", 1)[0] not in events)
        read = 0
        for other in dict.fromkeys(others):
            if other not in self.pages and read < LINKED_READ:
                read += await self.page(other) is not None
        return read > 0

    def names(self, page_id: str) -> list[str]:
        page = self.pages.get(page_id)
        if page is None:
            return []
        return [page.title, *page.aliases]

    def folder(self, name: str) -> FolderSpec | None:
        if self.schema is None or name not in self.schema.folder_names:
            return None
        return self.schema.folder(name)

    def link_names(self, page: Page, single: bool = False) -> tuple[str, ...]:
        """The names a page's link fields hold ("company: Globex"); ``single``: only those
        of fields that hold one page (the company a meeting is with, not its attendees)."""
        spec = self.folder(page.folder)
        out: list[str] = []
        for f in spec.fields if spec is not None else ():
            value = page.fields.get(f.name)
            if f.is_link and value and (not single or f.type == "link"):
                out += [str(v) for v in value] if isinstance(value, list) else [str(value)]
        return tuple(out)

    def links_said(self, page: Page) -> str:
        """A page's link fields as said on a line ("attendees: Joanna Price, Alex Kim;
        company: Initech"), "" when it has none."""
        spec = self.folder(page.folder)
        held = [(f.name, page.fields.get(f.name)) for f in spec.fields if f.is_link] if spec else []
        return "; ".join(f"{label(name)}: {show(value)}" for name, value in held if value)

    def is_person(self, page: Page) -> bool:
        """A page about a person: of type person, or of a folder with a job-title field."""
        spec = self.folder(page.folder)
        roles = ("role", "position", "job_title")
        return page.type == "person" or bool(
            spec is not None and any(spec.field(r) is not None for r in roles)
        )

    def dated(self, page: Page) -> bool:
        spec = self.folder(page.folder)
        return bool(spec is not None and spec.date_field)

    def today(self) -> str:
        moment = self.now or dt.datetime.now().astimezone()
        return moment.date().isoformat()
