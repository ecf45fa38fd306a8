"""Pages being built from one note by the rules extractor, keyed by folder and name.

``entity`` finds or starts the build of an entity page (by its known title when the
name is a known page's), ``entity_names`` is every entity name the note can mean, and
``named_page`` the page a run of capitalised words is (a possessive, a Mongolian case
ending).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ingest_agent.extract.note import Known
from ingest_agent.names import norm
from ingest_agent.records import is_dated, link_names
from memserver.kb.page import Page, TimelineEntry
from memserver.kb.schema import FolderSpec, Schema
from memserver.kb.words import mn_stems


@dataclass
class PageBuild:
    folder: FolderSpec
    title: str
    fields: dict[str, Any] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)
    timeline: list[TimelineEntry] = field(default_factory=list)

    def page(self, source: str) -> Page:
        return Page(
            title=self.title,
            type=self.folder.type,
            fields=self.fields,
            aliases=tuple(self.aliases),
            sources=(source,),
            sections=self.sections,
            timeline=tuple(self.timeline) if self.folder.timeline else (),
        )


Builds = dict[tuple[str, str], PageBuild]  # (folder, norm(title)) -> the page being built


def entity(builds: Builds, folder: FolderSpec, name: str, known: Known) -> PageBuild:
    """The build of the entity page ``name`` means in ``folder`` (started if new)."""
    hit = known.get(norm(name))
    title = hit[1] if hit is not None and hit[0] == folder.name else name
    key = (folder.name, norm(title))
    if key not in builds:
        builds[key] = PageBuild(folder, title)
    return builds[key]


def entity_names(
    schema: Schema, builds: Mapping[tuple[str, str], PageBuild], known: Known
) -> dict[str, tuple[str, str]]:
    """norm(name) -> (folder, title) of every entity page known, built from this note or
    named by one of its link fields."""
    names = {
        key: (folder, title)
        for key, (folder, title) in known.items()
        if not is_dated(schema.folder(folder))
    }
    for (folder_name, key), build in builds.items():
        if not is_dated(build.folder):
            names.setdefault(key, (folder_name, build.title))
        for spec in build.folder.fields:  # link targets get a page too ("company: Globex")
            if spec.is_link and spec.folder and not is_dated(schema.folder(spec.folder)):
                for value in link_names(build.fields.get(spec.name)):
                    names.setdefault(norm(value), (spec.folder, value))
    return names


def named_page(names: Mapping[str, tuple[str, str]], run: str) -> tuple[str, str] | None:
    """The page a name run is, also as a possessive ("Initech's") or with a Mongolian
    case ending ("Номин Трейдийн")."""
    key = norm(re.sub(r"['’]s$", "", run))
    hit = names.get(key)
    if hit is not None or not key:
        return hit
    head, _, last = key.rpartition(" ")
    for stem in mn_stems(last):
        hit = names.get(f"{head} {stem}".strip())
        if hit is not None:
            return hit
    return None
