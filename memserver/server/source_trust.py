"""The write gate on the server's write path: a page put from a note below *trusted*.

``kb_put_page`` calls :func:`gate_put` before it stores a page. The notes a write comes
from are the one it names (``source``, which the ingest agent always sends) and those it
adds to the page's sources or timeline; the server reads each note itself (its folder,
its channel, who wrote it: ``memserver.kb.trust``), so the level never rests on what a
client says about the note, and the weakest one counts. A write that comes from no note
is its token holder's own edit (the audit log names the token) and is not gated; a
person's decision in the console is not a page put at all.

What the level lets through, and how the rest waits for a person, is
:mod:`memserver.kb.trust_gate`. The gate holds whatever the agent's logic was, with a
model or without one: the server compares the stored page with the page sent.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memserver.errors import MemoryError_, NotFoundError, PageValidationError
from memserver.kb.frontmatter import read_frontmatter
from memserver.kb.page import Page, page_slug
from memserver.kb.trust import Standing, note_authors, note_channel, rule_key
from memserver.kb.trust_gate import Gated, gate
from memserver.store.records import ConflictRecord

if TYPE_CHECKING:
    from memserver.kb.schema import FolderSpec
    from memserver.server.tools.base import Services

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GatedPut:
    """What ``kb_put_page`` stores: the page, its conflicts rows and review reason, and
    the proposals that wait (for the tool's answer)."""

    page: Page
    conflicts: tuple[ConflictRecord, ...]
    review: str | None
    held: tuple[dict[str, Any], ...] = ()


def gate_put(
    services: Services,
    spec: FolderSpec,
    slug: str | None,
    page: Page,
    base_version: int | None,
    source: str | None,
    conflicts: Sequence[ConflictRecord],
    review: str | None,
) -> GatedPut:
    """The write as the notes it comes from may make it (see the module docstring)."""
    plain = GatedPut(page, tuple(conflicts), review)
    refused, stored = _stored(services, spec, slug, page, base_version)
    if refused:
        return plain  # the put itself will refuse it (stale or existing)
    notes = _notes(source, page, stored)
    if not notes:
        return plain
    standings = [(note, note_standing(services, note)) for note in notes]
    note, standing = min(standings, key=lambda pair: pair[1].level)
    gated = gate(stored, page, spec, note, standing)
    if not gated.held:
        return plain
    logger.info(
        "%s/%s: %d change(s) from %s wait for review (%s)",
        spec.name,
        slug or gated.page.title,
        len(gated.held),
        note,
        standing.why,
    )
    return GatedPut(
        gated.page,
        _rows(gated, conflicts),
        "; ".join(r for r in (review, gated.reason) if r) or None,
        tuple(
            {"field": h.field, "proposed": h.proposed, "kept": h.kept, "why": h.why}
            for h in gated.held
        ),
    )


def note_standing(services: Services, note: str) -> Standing:
    """The level of the note at ``note`` (relative to ``source/``), read from the note."""
    rules = services.schema().trust
    try:
        text, _ = services.manifest().read_text(note)
    except (MemoryError_, OSError, ValueError) as exc:
        # a note gone or unreadable: its folder says what it is; no author can lower it
        logger.debug("trust of %s from its path only: %s", note, exc)
        return rules.standing(note)
    front = read_frontmatter(text)
    return rules.standing(note, note_channel(front), note_authors(text, front))


def _stored(
    services: Services, spec: FolderSpec, slug: str | None, page: Page, base_version: int | None
) -> tuple[bool, Page | None]:
    """(whether the put will be refused anyway: a stale ``base_version``, a page that
    exists already; the stored page the write replaces, None for a new page)."""
    kb = services.kb()
    try:
        target = f"{spec.name}/{slug or page_slug(page, spec)}"
        found = kb.get_page(target)
    except NotFoundError:
        return base_version is not None, None
    except PageValidationError:
        return True, None
    if base_version is None or found.version != base_version:
        return True, None
    return False, found.page


def _notes(source: str | None, page: Page, stored: Page | None) -> list[str]:
    """The notes this write comes from: the one it names, and those it adds to the
    page's sources or timeline."""
    before: set[str] = set()
    if stored is not None:
        before = {rule_key(s) for s in _cited(stored)}
    named = [source] if source and source.strip() else []
    added = [s for s in _cited(page) if rule_key(s) not in before]
    notes: dict[str, str] = {}  # one per note however it is spelled; as the note names it
    for name in (n.strip().removeprefix("source/") for n in [*named, *added]):
        if rule_key(name):
            notes.setdefault(rule_key(name), name)
    return list(notes.values())


def _cited(page: Page) -> list[str]:
    """The notes a page names: its sources, and its timeline lines' sources."""
    return list(dict.fromkeys([*page.sources, *(e.source for e in page.timeline if e.source)]))


def _rows(gated: Gated, incoming: Sequence[ConflictRecord]) -> tuple[ConflictRecord, ...]:
    """The write's conflicts rows: those sent, less the ``superseded`` and ``resolved``
    ones of a change that now waits (it did not happen: the value it replaced still
    holds, and a conflict it would settle stays open), and one ``review:`` row per
    proposal."""
    waiting = {h.field for h in gated.held}
    undone = ("superseded", "resolved")
    kept = [c for c in incoming if not (c.status in undone and c.field in waiting)]
    held = [
        ConflictRecord(
            field=h.field,
            old_value=h.kept,
            new_value=h.proposed,
            old_source=None,
            new_source=gated.source,
            status="unresolved",
            note=gated.note(h),
        )
        for h in gated.held
    ]
    return (*kept, *held)
