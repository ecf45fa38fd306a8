"""Merge rules: one source's draft of a page into the stored page (seed section 5).

The stored page has two zones. Compiled truth (fields and sections) is rewritten to the
current state; the timeline is evidence and only ever gains dated entries (adding an
entry already there changes nothing, so re-running a source is idempotent).

When the draft disagrees with a field the page already holds, the order of the sources
decides (``Order``), comparing the source's document date with the newest document
date among the page's *other* sources:

=========  ====================================================================
ONLY       no other source: the draft is the page's own source (first write, or an
           edited source re-ingested) -> the draft's value replaces, no conflict.
NEWER      a later source -> the new value wins; the old claim is recorded as
           superseded (a dated timeline entry, and a ``superseded`` conflict).
OLDER      an earlier source -> the current value stays; the old claim becomes a
           timeline entry dated the source's date (``superseded`` conflict, older).
SAME       same date, neither corrects the other -> the current value stays; the
           disagreement is an ``unresolved`` conflict listed under Open Questions.
=========  ====================================================================

A later source within ``SAME_PERIOD_DAYS`` of the newest other source that states its
value as a plain fact (``plain_fields``: "the annual contract is $96,000", not "moved
to", "now", "updated", "corrected") disagrees rather than updates: the same unresolved
conflict as SAME. The window is measured from the page's newest other source (the page
does not say which source set the field), so a note days after an unrelated one can
open a question a person settles; a value stated as a change always supersedes.

An open conflict closes when a later source states the field: the newer value (or the
value both agree on) holds, the Open Question goes, and the row recorded is ``resolved``
(the server then closes the field's ``unresolved`` rows; they stay in history). A value
stated by a source later than every source of the page settles it even inside the
same-period window.

A later-dated fact supersedes; it never counts as a contradiction (a lesson from
peers whose conflict checks flagged history as conflicts). List fields (``links``,
``list``) are unions and never conflict. Nothing is removed silently: sources, aliases
and timeline entries of the stored page are always kept.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from ingest_agent.errors import SourceFailed
from ingest_agent.names import norm
from memserver.kb.field_change import change_text, show
from memserver.kb.page import Page, TimelineEntry, as_date
from memserver.kb.schema import FieldSpec, FolderSpec


class Order(StrEnum):
    ONLY = "only"
    NEWER = "newer"
    OLDER = "older"
    SAME = "same"


@dataclass(frozen=True)
class Conflict:
    """A disagreement between a source and a page (a row for the conflicts table)."""

    page_id: str
    folder: str
    field: str
    old_value: Any
    new_value: Any
    old_source: str | None
    new_source: str
    status: str  # "superseded" | "unresolved" | "resolved"
    note: str

    def record(self) -> dict[str, Any]:
        """The row for the server's conflicts table (``kb_put_page(conflicts=...)``): a
        ``resolved`` row settles the field's open conflicts (the server closes them)."""
        return {
            "field": self.field,
            "old_value": _jsonable(self.old_value),
            "new_value": _jsonable(self.new_value),
            "old_source": self.old_source,
            "new_source": self.new_source,
            "status": self.status if self.status in ("unresolved", "resolved") else "superseded",
            "note": self.note or None,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "page_id": self.page_id,
            "folder": self.folder,
            "field": self.field,
            "old_value": self.old_value,
            "new_value": self.new_value,
            "old_source": self.old_source,
            "new_source": self.new_source,
            "status": self.status,
            "note": self.note,
        }


@dataclass(frozen=True)
class MergeResult:
    page: Page
    conflicts: tuple[Conflict, ...]
    changed: bool
    order: Order


# (current sections, the draft's sections, order) -> merged sections; the LLM merge.
SectionMerger = Callable[[Mapping[str, str], Mapping[str, str], Order], Mapping[str, str]]


SAME_PERIOD_DAYS = 7  # two plain statements this close disagree; farther apart, one updates


def source_order(source_date: dt.date, others: Iterable[dt.date | None]) -> Order:
    """How the source relates in time to the page's other sources."""
    known = [d for d in others if d is not None]
    if not known:
        return Order.ONLY
    newest = max(known)
    if source_date > newest:
        return Order.NEWER
    if source_date < newest:
        return Order.OLDER
    return Order.SAME


# --- values ---------------------------------------------------------------------------


def _comparable(spec: FieldSpec | None, value: Any) -> Any:
    if spec is not None and spec.type == "number":
        try:
            return float(value)
        except (TypeError, ValueError):
            return norm(str(value))
    if spec is not None and spec.type == "date":
        day = as_date(value)
        return day.isoformat() if day else norm(str(value))
    if isinstance(value, list | tuple):
        return tuple(sorted(norm(str(v)) for v in value))
    if isinstance(value, bool):
        return value
    return norm(str(value))


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _union(current: Any, new: Any) -> tuple[Any, ...]:
    out: dict[str, Any] = {}
    for item in [*_items(current), *_items(new)]:
        out.setdefault(norm(str(item)), item)
    return tuple(out.values())


def _items(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _is_list(spec: FieldSpec | None) -> bool:
    return spec is not None and spec.type in ("links", "list")


# --- timeline and text ------------------------------------------------------------------


def _entry_key(entry: TimelineEntry) -> tuple[dt.date, str | None, str]:
    return entry.date, entry.source, norm(entry.text)


def add_entries(page: Page, entries: Iterable[TimelineEntry]) -> Page:
    """The page with new entries; one already there (same day, source and words) is skipped."""
    seen = {_entry_key(e) for e in page.timeline}
    fresh = []
    for entry in entries:
        key = _entry_key(entry)
        if key not in seen:
            seen.add(key)
            fresh.append(entry)
    if not fresh:
        return page
    return replace(page, timeline=(*page.timeline, *fresh))


def _merge_section_text(current: str, new: str) -> str:
    if norm(new) in norm(current):
        return current
    if norm(current) in norm(new):
        return new
    return f"{current}\n\n{new}"


def default_section_merge(
    current: Mapping[str, str], new: Mapping[str, str], order: Order
) -> dict[str, str]:
    """Without a model: the draft's text is added to (never replaces) a section.

    An older source only fills sections the page does not have yet.
    """
    out = dict(current)
    for heading, body in new.items():
        if heading not in out:
            out[heading] = body
        elif order is not Order.OLDER:
            out[heading] = _merge_section_text(out[heading], body)
    return out


def question_prefix(field: str) -> str:
    return f"{field}: "


# --- the merge --------------------------------------------------------------------------


def merge_page(
    existing: Page | None,
    draft: Page,
    folder: FolderSpec,
    *,
    page_id: str,
    source: str,
    source_date: dt.date,
    other_sources: Mapping[str, dt.date | None] | None = None,
    section_merger: SectionMerger | None = None,
    field_dates: Mapping[str, dt.date] | None = None,
    plain_fields: frozenset[str] = frozenset(),
) -> MergeResult:
    """Merge ``draft`` (from ``source``, dated ``source_date``) into ``existing``.

    ``other_sources`` maps the stored page's other sources to their document dates
    (None when unknown); it decides the :class:`Order`. ``field_dates`` says when a
    field's value took effect, when the source says so: its change entry gets that
    date instead of the source's. ``plain_fields`` are the fields the source states as
    plain facts (see the module docstring).
    """
    effective = dict(field_dates or {})
    draft = _fit(draft, folder, source)
    if existing is None:
        page = replace(draft, sources=_unique((*draft.sources, source)))
        return MergeResult(page, (), True, Order.ONLY)
    others = {k: v for k, v in (other_sources or {}).items() if k != source}
    order = source_order(source_date, others.values())
    newest = max((d for d in others.values() if d is not None), default=None)
    holders = sorted(k for k, d in others.items() if d == newest) if newest else []
    conflicts: list[Conflict] = []
    fields = dict(existing.fields)
    entries: list[TimelineEntry] = []
    questions = list(existing.open_questions)

    for name, value in draft.fields.items():
        spec = folder.field(name)
        if value is None or value == "" or value == ():
            continue
        current = fields.get(name)
        if current is None or current == "" or current == ():
            fields[name] = value
            continue
        if _is_list(spec):
            fields[name] = value if order is Order.ONLY else _union(current, value)
            continue
        if _comparable(spec, current) == _comparable(spec, value):
            if order is Order.NEWER:
                questions, resolved = _resolve_questions(questions, name)
                conflicts += [
                    Conflict(
                        page_id, folder.name, name, None, current, None, source, "resolved",
                        f"settled by a newer source ({source_date}) stating {show(value)}: {q}",
                    )
                    for q in resolved
                ]  # fmt: skip
            continue
        disputed = any(q.startswith(question_prefix(name)) for q in questions)
        close = (
            order is Order.NEWER
            and name in plain_fields
            and not disputed  # a newer source that states the value settles the question
            and newest is not None
            and (source_date - newest).days <= SAME_PERIOD_DAYS
        )
        if order is Order.ONLY or (spec is not None and name == folder.date_field):
            fields[name] = value
        elif order is Order.NEWER and not close:
            fields[name] = value
            text = change_text(name, current, value)
            entries.append(TimelineEntry(effective.get(name, source_date), text, source))
            questions, settled = _resolve_questions(questions, name)
            why = f"newer source ({source_date}) supersedes the value of {newest}"
            conflicts.append(
                Conflict(
                    page_id, folder.name, name, current, value,
                    ", ".join(holders) or None, source,
                    "resolved" if settled else "superseded",
                    f"{why}, settling: {settled[0]}" if settled else why,
                )
            )  # fmt: skip
        elif order is Order.OLDER:
            quoted = f"“{show(value)}”"
            if any(quoted in e.text for e in existing.timeline):
                continue  # the old fact is already on record (e.g. the change from it)
            text = f"{name} was “{show(value)}” (superseded by later sources: “{show(current)}”)"
            entries.append(TimelineEntry(effective.get(name, source_date), text, source))
            conflicts.append(
                Conflict(
                    page_id, folder.name, name, value, current, source,
                    ", ".join(holders) or source, "superseded",
                    f"older source ({source_date}) than the current value ({newest}); kept current",
                )
            )  # fmt: skip
        else:
            where = ", ".join(holders) or "the page"
            when = f"the same date ({source_date})" if not close else f"{newest} and {source_date}"
            question = (
                f"{question_prefix(name)}sources of {when} disagree: "
                f"“{show(current)}” ({where}) vs “{show(value)}” ({source}); "
                "current value kept until a source settles it"
            )
            if question not in questions:
                questions.append(question)
                conflicts.append(
                    Conflict(
                        page_id, folder.name, name, current, value, where, source,
                        "unresolved", question,
                    )
                )  # fmt: skip

    if order is Order.ONLY:
        sections = {**dict(existing.sections), **dict(draft.sections)}
    elif draft.sections:
        merger = section_merger if order is not Order.OLDER and section_merger else None
        if merger is not None and _needs_merge(existing.sections, draft.sections):
            sections = dict(merger(existing.sections, draft.sections, order))
        else:
            sections = default_section_merge(existing.sections, draft.sections, order)
    else:
        sections = dict(existing.sections)

    aliases = [*existing.aliases, *draft.aliases]
    if norm(draft.title) != norm(existing.title):
        aliases.append(draft.title)
    page = Page(
        title=existing.title,
        type=existing.type or folder.type,
        fields=fields,
        aliases=_aliases(existing.title, aliases),
        sources=_unique((*existing.sources, *draft.sources, source)),
        sections=sections,
        timeline=existing.timeline,
        open_questions=(*questions, *(q for q in draft.open_questions if q not in questions)),
    )
    if folder.timeline:
        page = add_entries(page, [*draft.timeline, *entries])
    check_no_loss(existing, page, source)
    return MergeResult(page, tuple(conflicts), page != existing, order)


def _needs_merge(current: Mapping[str, str], new: Mapping[str, str]) -> bool:
    """Whether some section of the draft differs from a section the page already has."""
    return any(
        heading in current and norm(body) not in norm(current[heading])
        for heading, body in new.items()
    )


def _resolve_questions(questions: list[str], field: str) -> tuple[list[str], list[str]]:
    prefix = question_prefix(field)
    kept = [q for q in questions if not q.startswith(prefix)]
    return kept, [q for q in questions if q.startswith(prefix)]


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def _aliases(title: str, names: Iterable[str]) -> tuple[str, ...]:
    out: dict[str, str] = {}
    for name in names:
        key = norm(name)
        if key and key != norm(title):
            out.setdefault(key, " ".join(name.split()))
    return tuple(out.values())


def _fit(draft: Page, folder: FolderSpec, source: str) -> Page:
    """The draft restricted to what the folder can hold (fields, sections, timeline)."""
    fields = {k: v for k, v in draft.fields.items() if folder.field(k) is not None}
    sections = {k: v for k, v in draft.sections.items() if k in folder.sections}
    timeline = tuple(
        e if e.source else TimelineEntry(e.date, e.text, source) for e in draft.timeline
    )
    return replace(
        draft,
        type=folder.type,
        fields=fields,
        sections=sections,
        timeline=timeline if folder.timeline else (),
        aliases=_aliases(draft.title, draft.aliases),
    )


def check_no_loss(before: Page, after: Page, source: str) -> None:
    """Refuse a merge that would drop a source, an alias or a timeline entry."""
    lost = [s for s in before.sources if s not in after.sources]
    lost += [a for a in before.aliases if norm(a) not in {norm(x) for x in after.aliases}]
    lost += [e.render() for e in before.timeline if e not in after.timeline]
    if lost:
        raise SourceFailed(source, f"merge would drop {len(lost)} item(s) of {before.title!r}")
