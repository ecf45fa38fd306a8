"""Problems with a location, a line and a fix: the shared language of validation.

schema.yaml and pages are both validated with JSON Schema first; this module turns
each ``jsonschema`` error into a :class:`~memserver.errors.Problem` that says where
(``folders[2].fields[0].type``, and the YAML line when known), what, and what to write
instead, and finds YAML line numbers by composing the document.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import jsonschema
import yaml

from memserver.errors import Problem
from memserver.kb.yaml_limits import YamlLimitError

Path_ = tuple[str | int, ...]


class YamlMarks(dict[Path_, int]):
    """Line (1-based) of every key and item, plus the raw text of every scalar."""

    def __init__(self) -> None:
        super().__init__()
        self.raw: dict[Path_, str] = {}


def index_lines(node: yaml.Node, path: Path_, lines: YamlMarks, problems: list[Problem]) -> None:
    """Record the 1-based line of every key and item; flag duplicate keys (YAML keeps the last)."""
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.ScalarNode):
        lines.raw[path] = str(node.value)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            child = (*path, key)
            if key in seen:
                problems.append(
                    Problem(
                        location(child),
                        f"key {key!r} appears twice (YAML silently keeps only the last)",
                        "remove or rename one of them",
                        key_node.start_mark.line + 1,
                    )
                )
            seen.add(key)
            lines[child] = key_node.start_mark.line + 1
            index_lines(value_node, child, lines, problems)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            index_lines(item, (*path, index), lines, problems)


def line_of(lines: Mapping[Path_, int], path: Sequence[str | int]) -> int | None:
    """The line of ``path``, or of its nearest ancestor that exists (for missing keys)."""
    probe = tuple(path)
    while probe not in lines and probe:
        probe = probe[:-1]
    return lines.get(probe)


def location(path: Sequence[str | int]) -> str:
    """``("folders", 2, "fields", 0, "type")`` -> ``folders[2].fields[0].type``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "schema.yaml"


def problem(
    lines: Mapping[Path_, int], path: Sequence[str | int], message: str, fix: str = ""
) -> Problem:
    return Problem(location(path), message, fix, line_of(lines, path))


def yaml_syntax_problem(exc: yaml.YAMLError, where: str, first_line: int = 1) -> Problem:
    """The problem for text that is not YAML; ``first_line`` is the file line of its line 1."""
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + first_line if mark is not None else None
    detail = getattr(exc, "problem", None) or str(exc)
    if isinstance(exc, YamlLimitError):  # valid YAML, refused: the problem says what to do
        return Problem(where, detail, "", line)
    return Problem(where, f"not valid YAML: {detail}", "fix the YAML syntax", line)


def suggest(word: str, options: Sequence[str]) -> str:
    """``"did you mean 'x'? "`` for a close option, else ``""``."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


_JSON_TYPES = {
    "string": "a string",
    "number": "a number",
    "integer": "a whole number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "nothing",
}


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def json_problems(
    validator: jsonschema.protocols.Validator,
    instance: Any,
    prefix: Sequence[str | int] = (),
    lines: Mapping[Path_, int] | None = None,
    noun: str = "key",
) -> list[Problem]:
    """Every JSON Schema error of ``instance`` as a Problem with a location and a fix.

    Shared by schema.yaml validation and page validation (compiled folder schemas).
    ``prefix`` is put in front of each location (``fields`` gives ``fields.role``);
    a schema node may carry ``x-hint`` (the fix) and ``x-message`` for pattern errors.
    """
    marks = lines if lines is not None else YamlMarks()
    out: list[Problem] = []
    for err in validator.iter_errors(instance):
        out.extend(_translate(err, marks, list(prefix), noun))
    return out


def _translate(
    err: jsonschema.ValidationError, lines: Mapping[Path_, int], prefix: list[str | int], noun: str
) -> Iterator[Problem]:
    path: list[str | int] = [*prefix, *err.absolute_path]
    kind = err.validator
    schema: Mapping[str, Any] = err.schema if isinstance(err.schema, Mapping) else {}
    if kind == "required":
        props = schema.get("properties", {})
        for key in err.validator_value:
            if isinstance(err.instance, dict) and key not in err.instance:
                desc = props.get(key, {}).get("description", "")
                fix = f"add `{key}:`" + (f" ({desc})" if desc else "")
                yield problem(lines, [*path, key], f"missing required {noun} {key!r}", fix)
    elif kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        for key in err.instance:
            if key not in allowed:
                known = (
                    f"allowed {noun}s: {', '.join(allowed)}" if allowed else f"this has no {noun}s"
                )
                fix = f"{suggest(str(key), allowed)}{known}"
                yield problem(lines, [*path, key], f"unknown {noun} {key!r}", fix)
    elif kind == "type":
        wanted = (
            err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        )
        names = " or ".join(_JSON_TYPES.get(str(t), str(t)) for t in wanted)
        fix = f"write {names}"
        if "string" in wanted and isinstance(err.instance, bool | int | float):
            raw = lines.raw.get(tuple(path)) if isinstance(lines, YamlMarks) else None
            shown = raw or (
                str(err.instance).lower() if isinstance(err.instance, bool) else str(err.instance)
            )
            fix += f' (quote it: "{shown}")'
        elif "array" in wanted:
            fix += ", e.g. [a, b]"
        yield problem(lines, path, f"expected {names}, got {_type_name(err.instance)}", fix)
    elif kind == "enum":
        options = [str(v) for v in err.validator_value]
        fix = f"{suggest(str(err.instance), options)}use one of: {', '.join(options)}"
        yield problem(lines, path, f"{err.instance!r} is not allowed", fix)
    elif kind == "pattern":
        hint = schema.get("x-hint", f"match {err.validator_value}")
        message = schema.get("x-message", "is not a valid name")
        yield problem(lines, path, f"{err.instance!r} {message}", hint)
    elif kind == "format" and err.validator_value == "date":
        yield problem(
            lines,
            path,
            f"{err.instance!r} is not a valid date",
            "write YYYY-MM-DD, e.g. 2026-09-08",
        )
    elif kind == "uniqueItems":
        yield problem(lines, path, "the list repeats a value", "list each value once")
    elif kind == "minimum":
        yield problem(
            lines,
            path,
            f"{err.instance} is below {err.validator_value}",
            f"use a number >= {err.validator_value}",
        )
    elif kind == "exclusiveMinimum":
        yield problem(
            lines,
            path,
            f"{err.instance} must be greater than {err.validator_value}",
            f"use a number > {err.validator_value}, e.g. 1.0",
        )
    elif kind == "minItems":
        yield problem(
            lines, path, "the list is empty", f"give at least {err.validator_value} item(s)"
        )
    elif kind == "minLength":
        yield problem(lines, path, "the text is empty", "write a non-empty value")
    else:
        yield problem(lines, path, err.message)
