"""YAML frontmatter without surprises, and the date helpers shared by pages and sources.

PyYAML turns ``2026-09-08`` into a ``datetime.date`` and crashes on ``2026-02-30``;
here dates stay strings (a bad date becomes a validation problem with a location),
and dumping is deterministic: keys in the given order, ISO dates bare, multi-line
text as literal blocks, characters YAML would read as line breaks escaped.

Loading uses libyaml (``CSafeLoader``) when PyYAML has it, several times faster; tag
resolution and constructors stay Python, so valid YAML loads the same. libyaml is more
lenient with a few malformed inputs that the pure-Python loader rejects (a tab after a
plain value, a comment right after ``|``/``>``) and reads a bare ``!`` tag as "" rather
than None. Text with lone surrogates, which libyaml cannot take, goes to the pure-Python
loader, which reports them as a ``yaml.ReaderError`` as before. Dumping stays pure
Python: libyaml's emitter writes characters outside the BMP (emoji) as ``\\U...``
escapes and quotes some keys differently, which would change the bytes of rendered pages.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

import yaml

from memserver.kb.yaml_limits import MAX_FRONTMATTER_CHARS, check_no_aliases, check_size

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])")
_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
# PyYAML reads these as line breaks inside plain and quoted scalars.
_LINE_BREAKS_YAML_MANGLES = ("\x85", "\u2028", "\u2029")


def _without_timestamps(resolvers: dict[Any, list[Any]]) -> dict[Any, list[Any]]:
    return {k: [(t, rx) for t, rx in v if t != _TIMESTAMP_TAG] for k, v in resolvers.items()}


class _PyLoader(yaml.SafeLoader):
    """Safe YAML where dates stay strings (a bad date is a validation problem, not a crash)."""


class _Dumper(yaml.SafeDumper):
    """Safe YAML that writes ISO dates bare, multi-line text as blocks, tuples as lists,
    and never an anchor or alias (a value used twice is written twice)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_PyLoader.yaml_implicit_resolvers = _without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)
_Dumper.yaml_implicit_resolvers = _without_timestamps(yaml.SafeDumper.yaml_implicit_resolvers)

_Loader: type[Any] = _PyLoader
if hasattr(yaml, "CSafeLoader"):  # PyYAML built with libyaml

    class _CLoader(yaml.CSafeLoader):
        """``_PyLoader`` on libyaml: the same resolvers and constructors."""

    _CLoader.yaml_implicit_resolvers = _without_timestamps(yaml.CSafeLoader.yaml_implicit_resolvers)
    _Loader = _CLoader


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None = None
    if any(ch in value for ch in _LINE_BREAKS_YAML_MANGLES) or any(
        unicodedata.category(ch) == "Cc" and ch != "\n" for ch in value
    ):
        style = '"'  # escaped, so YAML cannot read them as line breaks
    elif "\n" in value:
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(tuple, yaml.SafeDumper.represent_list)


def dump_yaml(data: Mapping[str, Any]) -> str:
    return yaml.dump(
        dict(data),
        Dumper=_Dumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=None,
        width=1_000_000,
    )


def load_yaml(text: str) -> Any:
    """Safe YAML where dates stay strings; raises yaml.YAMLError.

    Frontmatter only: anchors and aliases are refused, and so is text longer than
    ``MAX_FRONTMATTER_CHARS`` (``memserver.kb.yaml_limits``).
    """
    check_size(text, MAX_FRONTMATTER_CHARS, "frontmatter")
    check_no_aliases(text, _PyLoader if _has_surrogates(text) else _Loader)
    try:
        return yaml.load(text, Loader=_Loader)  # a safe loader subclass
    except UnicodeEncodeError:
        # libyaml reads UTF-8, so lone surrogates fail before parsing; the pure-Python
        # loader reports them as a yaml.ReaderError, like any other unreadable character.
        return yaml.load(text, Loader=_PyLoader)


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def frontmatter_end(lines: list[str]) -> int | None:
    """Index of the closing ``---`` when ``lines`` open with a frontmatter block."""
    if not lines or lines[0].rstrip() != "---":
        return None
    return next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)


def read_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a raw document as a dict; {} when it has none or it is broken."""
    lines = text.replace("\r\n", "\n").removeprefix("\ufeff").split("\n")
    end = frontmatter_end(lines)
    if end is None:
        return {}
    try:
        data = load_yaml("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def as_date(value: Any) -> datetime.date | None:
    """A date from a date, datetime or ``YYYY-MM-DD[...]`` string; None otherwise."""
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, str):
        match = _ISO_DATE.match(value.strip())
        if match:
            try:
                return datetime.date(*(int(g) for g in match.groups()))
            except ValueError:
                return None
    return None


def date_in_name(name: str) -> datetime.date | None:
    """The first valid ``YYYY-MM-DD`` inside a file name or slug, if any."""
    for match in _DATE_IN_NAME.finditer(name):
        try:
            return datetime.date(*(int(g) for g in match.groups()))
        except ValueError:
            continue
    return None
