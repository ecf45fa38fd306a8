"""Arm weights for the fusion (memserver/search/weights.py), rule by rule."""

from __future__ import annotations

import datetime as dt

from memserver.search.fusion import Hit
from memserver.search.intent import Intent
from memserver.search.settings import ARMS
from memserver.search.weights import arm_weights
from memserver.timeparse.parse import parse_time

NOW = dt.datetime(2026, 9, 30, 10, 0, tzinfo=dt.UTC)


def intent(kind: str, terms: tuple[str, ...] = ("globex",)) -> Intent:
    return Intent(kind, terms, terms, (), (), (), None, ())


def test_the_kind_of_question_picks_the_arm_it_trusts() -> None:
    plain = parse_time("globex", now=NOW)
    assert arm_weights(intent("identifier"), plain, {})["keyword"] == 2.0
    assert arm_weights(intent("entity"), plain, {})["title"] == 2.0
    assert arm_weights(intent("relational"), plain, {})["graph"] == 2.5
    concept = arm_weights(intent("concept"), plain, {})
    assert concept["vector"] > ARMS.weights["vector"] > concept["keyword"]
    windowed = arm_weights(intent("entity"), parse_time("globex last week", now=NOW), {})
    assert windowed["timeline"] == 1.5 and windowed["dated"] == 1.0


def test_keyword_evidence_weakens_without_every_word_and_rules_sources_with_a_rare_one() -> None:
    words = ("cold", "storage", "alarms")
    plain = parse_time("cold storage alarms", now=NOW)
    some = {"keyword": [Hit("meetings/a", "meetings", 1.0, "x", None, "two_terms")]}
    assert (
        arm_weights(intent("concept", words), plain, some)["keyword"] == 0.8 * ARMS.partial_keyword
    )
    every = {"keyword": [Hit("meetings/a", "meetings", 1.0, "x", None, "all_terms")]}
    assert arm_weights(intent("concept", words), plain, every)["keyword"] == 0.8
    rare_hit = Hit("source/a.md", "source", 9.0, "x", None, "rare_term")
    rare = {"source_keyword": [rare_hit], "source_vector_x1": [rare_hit]}
    weights = arm_weights(intent("concept", words), plain, rare)
    assert weights["source_vector"] == 0.0 and weights["source_keyword"] == 2.0
    assert weights["source_vector_x1"] == 0.0  # an LLM rewrite's nearest sentences too
