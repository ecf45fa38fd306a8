"""``as_of``: what held (and what the memory knew) on a past date, for the read tools.

One argument, read one way (an ISO date; anything else is an arguments error naming the
form), and the views of a page's validity intervals (:mod:`memserver.store.validity`)
the tools attach: the values that held then, each marked with when it held, when it was
learned and from which note, and what changed after. Link fields into folders outside
the caller's scope are left out, as in every page view.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from memserver.errors import ToolErrorKind
from memserver.server.tools.base import CallContext, MemoryToolError
from memserver.store import validity

if TYPE_CHECKING:
    from memserver.store.validity import Interval

AsOfArg = Annotated[
    str | None,
    Field(
        description="A past date YYYY-MM-DD: answer with what held and was known then "
        "(default: today)."
    ),
]


def as_of_date(value: str | None) -> dt.date | None:
    """``as_of`` as a date (None when not given); an arguments error naming the form."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    try:
        return dt.datetime.fromisoformat(text).date()
    except ValueError:
        raise MemoryToolError(
            f"as_of={value!r} is not a date: give an ISO date YYYY-MM-DD, e.g. as_of='2026-03-31'",
            ToolErrorKind.ARGUMENTS,
        ) from None


def end_of(day: dt.date, tz: dt.tzinfo | None = None) -> dt.datetime:
    """The last moment of ``day`` (the reference time of a question asked then)."""
    return dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=tz or dt.UTC)


def held_view(row: Interval) -> dict[str, Any]:
    """One value and when it held, as the tools show it."""
    return {
        "value": row.value,
        "valid_from": row.valid_from.isoformat(),
        "valid_to": row.valid_to.isoformat() if row.valid_to else None,
        "recorded_at": row.recorded_at.isoformat(),
        "source": row.source,
    }


def change_view(row: Interval, before: Interval | None) -> dict[str, Any]:
    """A value that came after the date: what it replaced, when and from which note."""
    return {
        "field": row.field,
        "from": before.value if before is not None else None,
        "to": row.value,
        "date": row.valid_from.isoformat(),
        "recorded_at": row.recorded_at.isoformat(),
        "source": row.source,
    }


def hidden_fields(call: CallContext, page_id: str) -> frozenset[str]:
    """The fields of a page the caller may not see: link fields into hidden folders."""
    if call.scope.folders is None:
        return frozenset()
    schema = call.services.schema()
    folder = page_id.split("/", 1)[0]
    if folder not in schema.folder_names:
        return frozenset()
    return schema.folder(folder).hidden_link_fields(call.scope.allows_folder)


def intervals(call: CallContext, page_ids: Sequence[str]) -> dict[str, list[Interval]]:
    """The validity intervals of these pages the caller may read, by page."""
    ids = [p for p in page_ids if call.scope.page_visible(p)]
    if not ids:
        return {}
    with call.services.kb().db.reading() as conn:
        found = validity.history_of(conn, ids)
    out: dict[str, list[Interval]] = {}
    for page_id, rows in found.items():
        hidden = hidden_fields(call, page_id)
        out[page_id] = [r for r in rows if r.field not in hidden]
    return out


def as_of_view(rows: Iterable[Interval], day: dt.date) -> dict[str, Any]:
    """A page's values on ``day`` and what changed after (see the module docstring)."""
    rows = list(rows)
    held = validity.as_of(rows, day)
    later = validity.changed_since(rows, day)
    by_field: dict[str, list[Interval]] = {}
    for r in sorted(rows, key=lambda r: (r.valid_from, r.version)):
        by_field.setdefault(r.field, []).append(r)

    def before(r: Interval) -> Interval | None:
        earlier = [x for x in by_field[r.field] if x.version < r.version]
        return earlier[-1] if earlier else None

    return {
        "date": day.isoformat(),
        "known": any(r.recorded_at <= day for r in rows),
        "fields": {name: held_view(r) for name, r in sorted(held.items())},
        "changed_since": [change_view(r, before(r)) for r in later],
    }


def values_then(view: Mapping[str, Any]) -> dict[str, Any]:
    """The plain values of an ``as_of_view`` (field -> value)."""
    return {name: held["value"] for name, held in view["fields"].items()}
