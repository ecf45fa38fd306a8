"""eval_orgmem --rewordings: each rewording paired with its original (gold, half) and the
report of originals beside rewordings, per category, on each half. No server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.eval_orgmem import REWORDINGS, OrgQuestion, reworded, rewording_report
from bench.halves import half


def _question(qid: str, category: str) -> OrgQuestion:
    return OrgQuestion(qid, category, f"original {qid}?", {"answer": qid}, (f"ART-{qid}",))


def test_each_rewording_is_asked_with_its_originals_gold_and_half() -> None:
    spec = yaml.safe_load((REWORDINGS / "orgmem-small.yaml").read_text(encoding="utf-8"))
    originals = [_question(qid, "C1") for qid in spec] + [_question("H-01", "F")]
    got = reworded([REWORDINGS / "orgmem-small.yaml"], originals)
    assert len(got) == 3 * len(spec) == 33
    by_id = {q.id: q for q in originals}
    for q in got:
        original = by_id[q.id]
        assert q.variant in (1, 2, 3)
        assert q.text == " ".join(spec[q.id][q.variant - 1].split()) != original.text
        assert (q.category, q.gold, q.evidence) == (
            original.category,
            original.gold,
            original.evidence,
        )
        assert half(q.id) == half(original.id)
    assert [q.variant for q in got if q.id == "Q-0001"] == [1, 2, 3]
    assert not any(q.id == "H-01" for q in got)  # ours have no rewordings


def test_a_rewording_of_an_unknown_question_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("Q-0001: [one]\nQ-9999: [two]\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="Q-9999"):
        reworded([path], [_question("Q-0001", "C1")])


def test_a_second_set_is_numbered_on_after_the_first() -> None:
    first = yaml.safe_load((REWORDINGS / "orgmem-small.yaml").read_text(encoding="utf-8"))
    second = yaml.safe_load((REWORDINGS / "orgmem-small-2.yaml").read_text(encoding="utf-8"))
    originals = [_question(qid, "C1") for qid in first]
    got = reworded(
        [REWORDINGS / "orgmem-small.yaml", REWORDINGS / "orgmem-small-2.yaml"], originals
    )
    assert len(got) == 33 + 2 * len(second) == 55
    assert [q.variant for q in got if q.id == "Q-0001"] == [1, 2, 3, 4, 5]
    fourth = next(q for q in got if q.id == "Q-0001" and q.variant == 4)
    assert fourth.text == " ".join(second["Q-0001"][0].split())


def _row(qid: str, category: str, variant: int, share: float | None) -> dict[str, Any]:
    return {
        "id": qid,
        "half": half(qid),
        "variant": variant,
        "category": category,
        "answers": {"agent": {"share": share}, "bm25 top 3": {"share": 0.0}},
    }


def test_the_report_sets_originals_beside_rewordings_per_category_and_half() -> None:
    tuning, validation = "Q-0002", "Q-0001"  # bench.halves: tuning, validation
    assert (half(tuning), half(validation)) == ("tuning", "validation")
    rows = [
        _row(tuning, "C2", 0, 1.0),
        _row(tuning, "C2", 1, 0.5),
        _row(tuning, "C2", 2, 1.0),
        _row(tuning, "C2", 3, None),  # a gold without key facts: left out
        _row(validation, "C1", 0, 0.5),
        _row(validation, "C1", 1, 0.25),
        _row(validation, "C1", 2, 0.25),
        _row(validation, "C1", 3, 0.25),
        _row("H-01", "F", 0, 1.0),  # no rewordings: left out of this report
    ]
    report = rewording_report(rows)
    parts = report.split("Key facts stated by the agent")[1:]
    assert [p.split("\n")[0].split(", ")[-1].split(" (")[0] for p in parts] == [
        "all",
        "tuning",
        "validation",
    ]
    everything, tune, validate = parts
    assert "| C1 supersession | 4 | 0.50 (1) | 0.25 (3) | +25.0 |" in everything
    assert "| C2 provenance | 4 | 1.00 (1) | 0.75 (2) | +25.0 |" in everything
    assert "| all | 8 | 0.75 (2) | 0.45 (5) | +30.0 |" in everything
    assert "F fact" not in report
    assert "C1" not in tune
    assert "| all | 4 | 1.00 (1) | 0.75 (2) | +25.0 |" in tune
    assert "C2" not in validate
    assert "| all | 4 | 0.50 (1) | 0.25 (3) | +25.0 |" in validate


def test_each_set_of_rewordings_is_summed_up_apart() -> None:
    tuning = "Q-0002"
    rows = [
        _row(tuning, "C2", 0, 1.0),
        _row(tuning, "C2", 1, 1.0),
        _row(tuning, "C2", 4, 0.5),
        _row(tuning, "C2", 5, 0.5),
    ]
    report = rewording_report(rows)
    assert "- first set: all 1.00 (1), gap +0.0; tuning 1.00 (1), gap +0.0" in report
    assert "- second set: all 0.50 (2), gap +50.0; tuning 0.50 (2), gap +50.0" in report
