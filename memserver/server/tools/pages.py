"""Page tools: kb_schema, kb_get_page, kb_list_pages, kb_history (read) and kb_put_page.

Every read goes through the knowledge base service with the caller's folders, so an
out-of-scope page is reported exactly like a missing one (``page_not_found``). Link
fields pointing into folders outside the caller's scope are left out of a page.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from memserver.errors import NotFoundError, PageValidationError, Problem, ScopeError, ToolErrorKind
from memserver.server.tools.as_of import (
    AsOfArg,
    as_of_date,
    as_of_view,
    intervals,
    values_then,
)
from memserver.server.tools.base import (
    MAX_OFFSET,
    MAX_VERSION,
    Access,
    CallContext,
    MemoryToolError,
    current,
    page_id,
    page_not_found,
    require_visible,
    tool,
)
from memserver.server.tools.page_input import PageInput, to_page
from memserver.server.tools.page_views import (
    HistoryView,
    PageList,
    PageView,
    PutView,
    SchemaView,
    page_view,
    scope_of_page,
    scoped_markdown,
    summary_view,
)

if TYPE_CHECKING:
    from memserver.kb.page import Page
    from memserver.kb.schema import FolderSpec, Schema
    from memserver.store.records import StoredPage


IdArg = Annotated[
    str,
    Field(description='Page id "folder/slug", e.g. "people/alice-smith" (or give folder + slug).'),
]
FolderArg = Annotated[str | None, Field(description="Schema folder, e.g. 'people'.")]
SlugArg = Annotated[str | None, Field(description="Page slug within the folder.")]


def _read(call: CallContext, target: str) -> StoredPage:
    require_visible(target, call.scope)
    try:
        return call.services.kb().get_page(target, call.folders)
    except NotFoundError:
        raise page_not_found(target) from None


def _folder_in_scope(call: CallContext, schema: Schema, name: str) -> FolderSpec:
    mine = call.scope.filter_folders(schema.folder_names)
    if name not in mine:
        raise NotFoundError(
            f"no folder {name!r} in your scope", f"your folders are: {', '.join(mine) or 'none'}"
        )
    return schema.folder(name)


@tool(access=Access.READ, title="Knowledge base schema")
def kb_schema() -> SchemaView:
    """Describe the folders you can read: their fields, sections, rules and descriptions.

    Call this first. Each folder lists its page type, a description of what belongs
    there, the slug template, the date field that gives a page its date, the fields
    (name, type, whether required, allowed enum values, link target folder), the
    section headings in order, whether pages keep a timeline, and writing rules.
    ``organisation`` is the team's own organisation (name, aliases) when the schema
    declares it: "our company" in a question means it.
    """
    call = current()
    schema = call.services.schema()
    return {
        "timezone": schema.timezone,
        "rules": schema.rules,
        "folders": [
            f.to_dict(call.scope.allows_folder)
            for f in schema.folders
            if call.scope.allows_folder(f.name)
        ],
        "organisation": schema.organisation.to_dict() if schema.organisation else None,
        "can_write": call.scope.write,
        "source_access": call.scope.source,
    }


@tool(access=Access.READ, title="Get a page")
def kb_get_page(
    id: IdArg = "", folder: FolderArg = None, slug: SlugArg = None, as_of: AsOfArg = None
) -> PageView:
    """Read one page in full: fields, compiled-truth sections, dated timeline, open questions.

    Address it by id "folder/slug" (as returned by kb_list_pages, kb_query or
    kb_resolve). Sections are the current state; the timeline is dated evidence,
    newest first. `version` is what you pass as base_version to kb_put_page when
    you update this page. Cite it as [folder/slug].

    With `as_of` (YYYY-MM-DD), `fields` are the values that held on that date as the
    memory knew them then, and the timeline stops at it; `as_of.fields` marks each
    value with valid_from/valid_to (when it held), recorded_at (when it was learned)
    and its source note, and `as_of.changed_since` lists what changed after, with
    dates ("known": false means nothing of this page was known yet).
    """
    call = current()
    target = page_id(id, folder, slug)
    day = as_of_date(as_of)
    view = page_view(_read(call, target), call.services.schema(), call)
    if day is None:
        return view
    rows = intervals(call, [target]).get(target)
    if not rows:
        # Written before the index kept history: say so rather than blank its fields.
        view["as_of"] = {
            "date": day.isoformat(),
            "known": None,
            "fields": {},
            "changed_since": [],
            "current_fields": view["fields"],
            "note": "no value history for this page yet; `memserver reindex` builds it "
            "from the stored versions. `fields` are today's.",
        }
        return view
    then = as_of_view(rows, day)
    view["as_of"] = {**then, "current_fields": view["fields"]}
    view["fields"] = values_then(then)
    view["timeline"] = [e for e in view["timeline"] if e["date"] <= day.isoformat()]
    return view


@tool(access=Access.READ, title="List pages")
def kb_list_pages(
    folder: FolderArg = None,
    start: Annotated[
        dt.date | None, Field(description="Only pages dated on or after YYYY-MM-DD.")
    ] = None,
    end: Annotated[
        dt.date | None, Field(description="Only pages dated before YYYY-MM-DD (exclusive).")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=500, description="Page size.")] = 50,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, description="Skip this many (paging).")] = 0,
    field: Annotated[
        str | None,
        Field(max_length=100, description="Only pages whose field (of `folder`) holds `value`."),
    ] = None,
    value: Annotated[
        str | None, Field(max_length=500, description="The value `field` holds (any case).")
    ] = None,
) -> PageList:
    """List pages exhaustively, newest effective date first, with optional date window.

    Use it to enumerate ("all meetings in March": folder="meetings",
    start="2026-03-01", end="2026-04-01"; "every customer": folder="companies",
    field="status", value="customer"). Results are paginated: while
    `next_offset` is not null, call again with offset=next_offset. `total` is the
    number of matching pages. Use kb_get_page to read one.
    """
    call = current()
    spec = _folder_in_scope(call, call.services.schema(), folder) if folder is not None else None
    where = _field_filter(call, spec, field, value)
    if start is not None and end is not None and end <= start:
        raise MemoryToolError(
            f"end ({end}) must be after start ({start}); end is exclusive",
            ToolErrorKind.ARGUMENTS,
        )
    pages, total = call.services.kb().list_pages(
        call.folders,
        folder=folder,
        start=start,
        end=end,
        limit=limit,
        offset=offset,
        where_field=where,
    )
    visible = [p for p in pages if call.scope.page_visible(p.id)]
    more = offset + len(pages) < total
    return {
        "pages": [summary_view(p) for p in visible],
        "total": total,
        "offset": offset,
        "next_offset": offset + len(pages) if more else None,
    }


def _field_filter(
    call: CallContext, spec: FolderSpec | None, field: str | None, value: str | None
) -> tuple[str, str] | None:
    """``kb_list_pages``' field filter, checked: a field of the folder listed that the
    caller can see (never a link into a folder outside its scope), with a value."""
    if field is None and value is None:
        return None
    if field is None or value is None or not value.strip():
        raise MemoryToolError(
            "field and value go together: give both, or neither", ToolErrorKind.ARGUMENTS
        )
    visible = [
        f.name
        for f in (spec.fields if spec is not None else ())
        if not (f.is_link and f.folder and not call.scope.allows_folder(f.folder))
    ]
    if spec is None or field not in visible:
        fix = (
            f"in folder {spec.name!r} use one of: {', '.join(visible) or 'none'}"
            if spec is not None
            else "give folder= with it"
        )
        raise MemoryToolError(f"no field {field!r} to filter on; {fix}", ToolErrorKind.ARGUMENTS)
    return field, value


@tool(access=Access.READ, title="Page history")
def kb_history(
    id: IdArg = "",
    folder: FolderArg = None,
    slug: SlugArg = None,
    version: Annotated[
        int | None,
        Field(ge=1, le=MAX_VERSION, description="Also return the markdown of this version."),
    ] = None,
) -> HistoryView:
    """List every stored version of a page (newest first), optionally with one version's text.

    Each version has its number, when and by whom it was written, and a content hash.
    Pass `version` to read that version's markdown, e.g. to see what a page said
    before an update.
    """
    call = current()
    target = page_id(id, folder, slug)
    require_visible(target, call.scope)
    kb = call.services.kb()
    try:
        versions = kb.history(target, call.folders)
    except NotFoundError:
        raise page_not_found(target) from None
    markdown = None
    if version is not None:
        try:
            markdown = kb.get_version(target, version, call.folders)
        except NotFoundError:
            raise NotFoundError(
                f"page {target!r} has no version {version}",
                "call kb_history without version to list them",
            ) from None
        markdown = scoped_markdown(markdown, target, call)
    return {
        "id": target,
        "versions": [
            {
                "version": v.version,
                "created_at": v.created_at.isoformat(),
                "written_by": v.written_by,
                "content_hash": v.content_hash,
            }
            for v in versions
        ],
        "markdown": markdown,
    }


@tool(
    access=Access.WRITE,
    title="Create or update a page",
    aliases={
        "content": "markdown",
        "body": "markdown",
        "md": "markdown",
        "data": "page",
        "conflict": "conflicts",
        "structured": "page",
        "version": "base_version",
        "current_version": "base_version",
    },
)
def kb_put_page(
    folder: FolderArg = None,
    id: Annotated[
        str, Field(description='Id "folder/slug" of the page to update (or to create at).')
    ] = "",
    slug: SlugArg = None,
    page: Annotated[
        PageInput | None, Field(description="The whole page as structured data.")
    ] = None,
    markdown: Annotated[
        str | None, Field(description="The whole page as markdown with frontmatter.")
    ] = None,
    base_version: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_VERSION,
            description="The version you read (kb_get_page). Omit only to create a new page.",
        ),
    ] = None,
    conflicts: Annotated[
        list[dict[str, Any]] | None,
        Field(
            description="Facts that changed or that sources disagree on: {field, "
            "old_value, new_value, old_source, new_source, "
            "status: superseded|unresolved|resolved}."
        ),
    ] = None,
    review: Annotated[
        str | None,
        Field(
            description="Why a person should check this change before it is trusted "
            "(e.g. it reverses a decision). The page is written and listed for review."
        ),
    ] = None,
    source: Annotated[
        str | None,
        Field(
            description="The source note this write comes from (its path under source/, "
            "as source_read gave it). How far that note is trusted decides which changes "
            "are written at once and which wait for a person.",
            max_length=1000,
        ),
    ] = None,
) -> PutView:
    """Create or update a page: validate it against its folder, render it, store and index it.

    Send the WHOLE page (it replaces the stored one), either as `page` (title, fields,
    sections, timeline, aliases, sources, open_questions) or as `markdown`. Choose the
    folder with `folder` (the slug then comes from the folder's slug template) or
    give `id` "folder/slug" to write a specific page. To update, read the page
    first and pass its `version` as base_version; without base_version the page is
    created, and it is refused if it already exists. A stale base_version is refused
    with the current version: re-read, merge, retry. If the page does not fit the
    schema, EVERY problem is listed at once: fix them all and send again.
    Record in `conflicts` each fact a newer source replaced (status "superseded") or
    that two sources disagree on (status "unresolved"; also list it under
    open_questions); when a later source states a field whose conflict is open, record
    it as "resolved" (the field's open conflicts close, kept as history). Give `review`
    with a reason when a person should check the change (it is written at once and
    listed for review). Name the note the write comes from in `source`: a change to
    what a page holds (a value replaced, a status, a supersede link) from a note the
    knowledge base does not trust is not written but waits for a person, and is listed
    in `held`. Returns the id, the new version, whether it was created, `held` and
    `degraded` reasons (e.g. stored without
    embeddings).
    """
    call = current()
    schema = call.services.schema()
    if (page is None) == (markdown is None):
        raise MemoryToolError(
            "send exactly one of page (structured) or markdown, with the whole page",
            ToolErrorKind.ARGUMENTS,
        )
    target_slug: str | None = None
    folder_name = (folder or "").strip() or None
    if id or (folder_name and slug):
        target = page_id(id, folder_name, slug)
        folder_name, target_slug = target.split("/", 1)
    if markdown is not None:
        from memserver.kb.page import parse_page

        parsed = parse_page(markdown)
        problems: list[Problem] = []
    else:
        assert page is not None
        if folder_name is None and page.type:
            folder_name = _folder_of_type(call, schema, page.type)
        if folder_name is None:
            raise MemoryToolError(
                "say which folder the page belongs in: folder='<folder>' or id='<folder>/<slug>'",
                ToolErrorKind.ARGUMENTS,
            )
        parsed, problems = to_page(page, _write_folder(call, schema, folder_name))
    if folder_name is None:
        folder_name = _folder_of_type(call, schema, parsed.type)
    spec = _write_folder(call, schema, folder_name)
    if call.scope.folders is not None and base_version is not None:
        parsed = _unredacted(call, schema, spec, target_slug, parsed)
    from memserver.kb.page import validate_page

    problems = problems + list(validate_page(parsed, spec))
    if problems:
        raise PageValidationError(problems, source=f"{folder_name}/{target_slug or '<new>'}")
    from memserver.server.source_trust import gate_put
    from memserver.store.records import ConflictRecord

    put = gate_put(
        call.services,
        spec,
        target_slug,
        parsed,
        base_version,
        source,
        [ConflictRecord.of(c) for c in conflicts or ()],
        review,
    )
    result = call.services.kb().put_page(
        folder_name,
        put.page,
        base_version,
        written_by=call.scope.token_name,
        slug=target_slug,
        conflicts=put.conflicts,
        review=put.review,
    )
    return {
        "id": result.id,
        "version": result.version,
        "created": result.created,
        "held": list(put.held),
        "degraded": list(result.degraded),
    }


def _unredacted(
    call: CallContext, schema: Schema, spec: FolderSpec, slug: str | None, page: Page
) -> Page:
    """A scoped writer's page with every value it could not see put back from the stored
    page (``memserver.server.hidden_merge``); ScopeError naming what it would lose."""
    from memserver.kb.page import page_slug
    from memserver.server.hidden_merge import restore_hidden

    kb = call.services.kb()
    try:
        target = f"{spec.name}/{slug or page_slug(page, spec)}"
        stored = kb.get_page(target)
    except (NotFoundError, PageValidationError):
        return page  # nothing stored to lose (validation reports a bad page)
    if not call.scope.source:  # the notes it was shown as labels, back as their paths
        from memserver.server.source_names import unlabelled

        page = unlabelled(page, stored.page)
    hidden, fields = scope_of_page(stored.page, spec, call)
    merged = restore_hidden(page, stored.page, hidden, sorted(fields))
    if merged.lost:
        raise ScopeError(
            f"this update of {target} would lose what you cannot see: " + "; ".join(merged.lost),
            "keep every text marked [redacted] and the text around it as kb_get_page "
            "returned them (add to them, do not rewrite them), leave out the fields you "
            "were not shown, or write with a token that may read those folders",
        )
    return merged.page


def _folder_of_type(call: CallContext, schema: Schema, page_type: str) -> str:
    """The caller's folder holding pages of ``page_type`` (errors name only its folders)."""
    mine = [f for f in schema.folders if call.scope.allows_folder(f.name)]
    for folder in mine:
        if folder.type == page_type:
            return folder.name
    listed = ", ".join(f"{f.name} ({f.type})" for f in mine) or "none"
    raise NotFoundError(
        f"none of your folders holds pages of type {page_type!r}",
        f"your folders and their page types: {listed}",
    )


def _write_folder(call: CallContext, schema: Schema, name: str) -> FolderSpec:
    if not call.scope.allows_folder(name):
        mine = call.scope.filter_folders(schema.folder_names)
        raise ScopeError(
            f"token {call.scope.token_name!r} may not write to folder {name!r}",
            f"your folders are: {', '.join(mine) or 'none'}",
        )
    return schema.folder(name)
