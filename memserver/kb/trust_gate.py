"""The write gate: what a note below *trusted* may change at once, and what waits.

A page write that comes from a note (it names the note, or adds it to the page's
sources) is compared with the stored page, change by change, against the note's level
(:mod:`memserver.kb.trust`):

- **trusted**: everything is written at once.
- **ordinary**: a new page and an addition to a page (a value where there was none, an
  item added to a list, text added to a section or a new section, a dated timeline
  line, a name) are written at once; a change to what a page holds (a value replaced
  or removed, a section rewritten or removed, the title) waits, and so does a dated
  line the same write adds (it may tell of the change: "status changed to churned").
- **untrusted**: a new page is written but flagged for review; every addition and
  change to an existing page waits.
- whatever the level below trusted: a decision's status, or a supersede link, set or
  changed on any page, waits (a new page that supersedes another is written with its
  draft status, ``proposed``).

*Waits* means what the ingest agent's own review policy does
(``ingest_agent/llm/review.py``), so the console and ``memserver review`` show both
alike: the page keeps its stored value; the proposal is an ``unresolved`` conflicts row
whose note is ``review: <note> proposes <why>``; the page gets the Open Question
``Review: <note> proposes <why>; held back until a person checks it``; and the version is
listed for review. Accepting the row applies it (``memserver.store.held``). A new page
that waits on its status is written with the lifecycle field's draft value (a
``proposed`` decision). Nothing a write proposes is lost, and nothing stored is lost by
a gated write: a timeline line, an alias, an Open Question or a source it leaves out is
kept.

Pure page arithmetic: the caller gives the note's standing and the stored page.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memserver.kb.lifecycle import draft_value, lifecycle_field, supersede_fields
from memserver.kb.page_model import Page
from memserver.kb.schema_model import FolderSpec
from memserver.kb.trust import Level, Standing, rule_key

NOTE_PREFIX = "review: "  # the conflicts row's note (memserver.store.held reads it)
QUESTION_PREFIX = "Review: "  # the page's Open Question
QUESTION_END = "; held back until a person checks it"
_EMPTY: tuple[Any, ...] = (None, "", (), [])
_LIST_TYPES = frozenset({"links", "list"})


@dataclass(frozen=True)
class Held:
    """One proposal that waits: ``field`` (a field name, ``## <Section>``, or ``_title``,
    ``_aliases``, ``_timeline``), the value kept and the value proposed, and why."""

    field: str
    kept: Any
    proposed: Any
    why: str


@dataclass(frozen=True)
class Gated:
    """The page to write, and what waits (empty: the write goes through as sent)."""

    page: Page
    held: tuple[Held, ...]
    source: str
    standing: Standing

    def note(self, held: Held) -> str:
        return f"{NOTE_PREFIX}{self.source} proposes {held.why}"

    def question(self, held: Held) -> str:
        return f"{QUESTION_PREFIX}{self.source} proposes {held.why}{QUESTION_END}"

    @property
    def reason(self) -> str | None:
        """The review reason of the write (None when nothing waits)."""
        notes = [self.note(h).removeprefix(NOTE_PREFIX) for h in self.held]
        return "; ".join(dict.fromkeys(notes)) or None


def gate(
    stored: Page | None, proposed: Page, spec: FolderSpec, source: str, standing: Standing
) -> Gated:
    """``proposed`` as the note's level lets it be written (see the module docstring)."""
    if standing.level >= Level.TRUSTED:
        return Gated(proposed, (), source, standing)
    check = _Check(spec, standing)
    if stored is None:
        page = check.new_page(proposed)
    else:
        page = check.update(stored, proposed)
        if _only_from(stored, source):
            # the note's own page (a decision it wrote a moment ago, its supersede link
            # coming in a second write): it waits as a new page's would
            page = check.drafted(page)
    if not check.held:
        return Gated(proposed, (), source, standing)
    gated = Gated(page, tuple(check.held), source, standing)
    questions = [*page.open_questions, *(gated.question(h) for h in check.held)]
    page = dataclasses.replace(page, open_questions=tuple(dict.fromkeys(questions)))
    return dataclasses.replace(gated, page=page)


class _Check:
    def __init__(self, spec: FolderSpec, standing: Standing) -> None:
        self.spec = spec
        self.standing = standing
        self.untrusted = standing.level <= Level.UNTRUSTED
        self.life = lifecycle_field(spec)
        self.standing_fields = {f.name for f in supersede_fields(spec)}
        if self.life is not None:
            self.standing_fields.add(self.life.name)
        self.held: list[Held] = []

    def _hold(self, field: str, kept: Any, proposed: Any, what: str) -> None:
        self.held.append(
            Held(field, _plain(kept), _plain(proposed), f"{what} ({self.standing.why})")
        )

    # -- a new page ------------------------------------------------------------------

    def new_page(self, page: Page) -> Page:
        fields = dict(page.fields)
        for name in sorted(self.standing_fields - {self.life.name if self.life else ""}):
            if fields.get(name) not in _EMPTY:
                self._hold(
                    name,
                    None,
                    fields.pop(name),
                    f"that this {_verb(name)} “{_show(page.fields[name])}”",
                )
        if self.untrusted:
            self._hold("_page", None, None, f"a new {self.spec.type} page, “{page.title}”")
        return self.drafted(dataclasses.replace(page, fields=fields))

    def drafted(self, page: Page) -> Page:
        """A page of the note's own with a proposal waiting: its lifecycle field at its
        draft value (a ``proposed`` decision), the value it had waiting too."""
        draft = draft_value(self.life)
        if not self.held or self.life is None or draft is None:
            return page
        value = page.fields.get(self.life.name)
        if value == draft or any(h.field == self.life.name for h in self.held):
            return page
        self._hold(self.life.name, draft, value, _status_why(self.life.name, value))
        return dataclasses.replace(page, fields={**page.fields, self.life.name: draft})

    # -- an update -------------------------------------------------------------------

    def update(self, stored: Page, proposed: Page) -> Page:
        fields = self._fields(stored, proposed)
        sections = self._sections(stored, proposed)
        title = stored.title
        if proposed.title != stored.title:
            self._hold("_title", stored.title, proposed.title, f"the title “{proposed.title}”")
        aliases = _union(stored.aliases, proposed.aliases)
        if self.untrusted and set(aliases) != set(stored.aliases):
            added = [a for a in aliases if a not in stored.aliases]
            self._hold("_aliases", list(stored.aliases), added, f"the names {_show(added)}")
            aliases = stored.aliases
        timeline = tuple(dict.fromkeys([*stored.timeline, *proposed.timeline]))
        # a dated line may tell of a change that waits ("status changed to churned"):
        # it waits with it
        if (self.untrusted or self.held) and set(timeline) != set(stored.timeline):
            added = [e.to_dict() for e in timeline if e not in stored.timeline]
            self._hold("_timeline", None, added, f"{len(added)} timeline line(s)")
            timeline = stored.timeline
        page = dataclasses.replace(
            proposed,
            title=title,
            fields=fields,
            sections=sections,
            aliases=aliases,
            timeline=timeline,
            open_questions=_union(stored.open_questions, proposed.open_questions),
            sources=_union(stored.sources, proposed.sources),
        )
        if self.held and _same_content(page, stored):
            # nothing of the note's was written: it is not one of the page's sources yet
            page = dataclasses.replace(page, sources=stored.sources)
        return page

    def _fields(self, stored: Page, proposed: Page) -> dict[str, Any]:
        fields = dict(proposed.fields)
        for name in sorted(set(stored.fields) | set(proposed.fields)):
            old, new = stored.fields.get(name), proposed.fields.get(name)
            if _same(old, new):
                continue
            spec = self.spec.field(name)
            if name in self.standing_fields:
                what = (
                    _status_why(name, new)
                    if self.life is not None and name == self.life.name
                    else f"that this {_verb(name)} “{_show(new)}”"
                )
            elif old in _EMPTY:
                if not self.untrusted:
                    continue  # an addition
                what = f"its {name}: “{_show(new)}”"
            elif new in _EMPTY:
                what = f"to remove its {name} (“{_show(old)}”)"
            elif spec is not None and spec.type in _LIST_TYPES and _grows(old, new):
                if not self.untrusted:
                    continue  # items added to a list
                what = f"its {name}: “{_show(new)}”"
            else:
                what = f"that its {name} is now “{_show(new)}”"
            if old in _EMPTY:
                fields.pop(name, None)
            else:
                fields[name] = old
            self._hold(name, old, new, what)
        return fields

    def _sections(self, stored: Page, proposed: Page) -> Mapping[str, str]:
        sections = dict(proposed.sections)
        for name in sorted(set(stored.sections) | set(proposed.sections)):
            old, new = stored.sections.get(name), proposed.sections.get(name)
            if old == new:
                continue
            if old is None:
                if not self.untrusted:
                    continue  # a new section
                what = f"a {name} section"
            elif new is None:
                what = f"to remove its {name} section"
            elif _keeps(old, new):
                if not self.untrusted:
                    continue  # text added to the section
                what = f"text added to its {name} section"
            else:
                what = f"a rewrite of its {name} section"
            if old is None:
                sections.pop(name, None)
            else:
                sections[name] = old
            self._hold(f"## {name}", old, new, what)
        return sections


def _status_why(name: str, value: Any) -> str:
    return f"that its {name} is now {_show(value)}"


def _verb(name: str) -> str:
    return "is superseded by" if name == "superseded_by" else name.replace("_", " ")


def _show(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return " ".join(str(value).split())[:200]


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _same(old: Any, new: Any) -> bool:
    if old in _EMPTY and new in _EMPTY:
        return True
    return bool(_plain(old) == _plain(new))


def _grows(old: Any, new: Any) -> bool:
    """Whether list ``new`` keeps every item of ``old`` (items were only added)."""
    before = old if isinstance(old, list | tuple) else [old]
    after = new if isinstance(new, list | tuple) else [new]
    return all(item in after for item in before)


def _keeps(old: str, new: str) -> bool:
    """Whether section text ``new`` keeps every paragraph of ``old`` (text was only added)."""
    paragraphs = [" ".join(p.split()) for p in old.split("\n\n") if p.strip()]
    flat = " ".join(new.split())
    return all(p in flat for p in paragraphs)


def _only_from(stored: Page, source: str) -> bool:
    """Whether every source of ``stored`` is the note ``source``."""
    cited = {rule_key(s) for s in stored.sources}
    return bool(cited) and cited == {rule_key(source)}


def _union(first: Sequence[Any], second: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys([*first, *second]))


def _same_content(page: Page, stored: Page) -> bool:
    """The page says what ``stored`` says (its sources and Open Questions aside)."""
    return (
        page.title == stored.title
        and dict(page.fields) == dict(stored.fields)
        and dict(page.sections) == dict(stored.sections)
        and set(page.timeline) == set(stored.timeline)
        and set(page.aliases) == set(stored.aliases)
    )
