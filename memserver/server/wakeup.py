"""A wake-up brief: what changed since a cursor, what waits, what was busy, and a new cursor.

``build_wakeup`` reads the change feed (:mod:`memserver.store.changes`) in the caller's
folders, in one snapshot, with no model call:

* the pages written since ``since`` (one entry a page: created or changed, the versions,
  the fields whose value changed with the note that changed them), the folders that
  hold decisions (their pages have deciders or a supersession chain, as ``kb_brief``
  reads them) first;
* the conflicts recorded, superseded or closed and the changes flagged for review or
  decided in the window;
* what waits now: the open conflicts and the flagged changes nobody has decided;
* the most active subjects: pages written most, or most linked from the pages written;
* a new cursor: pass it as ``since`` next time and nothing is missed or repeated.

``since`` is a cursor, a date (midnight in the schema's time zone), an ISO time or a
duration back from now (``7d``); by default the last ``DEFAULT_WINDOW``. Items are added
section by section until ``budget`` tokens (characters / 4) are spent; what did not fit
is counted in ``omitted`` and ``truncated`` is set. Counts cover the whole window.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memserver.errors import ToolErrorKind, UserError
from memserver.server.brief import CHAIN_FIELDS, DECIDER_FIELDS, tokens_of
from memserver.server.tokens import parse_instant
from memserver.server.tools.as_of import hidden_fields
from memserver.server.tools.base import MemoryToolError
from memserver.store import changes, validity
from memserver.store.changes import CONFLICT_KINDS, REVIEW_KINDS, Cursor, CursorError, Since
from memserver.store.reviews import (
    conflicts_in,
    conflicts_with_ids,
    pending_reviews,
    reviews_with_ids,
)

if TYPE_CHECKING:
    from memserver.kb.schema import Schema
    from memserver.server.tools.base import CallContext
    from memserver.store.changes import PageChange
    from memserver.store.reviews import Conflict, Review
    from memserver.store.validity import Interval

DEFAULT_WINDOW = dt.timedelta(days=7)
MAX_PAGES = 200  # page entries read at most
MIN_LINE_TOKENS = 16  # no page's line is shorter: a budget holds at most budget / this
MAX_EVENTS = 50
MAX_WAITING = 20
MAX_SUBJECTS = 5
MAX_FIELDS = 4  # changed fields shown per page
MAX_VALUE_CHARS = 80
STATUS_FIELD = "status"


@dataclass
class Section:
    """One part of the brief: its items (structured and as a line) in priority order."""

    name: str
    heading: str
    items: list[tuple[dict[str, Any], str]] = field(default_factory=list)


def read_since(text: str | None, schema: Schema, now: dt.datetime) -> Since:
    """``since`` as given to kb_wakeup (see the module docstring)."""
    value = (text or "").strip()
    if not value:
        return Since(at=now - DEFAULT_WINDOW)
    if value.startswith(changes.CURSOR_PREFIX):
        try:
            return Since(cursor=Cursor.parse(value))
        except CursorError as exc:
            raise MemoryToolError(str(exc), ToolErrorKind.ARGUMENTS) from None
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        day = None
    if day is not None:
        return Since(at=dt.datetime.combine(day, dt.time(), tzinfo=schema.tz))
    try:
        return Since(at=parse_instant(value, now, past=True))
    except UserError:
        raise MemoryToolError(
            f"since={value[:60]!r} is neither a cursor nor a time: pass the `cursor` a "
            "previous kb_wakeup returned, a date (2026-09-01), a time (2026-09-01T09:00) "
            "or a duration back from now (7d, 12h)",
            ToolErrorKind.ARGUMENTS,
        ) from None


def build_wakeup(
    call: CallContext, since_text: str | None, budget: int, now: dt.datetime | None = None
) -> dict[str, Any]:
    """The wake-up brief for the caller (see the module docstring)."""
    schema = call.services.schema()
    now = now or dt.datetime.now(dt.UTC)
    since = read_since(since_text, schema, now)
    visible = call.scope.filter_folders(schema.folder_names)
    scope = None if call.scope.folders is None else visible
    deciding = [f.name for f in schema.folders if f.name in visible and _decides(f.fields)]
    kb = call.services.kb()
    with changes.reading(kb.db) as conn:
        try:
            cursor = changes.current(conn, since.cursor)
        except CursorError as exc:
            raise MemoryToolError(str(exc), ToolErrorKind.ARGUMENTS) from None
        counted = changes.counts(conn, since, scope)
        created = counted["page_created"]
        fits = min(MAX_PAGES, budget // MIN_LINE_TOKENS)
        pages = changes.page_changes(
            conn, since, scope, first_folders=deciding, limit=fits, field=STATUS_FIELD
        )
        # values before and after: only for the pages changed (a new page has no before)
        history = validity.history_of(conn, [p.page_id for p in pages if not p.created])
        conflict_events = changes.events(conn, since, scope, CONFLICT_KINDS, MAX_EVENTS)
        review_events = changes.events(conn, since, scope, REVIEW_KINDS, MAX_EVENTS)
        conflict_rows = {
            c.id: c for c in conflicts_with_ids(conn, {e.ref for e in conflict_events})
        }
        review_rows = {r.id: r for r in reviews_with_ids(conn, {e.ref for e in review_events})}
        open_conflicts = conflicts_in(conn, scope, limit=MAX_WAITING)
        waiting_reviews = pending_reviews(conn, scope, limit=MAX_WAITING)
        waiting = changes.waiting(conn, scope)
        subjects = changes.active_subjects(conn, since, scope, MAX_SUBJECTS)

    decisions = Section("decisions", "Decisions")
    written = Section("pages", "Pages written")
    for change in pages:
        hidden = hidden_fields(call, change.page_id)
        item, line = _page_item(change, history.get(change.page_id, []), hidden)
        (decisions if change.folder in deciding else written).items.append((item, line))
    events = Section("conflicts", "Conflicts recorded or closed")
    for event in conflict_events:
        row = conflict_rows.get(event.ref)
        if row is not None and row.field not in hidden_fields(call, row.page_id):
            events.items.append(_conflict_item(row, event.kind, event.at))
    flagged = Section("reviews", "Changes flagged for review or decided")
    for event in review_events:
        review = review_rows.get(event.ref)
        if review is not None:
            flagged.items.append(_review_item(review, event.kind, event.at))
    still_open = Section("open_conflicts", "Open conflicts")
    for row in open_conflicts:
        if row.field not in hidden_fields(call, row.page_id):
            still_open.items.append(_conflict_item(row, "conflict_unresolved", None))
    pending = Section("waiting_review", "Waiting for review")
    for review in waiting_reviews:
        pending.items.append(_review_item(review, "review_pending", None))
    busy = Section("active_subjects", "Most active")
    for subject in subjects:
        item = {
            "id": subject.page_id,
            "title": subject.title,
            "folder": subject.folder,
            "writes": subject.writes,
            "mentions": subject.mentions,
        }
        busy.items.append(
            (
                item,
                f"- [{subject.page_id}] {subject.title}: {subject.writes} write(s), "
                f"{subject.mentions} link(s) from pages written",
            )
        )

    totals = {
        "pages_created": created,
        "pages_changed": counted.get("page", 0) - created,
        "conflicts_opened": counted.get("conflict_unresolved", 0),
        "conflicts_superseded": counted.get("conflict_superseded", 0),
        "conflicts_closed": counted.get("conflict_resolved", 0),
        "reviews_flagged": counted.get("review_pending", 0),
        "reviews_decided": sum(counted.get(k, 0) for k in REVIEW_KINDS[1:]),
        **waiting,
    }
    since_label = "the last cursor" if since.at is None else _when(since.at)
    header = (
        f"What changed since {since_label}: {totals['pages_created']} page(s) created, "
        f"{totals['pages_changed']} changed; {totals['conflicts_opened']} conflict(s) opened, "
        f"{totals['conflicts_closed']} closed; {totals['reviews_flagged']} change(s) flagged "
        f"for review. Waiting now: {waiting['open_conflicts']} open conflict(s), "
        f"{waiting['waiting_review']} change(s) for review."
    )
    footer = f'Next time: kb_wakeup(since="{cursor.text}")'
    sections = [decisions, events, flagged, written, still_open, pending, busy]
    fitted, omitted, text = _fit(sections, header, footer, budget)
    # pages past the ones read (``fits``) were left out too: count them with the rest
    unread = counted.get("page", 0) - len(pages)
    omitted["pages"] += max(unread, 0)
    return {
        "since": cursor_or_time(since),
        "cursor": cursor.text,
        "counts": totals,
        **{s.name: fitted[s.name] for s in sections},
        "omitted": omitted,
        "truncated": any(omitted.values()),
        "text": text,
        "tokens": tokens_of(text),
        "budget": budget,
    }


def cursor_or_time(since: Since) -> str:
    if since.cursor is not None:
        return since.cursor.text
    assert since.at is not None
    return since.at.isoformat()


def _decides(fields: Sequence[Any]) -> bool:
    """A folder whose pages record decisions: deciders or a supersession chain."""
    return any(f.name in (*DECIDER_FIELDS, *CHAIN_FIELDS) for f in fields)


def _fit(
    sections: Sequence[Section], header: str, footer: str, budget: int
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int], str]:
    """Every section's items that fit in ``budget`` tokens, in order; the rest counted."""
    spent = tokens_of(header) + tokens_of(footer) + 2
    fitted: dict[str, list[dict[str, Any]]] = {s.name: [] for s in sections}
    omitted: dict[str, int] = {s.name: 0 for s in sections}
    lines = [header]
    for section in sections:
        if not section.items:
            continue
        heading = f"{section.heading}:"
        if spent + tokens_of(heading) + tokens_of(section.items[0][1]) + 2 > budget:
            omitted[section.name] = len(section.items)
            continue
        spent += tokens_of(heading) + 1
        lines.append(heading)
        for n, (item, line) in enumerate(section.items):
            cost = tokens_of(line) + 1
            if spent + cost > budget:
                omitted[section.name] = len(section.items) - n
                break
            spent += cost
            fitted[section.name].append(item)
            lines.append(line)
    lines.append(footer)
    return fitted, omitted, "\n".join(lines)


def _page_item(
    change: PageChange, rows: Sequence[Interval], hidden: Collection[str]
) -> tuple[dict[str, Any], str]:
    fields = [] if change.created else _changed_fields(rows, change, hidden)
    status = change.value if STATUS_FIELD not in hidden else None
    item = {
        "id": change.page_id,
        "title": change.title,
        "folder": change.folder,
        "change": "created" if change.created else "changed",
        "versions": [change.first, change.last],
        "writes": change.writes,
        "written_at": change.at.isoformat(),
        "date": change.effective_date.isoformat() if change.effective_date else None,
        "status": status,
        "fields": fields,
        "note": change.note,
    }
    what = "created" if change.created else f"changed (v{change.first - 1} -> v{change.last})"
    dated = f" (dated {change.effective_date.isoformat()})" if change.effective_date else ""
    parts = [f"- {_when(change.at)} [{change.page_id}] {change.title}{dated}: {what}"]
    if status is not None and not any(f["field"] == STATUS_FIELD for f in fields):
        parts.append(f"status {_short(status)}")
    parts += [f"{f['field']}: {_short(f['from'])} -> {_short(f['to'])}" for f in fields]
    if change.note:
        parts.append(f"from {_short(change.note)}")
    return item, "; ".join(parts)


def _changed_fields(
    rows: Sequence[Interval], change: PageChange, hidden: Collection[str]
) -> list[dict[str, Any]]:
    """The fields whose value before the window's first version differs from the value at
    its last, each with the note that brought the new value (else the write's own)."""
    before = _values(rows, change.first - 1)
    after = _values(rows, change.last)
    out = []
    for name in sorted(set(before) | set(after), key=lambda n: (n != STATUS_FIELD, n)):
        if name in hidden:
            continue
        old, new = before.get(name), after.get(name)
        if (old.value if old else None) == (new.value if new else None):
            continue
        out.append(
            {
                "field": name,
                "from": old.value if old else None,
                "to": new.value if new else None,
                "source": (new.source if new else old.ended_source if old else None) or change.note,
            }
        )
    return out[:MAX_FIELDS]


def _values(rows: Sequence[Interval], version: int) -> dict[str, Interval]:
    """Each field's row as of page version ``version``."""
    return {
        r.field: r
        for r in rows
        if r.version <= version and (r.ended_version is None or r.ended_version > version)
    }


def _conflict_item(row: Conflict, kind: str, at: dt.datetime | None) -> tuple[dict[str, Any], str]:
    state = {
        "conflict_unresolved": "opened",
        "conflict_superseded": "superseded",
        "conflict_resolved": "closed",
    }[kind]
    item = {
        "id": row.id,
        "page": row.page_id,
        "title": row.title,
        "field": row.field,
        "old_value": row.old_value,
        "new_value": row.new_value,
        "old_source": row.old_source,
        "new_source": row.new_source,
        "state": state,
        "at": (at or row.created_at).isoformat(),
    }
    sources = " vs ".join(s for s in (row.old_source, row.new_source) if s)
    line = (
        f"- {_when(at or row.created_at)} [{row.page_id}] {row.title}: {row.field} "
        f"{_short(row.old_value)} vs {_short(row.new_value)}"
        + (f" ({sources})" if sources else "")
        + (f" - {state}" if at is not None else "")
    )
    return item, line


def _review_item(review: Review, kind: str, at: dt.datetime | None) -> tuple[dict[str, Any], str]:
    state = kind.removeprefix("review_")
    when = at or review.created_at
    item = {
        "id": review.id,
        "page": review.page_id,
        "title": review.title,
        "version": review.version,
        "reason": review.reason,
        "state": "flagged" if state == "pending" else state,
        "at": when.isoformat(),
    }
    line = (
        f"- {_when(when)} [{review.page_id}] {review.title} v{review.version}: "
        f"{_short(review.reason)}" + ("" if state == "pending" else f" - {state}")
    )
    return item, line


def _when(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else _json(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
