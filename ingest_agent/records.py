"""What flows through the agent: a source as read, page drafts, and an extraction.

A :class:`Draft` is one page as a single source describes it: a ``memserver.kb.page.Page``
whose link fields still hold names as written ("Bob Martinez", "Алекс Ким"), plus the
folder it belongs in. The agent resolves those names, merges the draft into the stored
page (``pages/merge.py``) and writes the result.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ingest_agent.names import norm
from memserver.kb.lifecycle import (
    REVERSAL_VALUES,
    SUPERSEDE_VERBS,
    lifecycle_field,
    supersede_fields,
)
from memserver.kb.page import Page
from memserver.kb.schema import FieldSpec, FolderSpec

__all__ = [
    "REVERSAL_VALUES",
    "SUPERSEDE_VERBS",
    "lifecycle_field",
    "supersede_fields",
]


@dataclass(frozen=True)
class Source:
    """A source document as ``source_read`` returned it (private spans already redacted)."""

    path: str
    content: str
    hash: str
    doc_date: dt.date
    status: str = "pending"


@dataclass(frozen=True)
class Draft:
    """One page as one source describes it."""

    folder: str
    page: Page

    @property
    def title(self) -> str:
        return self.page.title


@dataclass(frozen=True)
class DecisionRef:
    """A record of a note that says, in the note's words, it reverses, supersedes or
    amends an earlier decision, or revises an earlier incident's root cause
    (:mod:`ingest_agent.extract.corrections`): named by a quoted title, a day, or the
    words of what it replaces."""

    folder: str
    title: str  # the newer decision's
    day: dt.date  # the newer decision's
    quoted: str | None
    on: dt.date | None  # the day the note gives the earlier decision
    words: str
    status: str  # what the earlier one becomes: reversed | superseded | amended | revised
    reason: str  # why; for a revised root cause, the cause now
    source: str
    earlier: str = ""  # for a revised root cause, the cause believed before (if said)


@dataclass(frozen=True)
class RoleClaim:
    """A note's statement that someone is now the one holder of a role ("Marcus Hale is
    Globex's new COO"): the earlier holder's claim to it ends (:mod:`ingest_agent.pages.holders`).
    ``org`` is the organisation's page title ("" when the note names none) and ``link``
    the person's field that names it (``company``)."""

    folder: str  # of the people
    holder: str  # the new holder's title, as the note names them
    field: str  # the job-title field (``role``)
    value: str  # the role ("COO")
    org: str
    link: str | None
    day: dt.date  # when it took effect
    source: str
    said: str  # the words that say it


@dataclass(frozen=True)
class Extraction:
    """Everything an extractor found in one source.

    ``extractor`` is "llm" or "rules" (recorded in the manifest); ``dropped`` says what
    was left out because the schema has no place for it; ``llm_calls`` and ``tokens``
    count what the extraction cost. ``field_dates`` says when a field's new value took
    effect, when the note says so ("promoted ..., effective 2026-09-21"), keyed by
    (folder, norm(title), field); a change is dated the note's date otherwise.
    ``filled`` names, per (folder, norm(title)), the fields a model filled in where the
    rules extractor found nothing (the small profile): a stored page's own value wins
    over those. ``degraded`` says why a configured model did not extract
    (``llm_unusable``, ``llm_timeout``, ``llm_unavailable``: the rules extractor did).
    ``reversals`` are the earlier decisions the note's own words say its decisions
    reverse or supersede; ``plain_facts`` the (folder, norm(title), field) values it
    states as plain facts, not as a change ("is $96,000", not "moved to ..."): two
    sources of about the same time stating different ones disagree. ``reasons`` say why
    the note became the pages it did (its folder, with the evidence), for the ledger.
    """

    drafts: tuple[Draft, ...]
    extractor: str
    dropped: tuple[str, ...] = ()
    llm_calls: int = 0
    tokens: int = 0
    field_dates: Mapping[tuple[str, str, str], dt.date] = field(default_factory=dict)
    filled: Mapping[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    degraded: tuple[str, ...] = ()
    reversals: tuple[DecisionRef, ...] = ()  # stated in the note's words (rules only)
    plain_facts: frozenset[tuple[str, str, str]] = frozenset()  # stated, not as a change
    reasons: tuple[str, ...] = ()  # why the note's pages are what they are (the ledger's)
    role_claims: tuple[RoleClaim, ...] = ()  # one-holder roles newly held (rules only)

    def filled_of(self, folder: str, names: Iterable[str]) -> frozenset[str]:
        """The fields a model filled in on the page of ``folder`` known by any of ``names``."""
        keys = {norm(n) for n in names}
        found: frozenset[str] = frozenset()
        for (fo, key), fields in self.filled.items():
            if fo == folder and key in keys:
                found |= fields
        return found

    def plain_of(self, folder: str, names: Iterable[str]) -> frozenset[str]:
        """The fields stated as plain facts for the page of ``folder`` known by ``names``."""
        keys = {norm(n) for n in names}
        return frozenset(f for fo, key, f in self.plain_facts if fo == folder and key in keys)

    def dates_of(self, folder: str, names: Iterable[str]) -> dict[str, dt.date]:
        """Field -> effective date for the page of ``folder`` known by any of ``names``."""
        keys = {norm(n) for n in names}
        return {
            f: d for (fo, key, f), d in self.field_dates.items() if fo == folder and key in keys
        }


@dataclass(frozen=True)
class StoredView:
    """A page as ``kb_get_page`` returned it."""

    id: str
    folder: str
    version: int
    page: Page


@dataclass
class SourceOutcome:
    """What happened to one source in a run (the ``--json`` summary has one per source)."""

    path: str
    status: str  # "ingested" | "failed" | "skipped" | "dry-run"
    pages: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    error: str | None = None
    extractor: str | None = None
    llm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    model_seconds: float = 0.0  # of ``seconds``, spent waiting for the model
    tool_calls: int = 0
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # left out: no place in the schema
    degraded: list[str] = field(default_factory=list)  # why the model's work was replaced
    reasons: list[str] = field(default_factory=list)  # why its pages are what they are

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "pages": list(self.pages),
            "changed": list(self.changed),
            "error": self.error,
            "extractor": self.extractor,
            "llm_calls": self.llm_calls,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 4),
            "model_seconds": round(self.model_seconds, 4),
            "tool_calls": self.tool_calls,
            "conflicts": list(self.conflicts),
            "dropped_count": len(self.dropped),
            "dropped": list(self.dropped),
            "degraded": list(self.degraded),
            "reasons": list(self.reasons),
        }


def is_dated(folder: FolderSpec) -> bool:
    """Event folders (meetings, decisions): one page per date, written after entities."""
    return bool(folder.date_field) or "{date}" in folder.slug.replace(" ", "")


def link_fields(folder: FolderSpec) -> tuple[tuple[str, str, bool], ...]:
    """``(field, target folder, many)`` for each link field of ``folder``."""
    return tuple(
        (spec.name, spec.folder, spec.type == "links")
        for spec in folder.fields
        if spec.is_link and spec.folder is not None
    )


def link_names(value: Any) -> list[str]:
    """The names a link/links field value holds, as written."""
    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    return [" ".join(str(item).split()) for item in items if str(item).strip()]


# --- decisions: the fields that say a page was superseded or reversed ---------------------
# (read from the schema in memserver.kb.lifecycle, which the server's write gate shares)


# --- corrections: an amended decision, a revised root cause -------------------------------

AMENDED = "amended"  # a DecisionRef's status: the earlier decision amended by the newer
REVISED = "revised"  # a DecisionRef's status: the earlier incident's root cause revised
CAUSE_FIELDS = ("root_cause", "cause")


def cause_field(folder: FolderSpec) -> FieldSpec | None:
    """The root-cause field of a dated folder (incidents), if it has one."""
    if not folder.date_field:
        return None
    for name in CAUSE_FIELDS:
        spec = folder.field(name)
        if spec is not None and spec.type in ("text", "string"):
            return spec
    return None
