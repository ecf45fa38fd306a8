"""A knowledge base's ``schema.yaml``: load, validate (all problems at once), model.

The one import point for the schema: :func:`load_schema` and :func:`parse_schema` read a
``schema.yaml`` and raise :class:`~memserver.errors.SchemaError` with every problem
(:mod:`memserver.kb.schema_check`); the values they return (:class:`Schema`,
:class:`FolderSpec`, :class:`FieldSpec` ...) are defined in :mod:`memserver.kb.schema_model`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from memserver.errors import Problem, SchemaError
from memserver.kb.problems import YamlMarks, index_lines, yaml_syntax_problem
from memserver.kb.schema_check import meta_schema, schema_problems
from memserver.kb.schema_model import (
    FIELD_TYPES,
    LINK_TYPES,
    NAME_SLOT,
    RESERVED_FIELDS,
    RESERVED_FOLDERS,
    RESERVED_SECTIONS,
    FieldSpec,
    FolderSpec,
    LinkVerb,
    Organisation,
    Schema,
    VerbPhrase,
    slug_placeholders,
)
from memserver.kb.trust import TrustRules
from memserver.kb.yaml_limits import MAX_SCHEMA_CHARS, check_expansion, check_size


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
        check_size(text, MAX_SCHEMA_CHARS, "schema")
        node = loader.get_single_node()
        check_expansion(node)  # aliases may reuse blocks, within bounds
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
    problems.extend(schema_problems(data, lines))
    if problems:
        problems.sort(key=lambda p: (p.line or 0, p.location))
        raise SchemaError(problems, source)
    return _build(data)


# --- building the model ---------------------------------------------------------------


def schema_from_view(view: Mapping[str, Any]) -> Schema:
    """The Schema from a ``kb_schema`` tool result (the folders the caller may see)."""
    data = {
        "timezone": view.get("timezone") or "UTC",
        "rules": view.get("rules") or "",
        "folders": list(view.get("folders") or []),
    }
    if view.get("organisation"):
        data["organisation"] = view["organisation"]
    # already data, not text: checked as parse_schema checks it, without a YAML round trip
    # (the pure-Python loader cost the read agent ~0.1 s per question)
    problems = schema_problems(data, YamlMarks())
    if problems:
        raise SchemaError(problems, "kb_schema")
    return _build(data)


def _build(data: dict[str, Any]) -> Schema:
    folders = tuple(_build_folder(f) for f in data["folders"])
    return Schema(
        timezone=data.get("timezone") or "UTC",
        rules=data.get("rules") or "",
        folders=folders,
        trust=TrustRules.of(data.get("trust")),
        organisation=_organisation(data.get("organisation")),
    )


def _organisation(data: Mapping[str, Any] | None) -> Organisation | None:
    if not data:
        return None
    aliases = tuple(str(a) for a in data.get("aliases") or ())
    return Organisation(str(data["name"]), aliases)


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


__all__ = [
    "FIELD_TYPES",
    "LINK_TYPES",
    "NAME_SLOT",
    "RESERVED_FIELDS",
    "RESERVED_FOLDERS",
    "RESERVED_SECTIONS",
    "FieldSpec",
    "FolderSpec",
    "LinkVerb",
    "Organisation",
    "Schema",
    "VerbPhrase",
    "load_schema",
    "meta_schema",
    "parse_schema",
    "slug_placeholders",
]
