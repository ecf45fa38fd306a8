"""What held when: the validity intervals of every field value of every page.

Each value a page's field (its status among them) has had is one ``field_values`` row:
``valid_from``/``valid_to`` (when it held in the world; ``valid_to`` NULL while it still
holds), ``recorded_at`` (when the memory learned it) and the ``source`` note that brought
it. A write that changes a value closes the open row (``valid_to`` = the new value's
``valid_from``) and opens a new one; a value the write leaves alone stays open; a field
the write drops is closed with no successor. Nothing is deleted: the old value is history.

The dates of a write, from what the server knows (``learned``):

* the notes this write adds to the page's ``sources``: the newest of their dates (from
  the source ledger: ``source_docs``, else the manifest, else a date in the file name).
  A note says what was true when it was written, and is when the memory learned it, so
  it gives both ``valid_from`` and ``recorded_at``;
* else the page's own date (its folder's date field: a decision's day), for
  ``valid_from``, with the write's day as ``recorded_at``: the write brought no dated
  note, so the page's date is the best word on when it held;
* else the write's day (``page_versions.created_at`` in UTC) for both.

Everything here derives from ``page_versions`` and the source dates, so ``rebuild``
(called by reindex) replays the versions through the same ``step`` the write path uses
and reconstructs the same history; ``field_history_pages`` remembers the newest version
replayed per page, so a reindex replays only pages that lag.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.types.json import Jsonb

from memserver.kb.frontmatter import as_date, date_in_name
from memserver.kb.page import Page, parse_page

if TYPE_CHECKING:
    from memserver.kb.manifest import Manifest

_COLUMNS = (
    "field, value, valid_from, valid_to, recorded_at, source, version, ended_version, ended_source"
)


@dataclass(frozen=True)
class Interval:
    """One value of one field and when it held."""

    field: str
    value: Any  # JSON
    valid_from: dt.date
    valid_to: dt.date | None  # None: it still holds
    recorded_at: dt.date
    source: str | None
    version: int
    ended_version: int | None = None
    ended_source: str | None = None

    @property
    def open(self) -> bool:
        return self.ended_version is None

    def held_on(self, day: dt.date) -> bool:
        """It held on ``day`` and the memory knew it by then."""
        if self.recorded_at > day or self.valid_from > day:
            return False
        return self.valid_to is None or self.valid_to > day

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "value": self.value,
            "valid_from": self.valid_from.isoformat(),
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "recorded_at": self.recorded_at.isoformat(),
            "source": self.source,
            "version": self.version,
            "ended_version": self.ended_version,
            "ended_source": self.ended_source,
        }


@dataclass(frozen=True)
class Learned:
    """What one page version tells: its field values and the dates of the write."""

    version: int
    fields: Mapping[str, Any]  # JSON values
    valid_from: dt.date
    recorded_at: dt.date
    source: str | None


def json_value(value: Any) -> Any:
    """A field value as JSON (dates and other objects as text)."""
    return json.loads(json.dumps(value, default=str))


def note_name(source: str) -> str:
    """A source reference as the ledger keys it (``source/`` prefix dropped)."""
    return source.strip().removeprefix("source/")


def learned(
    page: Page,
    version: int,
    previous_sources: Collection[str],
    note_dates: Mapping[str, dt.date],
    written: dt.date,
    page_date: dt.date | None,
) -> Learned:
    """The values of a page version and the dates they take (see the module docstring)."""
    before = {note_name(s) for s in previous_sources}
    added = [note_name(s) for s in page.sources if note_name(s) not in before]
    dated = sorted((note_dates[s], s) for s in added if s in note_dates)
    fields = {name: json_value(v) for name, v in page.fields.items() if v not in (None, "", [])}
    if dated:
        day, source = dated[-1]
        return Learned(version, fields, day, day, source)
    return Learned(version, fields, page_date or written, written, None)


def step(current: Mapping[str, Interval], new: Learned) -> tuple[list[Interval], list[Interval]]:
    """The rows a version closes (the values it changed or dropped, closed) and opens
    (its new values), given the open rows ``current`` by field."""
    closed: list[Interval] = []
    opened: list[Interval] = []
    for name, row in current.items():
        if name in new.fields and new.fields[name] == row.value:
            continue
        # Notes ingested out of order: a value never ends before it began.
        end = max(new.valid_from, row.valid_from)
        closed.append(
            replace(row, valid_to=end, ended_version=new.version, ended_source=new.source)
        )
    for name, value in new.fields.items():
        held = current.get(name)
        if held is not None and held.value == value:
            continue
        opened.append(
            Interval(name, value, new.valid_from, None, new.recorded_at, new.source, new.version)
        )
    return closed, opened


# ------------------------------------------------------------------------ source dates


def note_dates(
    conn: psycopg.Connection[Any], manifest: Manifest | None, names: Iterable[str]
) -> dict[str, dt.date]:
    """The dates of these notes: the source ledger in the index, else the manifest, else
    a date in the file name (notes with none are left out)."""
    wanted = sorted({note_name(n) for n in names if n and n.strip()})
    if not wanted:
        return {}
    rows = conn.execute(
        "SELECT path, doc_date FROM source_docs WHERE path = ANY(%s) AND doc_date IS NOT NULL",
        (wanted,),
    ).fetchall()
    out: dict[str, dt.date] = {str(p): d for p, d in rows}
    missing = [n for n in wanted if n not in out]
    if missing and manifest is not None:
        try:
            known = {e.path: e.doc_date for e in manifest.entries()}
        except (OSError, ValueError):
            known = {}
        out.update({n: known[n] for n in missing if n in known})
    for name in wanted:
        if name not in out and (found := date_in_name(name.rsplit("/", 1)[-1])) is not None:
            out[name] = found
    return out


# ------------------------------------------------------------------------ writing


def _insert(
    conn: psycopg.Connection[Any], page_id: str, folder: str, rows: Sequence[Interval]
) -> None:
    if not rows:
        return
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO field_values (page_id, folder, field, value, valid_from, valid_to,"
            " recorded_at, source, version, ended_version, ended_source)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (
                    page_id,
                    folder,
                    r.field,
                    Jsonb(r.value),
                    r.valid_from,
                    r.valid_to,
                    r.recorded_at,
                    r.source,
                    r.version,
                    r.ended_version,
                    r.ended_source,
                )
                for r in rows
            ],
        )


def _mark(conn: psycopg.Connection[Any], page_id: str, version: int) -> None:
    conn.execute(
        "INSERT INTO field_history_pages (page_id, version) VALUES (%s, %s)"
        " ON CONFLICT (page_id) DO UPDATE SET version = excluded.version",
        (page_id, version),
    )


def _written_day(created: dt.datetime | None) -> dt.date:
    stamp = created or dt.datetime.now(dt.UTC)
    return stamp.astimezone(dt.UTC).date() if stamp.tzinfo else stamp.date()


def record_write(
    conn: psycopg.Connection[Any],
    page_id: str,
    folder: str,
    version: int,
    page: Page,
    date_field: str | None,
    manifest: Manifest | None,
) -> None:
    """Bring a page's history up to the version just written (inside the write's
    transaction, after its page_versions row); ``date_field`` is the folder's."""
    row = conn.execute(
        "SELECT version FROM field_history_pages WHERE page_id = %s", (page_id,)
    ).fetchone()
    if row is None or (
        int(row[0]) != version - 1 and _has_gap(conn, page_id, int(row[0]), version)
    ):
        # history missing or behind: replay it all
        rebuild(conn, manifest, [page_id], date_fields={folder: date_field or ""})
        return
    previous = conn.execute(
        "SELECT markdown FROM page_versions WHERE page_id = %s AND version < %s"
        " ORDER BY version DESC LIMIT 1",
        (page_id, version),
    ).fetchone()
    before = parse_page(str(previous[0]), source=page_id).sources if previous else ()
    dates = note_dates(conn, manifest, page.sources)
    new = learned(page, version, before, dates, _written_day(None), _own_date(page, date_field))
    current = {r.field: r for r in _open_rows(conn, page_id)}
    closed, opened = step(current, new)
    for r in closed:
        conn.execute(
            "UPDATE field_values SET valid_to = %s, ended_version = %s, ended_source = %s"
            " WHERE page_id = %s AND field = %s AND ended_version IS NULL",
            (r.valid_to, r.ended_version, r.ended_source, page_id, r.field),
        )
    _insert(conn, page_id, folder, opened)
    _mark(conn, page_id, version)


def _has_gap(conn: psycopg.Connection[Any], page_id: str, replayed: int, version: int) -> bool:
    """Whether versions between the replayed one and ``version`` were never replayed."""
    row = conn.execute(
        "SELECT count(*) FROM page_versions WHERE page_id = %s AND version > %s AND version < %s",
        (page_id, replayed, version),
    ).fetchone()
    return bool(row and row[0])


def _open_rows(conn: psycopg.Connection[Any], page_id: str) -> list[Interval]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM field_values WHERE page_id = %s AND ended_version IS NULL",
        (page_id,),
    ).fetchall()
    return [Interval(*r) for r in rows]


def rebuild(
    conn: psycopg.Connection[Any],
    manifest: Manifest | None,
    page_ids: Sequence[str] | None = None,
    *,
    date_fields: Mapping[str, str] | None = None,
) -> int:
    """Replay the stored versions of these pages (None: every page whose replayed version
    lags its newest) into ``field_values``; returns how many pages were replayed.
    ``date_fields`` maps a folder to its date field (the page's own date)."""
    if page_ids is None:
        rows = conn.execute(
            "SELECT v.page_id FROM page_versions v"
            " LEFT JOIN field_history_pages h ON h.page_id = v.page_id"
            " GROUP BY v.page_id, h.version HAVING h.version IS NULL OR max(v.version) > h.version"
        ).fetchall()
        page_ids = [str(r[0]) for r in rows]
    if not page_ids:
        return 0
    ids = list(page_ids)
    conn.execute("DELETE FROM field_values WHERE page_id = ANY(%s)", (ids,))
    versions = conn.execute(
        "SELECT page_id, version, markdown, created_at FROM page_versions"
        " WHERE page_id = ANY(%s) ORDER BY page_id, version",
        (ids,),
    ).fetchall()
    pages: dict[str, list[tuple[int, Page, dt.datetime]]] = {}
    for page_id, version, markdown, created in versions:
        page = parse_page(str(markdown), source=f"{page_id} version {version}")
        pages.setdefault(str(page_id), []).append((int(version), page, created))
    dates = note_dates(
        conn, manifest, [s for vs in pages.values() for _, p, _ in vs for s in p.sources]
    )
    for page_id, history in pages.items():
        folder = page_id.split("/", 1)[0]
        date_field = (date_fields or {}).get(folder)
        current: dict[str, Interval] = {}
        done: list[Interval] = []
        before: tuple[str, ...] = ()
        for version, page, created in history:
            own = _own_date(page, date_field)
            new = learned(page, version, before, dates, _written_day(created), own)
            closed, opened = step(current, new)
            done.extend(closed)
            for r in closed:
                current.pop(r.field, None)
            current.update({r.field: r for r in opened})
            before = page.sources
        _insert(conn, page_id, folder, [*done, *current.values()])
        _mark(conn, page_id, history[-1][0])
    return len(pages)


def _own_date(page: Page, date_field: str | None) -> dt.date | None:
    return as_date(page.fields.get(date_field)) if date_field else None


# ------------------------------------------------------------------------ reading


def history_of(conn: psycopg.Connection[Any], page_ids: Sequence[str]) -> dict[str, list[Interval]]:
    """Every interval of these pages, by page, oldest first within each field."""
    if not page_ids:
        return {}
    rows = conn.execute(
        f"SELECT page_id, {_COLUMNS} FROM field_values WHERE page_id = ANY(%s)"
        " ORDER BY page_id, field, valid_from, version",
        (list(page_ids),),
    ).fetchall()
    out: dict[str, list[Interval]] = {}
    for page_id, *rest in rows:
        out.setdefault(str(page_id), []).append(Interval(*rest))
    return out


def first_recorded(conn: psycopg.Connection[Any], page_ids: Sequence[str]) -> dict[str, dt.date]:
    """The day the memory first learned anything of each page (pages with history)."""
    if not page_ids:
        return {}
    rows = conn.execute(
        "SELECT page_id, min(recorded_at) FROM field_values WHERE page_id = ANY(%s)"
        " GROUP BY page_id",
        (list(page_ids),),
    ).fetchall()
    return {str(p): d for p, d in rows}


def as_of(intervals: Iterable[Interval], day: dt.date) -> dict[str, Interval]:
    """The value each field held on ``day``, as the memory knew it then."""
    out: dict[str, Interval] = {}
    for row in intervals:
        if row.held_on(day):
            out[row.field] = row
    return out


def changed_since(intervals: Iterable[Interval], day: dt.date) -> list[Interval]:
    """Values that began (or were learned) after ``day``, oldest first."""
    later = [r for r in intervals if r.valid_from > day or r.recorded_at > day]
    return sorted(later, key=lambda r: (r.valid_from, r.field, r.version))
