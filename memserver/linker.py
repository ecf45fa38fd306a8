"""Self-wiring: a page's typed edges, computed without any LLM call.

Where edges come from (``extract_links``, pure)
    * ``link``/``links`` fields: the field's ``verb`` (else its name) to the field's folder;
    * the folder's ``link_verbs`` patterns in section and timeline prose: "reports to
      Alice Chen" gives ``reports_to`` -> people "Alice Chen". The target is the wikilink
      or markdown link right after the pattern, else the run of capitalised words there.
      (A name is never looked up in the database here: what a page links to must not
      depend on which pages happen to exist yet.)
    * ``[[wikilinks]]`` (``[[people/alice-chen]]``, ``[[Alice Chen]]``,
      ``[[alice-chen|Alice]]``) and markdown links to pages
      (``[Alice](../people/alice-chen.md)``), both with the verb ``mentions``.

How a reference finds its page (``write_links_many`` / ``rewire`` / ``unwire_many``)
    Names are compared in one form only, ``db.normalize_name`` (NFKC, case-folded,
    punctuation collapsed), so "Bob Martinez", "bob-martinez" and "BOB_martinez" are the
    same name. A page answers to its title, its slug and its aliases. A reference may
    name a folder (``links.to_folder``: the field's folder, the verb's ``to``, the folder
    in a wikilink path); then only pages of that folder match. Title and slug matches
    win over alias matches; when two pages match equally (two people called "Alex"),
    the edge stays unresolved (``to_id`` NULL) instead of guessing. A reference to the
    page itself is dropped.

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
import functools
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import psycopg

from memserver.db import normalize_name
from memserver.errors import UserError
from memserver.intent import mn_stems
from memserver.layout import slugify
from memserver.page import Page
from memserver.schema import FolderSpec, Schema

ORIGINS = ("field", "prose", "wikilink", "mdlink")
MENTIONS = "mentions"
_FORMS_SEP = "\x1f"
# How many capitalised words after a link-verb pattern make a name ("Maria de la Cruz"
# has connectors; we stop at the first lower-case word instead of guessing).
_MAX_NAME_WORDS = 5

_WIKILINK = re.compile(r"\[\[([^\[\]\n|#]+)(?:#[^\[\]\n|]*)?(?:\|([^\[\]\n]*))?\]\]")
_MDLINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_WORD = re.compile(r"[^\W_](?:[\w'’-]*[^\W_])?")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


@dataclass(frozen=True)
class LinkRef:
    """One outgoing reference of a page, before it is matched to a page id."""

    verb: str
    target_ref: str  # the name or slug as written (no folder prefix, no ".md")
    to_folder: str | None  # the folder it must be in, when the reference says so
    origin: str  # "field" | "prose" | "wikilink" | "mdlink"
    # Other readings of the name, tried in turn when ``target_ref`` names no page (a
    # name before a Mongolian verb carries a case ending: "Ганбаатарт" -> "Ганбаатар").
    forms: tuple[str, ...] = ()

    @property
    def norm(self) -> str:
        return normalize_name(self.target_ref)


@dataclass(frozen=True)
class StoredLink:
    """An edge as stored: ``to_id`` is None while no single page answers to the name."""

    verb: str
    to_ref: str
    to_folder: str | None
    to_id: str | None
    origin: str


# --------------------------------------------------------------------------- extraction


def split_target(raw: str, folders: Collection[str]) -> tuple[str | None, str]:
    """``"people/alice-chen.md"`` -> ``("people", "alice-chen")``; no known folder -> None."""
    text = raw.strip().removeprefix("knowledge/")
    if text.lower().endswith(".md"):
        text = text[:-3]
    head, sep, tail = text.partition("/")
    if sep and head in folders and tail and "/" not in tail:
        return head, tail.strip()
    return None, text.strip()


def _field_values(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)] if str(value).strip() else []


def clean_ref(value: str) -> str:
    """A link field value as models write it: ``[[Alice Chen|Alice]]`` -> ``Alice Chen``."""
    text = value.strip()
    if match := _WIKILINK.fullmatch(text):
        return match.group(1).strip()
    if match := _MDLINK.fullmatch(text):
        return match.group(2).strip()
    return text


def _wikilink_ref(match: re.Match[str], verb: str, folders: Collection[str]) -> LinkRef | None:
    folder, name = split_target(match.group(1), folders)
    return LinkRef(verb, name, folder, "wikilink") if name else None


def _mdlink_ref(target: str, verb: str, current: str, folders: Collection[str]) -> LinkRef | None:
    """A markdown link target naming a page: ``../people/alice-chen.md``, ``people/x``,
    ``alice-chen.md`` (same folder). URLs, anchors and other files are not pages."""
    if _URL_SCHEME.match(target) or target.startswith(("#", "//")):
        return None
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]
    if parts and parts[0] == "knowledge":
        parts = parts[1:]
    if not parts:
        return None
    last = parts[-1]
    is_md = last.lower().endswith(".md")
    if is_md:
        last = last[:-3]
    elif "." in last:  # another kind of file (image, pdf, ...)
        return None
    if len(parts) >= 2 and parts[-2] in folders:
        folder: str | None = parts[-2]
    elif len(parts) == 1 and is_md:
        folder = current
    else:
        return None
    return LinkRef(verb, last.strip(), folder, "mdlink") if last.strip() else None


def _name_before(text: str) -> list[str]:
    """The run of capitalised words that ends ``text`` ("... Бат Ганбаатарт" ->
    ["Бат", "Ганбаатарт"]), at most _MAX_NAME_WORDS."""
    words: list[str] = []
    for token in reversed(text.split()):
        word = token.strip(",;:()\"'“”«»")
        if token != word and words:  # punctuation after a word ends the run before it
            break
        if not word or not _WORD.fullmatch(word) or not word[0].isupper():
            break
        words.insert(0, word)
        if len(words) == _MAX_NAME_WORDS or token != word:
            break
    return words


def _readings(words: list[str]) -> list[str]:
    """A name that stands before its verb, most likely reading first. The run may start
    with a capitalised word that is not part of the name (the sentence's first word), so
    every tail of it is a reading, longest first; each with the last word's case ending
    removed (longest ending first), then as written."""
    out: list[str] = []
    for start in range(len(words)):
        head = " ".join(words[start:-1])
        out += [f"{head} {stem}".strip() for stem in mn_stems(words[-1])]
        out.append(" ".join(words[start:]))
    return [*dict.fromkeys(out)]


def _capitalised_name(text: str) -> str | None:
    """The run of capitalised words at the start of ``text`` ("Alice Chen, VP" -> "Alice Chen")."""
    words: list[str] = []
    pos = 0
    while len(words) < _MAX_NAME_WORDS:
        gap = pos
        while gap < len(text) and text[gap] in " \t":
            gap += 1
        if words and gap == pos:  # words must be separated by a space
            break
        match = _WORD.match(text, gap)
        if match is None or not match.group(0)[0].isupper():
            break
        word = match.group(0)
        stripped = _POSSESSIVE.sub("", word)
        words.append(stripped)
        pos = match.end()
        if stripped != word:  # "Alice's team": the name ends at the possessive
            break
    return " ".join(words) or None


@functools.lru_cache(maxsize=1024)
def _pattern(phrase: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in phrase.split()]
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)


def _prose_refs(text: str, folder: FolderSpec, folders: Collection[str]) -> Iterator[LinkRef]:
    for link_verb in folder.link_verbs:
        for phrase in link_verb.phrases:
            if not phrase.text:
                continue
            for hit in _pattern(phrase.text).finditer(text):
                if phrase.name_first:
                    words = _name_before(text[: hit.start()])
                    if words:
                        first, *others = _readings(words)
                        yield LinkRef(link_verb.verb, first, link_verb.to, "prose", tuple(others))
                    continue
                rest = text[hit.end() :]
                after = rest.lstrip(" \t:")
                if wiki := _WIKILINK.match(after):
                    wfolder, name = split_target(wiki.group(1), folders)
                    if name:
                        yield LinkRef(link_verb.verb, name, wfolder or link_verb.to, "prose")
                    continue
                if md := _MDLINK.match(after):
                    ref = _mdlink_ref(md.group(2), link_verb.verb, folder.name, folders)
                    if ref is not None:
                        yield LinkRef(ref.verb, ref.target_ref, ref.to_folder, "prose")
                    continue
                if person := _capitalised_name(after):
                    yield LinkRef(link_verb.verb, person, link_verb.to, "prose")


def _link_refs(text: str, current: str, folders: Collection[str]) -> Iterator[LinkRef]:
    for wiki in _WIKILINK.finditer(text):
        if ref := _wikilink_ref(wiki, MENTIONS, folders):
            yield ref
    for md in _MDLINK.finditer(text):
        if ref := _mdlink_ref(md.group(2), MENTIONS, current, folders):
            yield ref


def _prose(page: Page) -> list[str]:
    return [*page.sections.values(), *(entry.text for entry in page.timeline)]


def extract_links(page: Page, folder: FolderSpec, schema: Schema) -> list[LinkRef]:
    """Every outgoing reference of ``page`` (fields, link-verb prose, wikilinks, md links).

    Deterministic, no I/O. One reference per (verb, normalised name, origin), in the
    order found; references whose name has no letters or digits are dropped.
    """
    folders = schema.folder_names
    refs: list[LinkRef] = []
    for spec in folder.fields:
        if not spec.is_link:
            continue
        for value in _field_values(page.fields.get(spec.name)):
            target_folder, name = split_target(clean_ref(value), folders)
            refs.append(
                LinkRef(spec.verb or spec.name, name, target_folder or spec.folder, "field")
            )
    texts = _prose(page)
    for text in texts:
        refs.extend(_prose_refs(text, folder, folders))
    for text in texts:
        refs.extend(_link_refs(text, folder.name, folders))
    seen: set[tuple[str, str, str]] = set()
    out: list[LinkRef] = []
    for ref in refs:
        key = (ref.verb, ref.norm, ref.origin)
        if ref.norm and key not in seen:
            seen.add(key)
            out.append(ref)
    return out


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
