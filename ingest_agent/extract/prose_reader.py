"""The rules extractor's reading of running text: typed links from phrases ("reports
to Alice Chen"), the people of a note with their short names and pronouns, job titles
and plain field statements (:mod:`ingest_agent.extract.prose_patterns`), and when each
took effect.

``ProseReader`` works on the pages being built from one note
(:mod:`ingest_agent.extract.page_builds`) and returns what it set as
:class:`~ingest_agent.extract.prose_patterns.Statement` values, so the extractor can
date each change by the paragraph that states it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ingest_agent.extract.dates import entry_date
from ingest_agent.extract.fact_statements import is_change, stated_facts
from ingest_agent.extract.note import Known
from ingest_agent.extract.page_builds import Builds, PageBuild, entity, entity_names
from ingest_agent.extract.prose_patterns import (
    PRONOUNS,
    NotePeople,
    Statement,
    field_statements,
    role_field,
    role_statements,
)
from ingest_agent.extract.text import (
    blocks,
    full_name,
    marked_blocks,
    name_candidates,
    split_sentences,
)
from ingest_agent.names import norm
from ingest_agent.records import Source, is_dated, link_names
from memserver.kb.schema import FieldSpec, FolderSpec, Schema


class ProseReader:
    """Reads the prose of a note into the pages being built from it (one schema)."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def link_verbs(
        self,
        text: str,
        primary_folder: FolderSpec | None,
        primary: PageBuild | None,
        builds: Builds,
        known: Known,
        people: Mapping[str, NotePeople],
    ) -> list[Statement]:
        """Link fields set from prose ("reports to Alice Chen"), with the paragraph."""
        said: list[Statement] = []
        for spec in self.schema.folders:
            for verb in spec.link_verbs:
                target_field = next((f for f in spec.fields if f.verb == verb.verb), None)
                if target_field is None or target_field.folder is None:
                    continue
                for phrase in verb.phrases:
                    if phrase.name_first:
                        continue  # two names before a verb: the server's linker reads those
                    pattern = re.compile(rf"(?<!\w){re.escape(phrase.text)}(?!\w)", re.IGNORECASE)
                    for block in blocks(text):
                        for match in pattern.finditer(block):
                            found = self._link_from_prose(
                                block, match, spec, target_field, primary_folder, primary,
                                builds, known, people,
                            )  # fmt: skip
                            if found is not None:
                                said.append(found)
        return said

    def _link_from_prose(
        self,
        block: str,
        match: re.Match[str],
        spec: FolderSpec,
        target_field: FieldSpec,
        primary_folder: FolderSpec | None,
        primary: PageBuild | None,
        builds: Builds,
        known: Known,
        people: Mapping[str, NotePeople],
    ) -> Statement | None:
        assert target_field.folder is not None
        after = block[match.end() :].removeprefix(" directly").strip()
        obj = self._object(after, target_field.folder, spec, known, people.get(target_field.folder))
        if obj is None:
            return None
        subject: PageBuild | None = None
        if primary is not None and primary_folder is spec:
            subject = primary
        elif not is_dated(spec):
            before = block[: match.start()]
            # who the phrase is about: named in its own sentence (a pronoun's, the one
            # before it), never the first name of a paragraph ("Ada Park: Gil ... reports")
            parts = split_sentences(before + "x")  # "x": a sentence that ends at the phrase
            said = [*parts[:-1], parts[-1][:-1]] if parts else []
            own = said[-1] if said else ""
            if len(said) > 1 and norm(own.split()[0] if own.split() else "") in PRONOUNS:
                own = said[-2]  # "He reports to ...": the one the sentence before names
            local = people.get(spec.name)
            name = (local.subject(before) if local else None) or self._subject(own, spec, known)
            if name is not None and norm(name) != norm(obj):
                subject = entity(builds, spec, name, known)
        if subject is None or target_field.name in subject.fields:
            return None
        value: Any = [obj] if target_field.type == "links" else obj
        subject.fields[target_field.name] = value
        return Statement(subject.folder.name, subject.title, target_field.name, value, block)

    def _object(
        self,
        after: str,
        folder: str,
        subject_folder: FolderSpec,
        known: Known,
        people: NotePeople | None,
    ) -> str | None:
        runs = name_candidates(after[:80])
        first = runs[0] if runs else None
        if first is None or not after.startswith(first.split()[0]):
            return None
        for size in range(len(first.split()), 0, -1):
            name = " ".join(first.split()[:size])
            hit = known.get(norm(name))
            if hit is not None and hit[0] == folder:
                return hit[1]
            local = people.person(name) if people is not None else None
            if local is not None:
                return local
        if folder == subject_folder.name and not is_dated(subject_folder):
            return full_name(first)
        return None

    def _subject(self, before: str, folder: FolderSpec, known: Known) -> str | None:
        for run in name_candidates(before):
            hit = known.get(norm(run))
            if hit is not None:
                if hit[0] == folder.name:
                    return hit[1]
                continue
            if full_name(run) is not None:
                return run
        return None

    def people(
        self,
        text: str,
        builds: Mapping[tuple[str, str], PageBuild],
        known: Known,
        participants: Sequence[str] = (),
    ) -> dict[str, NotePeople]:
        """The people of this note, per folder of people (a folder with a job-title field,
        or one that a ``links`` field points to); ``participants``: an exchange's people."""
        folders = [f.name for f in self.schema.folders if role_field(f) is not None] or sorted(
            {
                f.folder
                for spec in self.schema.folders
                for f in spec.fields
                if f.type == "links" and f.folder is not None
            }
        )
        out = {}
        for name in folders:
            linked = [
                value
                for build in builds.values()
                for spec in build.folder.fields
                if spec.is_link and spec.folder == name
                for value in link_names(build.fields.get(spec.name))
            ]
            out[name] = NotePeople(name, [*linked, *participants], known, text)
        return out

    def short_names(
        self,
        builds: Builds,
        known: Known,
        people: Mapping[str, NotePeople],
    ) -> None:
        """A first name written alone for one person of the note becomes an alias."""
        for folder_name, local in people.items():
            spec = self.schema.folder(folder_name)
            for title, short in local.used_short.items():
                build = entity(builds, spec, title, known)
                if norm(short) not in {norm(a) for a in build.aliases}:
                    build.aliases.append(short)

    def statements(
        self,
        source: Source,
        text: str,
        builds: Builds,
        known: Known,
        people: Mapping[str, NotePeople],
        primary: PageBuild | None = None,
        title: str = "",
    ) -> list[Statement]:
        """Job titles and field statements from prose; the first statement of a field wins.
        ``title``: the note's (what a statement that names no page is about)."""
        marked = [(b.text, b.item, b.labelled) for b in marked_blocks(text)]
        tz = self.schema.tz
        found = [
            statement
            for name, local in people.items()
            for statement in role_statements(marked, local, self.schema.folder(name), known)
        ]
        entities = {f.name: f for f in self.schema.folders if not is_dated(f)}
        names = entity_names(self.schema, builds, known)
        found += field_statements(marked, names, entities, source.doc_date, tz)
        own, linked = _own_pages(primary, names)
        headed = [(b.text, b.item, b.heading) for b in marked_blocks(text)]
        found += stated_facts(headed, names, entities, own, linked, source.doc_date, tz, title)
        applied = []
        for statement in found:
            spec = self.schema.folder(statement.folder)
            build = entity(builds, spec, statement.title, known)
            if statement.field not in build.fields:
                build.fields[statement.field] = statement.value
                applied.append(statement)
        return applied

    @staticmethod
    def plain_facts(
        said: Sequence[Statement], dates: Mapping[tuple[str, str, str], dt.date]
    ) -> frozenset[tuple[str, str, str]]:
        """The values stated as plain facts: not as a change, nor dated to take effect."""
        keys = {(s.folder, norm(s.title), s.field): s for s in said}
        return frozenset(k for k, s in keys.items() if k not in dates and not is_change(s.block))

    def effective_dates(
        self, source: Source, said: Sequence[Statement]
    ) -> dict[tuple[str, str, str], dt.date]:
        """When each value read from prose took effect, where its paragraph says so."""
        dates = {}
        for statement in said:
            day = entry_date(statement.block, source.doc_date, self.schema.tz)
            if day is not None and day != source.doc_date:
                dates[(statement.folder, norm(statement.title), statement.field)] = day
        return dates


def _own_pages(
    primary: PageBuild | None, names: Mapping[str, tuple[str, str]]
) -> tuple[tuple[str, str] | None, dict[str, str]]:
    """The note's own entity page, and per folder the one page its own page links to."""
    if primary is None:
        return None, {}
    own = None if is_dated(primary.folder) else (primary.folder.name, primary.title)
    linked: dict[str, str] = {}
    for spec in primary.folder.fields:
        values = link_names(primary.fields.get(spec.name)) if spec.is_link else []
        if spec.folder and len(values) == 1 and spec.folder not in linked:
            hit = names.get(norm(values[0]))
            linked[spec.folder] = hit[1] if hit is not None else values[0]
    return own, linked
