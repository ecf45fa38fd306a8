"""What a folder of the schema requires of a page: validation, file name, effective date.

``validate_page`` lists every problem at once (fields checked against the folder's JSON
Schema, sections, timeline); ``check_page`` raises them as one PageValidationError.
``page_slug`` fills the folder's slug template; ``effective_date`` says what the page is
about in time.
"""

from __future__ import annotations

import datetime
import functools
import re
import string
from collections.abc import Iterator
from typing import Any

import jsonschema

from memserver.errors import PageValidationError, Problem, UserError
from memserver.kb.frontmatter import as_date, date_in_name
from memserver.kb.layout import slugify
from memserver.kb.page_model import Page
from memserver.kb.problems import json_problems
from memserver.kb.schema import RESERVED_SECTIONS, FieldSpec, FolderSpec

# Fields that carry a page's date when the folder names no date_field.
DATE_FIELDS = ("date", "event_date", "published")
# A title is a name, not a text (it is embedded, indexed and matched on every search).
MAX_TITLE_BYTES = 500

_SOURCE_SUFFIX = re.compile(r"\[source: [^\]\n]+\]$")

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
    problems: list[Problem] = list(_nul_problems(page))
    title_bytes = len(page.title.encode("utf-8", errors="surrogatepass"))
    if not page.title:
        problems.append(Problem("title", "the page has no title", "set title to the page's name"))
    elif "\n" in page.title:
        problems.append(
            Problem("title", "the title is more than one line", "keep the title on one line")
        )
    elif title_bytes > MAX_TITLE_BYTES:
        problems.append(
            Problem(
                "title",
                f"the title is {title_bytes} bytes long (UTF-8), more than {MAX_TITLE_BYTES}",
                "give the page a short name; put the rest in a section",
            )
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


def _nul_problems(page: Page) -> Iterator[Problem]:
    """A NUL character anywhere in the page (text cannot hold one, PostgreSQL refuses it)."""
    texts: list[tuple[str, Any]] = [("title", page.title), ("type", page.type)]
    texts += [(f"fields.{k}", v) for k, v in page.fields.items()]
    texts += [(f"aliases[{i}]", a) for i, a in enumerate(page.aliases)]
    texts += [(f"sources[{i}]", s) for i, s in enumerate(page.sources)]
    texts += [(f"sections.{h}", f"{h}{b}") for h, b in page.sections.items()]
    texts += [(f"timeline[{i}]", f"{e.text}{e.source}") for i, e in enumerate(page.timeline)]
    texts += [(f"open_questions[{i}]", q) for i, q in enumerate(page.open_questions)]
    for where, value in texts:
        if "\x00" in str(value):
            yield Problem(
                where, "contains a NUL character (\\x00)", "remove it; text cannot hold one"
            )


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
