"""Validating a parsed ``schema.yaml``: every problem at once, in two passes.

1. JSON Schema, against ``meta_schema.yaml`` (shape, types, unknown keys, ranges);
2. checks JSON Schema cannot express: duplicate folders and fields, links to unknown
   folders, slug placeholders that are not fields, ``date_field`` that is not a date,
   unknown time zones, enums without values, reserved names.

Each :class:`~memserver.errors.Problem` has its location (``folders[2].fields[0].type``),
the YAML line, and what to write instead.
"""

from __future__ import annotations

import functools
import re
import zoneinfo
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

import jsonschema
import yaml

from memserver.errors import Problem
from memserver.kb.layout import name_problem
from memserver.kb.problems import Path_, YamlMarks, json_problems, problem, suggest
from memserver.kb.schema_model import (
    LINK_TYPES,
    NAME_SLOT,
    RESERVED_FIELDS,
    RESERVED_FOLDERS,
    RESERVED_SECTIONS,
    VerbPhrase,
    slug_placeholders,
)
from memserver.kb.trust import rule_key
from memserver.kb.words import normalize_name


def schema_problems(data: dict[str, Any], lines: YamlMarks) -> list[Problem]:
    """Every problem of both passes, sorted by line, each reported once."""
    problems = [*_meta_problems(data, lines), *_semantic_problems(data, lines)]
    problems.sort(key=lambda p: (p.line or 0, p.location))
    return _dedupe(problems)


@functools.cache
def meta_schema() -> dict[str, Any]:
    """The meta-schema (``memserver/kb/meta_schema.yaml``) as a dict."""
    text = resources.files("memserver.kb").joinpath("meta_schema.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(meta_schema())
    cls.check_schema(meta_schema())
    validator: jsonschema.protocols.Validator = cls(meta_schema())
    return validator


# --- pass 1: JSON Schema -------------------------------------------------------------


def _meta_problems(data: Any, lines: YamlMarks) -> list[Problem]:
    return json_problems(_validator(), data, lines=lines)


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        if (p.location, p.message) not in seen:
            seen.add((p.location, p.message))
            out.append(p)
    return out


# --- pass 2: what JSON Schema cannot check ------------------------------------------------


def _dicts(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """Enumerate the mapping items of a list, skipping whatever pass 1 already flagged."""
    if not isinstance(value, list):
        return []
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def _semantic_problems(data: dict[str, Any], lines: Mapping[Path_, int]) -> Iterator[Problem]:
    tz = data.get("timezone")
    if isinstance(tz, str):
        yield from _check_timezone(tz, lines)
    folders = _dicts(data.get("folders"))
    names = list(dict.fromkeys(f["name"] for _, f in folders if isinstance(f.get("name"), str)))
    first: dict[str, int] = {}
    for index, folder in folders:
        name = folder.get("name")
        if not isinstance(name, str):
            continue
        at: list[str | int] = ["folders", index, "name"]
        if name in first:
            yield problem(
                lines,
                at,
                f"folder name {name!r} is already used by folders[{first[name]}]",
                "give every folder a different name",
            )
        else:
            first[name] = index
        if name in RESERVED_FOLDERS:
            yield problem(
                lines,
                at,
                f"folder name {name!r} is reserved (token scope for raw sources)",
                "rename it, e.g. documents",
            )
    for index, folder in folders:
        yield from _check_folder(index, folder, names, lines)
    trust = data.get("trust")
    if isinstance(trust, dict):
        yield from _check_trust(trust, lines)


def _check_trust(trust: dict[str, Any], lines: Mapping[Path_, int]) -> Iterator[Problem]:
    """Folder rules that name a place under source/ once each; author names with letters."""
    sources = trust.get("sources")
    seen: dict[str, str] = {}
    for key in sources if isinstance(sources, dict) else ():
        at: list[str | int] = ["trust", "sources", key]
        folded = rule_key(str(key))
        if ".." in folded.split("/") or not folded:
            yield problem(
                lines,
                at,
                f"{key!r} is not a folder under source/",
                "write a folder path relative to source/, e.g. slack/random",
            )
        elif folded in seen:
            yield problem(
                lines,
                at,
                f"{key!r} names the same place as {seen[folded]!r}",
                "keep one of them",
            )
        else:
            seen[folded] = str(key)
    authors = trust.get("authors")
    for name in authors if isinstance(authors, dict) else ():
        if not normalize_name(str(name)):
            yield problem(
                lines,
                ["trust", "authors", name],
                f"author {name!r} has no letters or digits",
                "write the name as notes write it, e.g. Alex Kim",
            )


def _check_timezone(tz: str, lines: Mapping[Path_, int]) -> Iterator[Problem]:
    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        hint = suggest(tz, sorted(zoneinfo.available_timezones()))
        yield problem(
            lines,
            ["timezone"],
            f"unknown time zone {tz!r}",
            f"{hint}use an IANA name such as UTC, Europe/Berlin or Asia/Ulaanbaatar",
        )


def _check_folder(
    index: int, folder: dict[str, Any], folder_names: list[str], lines: Mapping[Path_, int]
) -> Iterator[Problem]:
    base: list[str | int] = ["folders", index]
    fields = _dicts(folder.get("fields"))
    declared: dict[str, str] = {}
    for j, spec in fields:
        name, ftype = spec.get("name"), spec.get("type")
        at: list[str | int] = [*base, "fields", j]
        if isinstance(name, str):
            if name in declared:
                yield problem(
                    lines,
                    [*at, "name"],
                    f"field {name!r} is declared twice",
                    "remove or rename one",
                )
            elif name in RESERVED_FIELDS:
                yield problem(
                    lines,
                    [*at, "name"],
                    f"field name {name!r} is reserved (every page has it)",
                    "rename the field; title, type, aliases and sources are built in",
                )
            declared.setdefault(name, ftype if isinstance(ftype, str) else "")
        yield from _check_field(at, spec, folder_names, lines)
    date_field = folder.get("date_field")
    if isinstance(date_field, str):
        declared_type = declared.get(date_field)
        if declared_type is not None and declared_type not in ("date", ""):
            yield problem(
                lines,
                [*base, "date_field"],
                f"date_field {date_field!r} names {_article(declared_type)} field, not a date field",
                f"set that field's type to date, or point date_field at a date field ({_names_of(declared, 'date')})",
            )
        elif declared_type is None and name_problem(date_field) is not None:
            yield problem(
                lines,
                [*base, "date_field"],
                f"{date_field!r} is not a valid field name",
                "e.g. date",
            )
        # An undeclared date_field is declared implicitly as a required date field.
        declared.setdefault(date_field, "date")
    slug = folder.get("slug")
    if isinstance(slug, str):
        yield from _check_slug([*base, "slug"], slug, declared, date_field, lines)
    sections = folder.get("sections")
    if isinstance(sections, list):
        seen: set[str] = set()
        for j, heading in enumerate(sections):
            if not isinstance(heading, str):
                continue
            if heading.strip() in RESERVED_SECTIONS:
                yield problem(
                    lines,
                    [*base, "sections", j],
                    f"section {heading!r} is built into every page",
                    "remove it; use timeline: true/false for the timeline",
                )
            if heading.strip() != heading:
                yield problem(
                    lines,
                    [*base, "sections", j],
                    f"section {heading!r} has surrounding spaces",
                    "trim it",
                )
            if heading in seen:
                yield problem(
                    lines,
                    [*base, "sections", j],
                    f"section {heading!r} is listed twice",
                    "remove one",
                )
            seen.add(heading)
    for j, verb in _dicts(folder.get("link_verbs")):
        target = verb.get("to")
        if isinstance(target, str) and target not in folder_names:
            yield problem(
                lines,
                [*base, "link_verbs", j, "to"],
                f"link verb points to unknown folder {target!r}",
                f"{suggest(target, folder_names)}use one of: {', '.join(folder_names)}",
            )
        patterns = verb.get("patterns")
        for k, pattern in enumerate(patterns if isinstance(patterns, list) else ()):
            if isinstance(pattern, str):
                yield from _check_pattern(pattern, lines, [*base, "link_verbs", j, "patterns", k])


def _check_pattern(pattern: str, lines: Mapping[Path_, int], at: list[Any]) -> Iterator[Problem]:
    phrase = VerbPhrase.of(pattern)
    if NAME_SLOT in phrase.text or not phrase.text:
        yield problem(
            lines,
            at,
            f"link verb pattern {pattern!r}: {NAME_SLOT} must start or end it, once,"
            " beside the words that signal the edge",
            f'write "reports to" or "reports to {NAME_SLOT}" (the name follows), or'
            f' "{NAME_SLOT} тайлагнадаг" (the name comes first)',
        )


def _article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _names_of(declared: Mapping[str, str], ftype: str) -> str:
    names = [n for n, t in declared.items() if t == ftype]
    return ", ".join(names) if names else f"none declared; add one with type: {ftype}"


def _check_field(
    at: list[str | int], spec: dict[str, Any], folder_names: list[str], lines: Mapping[Path_, int]
) -> Iterator[Problem]:
    ftype = spec.get("type")
    if ftype == "enum":
        values = spec.get("values")
        if not values:
            yield problem(
                lines,
                [*at, "values"] if "values" in spec else at,
                "an enum field needs its allowed values",
                "add values: [first, second]",
            )
        elif isinstance(values, list) and len(set(map(str, values))) != len(values):
            yield problem(lines, [*at, "values"], "enum values repeat", "list each value once")
    if ftype in LINK_TYPES:
        target = spec.get("folder")
        if target is None:
            yield problem(
                lines,
                at,
                f"a {ftype} field needs the folder it points to",
                f"add folder: <one of {', '.join(folder_names)}>",
            )
        elif isinstance(target, str) and target not in folder_names:
            yield problem(
                lines,
                [*at, "folder"],
                f"{ftype} field points to unknown folder {target!r}",
                f"{suggest(target, folder_names)}use one of: {', '.join(folder_names)}",
            )


def _check_slug(
    at: list[str | int],
    slug: str,
    declared: Mapping[str, str],
    date_field: Any,
    lines: Mapping[Path_, int],
) -> Iterator[Problem]:
    try:
        placeholders = slug_placeholders(slug)
    except ValueError as exc:
        yield problem(
            lines, at, f"slug template {slug!r} is malformed: {exc}", 'write e.g. "{date}-{title}"'
        )
        return
    allowed = ["title", *declared]
    if not placeholders:
        yield problem(
            lines,
            at,
            f"slug {slug!r} has no placeholder, so every page would get the same file name",
            'include {title}, e.g. "{date}-{title}"',
        )
    for name in placeholders:
        if name == "date" and not isinstance(date_field, str) and "date" not in declared:
            yield problem(
                lines,
                at,
                "slug uses {date} but the folder has no date_field",
                "add date_field: date (a date field), or remove {date} from the slug",
            )
        elif name != "date" and name not in allowed:
            yield problem(
                lines,
                at,
                f"slug placeholder {{{name}}} is not a field of this folder",
                f"{suggest(name, allowed)}use {{title}}, {{date}} or a field: {', '.join(declared) or 'none declared'}",
            )
    literal = re.sub(r"\{[^{}]*\}", "", slug)
    if "/" in literal or "\\" in literal or ".." in literal or slug.startswith("."):
        yield problem(
            lines,
            at,
            f"slug {slug!r} would leave the folder",
            "use only letters, digits and '-' around placeholders",
        )
