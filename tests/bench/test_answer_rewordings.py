"""eval_answers --rewordings: the new questions of bench/rewordings/example-new.yaml are
scored with their own facts and reported apart, on their own halves; the originals' split
does not move because of them. No server."""

from __future__ import annotations

import pytest

from bench import answer_rewordings as rewordings
from bench.eval_answers import Question, _fact, load_questions, score
from bench.halves import halves


def test_new_questions_carry_their_own_facts_and_the_originals_now() -> None:
    now, originals = load_questions()
    new = rewordings.new_questions(Question, _fact, now)
    assert len(new) >= 42 and all(q.new and q.variant == 0 for q in new)
    assert {q.new for q in new} == set(rewordings.NEW)
    assert not {q.number for q in new} & {q.number for q in originals}
    meeting = next(q for q in new if q.text.startswith("What was our first meeting with Initech"))
    assert score(meeting, "2026-06-25 · Initech — quarterly check-in (Q2)").verdict == "correct"
    assert score(meeting, "2026-10-20 · Initech renewal call").verdict == "wrong"


def test_new_questions_written_for_another_day_are_refused() -> None:
    with pytest.raises(SystemExit, match="now="):
        rewordings.new_questions(Question, _fact, "2030-01-01T00:00:00+00:00")


def test_the_report_gives_new_questions_apart_and_keeps_the_originals_split() -> None:
    now, originals = load_questions()
    new = rewordings.new_questions(Question, _fact, now)
    scores = [score(q, "") for q in [*originals, *new]]
    text = rewordings.report(scores, [], show=False)
    assert f"originals: 0/{len(originals)} (0%) correct" in text
    first = [q for q in new if q.new == "example-new.yaml"]
    assert f"new questions (example-new.yaml): 0/{len(first)} (0%) correct" in text
    tuned = [q for q in new if q.new == "example-tune-3.yaml"]
    assert f"tuning half 0/{len(tuned)} (0%), validation half 0/0" in text
    split = halves(str(q.number) for q in originals)
    assert split == halves(str(s.question.number) for s in scores if not s.question.new)


def test_each_score_has_the_half_the_report_counts_it_in() -> None:
    now, originals = load_questions()
    new = rewordings.new_questions(Question, _fact, now)
    scores = [score(q, "") for q in [*originals, *new]]
    half = rewordings.half_of(scores)
    split = halves(str(q.number) for q in originals)
    # a rewording is of its question's half: the balanced split of the 30, not half(n)
    asked = [s for s in scores if not s.question.new]
    assert asked and all(half(s) == split[str(s.question.number)] for s in asked)
    assert {half(s) for s in scores if s.question.new == "example-tune-3.yaml"} == {"tuning"}
    for name in (
        "example-new.yaml",
        "example-new-4.yaml",
        "example-new-6.yaml",
        "example-new-8.yaml",
        "example-new-10.yaml",
        "example-new-12.yaml",
        "example-new-13.yaml",
        "example-new-14.yaml",
        "example-new-15.yaml",
        "example-new-16.yaml",
        "example-new-17.yaml",
        "example-new-18.yaml",
        "example-new-19.yaml",
        "example-new-20.yaml",
        "example-new-21.yaml",
        "example-new-22.yaml",
        "example-new-23.yaml",
        "example-new-25.yaml",
    ):
        mixed = {half(s) for s in scores if s.question.new == name}
        assert mixed == {"tuning", "validation"}


def test_each_set_of_rewordings_is_numbered_on_and_reported_apart() -> None:
    _, originals = load_questions()
    reworded = rewordings.reworded(originals)
    assert len(reworded) == len(originals) * sum(rewordings.SETS.values())
    sets = [rewordings.set_of(q.variant) for q in reworded if q.number == originals[0].number]
    assert sets == [1, 1, 1, 2, 2, 3, 3, 4, 4]
    scores = [score(q, "") for q in [*originals, *reworded]]
    text = rewordings.report(scores, [], show=False)
    assert f"  third set: 0/{2 * len(originals)} (0%) correct" in text
    assert "third set 0.0" in text
    assert f"  fourth set: 0/{2 * len(originals)} (0%) correct" in text
    with pytest.raises(ValueError, match="past the 9 rewordings"):
        rewordings.set_of(10)
