"""What an event page is about, and who now holds a role, read by the rules extractor.

- :func:`about_links`: a meeting (any dated page) links to the company or project (any
  entity folder but the people's) its title names, else to the one its attendees from
  outside the knowledge base's own company work at (the company most people pages link
  to: a meeting of its own people is with nobody); why, for the ledger, with the
  attendees at it as its evidence. A link the note already gives is kept.
- :func:`role_claims`: the job titles a note names someone the one holder of ("Marcus
  Hale is Globex's new COO"), for :mod:`ingest_agent.pages.holders`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from ingest_agent.extract.note import Known
from ingest_agent.extract.page_builds import Builds, PageBuild, entity_names, named_page
from ingest_agent.extract.prose_patterns import Statement, role_field
from ingest_agent.extract.text import name_candidates
from ingest_agent.names import norm
from ingest_agent.records import RoleClaim, Source, is_dated, link_names
from memserver.kb.schema import FolderSpec, Schema

# The link fields of known entity pages, by (folder, norm(title)): who works where.
Facts = Mapping[tuple[str, str], Mapping[str, Any]]


def people_folder(schema: Schema) -> FolderSpec | None:
    """The folder of people: the one with a job-title field, else the one a ``links``
    field (attendees) points to."""
    for spec in schema.folders:
        if role_field(spec) is not None:
            return spec
    for spec in schema.folders:
        for f in spec.fields:
            if f.type == "links" and f.folder is not None:
                return schema.folder(f.folder)
    return None


def about_links(
    schema: Schema, primary: PageBuild | None, builds: Builds, known: Known, facts: Facts
) -> list[str]:
    """An event page's links to the companies and projects (any entity folder but the
    people's) that its title names, else that its attendees from outside the
    knowledge base's own company work at, set on its build; why, for the ledger."""
    if primary is None or not is_dated(primary.folder):
        return []
    people = people_folder(schema)
    names = entity_names(schema, builds, known)
    employers = _employers(primary, people, builds, facts)
    home = _home(people, facts)
    out = []
    for spec in primary.folder.fields:
        target = spec.folder
        if spec.type != "link" or target is None or spec.name in primary.fields:
            continue
        if (people is not None and target == people.name) or is_dated(schema.folder(target)):
            continue
        titled = list(
            dict.fromkeys(
                hit[1]
                for run in name_candidates(primary.title)
                if (hit := named_page(names, run)) is not None and hit[0] == target
            )
        )
        at = employers.get(target, {})
        outside = [c for c in at if c != home.get(target)]
        if len(titled) == 1:
            chosen, why = titled[0], f"named in its title “{primary.title}”"
        elif not titled and len(outside) == 1:
            chosen, why = outside[0], "its attendees from outside work there"
        else:
            continue
        primary.fields[spec.name] = chosen
        staff = f"; attendees at {chosen}: {', '.join(at[chosen])}" if at.get(chosen) else ""
        out.append(f"{spec.name} {chosen}: {why}{staff}")
    return out


def _employers(
    primary: PageBuild, people: FolderSpec | None, builds: Builds, facts: Facts
) -> dict[str, dict[str, list[str]]]:
    """folder -> page -> the event's attendees whose link fields name it (this note's
    statements first, then the stored pages')."""
    out: dict[str, dict[str, list[str]]] = {}
    if people is None:
        return out
    for spec in primary.folder.fields:
        if spec.type != "links" or spec.folder != people.name:
            continue
        for person in link_names(primary.fields.get(spec.name)):
            build = builds.get((people.name, norm(person)))
            stored = facts.get((people.name, norm(person)), {})
            for f in people.fields:
                value = (build.fields.get(f.name) if build else None) or stored.get(f.name)
                if f.type == "link" and f.folder and isinstance(value, str) and value:
                    out.setdefault(f.folder, {}).setdefault(value, []).append(person)
    return out


def _home(people: FolderSpec | None, facts: Facts) -> dict[str, str]:
    """folder -> the page most people pages link to in it: the knowledge base's own
    company (a meeting of its own people is with nobody)."""
    if people is None:
        return {}
    counts: dict[str, dict[str, int]] = {}
    for (folder, _), fields in facts.items():
        if folder != people.name:
            continue
        for f in people.fields:
            value = fields.get(f.name)
            if f.type == "link" and f.folder and isinstance(value, str) and value:
                counts.setdefault(f.folder, {}).setdefault(value, 0)
                counts[f.folder][value] += 1
    return {folder: max(found, key=lambda k: found[k]) for folder, found in counts.items()}


def role_claims(
    schema: Schema,
    source: Source,
    said: Sequence[Statement],
    dates: Mapping[tuple[str, str, str], dt.date],
    known: Known,
) -> list[RoleClaim]:
    """The roles the note names someone the one holder of ("Globex's new COO")."""
    out = []
    for statement in said:
        if statement.sole is None:
            continue
        spec = schema.folder(statement.folder)
        org = known.get(norm(statement.sole))
        link = next(
            (f.name for f in spec.fields if f.type == "link" and org and f.folder == org[0]),
            None,
        )
        key = (statement.folder, norm(statement.title), statement.field)
        out.append(
            RoleClaim(
                statement.folder, statement.title, statement.field, str(statement.value),
                statement.sole, link, dates.get(key, source.doc_date), source.path,
                " ".join(statement.block.split()),
            )
        )  # fmt: skip
    return out
