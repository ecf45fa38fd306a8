"""Self-wiring: a page's typed edges, computed without any LLM call.

Where edges come from: ``memserver.graph.link_refs.extract_links`` (pure: fields, link-verb
prose, wikilinks, markdown links; re-exported here).

How a reference finds its page (``write_links_many`` / ``rewire`` / ``unwire_many``)
    Names are compared in one form only, ``kb.words.normalize_name`` (NFKC, case-folded,
    punctuation collapsed), so "Bob Martinez", "bob-martinez" and "BOB_martinez" are the
    same name. A page answers to its title, its slug and its aliases. A reference may
    name a folder (``links.to_folder``: the field's folder, the verb's ``to``, the folder
    in a wikilink path); then only pages of that folder match. Title and slug matches
    win over alias matches; when two pages match equally (two people called "Alex"),
    the edge stays unresolved (``to_id`` NULL) instead of guessing. A reference to the
    page itself is dropped. A reference with other readings (``LinkRef.forms``: a name
    written before its verb) points at the first reading that names a page; the readings
    are stored with the edge (``links.to_ref_forms``) so ``rewire`` tries them too.

    Resolution depends only on the set of pages, never on the order they were written:
    an edge to a page that does not exist yet is stored with ``to_id`` NULL, and every
    write of a page re-resolves the edges whose name it answers to (``rewire``),
    so writing the meeting before or after its attendees gives identical edges.

How a name is looked up (``find_named``)
    By equality only: ``pages.title_norm`` and ``pages.slug_norm`` (migration 003, the
    normalised title and slug stored with every row) and ``page_aliases.alias_norm``,
    so a lookup costs the same however many pages share a name's words.

Call order inside the write transaction (``indexer.write_pages``, used by
``kb.put_page`` and reindex), after the pages' rows and ``page_aliases`` are stored::

    previous = page_names_many(conn, ids)           # before the update
    ... upsert pages rows, replace page_aliases ...
    write_links_many(conn, [PageRefs(id, folder, extract_links(page, spec, schema)), ...])
    rewire(conn, ids, <every name of these pages, new and previous>)

For one page: ``link_page(conn, page_id, page, spec, schema, slug, previous)``
(``write_links`` + ``wire_pending``). Before pages are deleted, call
``unwire_many(conn, ids)``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from memserver.errors import UserError
from memserver.graph.link_refs import (
    MENTIONS,
    ORIGINS,
    LinkRef,
    clean_ref,
    extract_links,
    split_target,
)
from memserver.kb.layout import slugify
from memserver.kb.page import Page
from memserver.kb.schema import FolderSpec, Schema
from memserver.kb.words import normalize_name

__all__ = [
    "MENTIONS",
    "ORIGINS",
    "LinkRef",
    "NamedPage",
    "PageRefs",
    "StoredLink",
    "backfill_names",
    "clean_ref",
    "extract_links",
    "find_named",
    "link_page",
    "page_name_set",
    "page_names",
    "page_names_many",
    "rewire",
    "split_target",
    "unwire",
    "unwire_many",
    "wire_pending",
    "write_links",
    "write_links_many",
]

_FORMS_SEP = "\x1f"  # joins a link's readings on their way into links.to_ref_forms


@dataclass(frozen=True)
class StoredLink:
    """An edge as stored: ``to_id`` is None while no single page answers to the name."""

    verb: str
    to_ref: str
    to_folder: str | None
    to_id: str | None
    origin: str


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class NamedPage:
    """A page and the normalised names it answers to."""

    id: str
    folder: str
    title: str
    slug: str
    effective_date: dt.date | None
    primary: frozenset[str]  # from the title and the slug
    aliases: frozenset[str]

    def answers_to(self, norm: str) -> bool:
        return norm in self.primary or norm in self.aliases


def page_name_set(title: str, slug: str, aliases: Iterable[str] = ()) -> frozenset[str]:
    """Every normalised name a page answers to (title, slug, aliases)."""
    names = {normalize_name(title), normalize_name(slug), *(normalize_name(a) for a in aliases)}
    names.discard("")
    return frozenset(names)


def _slug_guess(norm: str) -> str | None:
    try:
        return slugify(norm)
    except UserError:
        return None


def title_pattern(norm: str) -> str:
    """An ILIKE pattern every title whose normalised form is ``norm`` matches
    (``"globex kickoff"`` -> ``"%globex%kickoff%"``); the trigram index serves it."""
    return "%" + "%".join(norm.split()) + "%"


def find_named(conn: psycopg.Connection[Any], norms: Collection[str]) -> dict[str, NamedPage]:
    """Every page answering to one of ``norms`` (normalised names), in any folder.

    Equality lookups only: ``pages.title_norm`` / ``pages.slug_norm`` (the normalised
    title and slug, stored with the row) and ``page_aliases.alias_norm``, so the cost
    does not grow with the number of pages sharing words with a name. Rows written
    before those columns existed (``title_norm`` NULL until ``backfill_names``) are
    found by the slug, the lower-case title and the title pattern instead, which may
    also return near misses: check with ``NamedPage.answers_to``. The linker and the
    resolver both find pages through here, so they always agree on what a name means.
    """
    names = sorted({n for n in norms if n})
    if not names:
        return {}
    slugs = sorted({s for s in map(_slug_guess, names) if s})
    # A pattern without a three-letter word has no trigram to search the index with
    # (it would scan every title); such short names match lower-case titles exactly.
    long = [n for n in names if any(len(w) >= 3 for w in n.split())]
    short = [n for n in names if n not in long]
    rows = conn.execute(
        "WITH hit AS ("
        "  SELECT id FROM pages WHERE title_norm = ANY(%(names)s)"
        "  UNION SELECT id FROM pages WHERE slug_norm = ANY(%(names)s)"
        "  UNION SELECT page_id FROM page_aliases WHERE alias_norm = ANY(%(names)s)"
        "  UNION SELECT id FROM pages WHERE title_norm IS NULL"
        "   AND (slug = ANY(%(slugs)s) OR lower(title) = ANY(%(short)s))"
        "  UNION SELECT p.id FROM unnest(%(patterns)s::text[]) AS q(pattern)"
        "   CROSS JOIN LATERAL (SELECT id FROM pages"
        "    WHERE title_norm IS NULL AND title ILIKE q.pattern) AS p)"
        " SELECT p.id, p.folder, p.title, p.slug, p.effective_date,"
        "  coalesce((SELECT array_agg(a.alias_norm) FROM page_aliases a"
        "            WHERE a.page_id = p.id), '{}')"
        " FROM hit JOIN pages p ON p.id = hit.id",
        {
            "slugs": slugs,
            "names": names,
            "short": short,
            "patterns": [title_pattern(n) for n in long],
        },
    ).fetchall()
    return {
        page_id: NamedPage(
            page_id, folder, title, slug, day, page_name_set(title, slug), frozenset(aliases)
        )
        for page_id, folder, title, slug, day, aliases in rows
    }


def backfill_names(conn: psycopg.Connection[Any]) -> int:
    """Fill in ``title_norm``/``slug_norm`` of rows written without them (before
    migration 003); returns how many rows were updated."""
    rows = conn.execute("SELECT id, title, slug FROM pages WHERE title_norm IS NULL").fetchall()
    if rows:
        conn.execute(
            "UPDATE pages SET title_norm = u.title_norm, slug_norm = u.slug_norm"
            " FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(id, title_norm, slug_norm)"
            " WHERE pages.id = u.id",
            (
                [r[0] for r in rows],
                [normalize_name(r[1]) for r in rows],
                [normalize_name(r[2]) for r in rows],
            ),
        )
    return len(rows)


_SELF = "\x00self"


class _Names:
    """Pages found by ``find_named``, looked up by the names they answer to."""

    def __init__(self, pages: Iterable[NamedPage]) -> None:
        self.by_name: dict[str, list[NamedPage]] = {}
        for page in pages:
            for name in page.primary | page.aliases:
                self.by_name.setdefault(name, []).append(page)

    def choose(self, norm: str, to_folder: str | None, from_id: str) -> str | None:
        return _choose(self.by_name.get(norm, ()), norm, to_folder, from_id)

    def choose_first(
        self, readings: Sequence[str], to_folder: str | None, from_id: str
    ) -> str | None:
        """The page the first reading that names one names (``choose`` in turn)."""
        for norm in readings:
            target = self.choose(norm, to_folder, from_id)
            if target is not None:
                return target
        return None


def _choose(
    pages: Iterable[NamedPage], norm: str, to_folder: str | None, from_id: str
) -> str | None:
    """The one page a reference means; ``_SELF`` for the page itself; None if unsure."""
    fitting = [p for p in pages if to_folder is None or p.folder == to_folder]
    primary = sorted(p.id for p in fitting if norm in p.primary)
    alias = sorted(p.id for p in fitting if norm in p.aliases and norm not in p.primary)
    if from_id in primary or from_id in alias:
        return _SELF
    for tier in (primary, alias):
        if len(tier) == 1:
            return tier[0]
        if len(tier) > 1:
            return None  # ambiguous: never guessed
    return None


# --------------------------------------------------------------------------- SQL part


@dataclass(frozen=True)
class PageRefs:
    """A written page and its outgoing references (``extract_links``)."""

    page_id: str
    folder: str
    refs: Sequence[LinkRef]


def write_links_many(
    conn: psycopg.Connection[Any], pages: Sequence[PageRefs], *, fresh: Collection[str] = ()
) -> dict[str, list[StoredLink]]:
    """``write_links`` for several pages at once: one name lookup for all their
    references, one DELETE and one INSERT. ``fresh``: pages just inserted in this
    transaction, which have no edges to delete yet. Returns what was stored, by id."""
    unique: dict[str, dict[tuple[str, str, str], LinkRef]] = {}
    for page in pages:
        mine = unique.setdefault(page.page_id, {})
        mine.clear()  # a page given twice: its last references win, as with two writes
        for ref in page.refs:
            if ref.origin not in ORIGINS:
                raise ValueError(f"unknown link origin {ref.origin!r}")
            if ref.norm:
                mine.setdefault((ref.verb, ref.norm, ref.origin), ref)
    folders = {page.page_id: page.folder for page in pages}
    wanted = {key[1] for mine in unique.values() for key in mine}
    wanted |= {
        normalize_name(f) for refs in unique.values() for r in refs.values() for f in r.forms
    }
    names = _Names(find_named(conn, wanted).values())
    stored: dict[str, list[StoredLink]] = {}
    rows: list[tuple[str, str, str, str | None, str, str, str | None, str, list[str]]] = []
    for page_id, mine in unique.items():
        out = stored.setdefault(page_id, [])
        for (verb, norm, origin), ref in mine.items():
            forms = [normalize_name(f) for f in ref.forms]
            target = names.choose_first([norm, *forms], ref.to_folder, page_id)
            if target == _SELF:
                continue
            out.append(StoredLink(verb, ref.target_ref, ref.to_folder, target, origin))
            rows.append(
                (
                    page_id,
                    folders[page_id],
                    verb,
                    target,
                    ref.target_ref,
                    norm,
                    ref.to_folder,
                    origin,
                    forms,
                )
            )
    replaced = sorted(set(unique) - set(fresh))
    if replaced:
        conn.execute("DELETE FROM links WHERE from_id = ANY(%s)", (replaced,))
    if rows:
        columns = [list(column) for column in zip(*rows, strict=True)]
        # unnest() flattens an array of arrays, so each row's readings travel as one
        # string joined by the unit separator (never part of a normalised name).
        columns[-1] = [_FORMS_SEP.join(forms) for forms in columns[-1]]
        conn.execute(
            "INSERT INTO links (from_id, from_folder, verb, to_id, to_ref, to_ref_norm,"
            " to_folder, origin, to_ref_forms)"
            " SELECT f, ff, v, t, r, n, tf, o,"
            " CASE WHEN x = '' THEN '{}'::text[] ELSE string_to_array(x, %s) END"
            " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
            " %s::text[], %s::text[], %s::text[], %s::text[]) AS u(f, ff, v, t, r, n, tf, o, x)",
            [_FORMS_SEP, *columns],
        )
    return stored


def write_links(
    conn: psycopg.Connection[Any], page_id: str, folder: str, refs: Sequence[LinkRef]
) -> list[StoredLink]:
    """Replace every outgoing edge of ``page_id`` with ``refs``, each matched to a page.

    Runs in the caller's transaction. Unmatched (or ambiguous) references are kept with
    ``to_id`` None; references to the page itself are dropped. Returns what was stored.
    """
    return write_links_many(conn, [PageRefs(page_id, folder, refs)])[page_id]


def page_names_many(
    conn: psycopg.Connection[Any], page_ids: Collection[str]
) -> dict[str, frozenset[str]]:
    """The normalised names each of ``page_ids`` answers to now (absent pages left out)."""
    rows = conn.execute(
        "SELECT p.id, p.title, p.slug, coalesce((SELECT array_agg(a.alias_norm)"
        "  FROM page_aliases a WHERE a.page_id = p.id), '{}')"
        " FROM pages p WHERE p.id = ANY(%s)",
        (sorted(page_ids),),
    ).fetchall()
    return {
        page_id: page_name_set(title, slug) | {a for a in aliases if a}
        for page_id, title, slug, aliases in rows
    }


def page_names(conn: psycopg.Connection[Any], page_id: str) -> frozenset[str]:
    """The normalised names ``page_id`` answers to now (empty if it does not exist)."""
    return page_names_many(conn, [page_id]).get(page_id, frozenset())


def rewire(
    conn: psycopg.Connection[Any],
    page_ids: Collection[str],
    names: Collection[str],
    *,
    gone: Collection[str] = (),
) -> int:
    """Re-match every edge that names one of ``names`` or the name of an edge pointing
    at one of ``page_ids``; pages in ``gone`` count as deleted. Returns how many edges
    changed. Set-based: one query finds the edges, one ``find_named`` their pages."""
    wanted = sorted({n for n in names if n})
    rows = conn.execute(
        "WITH n AS (SELECT unnest(%(names)s::text[]) AS norm"
        "  UNION SELECT to_ref_norm FROM links WHERE to_id = ANY(%(ids)s))"
        " SELECT l.id, l.from_id, l.to_ref_norm, l.to_folder, l.to_id, l.to_ref_forms"
        " FROM links l JOIN n ON l.to_ref_norm = n.norm"
        " UNION ALL SELECT id, from_id, to_ref_norm, to_folder, to_id, to_ref_forms FROM links"
        " WHERE to_ref_forms <> '{}' AND to_ref_forms && %(names)s::text[]",
        {"names": wanted, "ids": sorted(page_ids)},
    ).fetchall()
    rows = list({row[0]: row for row in rows}.values())  # a link both ways found once
    if not rows:
        return 0
    found = find_named(conn, {n for row in rows for n in (row[2], *row[5])})
    pages = _Names(p for p in found.values() if p.id not in gone)
    updates: list[tuple[int, str | None]] = []
    deletes: list[int] = []
    for link_id, from_id, norm, to_folder, to_id, forms in rows:
        target = pages.choose_first([norm, *forms], to_folder, from_id)
        if target == _SELF:
            deletes.append(link_id)
        elif target != to_id:
            updates.append((link_id, target))
    if updates:
        conn.execute(
            "UPDATE links SET to_id = u.to_id"
            " FROM unnest(%s::bigint[], %s::text[]) AS u(id, to_id) WHERE links.id = u.id",
            ([u[0] for u in updates], [u[1] for u in updates]),
        )
    if deletes:
        conn.execute("DELETE FROM links WHERE id = ANY(%s)", (deletes,))
    return len(updates) + len(deletes)


def wire_pending(
    conn: psycopg.Connection[Any],
    page_id: str,
    folder: str,
    title: str,
    slug: str,
    aliases: Iterable[str] = (),
    previous: Collection[str] = (),
) -> int:
    """Re-match the edges the newly written ``page_id`` may be the target of.

    Call after the page's row and aliases are stored. ``previous``: the names it
    answered to before this write (``page_names`` before the update), so edges that
    a removed alias made ambiguous are re-matched too. Returns how many edges changed.
    """
    del folder  # the stored row carries it; kept in the signature for callers' clarity
    names = page_name_set(title, slug, aliases) | set(previous)
    return rewire(conn, [page_id], names)


def unwire_many(conn: psycopg.Connection[Any], page_ids: Collection[str]) -> int:
    """Before deleting ``page_ids``: re-match the edges that pointed at them or named
    them, as if they were gone. Their own outgoing edges are left to the cascade.
    Returns how many edges changed."""
    if not page_ids:
        return 0
    names = set().union(*page_names_many(conn, page_ids).values())
    return rewire(conn, page_ids, names, gone=set(page_ids))


def unwire(conn: psycopg.Connection[Any], page_id: str) -> int:
    """``unwire_many`` for one page (before deleting it or renaming it to a new id)."""
    return unwire_many(conn, [page_id])


def link_page(
    conn: psycopg.Connection[Any],
    page_id: str,
    page: Page,
    folder: FolderSpec,
    schema: Schema,
    slug: str,
    previous: Collection[str] = (),
) -> list[StoredLink]:
    """``write_links`` + ``wire_pending`` for one written page (see the module docstring)."""
    stored = write_links(conn, page_id, folder.name, extract_links(page, folder, schema))
    wire_pending(conn, page_id, folder.name, page.title, slug, page.aliases, previous)
    return stored
