"""The schema as values: :class:`Schema` with its :class:`FolderSpec` folders, their
:class:`FieldSpec` fields and :class:`LinkVerb` phrases, and the reserved names.

Import these from :mod:`memserver.kb.schema`, which also loads and validates them.
"""

from __future__ import annotations

import functools
import string
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memserver.errors import NotFoundError
from memserver.kb.trust import TrustRules

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

    def to_dict(self, visible: Callable[[str], bool] | None = None) -> dict[str, Any]:
        """The folder as data; with ``visible``, without the link fields and link verbs
        that lead to folders it refuses (their names are not the caller's to learn, and
        the view must stay a schema the caller can read back)."""
        hidden = self.hidden_link_fields(visible) if visible is not None else frozenset()
        verbs = [v for v in self.link_verbs if visible is None or visible(v.to)]
        return {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "slug": self.slug,
            "date_field": self.date_field,
            "recency_halflife_days": self.recency_halflife_days,
            "source_boost": self.source_boost,
            "fields": [spec.to_dict() for spec in self.fields if spec.name not in hidden],
            "sections": list(self.sections),
            "timeline": self.timeline,
            "rules": self.rules,
            "link_verbs": [verb.to_dict() for verb in verbs],
        }


@dataclass(frozen=True)
class Organisation:
    """The team's own organisation (``organisation`` in schema.yaml): its name and the
    other names it goes by."""

    name: str
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "aliases": list(self.aliases)}


@dataclass(frozen=True)
class Schema:
    timezone: str
    rules: str
    folders: tuple[FolderSpec, ...] = field(default=())
    organisation: Organisation | None = None
    # how far each source is trusted (memserver.kb.trust); not shown to tokens
    trust: TrustRules = field(default_factory=TrustRules)

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
        out: dict[str, Any] = {
            "timezone": self.timezone,
            "rules": self.rules,
            "folders": [spec.to_dict() for spec in self.folders],
        }
        if self.organisation is not None:
            out["organisation"] = self.organisation.to_dict()
        return out


def slug_placeholders(template: str) -> tuple[str, ...]:
    """The ``{name}`` placeholders of a slug template, in order (format-spec free)."""
    names: list[str] = []
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None:
            names.append(name)
    return tuple(names)
