"""What the page tools return: pages, summaries, versions and the schema, as JSON views
scoped to the caller (link fields into hidden folders left out)."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any, NotRequired

from typing_extensions import TypedDict

from memserver.server.tools.base import (
    CallContext,
)

if TYPE_CHECKING:
    from memserver.kb.page import Page
    from memserver.kb.schema import FolderSpec, Schema
    from memserver.server.prose_scope import Hidden
    from memserver.store.records import PageSummary, StoredPage


class TimelineView(TypedDict):
    date: str
    text: str
    source: str | None


class PageView(TypedDict):
    id: str
    folder: str
    slug: str
    version: int
    title: str
    type: str
    effective_date: str | None
    updated_at: str
    fields: dict[str, Any]
    aliases: list[str]
    sources: list[str]
    sections: dict[str, str]
    timeline: list[TimelineView]
    open_questions: list[str]
    markdown: str
    as_of: NotRequired[dict[str, Any]]  # only with kb_get_page(as_of=...)


class PageSummaryView(TypedDict):
    id: str
    title: str
    type: str
    effective_date: str | None
    version: int
    updated_at: str


class PageList(TypedDict):
    pages: list[PageSummaryView]
    total: int
    offset: int
    next_offset: int | None


class VersionView(TypedDict):
    version: int
    created_at: str
    written_by: str
    content_hash: str


class HistoryView(TypedDict):
    id: str
    versions: list[VersionView]
    markdown: str | None


class PutView(TypedDict):
    id: str
    version: int
    created: bool
    held: list[dict[str, Any]]  # proposals that wait for a person (source_trust)
    degraded: list[str]


class SchemaView(TypedDict):
    timezone: str
    rules: str
    folders: list[dict[str, Any]]
    organisation: dict[str, Any] | None  # the team's own (name, aliases), if declared
    can_write: bool
    source_access: bool


def _date(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


def hidden_folders(call: CallContext) -> list[str]:
    """The schema folders the caller may not see."""
    return [f for f in call.services.schema().folder_names if not call.scope.allows_folder(f)]


def scope_of_page(
    page: Page, folder: FolderSpec, call: CallContext
) -> tuple[Hidden | None, frozenset[str]]:
    """What of ``page`` the caller may not see: the hidden pages its texts refer to, and
    its link fields into hidden folders."""
    from memserver.server.prose_scope import Hidden

    if call.scope.folders is None:
        return None, frozenset()
    fields = folder.hidden_link_fields(call.scope.allows_folder)
    return Hidden.of(page.to_dict(), hidden_folders(call), call.services.kb()), fields


def scoped_page(page: Page, folder: FolderSpec, call: CallContext) -> tuple[Page, bool]:
    """The page as the caller may read it: without link fields into folders outside its
    scope, references to hidden pages redacted (``memserver.server.hidden_merge``)."""
    from memserver.server.hidden_merge import shown_page

    hidden, fields = scope_of_page(page, folder, call)
    if hidden is None and not any(name in page.fields for name in fields):
        return page, False
    shown = shown_page(page, hidden, sorted(fields))
    return shown, shown != page


def scoped_markdown(markdown: str, page: str, call: CallContext) -> str:
    """An old version's markdown without link fields into folders outside the caller's scope."""
    if call.scope.folders is None:
        return markdown
    from memserver.errors import MemoryError_
    from memserver.kb.page import parse_page, render_page

    folder = call.services.schema().folder(page.split("/", 1)[0])
    try:
        parsed = parse_page(markdown)
    except MemoryError_:
        return markdown  # an old version that no longer parses: shown as written
    visible, changed = scoped_page(parsed, folder, call)
    return render_page(visible, folder) if changed else markdown


def page_view(stored: StoredPage, schema: Schema, call: CallContext) -> PageView:
    from memserver.kb.page import render_page

    folder = schema.folder(stored.folder)
    page, changed = scoped_page(stored.page, folder, call)
    return {
        "id": stored.id,
        "folder": stored.folder,
        "slug": stored.slug,
        "version": stored.version,
        "title": page.title,
        "type": page.type,
        "effective_date": _date(stored.effective_date),
        "updated_at": stored.updated_at.isoformat(),
        "fields": json.loads(json.dumps(dict(page.fields), default=str)),
        "aliases": list(page.aliases),
        "sources": list(page.sources),
        "sections": dict(page.sections),
        "timeline": [
            {"date": e.date.isoformat(), "text": e.text, "source": e.source} for e in page.timeline
        ],
        "open_questions": list(page.open_questions),
        "markdown": render_page(page, folder) if changed else stored.markdown,
    }


def summary_view(summary: PageSummary) -> PageSummaryView:
    return {
        "id": summary.id,
        "title": summary.title,
        "type": summary.type,
        "effective_date": _date(summary.effective_date),
        "version": summary.version,
        "updated_at": summary.updated_at.isoformat(),
    }
