"""The page as a value: :class:`Page` and its :class:`TimelineEntry` lines.

A :class:`Page` tidies its values when built (trims blank lines around sections,
collapses whitespace in one-line items, sorts and de-duplicates the timeline), so two
pages that render to the same markdown compare equal. The markdown format is in
:mod:`memserver.kb.page`; what a folder requires of a page in :mod:`memserver.kb.page_rules`.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from memserver.errors import UserError
from memserver.kb.frontmatter import as_date

TIMELINE = "Timeline"
OPEN_QUESTIONS = "Open Questions"


@dataclass(frozen=True)
class TimelineEntry:
    """One dated line of evidence; text and source are single lines."""

    date: datetime.date
    text: str
    source: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.date, datetime.datetime):
            object.__setattr__(self, "date", self.date.date())
        elif isinstance(self.date, str):
            parsed = as_date(self.date)
            if parsed is None:
                raise UserError(f"timeline date {self.date!r} is not a date", "write YYYY-MM-DD")
            object.__setattr__(self, "date", parsed)
        object.__setattr__(self, "text", " ".join(str(self.text).split()))
        source = " ".join(str(self.source).split()) if self.source is not None else ""
        object.__setattr__(self, "source", source or None)

    def render(self) -> str:
        line = f"- **{self.date.isoformat()}** | {self.text}".rstrip()
        return f"{line} [source: {self.source}]" if self.source else line

    def to_dict(self) -> dict[str, Any]:
        return {"date": self.date.isoformat(), "text": self.text, "source": self.source}


def _one_line_items(items: Iterable[Any]) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for item in items:
        text = " ".join(str(item).split())
        if text:
            out.setdefault(text)
    return tuple(out)


def _tidy_body(body: str) -> str:
    """Drop blank lines around a body and trailing whitespace at its end; keep the rest."""
    text = str(body).replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines).rstrip()


def _tidy_value(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return tuple(_tidy_value(v) for v in value)
    return value


def _timeline(entries: Iterable[TimelineEntry]) -> tuple[TimelineEntry, ...]:
    """Newest first; identical entries (same date, text and source) kept once."""
    unique = list(dict.fromkeys(entries))
    return tuple(sorted(unique, key=lambda e: e.date, reverse=True))


@dataclass(frozen=True)
class Page:
    """A knowledge page. Field dates are ISO strings; lists are tuples."""

    title: str
    type: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    sections: Mapping[str, str] = field(default_factory=dict)
    timeline: tuple[TimelineEntry, ...] = ()
    open_questions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        tidy = {str(k): _tidy_value(v) for k, v in dict(self.fields).items() if v is not None}
        object.__setattr__(self, "fields", tidy)
        object.__setattr__(self, "title", str(self.title).strip())
        object.__setattr__(self, "type", str(self.type).strip())
        object.__setattr__(self, "aliases", _one_line_items(self.aliases))
        object.__setattr__(self, "sources", _one_line_items(self.sources))
        sections: dict[str, str] = {}
        for heading, body in dict(self.sections).items():
            name, text = " ".join(str(heading).split()), _tidy_body(body)
            if name and text:
                sections[name] = f"{sections[name]}\n\n{text}" if name in sections else text
        object.__setattr__(self, "sections", sections)
        entries = [e if isinstance(e, TimelineEntry) else _entry(e) for e in self.timeline]
        object.__setattr__(self, "timeline", _timeline(entries))
        object.__setattr__(self, "open_questions", _one_line_items(self.open_questions))

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "type": self.type,
            "fields": {k: list(v) if isinstance(v, tuple) else v for k, v in self.fields.items()},
            "aliases": list(self.aliases),
            "sources": list(self.sources),
            "sections": dict(self.sections),
            "timeline": [e.to_dict() for e in self.timeline],
            "open_questions": list(self.open_questions),
        }


def _entry(value: Any) -> TimelineEntry:
    """Accept a mapping ``{date, text, source}`` where a TimelineEntry is expected."""
    if isinstance(value, Mapping):
        day = as_date(value.get("date"))
        if day is None:
            raise UserError(
                f"timeline date {value.get('date')!r} is not a date", "write YYYY-MM-DD"
            )
        return TimelineEntry(day, str(value.get("text", "")), value.get("source"))
    raise UserError(f"not a timeline entry: {value!r}", "give {date, text, source}")


def add_timeline_entries(page: Page, entries: Iterable[TimelineEntry]) -> Page:
    """The page with ``entries`` added; an entry already present is not added again."""
    return replace(page, timeline=_timeline([*page.timeline, *entries]))
