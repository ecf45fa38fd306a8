"""The page model: parse, render, validate, slug, effective date, timeline, chunks.

A page on disk::

    ---
    title: Bob Martinez
    type: person
    role: VP of Operations          # schema fields, in schema order
    aliases: [Bob]
    sources: [2026-09-23-globex-update.md]
    ---

    ## Summary                      # compiled-truth sections, in schema order
    Bob Martinez is VP of Operations at Globex ...

    ## Timeline                     # append-only evidence, newest first
    - **2026-09-23** | Promoted to VP of Operations. [source: 2026-09-23-globex-update.md]

    ## Open Questions
    - Two sources disagree on his start date.

``parse_page(render_page(p)) == p`` for every page, and rendering is deterministic.
Two normalisations make that possible: :class:`Page` tidies its values when built
(trims blank lines around sections, collapses whitespace in one-line items, sorts and
de-duplicates the timeline), and a body line that would read as a ``## `` heading is
written with one more leading backslash (``\\## ``) and read back without it.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import re
import string
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import jsonschema
import yaml

from memserver.errors import PageValidationError, Problem, UserError
from memserver.frontmatter import as_date, date_in_name, dump_yaml, frontmatter_end, load_yaml
from memserver.layout import slugify
from memserver.problems import json_problems, yaml_syntax_problem
from memserver.schema import RESERVED_SECTIONS, FieldSpec, FolderSpec

__all__ = [
    "Chunk",
    "Page",
    "TimelineEntry",
    "add_timeline_entries",
    "as_date",
    "check_page",
    "chunk_page",
    "content_hash",
    "date_in_name",
    "effective_date",
    "folder_json_schema",
    "page_slug",
    "parse_page",
    "render_page",
    "slugify",
    "validate_page",
]

TIMELINE = "Timeline"
OPEN_QUESTIONS = "Open Questions"
# Fields that carry a page's date when the folder names no date_field.
DATE_FIELDS = ("date", "event_date", "published")

_HEADING = re.compile(r"^##(?:[ \t]|$)")
_ESCAPED_HEADING = re.compile(r"^\\+##(?:[ \t]|$)")
_TIMELINE_LINE = re.compile(
    r"^- \*\*(\d{4}-\d{2}-\d{2})\*\* \|[ ]??(.*?)(?: \[source: ([^\]\n]+)\])?$"
)
_SOURCE_SUFFIX = re.compile(r"\[source: [^\]\n]+\]$")


# --- values ------------------------------------------------------------------------


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


def effective_date(page: Page, folder: FolderSpec, slug: str | None = None) -> datetime.date | None:
    """What the page is about, in time.

    The folder's ``date_field``, then a ``date``/``event_date``/``published`` field,
    then a date in the slug (file name), then the newest timeline entry.
    """
    names = [folder.date_field] if folder.date_field else []
    for name in [*names, *DATE_FIELDS]:
        found = as_date(page.fields.get(name))
        if found is not None:
            return found
    if slug is None:
        try:
            slug = page_slug(page, folder)
        except UserError:
            slug = None
    if slug is not None:
        found = date_in_name(slug)
        if found is not None:
            return found
    return page.timeline[0].date if page.timeline else None


# --- render ----------------------------------------------------------------------------


def _ordered(keys: Iterable[str], order: Iterable[str]) -> list[str]:
    present = list(keys)
    first = [k for k in order if k in present]
    return first + sorted(k for k in present if k not in first)


def _escape_body(body: str) -> str:
    return "\n".join(
        "\\" + line if _HEADING.match(line) or _ESCAPED_HEADING.match(line) else line
        for line in body.split("\n")
    )


def _unescape_body(body: str) -> str:
    return "\n".join(
        line[1:] if _ESCAPED_HEADING.match(line) else line for line in body.split("\n")
    )


def render_page(page: Page, folder: FolderSpec | None = None) -> str:
    """The page as markdown; the same page always gives the same text.

    With a folder, fields and sections follow the schema's order (anything else comes
    after, sorted); without one, the page's own order.
    """
    field_order = [f.name for f in folder.fields] if folder else list(page.fields)
    section_order = list(folder.sections) if folder else list(page.sections)
    front: dict[str, Any] = {"title": page.title, "type": page.type}
    for key in _ordered(page.fields, field_order):
        front[key] = page.fields[key]
    if page.aliases:
        front["aliases"] = page.aliases
    if page.sources:
        front["sources"] = page.sources
    blocks = [
        f"## {heading}\n{_escape_body(page.sections[heading])}"
        for heading in _ordered(page.sections, section_order)
    ]
    if page.timeline:
        blocks.append(f"## {TIMELINE}\n" + "\n".join(e.render() for e in page.timeline))
    if page.open_questions:
        blocks.append(f"## {OPEN_QUESTIONS}\n" + "\n".join(f"- {q}" for q in page.open_questions))
    text = f"---\n{dump_yaml(front)}---\n"
    if blocks:
        text += "\n" + "\n\n".join(blocks) + "\n"
    return text


# --- parse -----------------------------------------------------------------------------


def parse_page(text: str, source: str = "page") -> Page:
    """Read a page; raises PageValidationError listing every structural problem.

    ``source`` names the page in error messages (e.g. ``knowledge/people/bob.md``).
    """
    lines = text.replace("\r\n", "\n").removeprefix("\ufeff").split("\n")
    end = frontmatter_end(lines)
    if not lines or lines[0].rstrip() != "---":
        raise PageValidationError(
            [
                Problem(
                    "frontmatter",
                    "the page does not start with '---'",
                    "begin with YAML frontmatter between '---' lines",
                    1,
                )
            ],
            source,
        )
    if end is None:
        raise PageValidationError(
            [
                Problem(
                    "frontmatter", "the frontmatter is not closed", "end it with a line '---'", 1
                )
            ],
            source,
        )
    problems: list[Problem] = []
    front = _parse_frontmatter("\n".join(lines[1:end]), problems, source)
    blocks = _split_blocks(lines, end + 1, problems)
    sections: dict[str, str] = {}
    timeline: list[TimelineEntry] = []
    questions: list[str] = []
    for heading, line_no, body in blocks:
        if heading == TIMELINE:
            timeline.extend(_parse_timeline(body, line_no, problems))
        elif heading == OPEN_QUESTIONS:
            questions.extend(_parse_bullets(body, line_no, problems))
        else:
            sections[heading] = _unescape_body("\n".join(body))
    if problems:
        raise PageValidationError(problems, source)
    title, page_type = front.pop("title"), front.pop("type")
    aliases, sources = front.pop("aliases", ()), front.pop("sources", ())
    return Page(
        title=title,
        type=page_type,
        fields=front,
        aliases=aliases,
        sources=sources,
        sections=sections,
        timeline=tuple(timeline),
        open_questions=tuple(questions),
    )


def _parse_frontmatter(text: str, problems: list[Problem], source: str) -> dict[str, Any]:
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        # The frontmatter starts on the file's line 2, after the opening ``---``.
        raise PageValidationError([yaml_syntax_problem(exc, "frontmatter", 2)], source) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PageValidationError(
            [
                Problem(
                    "frontmatter", "the frontmatter is not a mapping", "write key: value lines", 2
                )
            ],
            source,
        )
    out: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            problems.append(
                Problem(f"frontmatter.{key}", "keys must be text", f'quote it: "{key}"')
            )
            continue
        out[key] = value
    for key in ("title", "type"):
        value = out.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            problems.append(
                Problem(key, f"the page has no {key}", f"add `{key}:` to the frontmatter")
            )
        elif isinstance(value, dict | list):
            problems.append(Problem(key, f"{key} must be text", f"write `{key}: <text>`"))
        else:
            out[key] = str(value)
    for key in ("aliases", "sources"):
        value = out.get(key)
        if value is None:
            out.pop(key, None)
        elif isinstance(value, str):
            out[key] = (value,)
        elif isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
            out[key] = tuple(str(v) for v in value)
        else:
            problems.append(Problem(key, f"{key} must be a list of text", f"write `{key}: [a, b]`"))
    return out


def _split_blocks(
    lines: list[str], start: int, problems: list[Problem]
) -> list[tuple[str, int, list[str]]]:
    blocks: list[tuple[str, int, list[str]]] = []
    seen: set[str] = set()
    for index in range(start, len(lines)):
        line = lines[index]
        if _HEADING.match(line):
            heading = " ".join(line[2:].split())
            if heading in seen:
                problems.append(
                    Problem(
                        f"sections.{heading}",
                        f"heading '## {heading}' appears twice",
                        "merge the two sections",
                        index + 1,
                    )
                )
            seen.add(heading)
            blocks.append((heading, index + 1, []))
        elif blocks:
            blocks[-1][2].append(line)
        elif line.strip():
            problems.append(
                Problem(
                    "body",
                    "text before the first '## ' heading",
                    "move it under a section such as '## Summary'",
                    index + 1,
                )
            )
    return blocks


def _parse_timeline(
    body: list[str], heading_line: int, problems: list[Problem]
) -> list[TimelineEntry]:
    entries = []
    for offset, line in enumerate(body, start=1):
        if not line.strip():
            continue
        match = _TIMELINE_LINE.match(line.rstrip())
        date = as_date(match.group(1)) if match else None
        if match is None or date is None:
            problems.append(
                Problem(
                    "timeline",
                    f"not a timeline line: {line.strip()[:80]!r}",
                    "write `- **YYYY-MM-DD** | what happened [source: file.md]`",
                    heading_line + offset,
                )
            )
            continue
        entries.append(TimelineEntry(date, match.group(2), match.group(3)))
    return entries


def _parse_bullets(body: list[str], heading_line: int, problems: list[Problem]) -> list[str]:
    items = []
    for offset, line in enumerate(body, start=1):
        if not line.strip():
            continue
        if line.startswith("- "):
            items.append(line[2:])
        else:
            problems.append(
                Problem(
                    "open_questions",
                    f"not a bullet: {line.strip()[:80]!r}",
                    "start each question with '- '",
                    heading_line + offset,
                )
            )
    return items


# --- validate --------------------------------------------------------------------------

_SINGLE_LINE = {
    "type": "string",
    "minLength": 1,
    "pattern": r"^[^\n]*$",
    "x-message": "is more than one line",
    "x-hint": "keep it on one line; use a text field for longer prose",
}


def _field_json(spec: FieldSpec) -> dict[str, Any]:
    kinds: dict[str, dict[str, Any]] = {
        "string": _SINGLE_LINE,
        "text": {"type": "string"},
        "date": {"type": "string", "format": "date"},
        "number": {"type": "number"},
        "bool": {"type": "boolean"},
        "enum": {"type": "string", "enum": list(spec.values)},
        "list": {"type": "array", "items": _SINGLE_LINE},
        "link": _SINGLE_LINE,
        "links": {"type": "array", "items": _SINGLE_LINE, "uniqueItems": True},
    }
    out = dict(kinds[spec.type])
    out["description"] = spec.description or f"a {spec.type} field"
    return out


def folder_json_schema(folder: FolderSpec) -> dict[str, Any]:
    """The JSON Schema of a folder's frontmatter fields (also usable as a tool schema)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {spec.name: _field_json(spec) for spec in folder.fields},
        "required": [spec.name for spec in folder.fields if spec.required],
        "additionalProperties": False,
    }


@functools.lru_cache(maxsize=256)
def _field_validator(folder: FolderSpec) -> jsonschema.protocols.Validator:
    schema = folder_json_schema(folder)
    cls = jsonschema.validators.validator_for(schema)
    validator: jsonschema.protocols.Validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return validator


def _json_ready(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def validate_page(page: Page, folder: FolderSpec) -> list[Problem]:
    """Every way the page does not fit its folder (empty when it fits)."""
    problems: list[Problem] = []
    if not page.title:
        problems.append(Problem("title", "the page has no title", "set title to the page's name"))
    elif "\n" in page.title:
        problems.append(
            Problem("title", "the title is more than one line", "keep the title on one line")
        )
    if page.type != folder.type:
        problems.append(
            Problem(
                "type",
                f"type {page.type!r} does not match folder {folder.name!r}",
                f"set type: {folder.type}",
            )
        )
    values = {k: _json_ready(v) for k, v in page.fields.items()}
    problems.extend(
        json_problems(_field_validator(folder), values, prefix=("fields",), noun="field")
    )
    for heading in page.sections:
        if heading in RESERVED_SECTIONS:
            problems.append(
                Problem(
                    f"sections.{heading}",
                    f"'{heading}' is built in, not a section",
                    f"use the page's {heading.lower()} instead",
                )
            )
        elif heading not in folder.sections:
            allowed = ", ".join(folder.sections) or "none"
            problems.append(
                Problem(
                    f"sections.{heading}", f"unknown section {heading!r}", f"use one of: {allowed}"
                )
            )
    if page.timeline and not folder.timeline:
        problems.append(
            Problem(
                "timeline",
                f"folder {folder.name!r} keeps no timeline",
                "put these facts in the sections or fields",
            )
        )
    for index, entry in enumerate(page.timeline):
        at = f"timeline[{index}]"
        if not entry.text:
            problems.append(Problem(at, "the entry has no text", "say what happened on that date"))
        if entry.source and "]" in entry.source:
            problems.append(
                Problem(at, "the source contains ']'", "name the source file without brackets")
            )
        if entry.source is None and _SOURCE_SUFFIX.search(entry.text):
            problems.append(
                Problem(at, "the text ends like a source", "pass the file as the entry's source")
            )
    if page.title and not problems:
        try:
            page_slug(page, folder)
        except PageValidationError as exc:
            problems.extend(exc.problems)
    return problems


def check_page(page: Page, folder: FolderSpec) -> None:
    """Raise PageValidationError listing every problem, if there are any."""
    problems = validate_page(page, folder)
    if problems:
        raise PageValidationError(problems, f"{folder.name}/{page.title or '(untitled)'}")


def page_slug(page: Page, folder: FolderSpec) -> str:
    """The page's file name (without .md) from the folder's slug template."""
    parts: list[str] = []
    for literal, name, _, _ in string.Formatter().parse(folder.slug):
        parts.append(literal)
        if name is None:
            continue
        if name == "title":
            value: Any = page.title
            where = "title"
        else:
            key = folder.date_field if name == "date" and folder.date_field else name
            value, where = page.fields.get(key), f"fields.{key}"
            spec = folder.field(key)
            day = as_date(value) if spec is not None and spec.type == "date" else None
            if day is not None:
                value = day.isoformat()
        if isinstance(value, tuple | list):
            value = "-".join(str(v) for v in value)
        if value is None or not str(value).strip():
            raise PageValidationError(
                [
                    Problem(
                        where,
                        f"the file name needs {{{name}}} but it is empty",
                        f"set {where.split('.')[-1]}",
                    )
                ],
                f"{folder.name}/{page.title or '(untitled)'}",
            )
        try:
            parts.append(slugify(str(value)))
        except UserError as exc:
            raise PageValidationError(
                [Problem(where, exc.message, exc.hint)], folder.name
            ) from None
    return slugify("".join(parts))


# --- timeline ---------------------------------------------------------------------------


def add_timeline_entries(page: Page, entries: Iterable[TimelineEntry]) -> Page:
    """The page with ``entries`` added; an entry already present is not added again."""
    return replace(page, timeline=_timeline([*page.timeline, *entries]))


# --- chunks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """A piece of a page for the index; ``text`` starts with ``"<title> — <section>\\n"``."""

    section: str
    text: str
    ordinal: int
    date: datetime.date | None = None


FIELDS_SECTION = "Fields"


def _windows(body: str, max_words: int, overlap: int) -> list[str]:
    """Slices of ``body`` of at most ``max_words`` words, overlapping, formatting kept."""
    spans = [m.span() for m in re.finditer(r"\S+", body)]
    if not spans:
        return []
    step = max(1, max_words - max(0, min(overlap, max_words - 1)))
    out = []
    for start in range(0, len(spans), step):
        end = min(start + max_words, len(spans))
        out.append(body[spans[start][0] : spans[end - 1][1]])
        if end == len(spans):
            break
    return out


def _fields_text(page: Page) -> str:
    lines = []
    for key, value in page.fields.items():
        shown = ", ".join(map(str, value)) if isinstance(value, tuple) else str(value)
        lines.append(f"{key}: {shown}")
    if page.aliases:
        lines.append(f"aliases: {', '.join(page.aliases)}")
    return "\n".join(lines)


def drop_field_lines(text: str, names: Collection[str]) -> str:
    """``text`` (a chunk or snippet) without the ``name: value`` lines that
    :func:`chunk_page` writes for the fields ``names`` into its Fields chunk."""
    if not names:
        return text
    prefixes = tuple(f"{name}: " for name in names)
    return "\n".join(line for line in text.split("\n") if not line.startswith(prefixes))


def chunk_page(page: Page, max_words: int = 300, overlap: int = 50) -> list[Chunk]:
    """Chunks for the index: fields, each section in windows, each timeline entry alone."""
    chunks: list[Chunk] = []

    def add(section: str, body: str, date: datetime.date | None = None) -> None:
        for piece in _windows(body, max_words, overlap):
            chunks.append(Chunk(section, f"{page.title} — {section}\n{piece}", len(chunks), date))

    add(FIELDS_SECTION, _fields_text(page))
    for heading, body in page.sections.items():
        add(heading, body)
    for entry in page.timeline:
        source = f" [source: {entry.source}]" if entry.source else ""
        add(TIMELINE, f"{entry.date.isoformat()}: {entry.text}{source}", entry.date)
    if page.open_questions:
        add(OPEN_QUESTIONS, "\n".join(f"- {q}" for q in page.open_questions))
    return chunks


def content_hash(text: str) -> str:
    """SHA-256 (hex) of the text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
