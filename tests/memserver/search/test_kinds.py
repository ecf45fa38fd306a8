"""Pages and notes in budgets of their own, and the fusion's guarantee that an arm's
first results stay (memserver/search/kinds.py, shaping.by_kind): pure, no database."""

from __future__ import annotations

import random

from memserver.search import fusion as fz
from memserver.search import kinds
from memserver.search.fusion import Hit
from memserver.search.settings import FUSION
from memserver.search.shaping import by_kind


def note(name: str) -> str:
    return f"source/{name}.md"


def hits(ids: list[str], folder: str = "meetings") -> list[Hit]:
    return [
        Hit(i, "source" if kinds.is_note(i) else folder, 1.0 / (n + 1)) for n, i in enumerate(ids)
    ]


def test_each_kind_has_its_share_and_what_one_leaves_goes_to_the_other() -> None:
    assert kinds.quotas(30, 30, 20) == (10, 10)
    assert kinds.quotas(3, 30, 20) == (3, 17)
    assert kinds.quotas(30, 4, 20) == (16, 4)
    assert kinds.quotas(30, 0, 20) == (20, 0) and kinds.quotas(0, 30, 20) == (0, 20)
    assert kinds.quotas(2, 2, 20) == (2, 2)
    assert kinds.quotas(30, 30, 5) == (2, 3)  # an odd count: the notes' share is rounded up


def test_the_guarded_results_are_each_arms_first_interleaved() -> None:
    arms = {"a": hits(["x", "y", "z"]), "b": hits(["y", "w"]), "c": []}
    assert kinds.guarded_ids(arms, ("a", "b", "c"), 2) == ["x", "y", "w"]
    assert kinds.guarded_ids(arms, ("a", "b"), 1) == ["x", "y"]


def test_a_guarded_result_takes_the_place_of_the_last_unguarded_one() -> None:
    kept = ["p1", "p2", "p3", "p4"]
    pool = [*kept, "g1", "p5", "g2"]
    out = kinds.keep_arms_best(kept, pool, ["g2", "g1", "p2"], 3, str)
    assert out == ["p2", "g2", "g1"]
    assert kinds.keep_arms_best(kept, pool, ["absent"], 3, str) == ["p1", "p2", "p3"]
    assert kinds.keep_arms_best(["p1"], pool, ["g1"], 3, str) == ["p1", "g1"]


def test_fused_results_keep_every_guarded_arms_first_results() -> None:
    """The guarantee: whatever the other arms agree on, the first ``arm_reserve`` results
    of the keyword and vector arms (and the note arm) are among the first k of their
    kind, for any arms and any k that holds one result of each."""
    rng = random.Random(42)
    reserve = FUSION.arm_reserve
    for trial in range(200):
        pages = [f"meetings/p{i}" for i in range(40)]
        notes = [note(f"n{i}") for i in range(40)]
        arms = {
            "title": hits(rng.sample(pages, 15)),
            "graph": hits(rng.sample(pages, 15)),
            "keyword": hits(rng.sample(pages, 10)),
            "vector": hits(rng.sample(pages, 10)),
            "source_keyword": hits(rng.sample(notes, 10)),
            "source_note": hits(rng.sample(notes, 10)),
            "source_vector": hits(rng.sample(notes, 10)),
        }
        # the other arms weigh far more, so the fusion alone would bury the guarded ones
        weights = {"title": 5.0, "graph": 5.0, "source_keyword": 3.0}
        limit = rng.choice((6, 10, 20))
        fused = by_kind(fz.fuse(arms, weights), arms, limit, cut=trial % 2 == 0)
        page_ids = [c.id for c in fused if not kinds.is_note(c.id)]
        note_ids = [c.id for c in fused if kinds.is_note(c.id)]
        assert len(fused) <= limit and page_ids and note_ids
        for guard, got in ((FUSION.page_guard_arms, page_ids), (FUSION.note_guard_arms, note_ids)):
            first = kinds.reserve_of(len(got), len(guard))  # each arm's first at least
            assert first == max(1, min(reserve, len(got) // len(guard)))
            for arm in guard:
                assert {h.id for h in arms[arm][:first]} <= set(got), (trial, arm)


def test_pages_never_crowd_the_notes_out_of_a_response() -> None:
    pages = [f"meetings/p{i}" for i in range(30)]
    notes = [note(f"n{i}") for i in range(30)]
    arms = {"title": hits(pages), "keyword": hits(pages), "source_keyword": hits(notes)}
    fused = fz.fuse(arms, {"title": 10.0, "keyword": 10.0, "source_keyword": 0.1})
    top = fused[:20]
    assert len(top) == 20 and all(not kinds.is_note(c.id) for c in top)  # one list: pages only
    kept = by_kind(fused, arms, 20, cut=True)
    assert sum(kinds.is_note(c.id) for c in kept) >= 3
    assert len(kept) <= 20


def test_each_kind_fits_its_share_of_the_token_budget() -> None:
    items = [f"meetings/p{i}" for i in range(10)] + [note(f"n{i}") for i in range(10)]
    kept, used = kinds.split_budget(items, lambda _: 10, 100, str)
    assert sum(kinds.is_note(i) for i in kept) == 5 and len(kept) == 10 and used == 100
    few_pages = [*items[:2], *items[10:]]
    kept, _ = kinds.split_budget(few_pages, lambda _: 10, 100, str)
    assert kept[:2] == items[:2] and sum(kinds.is_note(i) for i in kept) == 8
    assert kinds.split_budget(items, lambda _: 10, None, str)[0] == items
    assert kinds.split_budget(items, lambda _: 500, 100, str)[0] == [items[0], items[10]]
