"""Entity resolution: does a page for this name already exist?

``resolve`` ranks candidate pages, each saying why it matched:

=============  =====  ===========================================================
why            score  meaning
=============  =====  ===========================================================
exact_slug     1.0    the name is the page's slug ("bob-martinez", "people/bob-martinez")
exact_title    0.95   the name is the title, up to case, accents' composition, punctuation
alias_hit      0.95   the name is one of the page's aliases ("Bob", "Боб")
fuzzy_title    0..1   trigram similarity with the title or an alias (pg_trgm)
transliteration 0.9   the name sounds like the title or an alias in the other script
               0.8    ... like its first word ("Алис" ~ Alice Chen, "Batbayar" ~ Батбаяр Дорж)
semantic       0..1   cosine similarity of the name with the page's chunks (embedder)
=============  =====  ===========================================================

Names are compared in one form, ``kb.words.normalize_name`` (the same as the linker's).
Candidates are ranked by kind in that order, then by score. Semantic matching runs only
when nothing matched exactly, and only when the index has embeddings of the same model.

Pages of *dated* folders (a ``date_field`` or ``{date}`` in the slug) match only on the
given ``date`` when one is given: "Weekly sync" on two days is two pages.

Verdict for the caller
    ``exists``   exactly one page matched by slug, title or alias: use it;
    ``probable`` a good fuzzy/semantic match, or several equally good exact matches;
    ``new``      nothing close enough: create a page.
    ``ambiguous`` is true when two different pages match equally well (two people
    called "Alex"); the verdict is then never ``exists``, and both are listed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from memserver.clients.embed import Embedder
from memserver.db.database import Database
from memserver.db.vectors import vector_scan
from memserver.errors import NotFoundError, UserError
from memserver.graph.linker import clean_ref, find_named, split_target
from memserver.kb.schema import Schema
from memserver.kb.translit import loose_key, name_key
from memserver.kb.words import is_cyrillic, mn_stems, normalize_name

WHYS = ("exact_slug", "exact_title", "alias_hit", "fuzzy_title", "transliteration", "semantic")
STRONG = frozenset(("exact_slug", "exact_title", "alias_hit"))
_RANK = {
    "exact_slug": 0,
    "exact_title": 1,
    "alias_hit": 1,
    "fuzzy_title": 2,
    "transliteration": 2,
    "semantic": 3,
}
_SCORE = {"exact_slug": 1.0, "exact_title": 0.95, "alias_hit": 0.95}


@dataclass(frozen=True)
class ResolveSettings:
    """How names are resolved to pages: the scores of the weaker ways of matching and
    the scores from which a match is "probable"."""

    transliterated_whole: float = 0.9  # the whole name's key equals a title's or alias's
    transliterated_first: float = 0.8  # a one-word name's key equals a title's first word
    transliterated_probable: float = 0.75
    # Word similarity ("Bob" inside "Bob Martinez") counts a little less than similarity
    # of the whole title, so a full-name match ranks first.
    word_weight: float = 0.9
    fuzzy_probable: float = 0.5  # fuzzy score from which the verdict is "probable"
    semantic_min: float = 0.5  # semantic candidates below this are not listed
    semantic_probable: float = 0.9  # e5 similarities are compressed high
    tie: float = 0.005  # scores this close are "equally good"


RESOLVE = ResolveSettings()
_SEMANTIC_POOL = 50  # nearest chunks fetched before grouping by page


@dataclass(frozen=True)
class Candidate:
    id: str
    title: str
    folder: str
    score: float
    why: str  # one of WHYS
    effective_date: dt.date | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "folder": self.folder,
            "score": round(self.score, 4),
            "why": self.why,
            "effective_date": self.effective_date.isoformat() if self.effective_date else None,
        }


@dataclass(frozen=True)
class ResolveResult:
    name: str
    verdict: str  # "exists" | "probable" | "new"
    candidates: tuple[Candidate, ...]
    ambiguous: bool
    degraded: tuple[str, ...] = field(default=())

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "verdict": self.verdict,
            "ambiguous": self.ambiguous,
            "candidates": [c.to_dict() for c in self.candidates],
            "degraded": list(self.degraded),
        }


def dated_folders(schema: Schema | None) -> frozenset[str]:
    """Folders whose pages are events on one date (a date_field or {date} in the slug)."""
    if schema is None:
        return frozenset()
    return frozenset(
        f.name for f in schema.folders if f.date_field or "{date}" in f.slug.replace(" ", "")
    )


def as_date(value: dt.date | str | None) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    text = str(value).strip()
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        raise UserError(f"date {value!r} is not a date", "write YYYY-MM-DD") from None


def _key(c: Candidate) -> tuple[int, float, str]:
    return (_RANK[c.why], -c.score, c.id)


@dataclass(frozen=True)
class _Where:
    """Which pages a step may return: folders in ``scope`` (None = all), and pages of
    ``dated`` folders only on ``date`` when one is given."""

    scope: list[str] | None
    date: dt.date | None
    dated: frozenset[str]

    def admits(self, folder: str, day: dt.date | None) -> bool:
        if self.scope is not None and folder not in self.scope:
            return False
        return self.date is None or folder not in self.dated or day == self.date

    def params(self) -> dict[str, Any]:
        """The query parameters of ``_ON_DATE`` and a scope filter (``%(scope)s``)."""
        return {"scope": self.scope, "date": self.date, "dated": sorted(self.dated)}


# SQL condition on pages ``p`` matching ``_Where.admits``'s date rule.
_ON_DATE = "(%(date)s::date IS NULL OR p.folder <> ALL(%(dated)s) OR p.effective_date = %(date)s)"


def _exact(db: Database, name: str, norm: str, where: _Where) -> list[Candidate]:
    """Slug, title and alias matches: the same lookup the linker wires edges with."""
    with db.connection() as conn:
        pages = find_named(conn, [norm])
    given = name.strip().lower()
    out = []
    for page in pages.values():
        if not page.answers_to(norm) and given != page.slug:
            continue
        if not where.admits(page.folder, page.effective_date):
            continue
        # "Globex" is both the title and (lower-cased) the slug of companies/globex: a
        # name written like the title is a title match, one written like a slug a slug match.
        if given != page.title.lower() and (
            given == page.slug
            or (norm == normalize_name(page.slug) and norm != normalize_name(page.title))
        ):
            why = "exact_slug"
        elif norm in page.primary:
            why = "exact_title"
        else:
            why = "alias_hit"
        out.append(
            Candidate(page.id, page.title, page.folder, _SCORE[why], why, page.effective_date)
        )
    return out


_FUZZY = f"""
WITH hits AS (
    SELECT id FROM pages WHERE title %% %(norm)s
    UNION SELECT id FROM pages WHERE %(norm)s <%% title
    UNION SELECT page_id FROM page_aliases WHERE alias_norm %% %(norm)s
    UNION SELECT page_id FROM page_aliases WHERE %(norm)s <%% alias_norm
)
SELECT p.id, p.folder, p.title, p.effective_date,
       greatest(similarity(p.title, %(norm)s), %(w)s * word_similarity(%(norm)s, p.title),
                coalesce(a.sim, 0))
FROM hits JOIN pages p ON p.id = hits.id
LEFT JOIN LATERAL (
    SELECT max(greatest(similarity(alias_norm, %(norm)s),
                        %(w)s * word_similarity(%(norm)s, alias_norm))) AS sim
    FROM page_aliases WHERE page_id = p.id
) a ON true
WHERE (%(scope)s::text[] IS NULL OR p.folder = ANY(%(scope)s))
  AND {_ON_DATE}
"""


def _fuzzy(db: Database, norm: str, where: _Where) -> list[Candidate]:
    """Trigram similarity with titles and aliases (pg_trgm's thresholds: 0.3, 0.6 words)."""
    with db.connection() as conn:
        rows = conn.execute(
            _FUZZY,
            {"norm": norm, "w": RESOLVE.word_weight, **where.params()},
        ).fetchall()
    return [
        Candidate(page_id, title, folder, float(sim), "fuzzy_title", day)
        for page_id, folder, title, day, sim in rows
    ]


_NAMES = f"""
SELECT p.id, p.folder, p.title, p.effective_date,
       coalesce((SELECT array_agg(a.alias) FROM page_aliases a WHERE a.page_id = p.id), '{{}}')
FROM pages p
WHERE (%(scope)s::text[] IS NULL OR p.folder = ANY(%(scope)s))
  AND {_ON_DATE}
"""


def _transliterated(db: Database, name: str, where: _Where) -> list[Candidate]:
    """Pages whose title or an alias sounds like ``name`` in the other script
    (``kb.translit.name_key``); a Mongolian case ending on the name is tried off too
    ("Алистай" -> "Алис"). It compares every name in scope, so it runs only when the
    exact and trigram steps found nothing good."""
    parts = name.split()
    variants = {name_key(name)}
    if parts:
        variants |= {name_key(" ".join([*parts[:-1], stem])) for stem in mn_stems(parts[-1])}
    variants.discard("")
    if not variants:
        return []
    cyrillic = is_cyrillic(name)
    loose = variants | {loose_key(v) for v in variants}
    with db.connection() as conn:
        rows = conn.execute(_NAMES, where.params()).fetchall()
    out = []
    for page_id, folder, title, day, aliases in rows:
        score = 0.0
        for other in (title, *aliases):
            key = name_key(other)
            variants_here = variants
            if is_cyrillic(other) != cyrillic:  # across scripts "Элис" is Alice
                variants_here, key = loose, loose_key(key)
            if key in variants_here:
                score = RESOLVE.transliterated_whole
                break
            first = key.split(" ", 1)[0]
            if " " in key and first in variants_here:
                score = max(score, RESOLVE.transliterated_first)
        if score:
            out.append(Candidate(page_id, title, folder, score, "transliteration", day))
    return out


def _semantic(db: Database, embedder: Embedder, name: str, where: _Where) -> list[Candidate]:
    info = db.embedding_info()
    if info is None or info != (embedder.name, embedder.dims):
        return []  # no embeddings yet, or of another model: nothing to compare with
    db.ensure_embedding(embedder.name, embedder.dims)
    vector = embedder.embed_query(name)
    sql = (
        "WITH c AS MATERIALIZED ("
        f"  SELECT page_id, {db.distance_sql()} AS distance FROM chunks"
        "   WHERE embedding IS NOT NULL"
        "     AND (%(scope)s::text[] IS NULL OR folder = ANY(%(scope)s))"
        "   ORDER BY distance LIMIT %(k)s)"
        " SELECT p.id, p.folder, p.title, p.effective_date, 1 - min(c.distance) AS sim"
        " FROM c JOIN pages p ON p.id = c.page_id"
        f" WHERE {_ON_DATE}"
        " GROUP BY p.id, p.folder, p.title, p.effective_date"
        " ORDER BY sim DESC, p.id"
    )
    with db.connection() as conn, vector_scan(conn):
        rows = conn.execute(
            sql,
            {"q": vector, "k": _SEMANTIC_POOL, **where.params()},
        ).fetchall()
    return [
        Candidate(page_id, title, folder, float(sim), "semantic", day)
        for page_id, folder, title, day, sim in rows
        if sim >= RESOLVE.semantic_min
    ]


def _verdict(ranked: list[Candidate]) -> tuple[str, bool, int]:
    """(verdict, ambiguous, how many share the top)."""
    if not ranked:
        return "new", False, 0
    best = ranked[0]
    if best.why in STRONG:
        top = [c for c in ranked if _RANK[c.why] == _RANK[best.why]]
    else:
        top = [c for c in ranked if c.why == best.why and best.score - c.score <= RESOLVE.tie]
    threshold = {
        "fuzzy_title": RESOLVE.fuzzy_probable,
        "transliteration": RESOLVE.transliterated_probable,
        "semantic": RESOLVE.semantic_probable,
    }
    if best.why not in STRONG and best.score < threshold[best.why]:
        return "new", False, 1
    if len(top) > 1:
        return "probable", True, len(top)
    return ("exists" if best.why in STRONG else "probable"), False, 1


def resolve(
    db: Database,
    embedder: Embedder | None,
    name: str,
    folders: Collection[str] | None,
    folder: str | None = None,
    date: dt.date | str | None = None,
    limit: int = 5,
    *,
    schema: Schema | None = None,
    fuzzy: bool = True,
) -> ResolveResult:
    """Candidate pages for ``name`` within ``folders`` (None = all), best first.

    ``folder`` narrows to one folder (NotFoundError when it is outside ``folders``);
    a name written as ``folder/slug`` does the same. ``date`` (YYYY-MM-DD) restricts
    pages of dated folders (from ``schema``) to that day. ``embedder`` None skips the
    semantic step and ``fuzzy=False`` the trigram step (exact names only: the fastest,
    for the search graph arm). ``limit`` caps the list, but every page tied for the top
    is listed.
    """
    day = as_date(date)
    known = schema.folder_names if schema is not None else tuple(folders or ())
    raw = clean_ref(str(name or ""))
    path_folder, bare = split_target(raw, known)
    if path_folder is not None:
        if folder is not None and folder != path_folder:
            raise UserError(
                f"name {name!r} is in folder {path_folder!r} but folder={folder!r} was given",
                "give the bare name, or the matching folder",
            )
        folder = path_folder
    if folder is not None:
        folder = folder.strip()
        if folders is not None and folder not in folders:
            raise NotFoundError(
                f"no folder {folder!r} in your scope", "omit folder or pick one you can read"
            )
        if schema is not None:
            schema.folder(folder)  # NotFoundError naming the valid folders
    scope = [folder] if folder is not None else (None if folders is None else sorted(folders))
    norm = normalize_name(bare)
    if not norm or scope == []:
        return ResolveResult(bare, "new", (), False)
    where = _Where(scope, day, dated_folders(schema))
    found = _exact(db, bare, norm, where)
    degraded: tuple[str, ...] = ()
    # Exact matches decide the verdict alone; the slower steps run only without one.
    if not found and fuzzy:
        found = _fuzzy(db, norm, where)
        if not any(c.score >= RESOLVE.fuzzy_probable for c in found):
            found += _transliterated(db, bare, where)
    if not found and embedder is not None:
        found = _semantic(db, embedder, bare, where)
        if found:
            degraded = tuple(embedder.degraded)
    best: dict[str, Candidate] = {}
    for cand in found:
        if cand.id not in best or _key(cand) < _key(best[cand.id]):
            best[cand.id] = cand
    ranked = sorted(best.values(), key=_key)
    verdict, ambiguous, tied = _verdict(ranked)
    shown = ranked[: max(limit, tied)]
    return ResolveResult(bare, verdict, tuple(shown), ambiguous, degraded)


def advice(result: ResolveResult) -> str:
    """What the caller should do next, in one sentence."""
    best = result.best
    if result.verdict == "exists" and best is not None:
        return (
            f"Use the existing page {best.id}: read it with kb_get_page and update it with its "
            "version as base_version; do not create another page."
        )
    if result.ambiguous:
        return (
            "Several pages match equally well: decide from the context (company, role, date) "
            "which one is meant; if the context does not say, do not merge into either."
        )
    if result.verdict == "probable" and best is not None:
        return (
            f"Probably {best.id} ({best.why}): read it with kb_get_page and confirm it is the "
            "same entity before updating it; create a new page only if it is not."
        )
    return "No page matches: create one with kb_put_page."
