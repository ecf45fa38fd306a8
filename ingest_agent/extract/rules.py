"""The deterministic extractor: pages from a source without any model call.

Used when no LLM is configured. The note is first read for its genre
(:mod:`ingest_agent.extract.genre`): an e-mail or a chat is read message by message,
without its frame. What it reads, in order of trust:

1. **Frontmatter**: keys that are fields of the chosen folder (values coerced to the
   field type; anything else is dropped), ``title``, ``aliases``, and ``type``/``folder``
   hints naming the folder.
2. **The folder**: a source becomes a page of its own (a meeting, a decision, a
   project ...) only on structural evidence: a ``type``/``folder`` hint, the folder's
   name as a directory of the path, frontmatter keys or labelled lines
   ("Attendees: ...") that only that folder has, enum values only it allows. The
   router's lexical hint breaks ties but never creates a page on its own, so a weekly
   update or a chat export is not mistaken for a meeting. In an e-mail or a chat, its
   people (``participants``) are no evidence and its directory counts half: a message
   records a meeting only in its words. Why, with the evidence, goes to the ledger.
3. **Title**: frontmatter, else the first heading (without a trailing date), else the
   file name, unless that is a code ("EMG-P01-F1-0"): then the note's banner or first
   sentence. A meeting links to the company or project its title names, else the one its
   outside attendees work at (:mod:`ingest_agent.extract.about`). **Sections**: ``##`` headings mapped to the folder's sections; text under
   other headings joins the section before it.
4. **Links**: link fields from frontmatter and labelled lines become typed links, and
   their targets become pages in entity folders; the folder's ``link_verbs`` patterns
   in prose ("Alice Chen — Head of Product; reports to Maria Lopez", "He now reports to
   Dana Whitfield") fill the matching link field of the person it is about
   (:mod:`ingest_agent.extract.prose_reader`: the name last before the phrase, a unique
   first name, or a pronoun's antecedent).
5. **Prose statements**: job titles ("Bob Martinez (Director of Operations, Globex)",
   "joins as Backend Engineer", "promoted to VP of Operations"), "based in", and plain
   field statements ("Mongolian Localization due date moves to 2026-12-15", "Globex is
   now a customer"), each read within its sentence; a value that does not fit its field
   is not read. A role named as its one holder's ("Globex's new COO") ends the earlier
   holder's claim (:mod:`ingest_agent.pages.holders`). The first
   statement of a field in a note wins; across notes the merge lets the newest win,
   its change dated when the paragraph says it took effect.
6. **Timeline**: every list item or sentence naming a day becomes an entry on the
   source's page and on every page it names (else the pages its list item or heading
   names), dated by :mod:`ingest_agent.extract.dates`: the event's day when the text says
   when it happened, else the note's date; "December 3" is the occurrence nearest the
   note. A message is dated by when it was said, and each of its sentences naming a
   page is an entry on it (a message is evidence of its own day).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import PurePosixPath
from typing import Any

from ingest_agent.extract.about import Facts, about_links, people_folder, role_claims
from ingest_agent.extract.corrections import revisions
from ingest_agent.extract.decisions import read_decisions
from ingest_agent.extract.genre import NOTE, PEOPLE_KEYS, Genre, Said, participants_of, read_note
from ingest_agent.extract.note import (
    Known,
    NoteBody,
    clean_title,
    coerce,
    content_title,
    is_identifier,
    names_in_value,
    title_from_path,
)
from ingest_agent.extract.page_builds import Builds, PageBuild, entity, entity_names, named_page
from ingest_agent.extract.prose_patterns import NotePeople
from ingest_agent.extract.prose_reader import ProseReader
from ingest_agent.extract.text import DatedText, dated_sentences, name_candidates, plain
from ingest_agent.names import norm
from ingest_agent.records import Draft, Extraction, Source, is_dated
from memserver.kb.page import TimelineEntry, as_date, date_in_name
from memserver.kb.schema import FieldSpec, FolderSpec, Schema
from memserver.kb.translit import name_key
from memserver.kb.words import is_cyrillic

EXTRACTOR = "rules"
PAGE_THRESHOLD = 2.0  # structural evidence needed before a source becomes a page
HINT_FIRST, HINT_OTHER = 1.0, 0.5  # what the router's hint adds: its first folder, the others
TIMELINE_TEXT_CHARS = 400
SOUND_ALIKE = 0.6  # two spellings of one name: how much of their sound-alike keys agree
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_LABEL = re.compile(r"^\s*([^\W\d][\w /'-]{0,30}?)\s*:\s+(.+?)\s*$")
_QUOTED_ALIAS = re.compile(r"\(\s*[\"“]([^\"”]{2,40})[\"”]\s*\)")
# A capitalised name of one to four words, then its spelling in the other script in
# brackets: "Nomin Trade (Номин Трейд)".
_NAME_WORDS = r"[A-ZА-ЯӨҮЁ][\w'’-]*(?:[ \t]+[A-ZА-ЯӨҮЁ][\w'’-]*){0,3}"
_SCRIPT_PAIR = re.compile(
    rf"(?<![\w-])(?P<a>{_NAME_WORDS})[ \t]*\([ \t]*(?P<b>{_NAME_WORDS})[ \t]*\)"
)


DIRECTORY = 3.0  # a folder named like the folder: the directory the note sits in
MESSAGE_FACT_WORDS = 6  # a message's sentence naming no day is an entry from this long
READ = frozenset({"genre", "participants"})  # frontmatter read without a page of its own
PLAIN = Genre(NOTE)


@dataclass
class Evidence:
    """A folder's structural score for a note, and what it is made of."""

    score: float = 0.0
    reasons: list[str] = field(default_factory=list)

    def add(self, weight: float, reason: str) -> None:
        self.score += weight
        self.reasons.append(reason)

    def said(self) -> str:
        return ", ".join(self.reasons) or "nothing"


# --- the extractor -----------------------------------------------------------------------


class RulesExtractor:
    """Deterministic extraction restricted to the schema (see the module docstring)."""

    name = EXTRACTOR

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.prose = ProseReader(schema)

    def mentions(self, source: Source) -> list[str]:
        """Names in the source worth looking up (for ``known``)."""
        return name_candidates(source.content, sub_runs=False)

    def extract(
        self,
        source: Source,
        hint: Sequence[str] = (),
        known: Known | None = None,
        facts: Facts | None = None,
    ) -> Extraction:
        """The note's pages. ``known``: the pages its names are; ``facts``: the link fields
        of known entity pages by (folder, norm(title)) (who works where)."""
        known = dict(known or {})
        body, genre, said_on = read_note(source)
        dropped: list[str] = []
        labels = self._labels(body.lines)
        folder, why = self._choose(source.path, body, labels, hint, genre)
        builds: Builds = {}
        primary: PageBuild | None = None
        if folder is not None:
            primary = self._primary(source, body, labels, folder, known, dropped)
            builds[(folder.name, norm(primary.title))] = primary
        elif body.front:
            dropped.extend(
                f"frontmatter {k!r} (no page for this source)" for k in body.front if k not in READ
            )
        self._participants(body, builds, known)
        text = "\n".join(body.lines)
        prose = self.prose
        people = prose.people(text, builds, known, participants_of(body))
        said = prose.link_verbs(text, folder, primary, builds, known, people)
        self._quoted_aliases(text, builds, known)
        self._script_pairs(text, builds, known)
        said += prose.statements(source, text, builds, known, people, primary, body.heading or "")
        dates = prose.effective_dates(source, said)
        prose.short_names(builds, known, people)
        about = about_links(self.schema, primary, builds, known, facts or {})
        reversals = read_decisions(self.schema, source, body, primary, builds, known, people)
        reversals += revisions(self.schema, source, primary, text)
        self._timeline(source, said_on, primary, builds, known, people)
        drafts = tuple(Draft(b.folder.name, b.page(source.path)) for b in builds.values())
        return Extraction(
            drafts,
            EXTRACTOR,
            tuple(dropped),
            field_dates=dates,
            reversals=tuple(reversals),
            plain_facts=prose.plain_facts(said, dates),
            reasons=(why, *about),
            role_claims=tuple(role_claims(self.schema, source, said, dates, known)),
        )

    # -- the folder

    def choose_folder(
        self,
        path: str,
        body: NoteBody,
        labels: Mapping[str, str],
        hint: Sequence[str],
        genre: Genre = PLAIN,
    ) -> FolderSpec | None:
        """The folder of the source's own page, or None when the source is not a page."""
        return self._choose(path, body, labels, hint, genre)[0]

    def _choose(
        self,
        path: str,
        body: NoteBody,
        labels: Mapping[str, str],
        hint: Sequence[str],
        genre: Genre,
    ) -> tuple[FolderSpec | None, str]:
        """The folder of the source's own page (None: the source is no page) and why."""
        evidence = self._evidence(path, body, labels, genre)
        scores = {
            name: 0.0 if found is None else found.score + _hint_weight(name, hint)
            for name, found in evidence.items()
        }
        order = {name: i for i, name in enumerate(hint)}
        best = sorted(scores, key=lambda n: (-scores[n], order.get(n, len(order)), n))
        kind = f"genre {genre.name}, {genre.why}" if genre.why else "a note written by hand"
        if genre.message:
            kind += " (its people wrote and read it, they attended nothing)"
        if not best or scores[best[0]] < PAGE_THRESHOLD:
            near = evidence.get(best[0]) if best else None
            said = f"; {best[0]} only has: {near.said()}" if near and near.reasons else ""
            return None, f"no page of its own: {kind}{said}"
        found = evidence[best[0]]
        assert found is not None
        routed = "; the router's hint" if best[0] in hint else ""
        return self.schema.folder(best[0]), f"{best[0]}: {kind}; {found.said()}{routed}"

    def needs_hint(self, source: Source) -> bool:
        """Whether the router's hint could change the folder ``extract`` chooses.

        A hint adds at most ``HINT_FIRST`` to one folder's score and breaks ties, so when
        no folder could reach the threshold with it, or the best one leads every other by
        more than that, the agent need not ask the router (one embedding a note)."""
        body, genre, _ = read_note(source)
        evidence = self._evidence(source.path, body, self._labels(body.lines), genre)
        scores = sorted((s.score for s in evidence.values() if s is not None), reverse=True)
        if not scores or scores[0] + HINT_FIRST < PAGE_THRESHOLD:
            return False
        if scores[0] < PAGE_THRESHOLD:
            return True  # the hint could lift a folder over the threshold
        return len(scores) > 1 and scores[1] + HINT_FIRST >= scores[0]

    def _evidence(
        self, path: str, body: NoteBody, labels: Mapping[str, str], genre: Genre = PLAIN
    ) -> dict[str, Evidence | None]:
        """Each folder's structural evidence (see the module docstring), None for a dated
        folder when the source has no date (it cannot be that folder's page). In an
        exchange of messages, its people are no evidence (they attended nothing) and the
        directory it sits in counts half: a message records a meeting only in its words."""
        by_type = {f.type: f for f in self.schema.folders}
        by_name = {f.name: f for f in self.schema.folders}
        for key in ("folder", "type"):
            value = str(body.front.get(key) or "").strip()
            named = by_name.get(value) or by_type.get(value)
            if named is not None:  # named outright: no other folder, whatever the hint
                said = f"its frontmatter names it ({key}: {value})"
                return {named.name: Evidence(PAGE_THRESHOLD + 2 * HINT_FIRST, [said])}
        owners: dict[str, list[str]] = {}
        for spec in self.schema.folders:
            for f in spec.fields:
                owners.setdefault(f.name, []).append(spec.name)
        dirs = {norm(part) for part in PurePosixPath(path).parts[:-1]}
        date = self._date(path, body)
        out: dict[str, Evidence | None] = {}
        for spec in self.schema.folders:
            if spec.date_field and date is None:
                out[spec.name] = None
                continue
            found = Evidence()
            if norm(spec.name) in dirs or norm(spec.type) in dirs:
                found.add(DIRECTORY / 2 if genre.message else DIRECTORY, "the folder it is in")
            for key, value in body.front.items():
                front_field = spec.field(key)
                if front_field is None or key == spec.date_field or key in ("title", "date"):
                    continue
                if genre.message and key in PEOPLE_KEYS:
                    continue
                only = owners.get(key) == [spec.name]
                found.add(2 if only else 0.5, f"frontmatter {key}" + (" (its own field)" * only))
                if front_field.type == "enum" and coerce(front_field, value) is not None:
                    found.add(1, f"{key}: {value} is one of its values")
            for key in labels:
                label_field = self._label_field(spec, key)
                if label_field is not None and owners.get(label_field.name) == [spec.name]:
                    found.add(2, f"a line labelled {key} (its own field)")
            out[spec.name] = found
        return out

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
    ) -> PageBuild:
        title = body.front.get("title")
        if not isinstance(title, str) or not title.strip():
            title = clean_title(body.heading) if body.heading else title_from_path(source.path)
            if is_identifier(title):  # "EMG-P01-F1-0.md": a code says nothing, the words may
                title = content_title(body.lines, self._labels_of_schema()) or title
        build = PageBuild(folder, " ".join(str(title).split()))
        aliases = body.front.get("aliases")
        if isinstance(aliases, list):
            build.aliases.extend(str(a) for a in aliases)
        if body.heading:
            alt = re.fullmatch(r"(.+?)\s*\(([^()]+)\)", plain(body.heading))
            if alt and norm(alt.group(1)) == norm(build.title):
                build.aliases.append(alt.group(2).strip())
        for key, value in body.front.items():
            if key in ("title", "aliases", "type", "folder", "sources") or key in READ:
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

    def _quoted_aliases(self, text: str, builds: Builds, known: Known) -> None:
        """``Batbayar Dorj ("Bataa")``: the quoted name is an alias of the page named before."""
        flat = plain(text)
        for match in _QUOTED_ALIAS.finditer(flat):
            before, alias = norm(flat[max(0, match.start() - 80) : match.start()]), match.group(1)
            for (_, key), build in builds.items():
                if before.endswith(key) and norm(alias) != key:
                    build.aliases.append(alias.strip())

    def _script_pairs(self, text: str, builds: Builds, known: Known) -> None:
        """``Nomin Trade (Номин Трейд)``, ``Алекс Ким (Alex Kim)``: a name written in one
        script with its other script's spelling in brackets (the two sound alike); when
        either is a page's name (built from this note or known), the other becomes one of
        its aliases."""
        flat = plain(text)
        for match in _SCRIPT_PAIR.finditer(flat):
            first, second = match.group("a").strip(), match.group("b").strip()
            if is_cyrillic(first) == is_cyrillic(second) or not sounds_alike(first, second):
                continue  # "the call with Globex (Номин Трейд)" names two companies
            for name, other in ((first, second), (second, first)):
                hit = next(
                    (
                        b
                        for (_, key), b in builds.items()
                        if key == norm(name) and not is_dated(b.folder)
                    ),
                    None,
                )
                if hit is None and norm(name) in known:
                    folder, _ = known[norm(name)]
                    spec = self.schema.folder(folder)
                    hit = None if is_dated(spec) else entity(builds, spec, name, known)
                if hit is not None:
                    if norm(other) not in {norm(n) for n in (hit.title, *hit.aliases)}:
                        hit.aliases.append(other)
                    break

    def _labels_of_schema(self) -> set[str]:
        """The words the schema labels things with: its folders', fields' and sections'."""
        out: set[str] = set()
        for spec in self.schema.folders:
            out |= {spec.name, spec.type, *spec.sections}
            out |= {f.name.replace("_", " ") for f in spec.fields}
        return {w for label in out for w in norm(label).split()}

    def _participants(self, body: NoteBody, builds: Builds, known: Known) -> None:
        """The people who wrote and were written to in an exchange of messages get a page
        each (the note is one of its sources), as a meeting's attendees do."""
        folder = people_folder(self.schema)
        if folder is not None:
            for name in participants_of(body):
                entity(builds, folder, name, known)

    def _timeline(
        self,
        source: Source,
        said_on: Sequence[Said],
        primary: PageBuild | None,
        builds: Builds,
        known: Known,
        people: Mapping[str, NotePeople],
    ) -> None:
        names = entity_names(self.schema, builds, known)
        for folder_name, local in people.items():
            for short, title in local.short.items():
                names.setdefault(short, (folder_name, title))
        tz = self.schema.tz
        for part in said_on:
            for dated in dated_sentences(part.text, part.day, tz, every=part.message):
                if dated.mentioned or len(dated.text.split()) >= MESSAGE_FACT_WORDS:
                    self._entry(source, part, dated, primary, builds, known, names)

    def _entry(
        self,
        source: Source,
        part: Said,
        dated: DatedText,
        primary: PageBuild | None,
        builds: Builds,
        known: Known,
        names: Mapping[str, tuple[str, str]],
    ) -> None:
        """The timeline entry of one dated sentence, on the pages it is about. A message's
        is dated by when it was said (a date it names stays in its words), and a sentence
        of it that names no day is an entry on the pages it names itself: a message is
        evidence of its own day."""
        entry = TimelineEntry(
            part.day if part.message else dated.day, _short(dated.text), source.path
        )
        targets: list[PageBuild] = []
        if primary is not None and primary.folder.timeline and dated.mentioned:
            targets.append(primary)
        # A sentence naming no page is about what its list item (a bullet, a chat
        # message), else its heading, names.
        block = dated.block
        # a message is one unit, as a list item is: its sentence naming no page is about
        # what the message's paragraph names (not so for one naming no day: its own names)
        unit = block.item or part.message
        around = (block.text if unit else "", block.heading) if dated.mentioned else ()
        for where in (dated.text, *around):
            hits = [h for run in name_candidates(where) if (h := named_page(names, run))]
            for folder_name, title in hits:
                spec = self.schema.folder(folder_name)
                if spec.timeline:
                    targets.append(entity(builds, spec, title, known))
            if hits:
                break
        for target in {id(t): t for t in targets}.values():
            if entry not in target.timeline:
                target.timeline.append(entry)


def sounds_alike(a: str, b: str) -> bool:
    """Whether two spellings of a name, in either script, sound alike (their sound-alike
    keys, :func:`memserver.kb.translit.name_key`, mostly agree)."""
    return SequenceMatcher(None, name_key(a), name_key(b)).ratio() >= SOUND_ALIKE


def _short(sentence: str) -> str:
    text = " ".join(sentence.split())
    if len(text) <= TIMELINE_TEXT_CHARS:
        return text
    cut = text[:TIMELINE_TEXT_CHARS].rsplit(" ", 1)[0]
    return f"{cut}…"


def _hint_weight(folder: str, hint: Sequence[str]) -> float:
    if folder not in hint:
        return 0.0
    return HINT_FIRST if hint[0] == folder else HINT_OTHER
