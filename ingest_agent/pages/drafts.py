"""Drafts of one source on their way to the store: combined, completed and cross-linked.

Pure functions over ``Work`` items (a draft, the page id it resolved to, whether it was
dropped) and the schema; the agent (``agent.py``) does the resolving and the writing.

- ``combine``: drafts of the same page from one source become one;
- ``add_stubs``: every link target in an entity folder gets a page, so links land;
- ``dedupe``: drafts that resolved to the same page become one;
- ``linked``: link values rewritten to the titles they resolved to;
- ``event_entries``: an event (meeting, decision) adds a dated entry to each entity
  page it links to (attendees, company ...);
- ``repair_by_rules``: the deterministic repair round when no model is configured.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ingest_agent.names import norm
from ingest_agent.records import Draft, Source, is_dated, link_fields, link_names
from memserver.kb.page import Page, TimelineEntry, as_date
from memserver.kb.schema import FolderSpec, Schema


@dataclass
class Work:
    """A draft on its way to the store: where it resolved and what it links to."""

    draft: Draft
    page_id: str | None = None  # None: a new page, the server picks the slug
    dropped: bool = False


def combine(drafts: Sequence[Draft], schema: Schema) -> list[Work]:
    """One work item per page: drafts of the same page from this source are combined."""
    out: dict[tuple[str, str, str | None], Work] = {}
    for draft in drafts:
        spec = schema.folder(draft.folder)
        day = draft.page.fields.get(spec.date_field) if spec.date_field else None
        key = (draft.folder, norm(draft.title), str(day) if day else None)
        if key in out:
            out[key].draft = Draft(draft.folder, combine_pages(out[key].draft.page, draft.page))
        else:
            out[key] = Work(draft)
    return list(out.values())


def add_stubs(works: list[Work], schema: Schema) -> None:
    """A page for every link target in an entity folder, so links always land."""
    present = {
        (w.draft.folder, norm(name))
        for w in works
        for name in (w.draft.title, *w.draft.page.aliases)
    }
    for work in list(works):
        spec = schema.folder(work.draft.folder)
        for name, target, _ in link_fields(spec):
            target_spec = schema.folder(target)
            if is_dated(target_spec):
                continue
            for value in link_names(work.draft.page.fields.get(name)):
                if (target, norm(value)) in present:
                    continue
                present.add((target, norm(value)))
                works.append(Work(Draft(target, Page(title=value, type=target_spec.type))))


def dedupe(works: list[Work]) -> list[Work]:
    """Drafts that resolved to the same page become one."""
    out: dict[str, Work] = {}
    rest: list[Work] = []
    for work in works:
        if work.page_id is None or work.dropped:
            rest.append(work)
        elif work.page_id in out:
            first = out[work.page_id]
            first.draft = Draft(
                first.draft.folder, combine_pages(first.draft.page, work.draft.page)
            )
        else:
            out[work.page_id] = work
    return [*out.values(), *rest]


def linked(draft: Draft, names: Mapping[tuple[str, str], str | None], schema: Schema) -> Page:
    """Link field values as the titles they resolved to (unresolvable ones left out)."""
    spec = schema.folder(draft.folder)
    fields = dict(draft.page.fields)
    for name, target, many in link_fields(spec):
        values = link_names(fields.get(name))
        if not values:
            continue
        mapped: list[str] = []
        for value in values:
            title = names.get((target, norm(value)), value)
            if title is not None and norm(title) not in {norm(m) for m in mapped}:
                mapped.append(title)
        if not mapped:
            fields.pop(name, None)
        else:
            fields[name] = mapped if many else mapped[0]
    return replace(draft.page, fields=fields)


def event_entries(source: Source, entities: list[Work], events: list[Work], schema: Schema) -> None:
    """A meeting (any event) adds a dated entry to each entity page it links to."""
    by_key = {
        (w.draft.folder, norm(n)): w
        for w in entities
        if not w.dropped
        for n in (w.draft.title, *w.draft.page.aliases)
    }
    for event in events:
        spec = schema.folder(event.draft.folder)
        page = event.draft.page
        day = as_date(page.fields.get(spec.date_field)) if spec.date_field else None
        if day is None or event.dropped:
            continue
        ref = f" ({event.page_id})" if event.page_id else ""
        for name, target, _ in link_fields(spec):
            target_spec = schema.folder(target)
            if is_dated(target_spec) or not target_spec.timeline:
                continue
            field_spec = spec.field(name)
            verb = field_spec.verb if field_spec is not None else None
            lead = f"Attended {spec.type}" if verb == "attended" else spec.type.capitalize()
            text = f"{lead} “{page.title}”{ref}"
            for value in link_names(page.fields.get(name)):
                work = by_key.get((target, norm(value)))
                if work is not None:
                    entry = TimelineEntry(day, text, source.path)
                    timeline = (*work.draft.page.timeline, entry)
                    work.draft = replace(
                        work.draft, page=replace(work.draft.page, timeline=timeline)
                    )


def combine_pages(first: Page, second: Page) -> Page:
    """Two drafts of one page from the same source: fields first-wins, the rest joined."""
    fields = {**dict(second.fields), **dict(first.fields)}
    sections = dict(first.sections)
    for heading, body in second.sections.items():
        if heading not in sections:
            sections[heading] = body
        elif norm(body) not in norm(sections[heading]):
            sections[heading] = f"{sections[heading]}\n\n{body}"
    aliases = [*first.aliases, *second.aliases]
    if norm(second.title) != norm(first.title):
        aliases.append(second.title)
    return dataclasses.replace(
        first,
        fields=fields,
        aliases=tuple(a for a in aliases if norm(a) != norm(first.title)),
        sources=(*first.sources, *second.sources),
        sections=sections,
        timeline=(*first.timeline, *second.timeline),
        open_questions=(*first.open_questions, *second.open_questions),
    )


def repair_by_rules(page: Page, spec: FolderSpec, problems: list[str]) -> Page:
    """Without a model: drop what the schema refuses, keeping section text under a valid heading."""
    problem_fields = set()
    for text in problems:
        location = text.split(":", 1)[0].strip()
        if location.startswith("fields."):
            problem_fields.add(location.split(".", 2)[1].split("[")[0])
    fields = {
        k: v
        for k, v in page.fields.items()
        if k not in problem_fields and spec.field(k) is not None
    }
    sections: dict[str, str] = {}
    first = spec.sections[0] if spec.sections else None
    for heading, body in page.sections.items():
        if heading in spec.sections:
            sections[heading] = f"{sections[heading]}\n\n{body}" if heading in sections else body
        elif first is not None:
            moved = f"**{heading}**\n{body}"
            sections[first] = f"{sections[first]}\n\n{moved}" if first in sections else moved
    timeline = page.timeline if spec.timeline else ()
    return replace(page, type=spec.type, fields=fields, sections=sections, timeline=timeline)
