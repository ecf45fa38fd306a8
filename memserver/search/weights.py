"""How much each retrieval arm counts in the fusion (``memserver.search.fusion.fuse`` weights),
by the kind of question (``memserver.search.intent``), its time window and what the arms found.

A name or identifier favours the title and keyword arms, a sentence with no name in it the
vector arms, a relation the graph, a window the dated arms; a long question no chunk holds
whole weakens the keyword arm, and a name almost no raw source holds leaves the sources'
order to the keyword arm. The values are :data:`memserver.search.settings.ARMS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from memserver.search.fusion import Hit
from memserver.search.intent import Intent
from memserver.search.settings import ARMS, ArmSettings
from memserver.timeparse.window import TimeQuery

EXPANSION_ARMS = ("keyword_x", "vector_x", "source_keyword_x", "source_vector_x")


def arm_weights(
    intent: Intent,
    tq: TimeQuery,
    found: Mapping[str, list[Hit]],
    settings: ArmSettings = ARMS,
) -> dict[str, float]:
    """The weight of each arm's ranks in the fusion, for this question and what the arms
    found."""
    s = settings
    weights = dict(s.weights)
    for name in found:
        if name.startswith(EXPANSION_ARMS):
            weights[name] = s.expansion_weight
    if intent.kind == "identifier":
        weights["keyword"] = s.identifier_keyword
        weights["source_keyword"] = s.identifier_keyword
    elif intent.kind == "entity":
        weights["title"] = s.entity_title
    elif intent.kind == "relational":
        weights["graph"] = s.relational_graph
    elif intent.kind == "concept":
        for arm in ("vector", "source_vector"):
            weights[arm] = s.concept_vector
        for arm in ("keyword", "source_keyword"):
            weights[arm] = s.concept_keyword
    if tq.window is not None:
        weights["timeline"] = s.window_timeline
        weights["dated"] = s.window_dated
    for arm in ("keyword", "source_keyword"):
        hits = found.get(arm, [])
        strong = ("all_terms", "rare_term")
        if len(intent.terms) >= 3 and hits and all(h.detail not in strong for h in hits):
            # No chunk has all the words of a long question: weak evidence.
            weights[arm] *= s.partial_keyword
    if any(h.detail == "rare_term" for h in found.get("source_keyword", [])):
        # The question names a word only one or two notes hold: those notes answer it.
        weights["source_keyword"] = max(weights["source_keyword"], s.rare_source_keyword)
        for arm in [a for a in weights if a.startswith("source_vector")]:
            weights[arm] = 0.0
    return weights
