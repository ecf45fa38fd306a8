"""Two versions of a page side by side: field by field and section by section.

A unified diff of the markdown shows ``+`` and ``-`` lines a person has to put back
together, and its long lines run off the page; this compares what a person reads: each
field's old and new value, and each section's lines paired left (before) and right
(after), wrapped. Sections that did not change are named, not repeated. A version that
is not a valid page (an old, hand-written one) is compared as plain lines.

Which note made a version is read off its ``sources``: the ones it has that the
version before it did not (``version_sources``).
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memserver.errors import MemoryError_
from memserver.kb.page import parse_page

if TYPE_CHECKING:
    from memserver.db.database import Database

MAX_ROWS = 2000
MAX_VERSIONS = 50  # the history table reads the sources of the newest versions only


@dataclass(frozen=True)
class Row:
    before: str
    after: str
    kind: str  # same, changed, added, removed


@dataclass(frozen=True)
class Part:
    """A field list or a section, with its rows (empty: unchanged)."""

    name: str
    rows: tuple[Row, ...]

    @property
    def changed(self) -> bool:
        return any(r.kind != "same" for r in self.rows)


def compare(before: str, after: str) -> list[Part]:
    """The parts of two page versions, in the newer one's order (removed ones after)."""
    old, new = _parts(before), _parts(after)
    names = list(new) + [n for n in old if n not in new]
    out = []
    for name in names:
        rows = (
            _field_rows(old.get(name, {}), new.get(name, {}))
            if name == "Fields"
            else _line_rows(old.get(name, ""), new.get(name, ""))
        )
        out.append(Part(name, tuple(itertools.islice(rows, MAX_ROWS))))
    return out


def _parts(markdown: str) -> dict[str, Any]:
    try:
        page = parse_page(markdown)
    except MemoryError_:
        return {"Text": markdown}
    fields: dict[str, str] = {"title": page.title, "type": page.type}
    fields |= {k: _value(v) for k, v in page.fields.items()}
    if page.aliases:
        fields["aliases"] = ", ".join(page.aliases)
    if page.sources:
        fields["sources"] = "\n".join(page.sources)
    parts: dict[str, Any] = {"Fields": fields, **page.sections}
    if page.timeline:
        parts["Timeline"] = "\n".join(
            f"{e.date.isoformat()} {e.text}" + (f" [source: {e.source}]" if e.source else "")
            for e in page.timeline
        )
    if page.open_questions:
        parts["Open Questions"] = "\n".join(page.open_questions)
    return parts


def _value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def _field_rows(old: Mapping[str, str], new: Mapping[str, str]) -> Iterable[Row]:
    for name in list(new) + [n for n in old if n not in new]:
        before, after = old.get(name), new.get(name)
        left = f"{name}: {before}" if before is not None else None
        right = f"{name}: {after}" if after is not None else None
        yield Row(left or "", right or "", _kind(left, right))


def _line_rows(before: str, after: str) -> Iterable[Row]:
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            yield from (Row(line, line, "same") for line in old[i1:i2])
            continue
        for left, right in itertools.zip_longest(old[i1:i2], new[j1:j2]):
            yield Row(left or "", right or "", _kind(left, right))


def _kind(before: str | None, after: str | None) -> str:
    if before is None:
        return "added"
    if after is None:
        return "removed"
    return "same" if before == after else "changed"


def version_sources(db: Database, page_id: str) -> dict[int, list[str]]:
    """For each of the newest versions of a page, the sources it added (the note whose
    ingest wrote it); the caller has already been allowed to see the page."""
    with db.checked("read the page's versions") as conn:
        rows = conn.execute(
            "SELECT version, markdown FROM page_versions WHERE page_id = %s"
            " ORDER BY version DESC LIMIT %s",
            (page_id, MAX_VERSIONS + 1),
        ).fetchall()
    sources = {version: _sources(markdown) for version, markdown in rows}
    ordered = sorted(sources)
    added: dict[int, list[str]] = {}
    for earlier, version in zip([None, *ordered], ordered, strict=False):
        if earlier is None and len(rows) > MAX_VERSIONS:
            continue  # the oldest one read is only there to compare with
        before = set(sources[earlier]) if earlier is not None else set()
        added[version] = [s for s in sources[version] if s not in before]
    return added


def _sources(markdown: str) -> Sequence[str]:
    try:
        return parse_page(markdown).sources
    except MemoryError_:
        return ()
