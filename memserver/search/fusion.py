"""Fusing retrieval arms into one ranked list, and shaping it (pure functions, no I/O).

The order of operations (``memserver.search.pipeline`` drives it):

1. :func:`fuse`: reciprocal rank fusion. An arm with weight ``w`` contributes
   ``1 / (k / w + rank)`` (k = 60), so a weight turns RRF's k into ``k / w``. Sums are
   normalised by the best, then blended ``0.7 x RRF + 0.3 x cosine`` when the vector arm
   saw the page, the cosine rescaled to 0-1 across the candidates the vector arms saw
   (e5 puts nearly every cosine between 0.78 and 0.9, so unscaled it adds almost the
   same to every score). One candidate per page; its snippet is the best chunk of the
   arm that ranked it best.
2. :func:`apply_boosts`: small multiplicative priors only (a folder's ``source_boost``
   clamped to 0.5-1.5, a folder the question names). Large boosts swamp RRF's narrow
   range, so they stay near 1.
3. :func:`apply_recency`: with soft recency ("recently", "what's new"), each dated page
   is multiplied by ``h / (h + days)``, ``h`` its folder's ``recency_halflife_days``;
   ``h = 0`` means evergreen (no decay).
4. :func:`filter_window`: with a window, a page stays only when its effective date, or
   one of its timeline entries, is inside it.
5. :func:`order_by_date`: for latest/first, the relevant pages are ordered by date
   (newest or oldest first, undated last); the others follow by score.
   :func:`promote`: for a relation ("who reports to X"), the pages it leads to first.
6. :func:`pin_exact`: a page whose title, slug or alias *is* the question goes first.
7. :func:`label`: evidence labels per result.
8. :func:`autocut`: cut where the score falls by at least 20% of the top score.
9. :func:`budget_cut`: keep results while their text fits the token budget (chars / 4).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memserver.search.settings import FUSION

VECTOR_ARMS = ("vector", "source_vector")


@dataclass(frozen=True)
class Hit:
    """One page (or raw source file) found by one arm, best first within the arm.

    ``score`` is the arm's own measure (ts_rank, cosine similarity, trigram similarity,
    1.0 for an exact name); ``detail`` says how it matched (``exact_title``,
    ``alias``, ``all_terms``, the graph verb ...); ``date`` is the matched chunk's or
    timeline entry's own date; ``name`` the words of the question that named the page.
    """

    id: str
    folder: str
    score: float = 0.0
    snippet: str | None = None
    date: dt.date | None = None
    detail: str | None = None
    name: str | None = None  # the name that matched (title arm)
    # How much of its arm's vote the hit carries (0-1): a raw source sentence holding
    # a small part of the question's words is weak keyword evidence.
    share: float = 1.0


@dataclass(frozen=True)
class TimelineLine:
    date: dt.date
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"date": self.date.isoformat(), "text": self.text}


@dataclass
class Candidate:
    """A page being ranked (mutable while the pipeline shapes it)."""

    id: str
    folder: str
    rrf: float = 0.0
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)
    arm_scores: dict[str, float] = field(default_factory=dict)
    snippet: str | None = None
    snippet_rank: float = math.inf
    title: str = ""
    date: dt.date | None = None
    timeline: list[TimelineLine] = field(default_factory=list)
    window_match: bool = False  # a timeline entry (or chunk) inside the window
    pinned: bool = False
    ordered: bool = False
    promoted: bool = False
    labels: list[str] = field(default_factory=list)

    @property
    def cosine(self) -> float | None:
        """The vector arm's cosine similarity (pages or raw sources), if it saw this. A raw
        source's is damped by its hubness (``source_arms.nearest_sentences``), centred on
        its pool, so the blend and the labels read it on the cosine's scale."""
        found = [self.arm_scores[arm] for arm in VECTOR_ARMS if arm in self.arm_scores]
        return max(found) if found else None


def fuse(
    arms: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float] | None = None,
    k: float | None = None,
) -> list[Candidate]:
    """Reciprocal rank fusion of ``arms`` (name -> hits best first), best first."""
    weights = weights or {}
    k = FUSION.rrf_k if k is None else k
    found: dict[str, Candidate] = {}
    for arm, hits in arms.items():
        weight = weights.get(arm, 1.0)
        if weight <= 0:
            continue
        seen: set[str] = set()
        rank = 0
        for hit in hits:
            if hit.id in seen:
                continue
            seen.add(hit.id)
            rank += 1
            cand = found.get(hit.id)
            if cand is None:
                cand = found[hit.id] = Candidate(hit.id, hit.folder)
            cand.rrf += hit.share / (k / weight + rank)
            cand.ranks[arm] = rank
            cand.arm_scores[arm] = hit.score
            if hit.detail:
                cand.details[arm] = hit.detail
            # The snippet comes from the arm that placed the page highest (by weight).
            position = rank / weight
            if hit.snippet and position < cand.snippet_rank:
                cand.snippet, cand.snippet_rank = hit.snippet, position
            if hit.date is not None and cand.date is None:
                cand.date = hit.date
    if not found:
        return []
    top = max(c.rrf for c in found.values())
    cosines = [c.cosine for c in found.values() if c.cosine is not None]
    lo, hi = (min(cosines), max(cosines)) if cosines else (0.0, 1.0)
    for cand in found.values():
        norm = cand.rrf / top
        cos = cand.cosine
        if cos is not None and hi > lo:
            cos = (cos - lo) / (hi - lo)
        share = FUSION.rrf_share
        cand.score = share * norm + (1 - share) * cos if cos is not None else norm
    return sort_by_score(found.values())


def sort_by_score(cands: Iterable[Candidate]) -> list[Candidate]:
    return sorted(cands, key=lambda c: (-c.score, c.id))


def clamp_boost(value: float) -> float:
    return min(FUSION.boost_max, max(FUSION.boost_min, float(value)))


def apply_boosts(
    cands: list[Candidate],
    source_boost: Mapping[str, float],
    named_folders: Collection[str] = (),
    named_boost: float | None = None,
) -> list[Candidate]:
    """Multiply by the folder's prior, and slightly favour folders the question names."""
    for cand in cands:
        cand.score *= clamp_boost(source_boost.get(cand.folder, 1.0))
        if cand.folder in named_folders:
            cand.score *= FUSION.named_boost if named_boost is None else named_boost
    return sort_by_score(cands)


def recency_factor(days: float, halflife: float) -> float:
    """``h / (h + days)``; 1.0 for evergreen folders (h = 0) and for future dates."""
    if halflife <= 0 or days <= 0:
        return 1.0
    return halflife / (halflife + days)


def apply_recency(
    cands: list[Candidate], halflife: Mapping[str, float], today: dt.date
) -> list[Candidate]:
    for cand in cands:
        if cand.date is not None:
            cand.score *= recency_factor((today - cand.date).days, halflife.get(cand.folder, 0))
    return sort_by_score(cands)


def filter_window(
    cands: list[Candidate],
    start: dt.date | None,
    end: dt.date | None,
    event_folders: Collection[str] | None = None,
    entry_only: float | None = None,
) -> list[Candidate]:
    """Pages dated inside ``[start, end)``, or with a timeline entry inside it.

    The event itself (a meeting dated in the window) outranks an entity page that is in
    the window only through one of its timeline lines (x ``entry_only``): a page of a
    folder outside ``event_folders`` (None = every page is an event) counts as such,
    since its date is merely its newest timeline entry.
    """

    entry_only = FUSION.entry_only if entry_only is None else entry_only

    def inside(day: dt.date | None) -> bool:
        if day is None:
            return False
        return (start is None or day >= start) and (end is None or day < end)

    kept = []
    for cand in cands:
        event = event_folders is None or cand.folder in event_folders
        if inside(cand.date) and event:
            kept.append(cand)
        elif cand.window_match or inside(cand.date):
            cand.score *= entry_only
            kept.append(cand)
    return sort_by_score(kept)


def order_by_date(
    cands: list[Candidate],
    relevant: Collection[str],
    newest: bool = True,
    *,
    after: dt.date | None = None,
    through: dt.date | None = None,
) -> list[Candidate]:
    """The ``relevant`` pages by date (undated last, ties by score), then the rest.

    Only pages dated after ``after`` and on or before ``through`` (either open) are
    ordered; the others of ``relevant`` join the rest (a future meeting is not "latest").
    """

    def bounded(c: Candidate) -> bool:
        if c.date is None:
            return after is None
        return (after is None or c.date > after) and (through is None or c.date <= through)

    first = [c for c in cands if c.id in relevant and bounded(c)]
    rest = [c for c in cands if not (c.id in relevant and bounded(c))]
    dated = [c for c in first if c.date is not None]
    undated = [c for c in first if c.date is None]
    dated.sort(key=lambda c: (-c.score, c.id))
    dated.sort(key=lambda c: c.date or dt.date.min, reverse=newest)
    for cand in dated:
        cand.ordered = True
    return dated + sort_by_score(undated) + rest


def promote(cands: list[Candidate], ids: Collection[str]) -> list[Candidate]:
    """``ids`` first (by score), then the rest: the pages a relation leads to."""
    first = [c for c in cands if c.id in ids]
    for cand in first:
        cand.promoted = True
    return first + [c for c in cands if c.id not in ids]


def pin_exact(cands: list[Candidate], exact: Collection[str]) -> list[Candidate]:
    """Exact title/slug/alias matches of the whole question first (in their order)."""
    pinned = [c for c in cands if c.id in exact]
    for cand in pinned:
        cand.pinned = True
    return pinned + [c for c in cands if c.id not in exact]


def label(cand: Candidate, all_terms_arms: Collection[str] = ("keyword",)) -> list[str]:
    """Evidence labels: why this result is here, in words a model can weigh."""
    labels: list[str] = []
    title_detail = cand.details.get("title", "")
    if title_detail.startswith("exact"):
        labels.append("exact_title_match")
    if "alias" in title_detail:
        labels.append("alias_hit")
    if title_detail.startswith("fuzzy"):
        labels.append("fuzzy_title_match")
    if any(cand.details.get(arm) == "all_terms" for arm in all_terms_arms):
        labels.append("keyword_exact")
    elif any(arm in cand.ranks for arm in all_terms_arms):
        labels.append("keyword_partial")
    cos = cand.cosine
    if cos is not None and cos >= FUSION.high_vector:
        labels.append("high_vector_match")
    only_vector = set(cand.ranks) <= {"vector", "source_vector"}
    if cos is not None and only_vector and cos < FUSION.weak_vector:
        labels.append("weak_semantic")
    if "graph" in cand.ranks:
        labels.append(f"graph:{cand.details.get('graph', 'linked')}")
    if "graph_augment" in cand.ranks:
        labels.append("graph_neighbor")
    if "timeline" in cand.ranks or cand.window_match:
        labels.append("timeline_match")
    if cand.ordered:
        labels.append("date_ordered")
    if cand.pinned:
        labels.append("pinned")
    cand.labels = labels
    return labels


def autocut(
    cands: list[Candidate], drop: float | None = None, keep: int | None = None
) -> list[Candidate]:
    """Cut at the first fall between neighbours of at least ``drop`` x the top score.

    Pinned, date-ordered and promoted results are never cut, and at least ``keep`` stay.
    """
    drop = FUSION.autocut_drop if drop is None else drop
    keep = FUSION.autocut_keep if keep is None else keep
    if len(cands) <= keep:
        return cands
    top = max(c.score for c in cands)
    if top <= 0:
        return cands
    for i in range(max(keep, 1), len(cands)):
        prev, cur = cands[i - 1], cands[i]
        if cur.pinned or cur.ordered or cur.promoted:
            continue
        if prev.score - cur.score >= drop * top:
            return cands[:i]
    return cands


def text_tokens(*texts: str | None) -> int:
    """Tokens by the chars / 4 rule."""
    return sum(len(t) for t in texts if t) // FUSION.chars_per_token + 1


def budget_cut(
    items: Sequence[Any], size: Callable[[Any], int], max_tokens: int | None
) -> tuple[list[Any], int]:
    """The leading items whose sizes fit ``max_tokens`` (the first is always kept)."""
    if max_tokens is None:
        return list(items), sum(size(i) for i in items)
    kept: list[Any] = []
    used = 0
    for item in items:
        cost = size(item)
        if kept and used + cost > max_tokens:
            break
        kept.append(item)
        used += cost
    return kept, used


def trim_snippet(text: str, max_chars: int | None, terms: Sequence[str] = ()) -> str:
    """``text`` cut to ``max_chars``, centred on the first query term it contains."""
    text = text.strip()
    if max_chars is None or len(text) <= max_chars:
        return text
    lower = text.casefold()
    hit = min((i for i in (lower.find(t) for t in terms if t) if i >= 0), default=-1)
    head_line = text.split("\n", 1)[0]
    if hit < 0 or hit + len(head_line) < max_chars:
        return text[: max_chars - 1].rstrip() + "…"
    start = max(0, hit - max_chars // 3)
    body = text[start : start + max_chars - len(head_line) - 3].strip()
    return f"{head_line}\n…{body}…"
