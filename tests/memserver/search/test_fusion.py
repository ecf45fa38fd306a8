"""Fusion and shaping: pure functions over hits and candidates."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from memserver.search import fusion as fz
from memserver.search.fusion import Candidate, Hit


def hits(*ids: str, folder: str = "people", **kw: Any) -> list[Hit]:
    return [Hit(i, folder, **kw) for i in ids]


def cand(id: str, score: float, date: str | None = None, **kw: Any) -> Candidate:
    c = Candidate(id, id.split("/")[0], score=score, **kw)
    c.date = dt.date.fromisoformat(date) if date else None
    return c


def test_rrf_sums_reciprocal_ranks_with_k_60() -> None:
    fused = fz.fuse({"keyword": hits("a/1", "a/2"), "timeline": hits("a/2", "a/3")})
    by_id = {c.id: c for c in fused}
    assert by_id["a/2"].rrf == pytest.approx(1 / 62 + 1 / 61)
    assert by_id["a/1"].rrf == pytest.approx(1 / 61)
    assert fused[0].id == "a/2" and fused[0].score == pytest.approx(1.0)
    assert by_id["a/2"].ranks == {"keyword": 2, "timeline": 1}


def test_a_weight_divides_k() -> None:
    fused = fz.fuse({"title": hits("a/1"), "keyword": hits("a/2")}, {"title": 2.0})
    by_id = {c.id: c for c in fused}
    assert by_id["a/1"].rrf == pytest.approx(1 / 31)
    assert fused[0].id == "a/1"


def test_a_hit_votes_with_its_share() -> None:
    fused = fz.fuse({"source_keyword": [Hit("s/1", "source", share=0.25), Hit("s/2", "source")]})
    by_id = {c.id: c for c in fused}
    assert by_id["s/1"].rrf == pytest.approx(0.25 / 61)
    assert by_id["s/2"].rrf == pytest.approx(1 / 62)
    assert [c.id for c in fused] == ["s/2", "s/1"]


def test_zero_weight_turns_an_arm_off_and_duplicates_count_once() -> None:
    fused = fz.fuse({"keyword": hits("a/1", "a/1", "a/2"), "vector": hits("a/9")}, {"vector": 0})
    assert [c.id for c in fused] == ["a/1", "a/2"]
    assert fused[1].ranks["keyword"] == 2


def test_cosine_blends_into_the_score_and_snippet_comes_from_the_best_arm() -> None:
    fused = fz.fuse(
        {
            "keyword": [Hit("a/1", "a", 0.3, "keyword chunk")],
            "vector": [Hit("a/2", "a", 0.9, "v2"), Hit("a/1", "a", 0.5, "vector chunk")],
        }
    )
    by_id = {c.id: c for c in fused}
    assert by_id["a/1"].snippet == "keyword chunk"  # rank 1 beats rank 2
    top = max(c.rrf for c in fused)
    # cosines rescaled across the candidates: 0.9 -> 1.0, 0.5 -> 0.0
    assert by_id["a/2"].score == pytest.approx(0.7 * by_id["a/2"].rrf / top + 0.3 * 1.0)
    assert by_id["a/1"].score == pytest.approx(0.7 * by_id["a/1"].rrf / top + 0.3 * 0.0)


def test_one_cosine_is_blended_as_it_is_and_pages_the_vector_arm_missed_keep_rrf() -> None:
    fused = fz.fuse({"vector": [Hit("a/2", "a", 0.84)], "title": [Hit("a/1", "a", 1.0)]})
    by_id = {c.id: c for c in fused}
    assert by_id["a/2"].score == pytest.approx(0.7 * 1.0 + 0.3 * 0.84)  # nothing to scale by
    assert by_id["a/1"].score == pytest.approx(by_id["a/1"].rrf / max(c.rrf for c in fused))


def test_boosts_are_clamped_and_named_folders_get_a_small_edge() -> None:
    a, b = cand("people/a", 1.0), cand("meetings/b", 1.0)
    out = fz.apply_boosts([a, b], {"people": 5.0}, named_folders=("meetings",))
    assert a.score == pytest.approx(1.5) and b.score == pytest.approx(1.15)
    assert out[0] is a


@pytest.mark.parametrize(
    ("days", "halflife", "factor"),
    [(30, 60, 60 / 90), (0, 60, 1.0), (400, 0, 1.0), (-5, 60, 1.0), (180, 180, 0.5)],
)
def test_recency_factor(days: int, halflife: float, factor: float) -> None:
    assert fz.recency_factor(days, halflife) == pytest.approx(factor)


def test_recency_decays_dated_pages_only() -> None:
    old, new, undated = (
        cand("m/old", 1.0, "2026-01-01"),
        cand("m/new", 0.9, "2026-11-01"),
        cand("p/x", 0.5),
    )
    out = fz.apply_recency([old, new, undated], {"m": 60, "p": 60}, dt.date(2026, 11, 20))
    assert [c.id for c in out] == ["m/new", "p/x", "m/old"]
    assert undated.score == 0.5


def test_window_keeps_dated_pages_inside_and_pages_with_a_matching_entry() -> None:
    inside, outside, entry = (
        cand("m/a", 1, "2026-09-15"),
        cand("m/b", 1, "2026-09-16"),
        cand("p/c", 1, "2020-01-01"),
    )
    entry.window_match = True
    kept = fz.filter_window(
        [inside, outside, entry, cand("p/d", 1)], dt.date(2026, 9, 15), dt.date(2026, 9, 16)
    )
    assert [c.id for c in kept] == ["m/a", "p/c"]


def test_order_by_date_newest_and_oldest_with_the_rest_after() -> None:
    cs = [
        cand("m/mid", 0.9, "2026-05-01"),
        cand("m/new", 0.2, "2026-09-01"),
        cand("m/undated", 0.8),
        cand("m/old", 0.5, "2025-01-01"),
        cand("x/other", 1.0, "2027-01-01"),
    ]
    relevant = {"m/mid", "m/new", "m/undated", "m/old"}
    newest = fz.order_by_date(list(cs), relevant, newest=True)
    assert [c.id for c in newest] == ["m/new", "m/mid", "m/old", "m/undated", "x/other"]
    oldest = fz.order_by_date(list(cs), relevant, newest=False)
    assert [c.id for c in oldest][:3] == ["m/old", "m/mid", "m/new"]
    assert newest[0].ordered and not newest[-1].ordered


def test_exact_matches_are_pinned_first() -> None:
    cs = [cand("a/1", 1.0), cand("a/2", 0.1)]
    out = fz.pin_exact(cs, {"a/2"})
    assert [c.id for c in out] == ["a/2", "a/1"] and out[0].pinned


def test_autocut_cuts_at_a_20_percent_fall_but_keeps_three() -> None:
    cs = [cand(f"a/{i}", s) for i, s in enumerate([1.0, 0.95, 0.9, 0.88, 0.5, 0.49])]
    assert len(fz.autocut(cs)) == 4
    early = [cand("a/1", 1.0), cand("a/2", 0.3), cand("a/3", 0.25), cand("a/4", 0.24)]
    assert len(fz.autocut(early)) == 4  # a fall inside the first three never cuts them
    late = [cand("a/1", 1.0), cand("a/2", 0.9), cand("a/3", 0.85), cand("a/4", 0.3)]
    assert len(fz.autocut(late)) == 3
    late[3].ordered = True
    assert len(fz.autocut(late)) == 4


def test_budget_cut_uses_chars_over_four_and_keeps_the_first() -> None:
    items = ["x" * 400, "y" * 400, "z" * 400]
    kept, used = fz.budget_cut(items, lambda s: fz.text_tokens(s), 205)
    assert kept == items[:2] and used == 202
    kept, _ = fz.budget_cut(items, lambda s: fz.text_tokens(s), 10)
    assert kept == items[:1]
    kept, _ = fz.budget_cut(items, lambda s: fz.text_tokens(s), None)
    assert kept == items


def test_trim_snippet_centres_on_a_query_term() -> None:
    text = "Globex — Summary\n" + "filler words here. " * 40 + "The invoice INV-2026-044 was paid."
    short = fz.trim_snippet(text, 120, ["inv-2026-044"])
    assert "INV-2026-044" in short and short.startswith("Globex — Summary")
    assert len(short) <= 125
    assert fz.trim_snippet("short", 120) == "short"
    assert fz.trim_snippet(text, None) == text.strip()


def test_labels_say_why() -> None:
    c = Candidate("people/bob", "people")
    c.ranks = {"title": 1, "keyword": 2, "vector": 1, "graph": 1}
    c.details = {"title": "exact_alias", "keyword": "all_terms", "graph": "reports_to"}
    c.arm_scores = {"vector": 0.9}
    labels = fz.label(c)
    for expected in (
        "exact_title_match",
        "alias_hit",
        "keyword_exact",
        "high_vector_match",
        "graph:reports_to",
    ):
        assert expected in labels
    weak = Candidate("people/x", "people", ranks={"vector": 9}, arm_scores={"vector": 0.5})
    assert fz.label(weak) == ["weak_semantic"]
