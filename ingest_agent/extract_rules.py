"""The deterministic extractor: pages from a source without any model call.

Used when no LLM is configured. What it reads, in order of trust:

1. **Frontmatter**: keys that are fields of the chosen folder (values coerced to the
   field type; anything else is dropped), ``title``, ``aliases``, and ``type``/``folder``
   hints naming the folder.
2. **The folder**: a source becomes a page of its own (a meeting, a decision, a
   project ...) only on structural evidence: a ``type``/``folder`` hint, the folder's
   name as a directory of the path, frontmatter keys or labelled lines
   ("Attendees: ...") that only that folder has, enum values only it allows. The
   router's lexical hint breaks ties but never creates a page on its own, so a weekly
   update or a chat export is not mistaken for a meeting.
3. **Title**: frontmatter, else the first heading (without a trailing date), else the
   file name. **Sections**: ``##`` headings mapped to the folder's sections; text under
   other headings joins the section before it.
4. **Links**: link fields from frontmatter and labelled lines become typed links, and
   their targets become pages in entity folders; the folder's ``link_verbs`` patterns
   in prose ("Alice Chen — Head of Product; reports to Maria Lopez") fill the matching
   link field of the person named first.
5. **Timeline**: every sentence naming exactly one day (an ISO date, or "yesterday"
   resolved against the source's date) becomes a dated entry on the source's page and
   on every existing page it names (titles and aliases, looked up by the agent).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from ingest_agent.dates import entry_date
from ingest_agent.model import Draft, Extraction, Source, is_dated, link_names
from ingest_agent.note import (
    Known,
    NoteBody,
    clean_title,
    coerce,
    names_in_value,
    split_source,
    title_from_path,
)
from ingest_agent.prose import (
    NotePeople,
    Statement,
    field_statements,
    role_field,
    role_statements,
)
from ingest_agent.text import (
    blocks,
    dated_sentences,
    full_name,
    marked_blocks,
    name_candidates,
    norm,
    plain,
)
from memserver.kb.page import Page, TimelineEntry, as_date, date_in_name
from memserver.kb.schema import FieldSpec, FolderSpec, Schema
from memserver.kb.words import mn_stems

EXTRACTOR = "rules"
PAGE_THRESHOLD = 2.0  # structural evidence needed before a source becomes a page
TIMELINE_TEXT_CHARS = 400
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_LABEL = re.compile(r"^\s*([^\W\d][\w /'-]{0,30}?)\s*:\s+(.+?)\s*$")
_QUOTED_ALIAS = re.compile(r"\(\s*[\"“]([^\"”]{2,40})[\"”]\s*\)")


@dataclass
class _PageBuild:
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


# --- the extractor -----------------------------------------------------------------------


class RulesExtractor:
    """Deterministic extraction restricted to the schema (see the module docstring)."""

    name = EXTRACTOR

    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def mentions(self, source: Source) -> list[str]:
        """Names in the source worth looking up (for ``known``)."""
        return name_candidates(source.content, sub_runs=False)

    def extract(
        self, source: Source, hint: Sequence[str] = (), known: Known | None = None
    ) -> Extraction:
        known = dict(known or {})
        body = split_source(source.content)
        dropped: list[str] = []
        labels = self._labels(body.lines)
        folder = self.choose_folder(source.path, body, labels, hint)
        builds: dict[tuple[str, str], _PageBuild] = {}
        primary: _PageBuild | None = None
        if folder is not None:
            primary = self._primary(source, body, labels, folder, known, dropped)
            builds[(folder.name, norm(primary.title))] = primary
        elif body.front:
            dropped.extend(f"frontmatter {k!r} (no page for this source)" for k in body.front)
        text = "\n".join(body.lines)
        people = self._people(text, builds, known)
        said = self._link_verbs(text, folder, primary, builds, known, people)
        self._quoted_aliases(text, builds, known)
        said += self._statements(source, text, builds, known, people)
        dates = self._effective_dates(source, said)
        self._short_names(builds, known, people)
        self._timeline(source, text, primary, builds, known, people)
        drafts = tuple(Draft(b.folder.name, b.page(source.path)) for b in builds.values())
        return Extraction(drafts, EXTRACTOR, tuple(dropped), field_dates=dates)

    # -- the folder

    def choose_folder(
        self, path: str, body: NoteBody, labels: Mapping[str, str], hint: Sequence[str]
    ) -> FolderSpec | None:
        """The folder of the source's own page, or None when the source is not a page."""
        by_type = {f.type: f for f in self.schema.folders}
        by_name = {f.name: f for f in self.schema.folders}
        for key in ("folder", "type"):
            value = str(body.front.get(key) or "").strip()
            if value in by_name:
                return by_name[value]
            if value in by_type:
                return by_type[value]
        owners: dict[str, list[str]] = {}
        for spec in self.schema.folders:
            for f in spec.fields:
                owners.setdefault(f.name, []).append(spec.name)
        dirs = {norm(part) for part in PurePosixPath(path).parts[:-1]}
        date = self._date(path, body)
        scores: dict[str, float] = {}
        for spec in self.schema.folders:
            score = 0.0
            if norm(spec.name) in dirs or norm(spec.type) in dirs:
                score += 3
            for key, value in body.front.items():
                front_field = spec.field(key)
                if front_field is None or key == spec.date_field or key in ("title", "date"):
                    continue
                score += 2 if owners.get(key) == [spec.name] else 0.5
                if front_field.type == "enum" and coerce(front_field, value) is not None:
                    score += 1
            for key in labels:
                label_field = self._label_field(spec, key)
                if label_field is not None and owners.get(label_field.name) == [spec.name]:
                    score += 2
            if spec.name in hint:
                score += 1 if hint and hint[0] == spec.name else 0.5
            if spec.date_field and date is None:
                score = 0
            scores[spec.name] = score
        order = {name: i for i, name in enumerate(hint)}
        best = sorted(scores, key=lambda n: (-scores[n], order.get(n, len(order)), n))
        if not best or scores[best[0]] < PAGE_THRESHOLD:
            return None
        return by_name[best[0]]

    def _date(self, path: str, body: NoteBody) -> dt.date | None:
        for key in ("date", "event_date"):
            day = as_date(body.front.get(key))
            if day is not None:
                return day
        return date_in_name(PurePosixPath(path).name) or (
            date_in_name(body.heading) if body.heading else None
        )

    # -- the source's own page

    def _primary(
        self,
        source: Source,
        body: NoteBody,
        labels: Mapping[str, str],
        folder: FolderSpec,
        known: Known,
        dropped: list[str],
    ) -> _PageBuild:
        title = body.front.get("title")
        if not isinstance(title, str) or not title.strip():
            title = clean_title(body.heading) if body.heading else title_from_path(source.path)
        build = _PageBuild(folder, " ".join(str(title).split()))
        aliases = body.front.get("aliases")
        if isinstance(aliases, list):
            build.aliases.extend(str(a) for a in aliases)
        if body.heading:
            alt = re.fullmatch(r"(.+?)\s*\(([^()]+)\)", plain(body.heading))
            if alt and norm(alt.group(1)) == norm(build.title):
                build.aliases.append(alt.group(2).strip())
        for key, value in body.front.items():
            if key in ("title", "aliases", "type", "folder", "sources"):
                continue
            spec = folder.field(key)
            if spec is None:
                if key != "date" or folder.date_field:
                    dropped.append(f"frontmatter {key!r} (not a field of {folder.name})")
                continue
            coerced = coerce(spec, value)
            if coerced is None:
                dropped.append(f"frontmatter {key!r}: {value!r} does not fit {spec.type}")
            else:
                build.fields[key] = coerced
        for label, value in labels.items():
            label_spec = self._label_field(folder, label)
            if label_spec is None or label_spec.name in build.fields:
                continue
            parsed: Any
            if label_spec.is_link:
                names = names_in_value(value, known)
                parsed = (
                    (names or None) if label_spec.type == "links" else (names[0] if names else None)
                )
            else:
                parsed = coerce(label_spec, value)
            if parsed is not None:
                build.fields[label_spec.name] = parsed
        if folder.date_field and folder.date_field not in build.fields:
            day = self._date(source.path, body) or source.doc_date
            build.fields[folder.date_field] = day.isoformat()
        build.sections = self._sections(body.lines, folder)
        return build

    def _sections(self, lines: Sequence[str], folder: FolderSpec) -> dict[str, str]:
        if not folder.sections:
            return {}
        wanted = {norm(s): s for s in folder.sections}
        wanted.update({norm(s).rstrip("s"): s for s in folder.sections})
        current = folder.sections[0]
        parts: dict[str, list[str]] = {}
        for line in lines:
            match = _HEADING.match(line)
            if match:
                key = norm(plain(match.group(2)))
                target = wanted.get(key) or wanted.get(key.rstrip("s"))
                if target is not None:
                    current = target
                    continue
                parts.setdefault(current, []).append(f"**{plain(match.group(2))}**")
                continue
            parts.setdefault(current, []).append(line)
        return {k: "\n".join(v).strip() for k, v in parts.items() if "\n".join(v).strip()}

    # -- labelled lines ("Attendees: Alice Chen, Bob Martinez")

    @staticmethod
    def _labels(lines: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        pending: str | None = None
        for raw in lines:
            line = raw.replace("**", "").strip()
            if pending is not None and line and not _LABEL.match(line.split("·")[0]):
                out[pending] = f"{out[pending]} {line}"
                pending = pending if line.endswith(",") else None
                continue
            pending = None
            if not line or line.startswith(("#", "-", "*", ">")):
                continue
            for part in line.split("·"):
                match = _LABEL.match(part)
                if match and not match.group(2).startswith("//"):
                    key = norm(match.group(1)).replace(" ", "_")
                    out.setdefault(key, match.group(2).strip())
                    if match.group(2).rstrip().endswith(","):
                        pending = key
        return out

    @staticmethod
    def _label_field(folder: FolderSpec, label: str) -> FieldSpec | None:
        for spec in folder.fields:
            name = spec.name.lower()
            if label in (name, name.rstrip("s"), f"{name}s") or (
                name.endswith("_date") and label == name.removesuffix("_date")
            ):
                return spec
        return None

    # -- prose: link verbs, aliases, timeline

    def _link_verbs(
        self,
        text: str,
        primary_folder: FolderSpec | None,
        primary: _PageBuild | None,
        builds: dict[tuple[str, str], _PageBuild],
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
        primary: _PageBuild | None,
        builds: dict[tuple[str, str], _PageBuild],
        known: Known,
        people: Mapping[str, NotePeople],
    ) -> Statement | None:
        assert target_field.folder is not None
        after = block[match.end() :].removeprefix(" directly").strip()
        obj = self._object(after, target_field.folder, spec, known, people.get(target_field.folder))
        if obj is None:
            return None
        subject: _PageBuild | None = None
        if primary is not None and primary_folder is spec:
            subject = primary
        elif not is_dated(spec):
            before = block[: match.start()]
            local = people.get(spec.name)
            name = (local.subject(before) if local else None) or self._subject(before, spec, known)
            if name is not None and norm(name) != norm(obj):
                subject = self._entity(builds, spec, name, known)
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

    @staticmethod
    def _entity(
        builds: dict[tuple[str, str], _PageBuild], folder: FolderSpec, name: str, known: Known
    ) -> _PageBuild:
        hit = known.get(norm(name))
        title = hit[1] if hit is not None and hit[0] == folder.name else name
        key = (folder.name, norm(title))
        if key not in builds:
            builds[key] = _PageBuild(folder, title)
        return builds[key]

    def _quoted_aliases(
        self, text: str, builds: dict[tuple[str, str], _PageBuild], known: Known
    ) -> None:
        """``Batbayar Dorj ("Bataa")``: the quoted name is an alias of the page named before."""
        flat = plain(text)
        for match in _QUOTED_ALIAS.finditer(flat):
            before, alias = norm(flat[max(0, match.start() - 80) : match.start()]), match.group(1)
            for (_, key), build in builds.items():
                if before.endswith(key) and norm(alias) != key:
                    build.aliases.append(alias.strip())

    def _timeline(
        self,
        source: Source,
        text: str,
        primary: _PageBuild | None,
        builds: dict[tuple[str, str], _PageBuild],
        known: Known,
        people: Mapping[str, NotePeople],
    ) -> None:
        names = self._entity_names(builds, known)
        for folder_name, local in people.items():
            for short, title in local.short.items():
                names.setdefault(short, (folder_name, title))
        tz = self.schema.tz
        for dated in dated_sentences(text, source.doc_date, tz):
            entry = TimelineEntry(dated.day, _short(dated.text), source.path)
            targets: list[_PageBuild] = []
            if primary is not None and primary.folder.timeline:
                targets.append(primary)
            # A sentence naming no page is about what its list item (a bullet, a chat
            # message), else its heading, names.
            block = dated.block
            for where in (dated.text, block.text if block.item else "", block.heading):
                hits = [h for run in name_candidates(where) if (h := _named(names, run))]
                for folder_name, title in hits:
                    spec = self.schema.folder(folder_name)
                    if spec.timeline:
                        targets.append(self._entity(builds, spec, title, known))
                if hits:
                    break
            for target in {id(t): t for t in targets}.values():
                if entry not in target.timeline:
                    target.timeline.append(entry)

    def _entity_names(
        self, builds: Mapping[tuple[str, str], _PageBuild], known: Known
    ) -> dict[str, tuple[str, str]]:
        """norm(name) -> (folder, title) of every entity page known, built from this note or
        named by one of its link fields."""
        names = {
            key: (folder, title)
            for key, (folder, title) in known.items()
            if not is_dated(self.schema.folder(folder))
        }
        for (folder_name, key), build in builds.items():
            if not is_dated(build.folder):
                names.setdefault(key, (folder_name, build.title))
            for spec in build.folder.fields:  # link targets get a page too ("company: Globex")
                if spec.is_link and spec.folder and not is_dated(self.schema.folder(spec.folder)):
                    for value in link_names(build.fields.get(spec.name)):
                        names.setdefault(norm(value), (spec.folder, value))
        return names

    # -- prose: people, short names, job titles, field statements (ingest_agent.prose)

    def _people(
        self, text: str, builds: Mapping[tuple[str, str], _PageBuild], known: Known
    ) -> dict[str, NotePeople]:
        """The people of this note, per folder of people (a folder with a job-title field,
        or one that a ``links`` field points to)."""
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
            out[name] = NotePeople(name, linked, known, text)
        return out

    def _short_names(
        self,
        builds: dict[tuple[str, str], _PageBuild],
        known: Known,
        people: Mapping[str, NotePeople],
    ) -> None:
        """A first name written alone for one person of the note becomes an alias."""
        for folder_name, local in people.items():
            spec = self.schema.folder(folder_name)
            for title, short in local.used_short.items():
                build = self._entity(builds, spec, title, known)
                if norm(short) not in {norm(a) for a in build.aliases}:
                    build.aliases.append(short)

    def _statements(
        self,
        source: Source,
        text: str,
        builds: dict[tuple[str, str], _PageBuild],
        known: Known,
        people: Mapping[str, NotePeople],
    ) -> list[Statement]:
        """Job titles and field statements from prose; the first statement of a field wins."""
        marked = [(b.text, b.item) for b in marked_blocks(text)]
        tz = self.schema.tz
        found = [
            statement
            for name, local in people.items()
            for statement in role_statements(marked, local, self.schema.folder(name), known)
        ]
        entities = {f.name: f for f in self.schema.folders if not is_dated(f)}
        found += field_statements(
            marked, self._entity_names(builds, known), entities, source.doc_date, tz
        )
        applied = []
        for statement in found:
            spec = self.schema.folder(statement.folder)
            build = self._entity(builds, spec, statement.title, known)
            if statement.field not in build.fields:
                build.fields[statement.field] = statement.value
                applied.append(statement)
        return applied

    def _effective_dates(
        self, source: Source, said: Sequence[Statement]
    ) -> dict[tuple[str, str, str], dt.date]:
        """When each value read from prose took effect, where its paragraph says so."""
        dates = {}
        for statement in said:
            day = entry_date(statement.block, source.doc_date, self.schema.tz)
            if day is not None and day != source.doc_date:
                dates[(statement.folder, norm(statement.title), statement.field)] = day
        return dates


def _named(names: Mapping[str, tuple[str, str]], run: str) -> tuple[str, str] | None:
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


def _short(sentence: str) -> str:
    text = " ".join(sentence.split())
    if len(text) <= TIMELINE_TEXT_CHARS:
        return text
    cut = text[:TIMELINE_TEXT_CHARS].rsplit(" ", 1)[0]
    return f"{cut}…"
