"""What kb_put_page accepts: a page as JSON or text, checked and turned into a Page."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memserver.errors import Problem

if TYPE_CHECKING:
    from memserver.kb.page import Page
    from memserver.kb.schema import FolderSpec


_LINE_DATE = re.compile(r"^\s*[-*]?\s*\**(\d{4}-\d{2}-\d{2})\**\s*[|:\-–—]?\s*(.+?)\s*$")
_LINE_SOURCE = re.compile(r"\s*\[source:\s*([^\]]+)\]\s*$")


def _decode(value: Any) -> Any:
    """Objects and arrays sent as JSON text are accepted (models often do this)."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


class TimelineInput(BaseModel):
    """One dated piece of evidence."""

    model_config = ConfigDict(extra="ignore")
    date: str = Field(description="YYYY-MM-DD: when it happened (not when it was written).")
    text: str = Field(description="What happened, one line.")
    source: str | None = Field(default=None, description="Source file it came from.")

    @classmethod
    def coerce(cls, value: Any) -> Any:
        if isinstance(value, str):
            line = value
            source = None
            if m := _LINE_SOURCE.search(line):
                source, line = m.group(1).strip(), line[: m.start()]
            if m := _LINE_DATE.match(line):
                return {"date": m.group(1), "text": m.group(2), "source": source}
            return {"date": "", "text": value}
        if isinstance(value, Mapping):
            out = dict(value)
            for alias in ("event", "description", "summary", "entry", "fact"):
                if "text" not in out and alias in out:
                    out["text"] = out[alias]
            for alias in ("when", "day", "event_date"):
                if "date" not in out and alias in out:
                    out["date"] = out[alias]
            out["date"] = str(out.get("date", ""))
            return out
        return value


class PageInput(BaseModel):
    """A page as structured data: frontmatter fields, sections, timeline, open questions."""

    model_config = ConfigDict(extra="ignore")
    title: str = Field(description="Page title: the entity's name or the event's name.")
    type: str | None = Field(default=None, description="Page type; defaults to the folder's.")
    fields: dict[str, Any] = Field(
        default_factory=dict,
        description="Schema fields by name (dates YYYY-MM-DD; link fields hold page titles).",
    )
    aliases: list[str] = Field(default_factory=list, description="Other names for it.")
    sources: list[str] = Field(default_factory=list, description="Source files it draws on.")
    sections: dict[str, str] = Field(
        default_factory=dict, description="Section heading -> markdown body, schema headings."
    )
    timeline: list[TimelineInput] = Field(
        default_factory=list, description="Dated evidence entries, any order."
    )
    open_questions: list[str] = Field(
        default_factory=list, description="Unresolved conflicts, one per item."
    )

    @field_validator("fields", "sections", "aliases", "sources", "open_questions", mode="before")
    @classmethod
    def _json_or_text(cls, value: Any) -> Any:
        value = _decode(value)
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            # sections given as [{"heading": ..., "body": ...}]
            pairs = [
                (
                    v.get("heading") or v.get("title") or v.get("name"),
                    v.get("body") or v.get("text"),
                )
                for v in value
            ]
            if all(h is not None for h, _ in pairs):
                return {str(h): str(b or "") for h, b in pairs}
        if value is None:
            return None
        return value

    @field_validator("aliases", "sources", "open_questions", mode="after")
    @classmethod
    def _strip_items(cls, value: list[str]) -> list[str]:
        return [v.strip() for v in value if v.strip()]

    @field_validator("timeline", mode="before")
    @classmethod
    def _timeline(cls, value: Any) -> Any:
        value = _decode(value)
        if isinstance(value, list):
            return [TimelineInput.coerce(v) for v in value]
        return value


def to_page(data: PageInput, folder: FolderSpec) -> tuple[Page, list[Problem]]:
    """Build a Page, collecting problems the page model cannot hold (bad timeline dates)."""
    from memserver.kb.page import Page, TimelineEntry

    problems: list[Problem] = []
    entries: list[TimelineEntry] = []
    for i, item in enumerate(data.timeline):
        try:
            day = dt.date.fromisoformat(item.date.strip())
        except ValueError:
            problems.append(
                Problem(
                    f"timeline[{i}].date",
                    f"{item.date!r} is not a date",
                    "write the day the event happened as YYYY-MM-DD",
                )
            )
            continue
        if not item.text.strip():
            problems.append(Problem(f"timeline[{i}].text", "is empty", "say what happened"))
            continue
        entries.append(TimelineEntry(date=day, text=item.text.strip(), source=item.source))
    entries.sort(key=lambda e: e.date, reverse=True)
    page = Page(
        title=data.title.strip(),
        type=(data.type or folder.type).strip(),
        fields=dict(data.fields),
        aliases=tuple(data.aliases),
        sources=tuple(data.sources),
        sections={k.strip(): v for k, v in data.sections.items()},
        timeline=tuple(entries),
        open_questions=tuple(data.open_questions),
    )
    return page, problems
