"""Reversals and corrections a note states in its own words, recorded on both records.

A note's decision that says it reverses, supersedes or replaces an earlier one
(:class:`~ingest_agent.records.DecisionRef`, read by the rules extractor) is matched to
an earlier decision page: by a quoted title, by the day the note gives it with words of
its title, or by the words of what it replaces alone when one page fits best. Then:

- the newer decision gets ``supersedes: <old id>``;
- the older one gets ``status: reversed`` (or ``superseded``, when the note says it is
  replaced by a refined version), ``superseded_by: <new id>``, the note among its
  sources, and a timeline entry on the newer decision's day naming it, its reason and
  the note. Its Decision section keeps the original text.

A correction (:mod:`ingest_agent.extract.corrections`) names the earlier record by its
day; of that day's pages, the one whose title shares most (at least ``MIN_SHARED``) of
the note's words about that day, and no other as many, is the one:

- an **amended** decision is recorded as a reversal is, with ``status: amended`` (else
  ``superseded``), unless it was already reversed or superseded (then its status and its
  ``superseded_by`` stay, and the amendment is a timeline entry);
- an incident whose **root cause** a later one (a postmortem) revises gets the cause now
  in ``root_cause``, the cause believed before as a timeline entry of its own day, the
  revision as an entry on the later day naming the note and the revising page, and the
  note among its sources; the revising page gets the cause, when it has none, and an
  entry naming the incident it revises.

This is a change the source states, so it is written at once (never held for review).

The order of ingestion does not matter: a reference to a record not in memory yet is
kept on the newer page as an Open Question (``PENDING_PREFIX`` or ``PENDING_INCIDENT``,
the words that name it); every time a page of such a folder is written, the pending
references of all its pages are tried again, and a match records the change and removes
the question. An ambiguous reference (two pages fit as well) changes nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import re
from collections.abc import Callable, Iterable
from functools import partial

from ingest_agent.errors import SourceFailed
from ingest_agent.memory import Memory, is_version_conflict
from ingest_agent.names import norm
from ingest_agent.pages.merge import add_entries
from ingest_agent.records import (
    AMENDED,
    REVISED,
    DecisionRef,
    cause_field,
    lifecycle_field,
    supersede_fields,
)
from memserver.errors import ToolCallError
from memserver.kb.page import Page, TimelineEntry, as_date
from memserver.kb.schema import FieldSpec, FolderSpec, Schema
from memserver.kb.words import is_cyrillic

log = logging.getLogger(__name__)

PENDING_PREFIX = "Earlier decision not in memory yet: "
PENDING_INCIDENT = "Earlier incident not in memory yet: "
WRITE_ATTEMPTS = 4
WORDS_SHARE = 0.6  # of the words naming what it replaces, found in the earlier title
REVISED_BY = "Root cause revised by"
MIN_SHARED = 2  # words an amended or revised record shares with the earlier title
_PENDING = re.compile(
    rf"^(?:{re.escape(PENDING_PREFIX)}|{re.escape(PENDING_INCIDENT)})"
    r"this (?P<status>reversed|superseded|amended|revised) "
    r"“(?P<words>[^”]*)”(?: \(quoted\))?(?: of (?P<on>\d{4}-\d{2}-\d{2}))?"
    r"(?:; root cause “(?P<cause>[^”]*)”(?:, was “(?P<was>[^”]*)”)?)?"
    r"; from (?P<source>[^;]+); (?P<rest>.*)$"
)
_SKIP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "for",
        "to",
        "and",
        "or",
        "in",
        "on",
        "at",
        "by",
        "with",
        "our",
        "this",
        "that",
        "decision",
        "decisions",
        "earlier",
        "previous",
        "old",
        "new",
        "we",
        "it",
        "its",
        "is",
        "was",
    ]
)
SUPERSEDED_BY = ("superseded_by", "replaced_by", "reversed_by")
# Words a note uses of any record it corrects ("update the 2026-07-15 decision record"):
# they say nothing of which record it is.
_RECORD_WORDS = frozenset(
    [
        "updat",
        "record",
        "review",
        "note",
        "notes",
        "meeting",
        "amend",
        "correct",
        "entry",
        "document",
    ]
)


def pending_question(ref: DecisionRef) -> str:
    """The Open Question that keeps a reference to a record not in memory yet."""
    named = ref.quoted or ref.words
    quoted = " (quoted)" if ref.quoted else ""
    on = f" of {ref.on.isoformat()}" if ref.on else ""
    if ref.status == REVISED:
        was = f", was “{ref.earlier}”" if ref.earlier else ""
        return (
            f"{PENDING_INCIDENT}this {ref.status} “{named}”{on}; root cause “{ref.reason}”"
            f"{was}; from {ref.source}; linked when that incident is ingested"
        )
    return (
        f"{PENDING_PREFIX}this {ref.status} “{named}”{quoted}{on}; from {ref.source}; "
        "linked when that decision is ingested"
    )


def pending_refs(page_id: str, page: Page, folder: FolderSpec) -> list[DecisionRef]:
    """The references a decision page still waits for (its pending Open Questions)."""
    assert folder.date_field is not None
    day = as_date(page.fields.get(folder.date_field))
    out = []
    for question in page.open_questions:
        match = _PENDING.match(question)
        if match is None or day is None:
            continue
        quoted = match.group(0).find("(quoted)") >= 0
        on = as_date(match.group("on")) if match.group("on") else None
        rationale = folder.field("rationale")
        reason = str(page.fields.get("rationale") or "") if rationale is not None else ""
        words = match.group("words")
        out.append(
            DecisionRef(
                folder.name, page.title, day, words if quoted else None, on, words,
                match.group("status"), match.group("cause") or reason, match.group("source"),
                earlier=match.group("was") or "",
            )
        )  # fmt: skip
    return out


def _words(text: str, *, stem: bool = False) -> set[str]:
    out = set()
    # a correction's words split at any hyphen: "API‑first" (a non-breaking one) is "API-first"
    for word in re.findall(r"\w+" if stem else r"[\w-]+", text.lower()):
        if word in _SKIP or len(word) < 3 or re.fullmatch(r"[\d-]+", word):
            continue
        if is_cyrillic(word):
            word = word[:5]  # a Mongolian stem, roughly
        elif stem and len(word) > 5:  # "prototyping" and "prototype" are one word
            word = re.sub(r"(?:ing|ed|es|e|s)$", "", word)
        out.add(word)
    return out


def _similar(a: set[str], b: set[str]) -> bool:
    if len(a) < 2 or len(b) < 2:
        return False
    return len(a & b) / min(len(a), len(b)) >= WORDS_SHARE


def score(ref: DecisionRef, page: Page, day: dt.date | None) -> float:
    """How surely ``page`` (decided on ``day``) is the earlier decision ``ref`` names; 0
    when it cannot be."""
    if day is None or day > ref.day or norm(page.title) == norm(ref.title):
        return 0.0
    names = {norm(n) for n in (page.title, *page.aliases)}
    if ref.quoted and norm(ref.quoted) in names:
        return 3.0
    if ref.status in (AMENDED, REVISED):
        # A correction names the earlier record by its day; the note's words about that
        # day must say at least two words of the title: one shared word is no fit.
        said = _words(ref.words, stem=True) - _RECORD_WORDS
        count = len(said & _words(" ".join((page.title, *page.aliases)), stem=True))
        if ref.on is None or day != ref.on or count < MIN_SHARED:
            return 0.0
        return 2.0 + count / len(said)
    said = _words(ref.words)
    shared = len(said & _words(" ".join((page.title, *page.aliases)))) / len(said) if said else 0
    if ref.on is not None:
        return 2.0 + shared if day == ref.on and (shared > 0 or not said) else 0.0
    return 1.0 + shared if shared >= WORDS_SHARE else 0.0


def best_match(ref: DecisionRef, pages: dict[str, Page], folder: FolderSpec) -> str | None:
    """The id of the one page ``ref`` names best (None when none fits or two tie)."""
    assert folder.date_field is not None
    scored = sorted(
        (
            (score(ref, p, as_date(p.fields.get(folder.date_field))), pid)
            for pid, p in pages.items()
        ),
        reverse=True,
    )
    scored = [(s, pid) for s, pid in scored if s > 0]
    if not scored or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


def reversed_page(old: Page, folder: FolderSpec, ref: DecisionRef, new_id: str) -> Page:
    """The earlier decision, reversed, superseded or amended by ``new_id`` (see the module
    docstring). An amendment leaves a decision already reversed or superseded so, and
    the link to the first decision that replaced it."""
    fields = dict(old.fields)
    life = lifecycle_field(folder)
    by = superseded_by_field(folder)
    replaced = life is not None and fields.get(life.name) in ("reversed", "superseded")
    amends = ref.status == AMENDED
    if life is not None and not (amends and replaced):
        status = ref.status if ref.status in life.values else None
        order = ("superseded", "reversed") if amends else ("reversed", "superseded")
        status = status or next(v for v in order if v in life.values)
        fields[life.name] = status
    if by is not None and not (amends and fields.get(by.name) not in (None, "", new_id)):
        fields[by.name] = new_id
    verb = {"superseded": "Superseded", AMENDED: "Amended"}.get(ref.status, "Reversed")
    why = f"; reason: {ref.reason}" if ref.reason else ""
    text = f"{verb} by the decision “{ref.title}” ({new_id}) of {ref.day.isoformat()}{why}"
    sources = old.sources if ref.source in old.sources else (*old.sources, ref.source)
    page = dataclasses.replace(old, fields=fields, sources=sources)
    if folder.timeline:
        page = add_entries(page, [TimelineEntry(ref.day, text, ref.source)])
    return page


def superseding_page(new: Page, folder: FolderSpec, old_id: str, ref: DecisionRef) -> Page:
    """The newer decision linked to the one it supersedes, its pending question gone."""
    fields = dict(new.fields)
    for spec in [f for f in supersede_fields(folder) if f.name not in SUPERSEDED_BY][:1]:
        fields[spec.name] = [old_id] if spec.type == "links" else old_id
    questions = tuple(q for q in new.open_questions if q != pending_question(ref))
    return dataclasses.replace(new, fields=fields, open_questions=questions)


def revised_page(old: Page, folder: FolderSpec, ref: DecisionRef, new_id: str) -> Page:
    """The earlier incident with the root cause ``ref`` says it had after all: the field
    rewritten, the cause believed before kept as a timeline entry of the incident's day
    (cited to the page's first source when it held it, else to the note that says so),
    and an entry on the revising note's day naming it and the page it wrote."""
    spec = cause_field(folder)
    assert spec is not None and folder.date_field is not None
    fields = dict(old.fields)
    before = str(fields.get(spec.name) or "")
    if before == ref.reason:
        return old
    if any(e.text.startswith(REVISED_BY) and e.date >= ref.day for e in old.timeline):
        # revised already, as of this day or later: another note saying it in its own
        # words is cited, and the cause stays as the revision wrote it
        text = f"Root cause revision restated by “{ref.title}” ({new_id}): {ref.reason}"
        sources = old.sources if ref.source in old.sources else (*old.sources, ref.source)
        page = dataclasses.replace(old, sources=sources)
        return add_entries(page, [TimelineEntry(ref.day, text, ref.source)])
    fields[spec.name] = ref.reason
    day = as_date(old.fields.get(folder.date_field)) or ref.on or ref.day
    earlier = before or ref.earlier
    was = f"; earlier understood as: {earlier}" if earlier else ""
    entries = [
        TimelineEntry(
            ref.day,
            f"{REVISED_BY} “{ref.title}” ({new_id}) of {ref.day.isoformat()}: {ref.reason}{was}",
            ref.source,
        )
    ]
    if earlier:
        cited = old.sources[0] if before and old.sources else ref.source
        entries.append(TimelineEntry(day, f"Root cause as first understood: {earlier}", cited))
    sources = old.sources if ref.source in old.sources else (*old.sources, ref.source)
    page = dataclasses.replace(old, fields=fields, sources=sources)
    return add_entries(page, entries) if folder.timeline else page


def revising_page(
    new: Page, folder: FolderSpec, old_id: str, old_title: str, ref: DecisionRef
) -> Page:
    """The revising incident page (a postmortem): the cause it states, when it has none,
    and an entry naming the incident it revises; its pending question gone."""
    spec = cause_field(folder)
    assert spec is not None
    fields = dict(new.fields)
    if not fields.get(spec.name):
        fields[spec.name] = ref.reason
    questions = tuple(q for q in new.open_questions if q != pending_question(ref))
    page = dataclasses.replace(new, fields=fields, open_questions=questions)
    on = f" of {ref.on.isoformat()}" if ref.on else ""
    text = f"Revises the root cause of “{old_title}” ({old_id}){on}: {ref.reason}"
    return (
        add_entries(page, [TimelineEntry(ref.day, text, ref.source)]) if folder.timeline else page
    )


def superseded_by_field(folder: FolderSpec) -> FieldSpec | None:
    """The link from a decision to the newer one that replaced it, if the folder has one."""
    for name in SUPERSEDED_BY:
        spec = folder.field(name)
        if spec is not None and spec.is_link and spec.folder == folder.name:
            return spec
    return None


class Reversals:
    """Records the reversals notes state (see the module docstring), over MCP."""

    def __init__(self, memory: Memory, schema: Schema) -> None:
        self.memory = memory
        self.schema = schema
        self._pages: dict[str, dict[str, Page]] = {}  # folder -> id -> page, this run

    def reset(self) -> None:
        self._pages.clear()

    async def _decisions(self, folder: str) -> dict[str, Page]:
        if folder not in self._pages:
            pages: dict[str, Page] = {}
            for page_id, _, _ in await self.memory.titles([folder]):
                stored = await self.memory.get(page_id)
                if stored is not None:
                    pages[stored.id] = stored.page
            self._pages[folder] = pages
        return self._pages[folder]

    async def record(
        self, refs: Iterable[tuple[DecisionRef, str]], written: Iterable[str]
    ) -> list[str]:
        """Record ``refs`` ((reference, the newer page's id)) and retry every pending one
        now that the pages ``written`` exist; returns the ids of the pages changed."""
        changed: list[str] = []
        refs = list(refs)
        folders = {ref.folder for ref, _ in refs}
        folders |= {pid.split("/", 1)[0] for pid in written}
        for folder_name in sorted(folders):
            folder = self.schema.folder(folder_name)
            pages = await self._decisions(folder_name)
            for page_id in written:
                if page_id.startswith(f"{folder_name}/"):
                    stored = await self.memory.get(page_id)
                    if stored is not None:
                        pages[page_id] = stored.page
            todo = [(ref, new_id) for ref, new_id in refs if ref.folder == folder_name]
            todo += [
                (ref, pid)
                for pid, page in list(pages.items())
                for ref in pending_refs(pid, page, folder)
                if (ref, pid) not in todo
            ]
            for ref, new_id in todo:
                others = {k: v for k, v in pages.items() if k != new_id}
                old_id = best_match(ref, others, folder)
                if old_id is None:
                    await self._update(new_id, pages, partial(_pending, ref=ref))
                    continue
                if ref.status == REVISED:
                    older: Callable[[Page], Page] = partial(
                        revised_page, folder=folder, ref=ref, new_id=new_id
                    )
                    title = pages[old_id].title
                    newer: Callable[[Page], Page] = partial(
                        revising_page, folder=folder, old_id=old_id, old_title=title, ref=ref
                    )
                else:
                    older = partial(reversed_page, folder=folder, ref=ref, new_id=new_id)
                    newer = partial(superseding_page, folder=folder, old_id=old_id, ref=ref)
                await self._update(old_id, pages, older)
                await self._update(new_id, pages, newer)
                changed += [old_id, new_id]
        return list(dict.fromkeys(changed))

    async def same_decision(self, folder: str, page_id: str | None, page: Page) -> str | None:
        """The stored decision ``page`` is, when ``page_id`` is new: one decided the same
        day whose title shares most words with its own (a decision record and the meeting
        that made it, an announcement the day after naming the meeting's day)."""
        spec = self.schema.folder(folder)
        assert spec.date_field is not None
        pages = await self._decisions(folder)
        if page_id in pages:
            return None
        day = as_date(page.fields.get(spec.date_field))
        mine = _words(page.title)
        found = [
            pid
            for pid, other in pages.items()
            if as_date(other.fields.get(spec.date_field)) == day
            and _similar(mine, _words(" ".join((other.title, *other.aliases))))
        ]
        return found[0] if len(found) == 1 else None

    def holds(self, folder: str) -> bool:
        """Whether ``folder`` holds decisions (dated, a lifecycle field, a supersede link)."""
        spec = self.schema.folder(folder)
        return bool(spec.date_field and lifecycle_field(spec) and supersede_fields(spec))

    def links(self, folder: str) -> bool:
        """Whether a page of ``folder`` may name an earlier one: a decision, or an
        incident whose root cause a later one revises."""
        return self.holds(folder) or cause_field(self.schema.folder(folder)) is not None

    async def _update(
        self, page_id: str, pages: dict[str, Page], change: Callable[[Page], Page]
    ) -> None:
        """Apply ``change`` to the stored page and put it (re-read on a version conflict)."""
        folder = page_id.split("/", 1)[0]
        for _ in range(WRITE_ATTEMPTS):
            stored = await self.memory.get(page_id)
            if stored is None:
                return
            page = change(stored.page)
            if page == stored.page:
                pages[page_id] = page
                return
            try:
                await self.memory.put(folder, page, page_id, stored.version)
            except ToolCallError as exc:
                if is_version_conflict(exc):
                    continue
                raise
            pages[page_id] = page
            return
        raise SourceFailed(page_id, f"{page_id}: kept changing while its reversal was recorded")


def _pending(page: Page, ref: DecisionRef) -> Page:
    question = pending_question(ref)
    if question in page.open_questions:
        return page
    return dataclasses.replace(page, open_questions=(*page.open_questions, question))
