"""A knowledge base's ``schema.yaml``: load, validate (all problems at once), model.

Validation runs in two passes and reports every problem from both together:

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
import string
import zoneinfo
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from memserver.errors import NotFoundError, Problem, SchemaError
from memserver.kb.layout import name_problem
from memserver.kb.problems import (
    Path_,
    YamlMarks,
    index_lines,
    json_problems,
    problem,
    suggest,
    yaml_syntax_problem,
)

FIELD_TYPES = ("string", "text", "date", "number", "bool", "enum", "list", "link", "links")
LINK_TYPES = ("link", "links")
# Frontmatter keys every page has; a schema field may not reuse them.
RESERVED_FIELDS = ("title", "type", "aliases", "sources")
# Headings the page model renders itself; a schema section may not reuse them.
RESERVED_SECTIONS = ("Timeline", "Open Questions")
# Token scopes besides folder names (see tokens); a folder may not be called this.
RESERVED_FOLDERS = ("source",)


@dataclass(frozen=True)
class FieldSpec:
    name: str
    type: str
    required: bool = False
    values: tuple[str, ...] = ()
    folder: str | None = None
    verb: str | None = None
    description: str = ""

    @property
    def is_link(self) -> bool:
        return self.type in LINK_TYPES

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "required": self.required}
        if self.values:
            out["values"] = list(self.values)
        if self.folder is not None:
            out["folder"] = self.folder
        if self.verb is not None:
            out["verb"] = self.verb
        if self.description:
            out["description"] = self.description
        return out


NAME_SLOT = "{name}"


@dataclass(frozen=True)
class VerbPhrase:
    """One link-verb pattern: the words that signal the edge, and where the target's
    name stands: after them ("reports to {name}", or no slot) or before them
    ("{name} тайлагнадаг": languages that put the verb last)."""

    text: str
    name_first: bool

    @classmethod
    def of(cls, pattern: str) -> VerbPhrase:
        text = pattern.strip()
        if text.startswith(NAME_SLOT):
            return cls(text.removeprefix(NAME_SLOT).strip(), True)
        return cls(text.removesuffix(NAME_SLOT).strip(), False)


@dataclass(frozen=True)
class LinkVerb:
    verb: str
    to: str
    patterns: tuple[str, ...]

    @functools.cached_property
    def phrases(self) -> tuple[VerbPhrase, ...]:
        return tuple(VerbPhrase.of(p) for p in self.patterns)

    def to_dict(self) -> dict[str, Any]:
        return {"verb": self.verb, "to": self.to, "patterns": list(self.patterns)}


@dataclass(frozen=True)
class FolderSpec:
    name: str
    type: str
    description: str
    slug: str = "{title}"
    date_field: str | None = None
    recency_halflife_days: float = 0
    source_boost: float = 1.0
    fields: tuple[FieldSpec, ...] = ()
    sections: tuple[str, ...] = ()
    timeline: bool = True
    rules: str = ""
    link_verbs: tuple[LinkVerb, ...] = ()

    def field(self, name: str) -> FieldSpec | None:
        for spec in self.fields:
            if spec.name == name:
                return spec
        return None

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.fields)

    def hidden_link_fields(self, visible: Callable[[str], bool]) -> frozenset[str]:
        """Link fields whose target folder ``visible`` refuses: a caller who cannot see
        the target folder must not learn the linked names through this page either."""
        return frozenset(
            f.name for f in self.fields if f.is_link and f.folder and not visible(f.folder)
        )

    @property
    def slug_placeholders(self) -> tuple[str, ...]:
        return slug_placeholders(self.slug)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "slug": self.slug,
            "date_field": self.date_field,
            "recency_halflife_days": self.recency_halflife_days,
            "source_boost": self.source_boost,
            "fields": [spec.to_dict() for spec in self.fields],
            "sections": list(self.sections),
            "timeline": self.timeline,
            "rules": self.rules,
            "link_verbs": [verb.to_dict() for verb in self.link_verbs],
        }


@dataclass(frozen=True)
class Schema:
    timezone: str
    rules: str
    folders: tuple[FolderSpec, ...] = field(default=())

    def folder(self, name: str) -> FolderSpec:
        for spec in self.folders:
            if spec.name == name:
                return spec
        raise NotFoundError(
            f"no folder {name!r} in the schema",
            f"use one of: {', '.join(self.folder_names)}",
        )

    def folder_for_type(self, page_type: str) -> FolderSpec:
        for spec in self.folders:
            if spec.type == page_type:
                return spec
        types = ", ".join(spec.type for spec in self.folders)
        raise NotFoundError(f"no folder holds pages of type {page_type!r}", f"use one of: {types}")

    @property
    def folder_names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.folders)

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.timezone)

    def to_dict(self) -> dict[str, Any]:
        return {
            "timezone": self.timezone,
            "rules": self.rules,
            "folders": [spec.to_dict() for spec in self.folders],
        }


def slug_placeholders(template: str) -> tuple[str, ...]:
    """The ``{name}`` placeholders of a slug template, in order (format-spec free)."""
    names: list[str] = []
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None:
            names.append(name)
    return tuple(names)


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


def load_schema(path: Path | str) -> Schema:
    """Load ``schema.yaml`` (or a knowledge base directory holding one).

    Raises SchemaError listing every problem.
    """
    target = Path(path)
    if target.is_dir():
        target = target / "schema.yaml"
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError(
            [Problem("schema.yaml", f"{target} does not exist", "create it; see example_kb/")],
            str(target),
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(
            [Problem("schema.yaml", f"cannot read {target}: {exc}", "save it as UTF-8 text")],
            str(target),
        ) from None
    return parse_schema(text, str(target))


def parse_schema(text: str, source: str = "schema.yaml") -> Schema:
    """Parse and validate schema text; raises SchemaError listing every problem."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise SchemaError([yaml_syntax_problem(exc, "schema.yaml")], source) from None
    finally:
        loader.dispose()
    lines = YamlMarks()
    problems: list[Problem] = []
    if node is not None:
        index_lines(node, (), lines, problems)
    if not isinstance(data, dict):
        problems.append(
            Problem("schema.yaml", "must be a mapping with a folders: list", "see example_kb/", 1)
        )
        raise SchemaError(problems, source)
    problems.extend(_meta_problems(data, lines))
    problems.extend(_semantic_problems(data, lines))
    if problems:
        problems.sort(key=lambda p: (p.line or 0, p.location))
        raise SchemaError(_dedupe(problems), source)
    return _build(data)


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


# --- building the model ---------------------------------------------------------------


def _build(data: dict[str, Any]) -> Schema:
    folders = tuple(_build_folder(f) for f in data["folders"])
    return Schema(
        timezone=data.get("timezone") or "UTC", rules=data.get("rules") or "", folders=folders
    )


def _build_folder(data: dict[str, Any]) -> FolderSpec:
    fields = [
        FieldSpec(
            name=f["name"],
            type=f["type"],
            required=bool(f.get("required", False)),
            values=tuple(f.get("values") or ()),
            folder=f.get("folder"),
            verb=f.get("verb"),
            description=f.get("description") or "",
        )
        for f in data.get("fields") or ()
    ]
    date_field = data.get("date_field")
    if date_field and all(f.name != date_field for f in fields):
        fields.insert(
            0,
            FieldSpec(
                name=date_field,
                type="date",
                required=True,
                description="the day this page is about (its effective date)",
            ),
        )
    return FolderSpec(
        name=data["name"],
        type=data["type"],
        description=data["description"],
        slug=data.get("slug") or "{title}",
        date_field=date_field or None,
        recency_halflife_days=float(data.get("recency_halflife_days", 0)),
        source_boost=float(data.get("source_boost", 1.0)),
        fields=tuple(fields),
        sections=tuple(data.get("sections") or ()),
        timeline=bool(data.get("timeline", True)),
        rules=data.get("rules") or "",
        link_verbs=tuple(
            LinkVerb(verb=v["verb"], to=v["to"], patterns=tuple(v["patterns"]))
            for v in data.get("link_verbs") or ()
        ),
    )
