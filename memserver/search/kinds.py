"""Page results and source notes in budgets of their own, and the fused results that
never lose what one arm found first (pure functions, no I/O).

A search with ``include_sources`` ranks two kinds of result: pages and raw source notes.
Ranked in one list, one kind can crowd the other out: a question whose pages score high
(an exact title, a date order) returned no note at all, and autocut, the result count and
the token budget then fell on the notes alone. Here each kind is cut on its own:

* :func:`quotas`: how many of each kind a response holds: the notes' share of the count
  (``FUSION.note_share``) and the pages the rest, what one kind leaves unused going to
  the other;
* :func:`split_budget`: the same for the token budget;
* :func:`keep_arms_best`: the guarantee of the fusion. The first ``FUSION.arm_reserve``
  results of each arm that searched a kind (the keyword and vector arms, and for notes
  the whole-note arm too; fewer when a kind's quota cannot hold that many of each,
  :func:`reserve_of`, but always each arm's first when the quota holds one per arm) are
  among that kind's results whatever the fusion, autocut or the cut to the quota made of
  them: the hybrid never loses what a strong arm alone finds first. One missing takes the
  place of the last result that no arm guards.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TypeVar

from memserver.search.fusion import Hit
from memserver.search.settings import FUSION
from memserver.search.types import SOURCE_PREFIX

T = TypeVar("T")


def is_note(result_id: str) -> bool:
    """Whether a result is a raw source note (else a page)."""
    return result_id.startswith(SOURCE_PREFIX)


def quotas(pages: int, notes: int, limit: int, note_share: float | None = None) -> tuple[int, int]:
    """(pages, notes) a response of at most ``limit`` results holds when ``pages`` pages
    and ``notes`` notes are there to give: the notes ``ceil(limit x share)``, the pages
    the rest, and what one kind cannot fill goes to the other."""
    share = FUSION.note_share if note_share is None else note_share
    if notes == 0:
        return min(pages, limit), 0
    if pages == 0:
        return 0, min(notes, limit)
    note_quota = min(limit, math.ceil(limit * share))
    page_quota = limit - note_quota
    if pages < page_quota:
        note_quota += page_quota - pages
        page_quota = pages
    if notes < note_quota:
        page_quota += note_quota - notes
        note_quota = notes
    return min(pages, page_quota), min(notes, note_quota)


def reserve_of(quota: int, arms: int, reserve: int | None = None) -> int:
    """How many first results of each of ``arms`` guarded arms a kind of ``quota`` results
    keeps: ``FUSION.arm_reserve``, fewer when they would not fit (at least one)."""
    wanted = FUSION.arm_reserve if reserve is None else reserve
    return max(1, min(wanted, quota // max(1, arms)))


def guarded_ids(
    arms: Mapping[str, Sequence[Hit]], guard: Collection[str], reserve: int
) -> list[str]:
    """The first ``reserve`` distinct results of each arm of ``guard``, best first: the
    first of every arm, then the second of every arm ..."""
    tops = []
    for arm in guard:
        firsts = list(dict.fromkeys(h.id for h in arms.get(arm, ())))[:reserve]
        tops.append(firsts)
    out: list[str] = []
    for i in range(reserve):
        for firsts in tops:
            if i < len(firsts) and firsts[i] not in out:
                out.append(firsts[i])
    return out


def keep_arms_best(
    kept: Sequence[T],
    pool: Sequence[T],
    guarded: Sequence[str],
    k: int,
    key: Callable[[T], str],
    fixed: Callable[[T], bool] = lambda _: False,
) -> list[T]:
    """The first ``k`` of ``kept`` with every item of ``pool`` whose id is in
    ``guarded`` among them (those ``pool`` lacks are not there to keep): each missing
    one takes the place of the last item that ``guarded`` does not name and that is not
    ``fixed`` (a page the question names exactly, one a date order or a relation put
    first), and comes after the others."""
    guard = set(guarded)
    out = list(kept[:k])
    have = {key(x) for x in out}
    missing = [x for x in pool if key(x) in guard and key(x) not in have]
    missing.sort(key=lambda x: guarded.index(key(x)))
    for item in missing:
        if len(out) < k:
            out.append(item)
            continue
        free = [i for i, x in enumerate(out) if key(x) not in guard and not fixed(x)]
        if not free:
            break  # every place is held by a guarded item already
        del out[free[-1]]
        out.append(item)
    return out


def split_budget(
    items: Sequence[T],
    size: Callable[[T], int],
    budget: int | None,
    key: Callable[[T], str],
    note_share: float | None = None,
) -> tuple[list[T], int]:
    """The items (pages and notes, in order) whose sizes fit the token ``budget``, each
    kind within its share of it (``note_share`` for the notes), what one kind leaves
    unused going to the other; the first item of each kind is always kept. Returns the
    kept items in their order and the tokens they use."""
    if budget is None:
        return list(items), sum(size(i) for i in items)
    share = FUSION.note_share if note_share is None else note_share
    notes = [x for x in items if is_note(key(x))]
    pages = [x for x in items if not is_note(key(x))]

    def cost(kind: Sequence[T]) -> int:
        return sum(size(x) for x in kind)

    note_budget = int(budget * share) if pages else budget
    page_budget = budget - note_budget if notes else budget
    # What one kind does not need, the other may use.
    if cost(pages) < page_budget:
        note_budget += page_budget - cost(pages)
    elif cost(notes) < note_budget:
        page_budget += note_budget - cost(notes)
    chosen = {id(x) for x in _fit(pages, size, page_budget)}
    chosen |= {id(x) for x in _fit(notes, size, note_budget)}
    kept = [x for x in items if id(x) in chosen]
    return kept, sum(size(x) for x in kept)


def _fit(items: Sequence[T], size: Callable[[T], int], budget: int) -> list[T]:
    """The leading items whose sizes fit ``budget`` (the first always)."""
    out: list[T] = []
    used = 0
    for item in items:
        cost = size(item)
        if out and used + cost > budget:
            break
        out.append(item)
        used += cost
    return out
