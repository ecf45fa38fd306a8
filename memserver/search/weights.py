"""How much each retrieval arm counts in the fusion (``memserver.search.fusion.fuse`` weights),
by the kind of question (``memserver.search.intent``), its time window and what the arms found.

A name or identifier favours the title and keyword arms, a sentence with no name in it the
vector arms, a relation the graph, a window the dated arms; a long question no chunk holds
whole weakens the keyword arm, and a name almost no raw source holds leaves the sources'
order to the keyword arm.
"""

from __future__ import annotations

from collections.abc import Mapping

from memserver.search.fusion import Hit
from memserver.search.intent import Intent
from memserver.timeparse.window import TimeQuery

EXPANSION_WEIGHT = 0.5  # an LLM rewrite of the question (tokenmax)
PARTIAL_KEYWORD = 0.6  # no chunk holds every word of a long question

BASE_WEIGHTS: Mapping[str, float] = {
    "keyword": 1.0,
    "vector": 1.0,
    "title": 1.2,
    "timeline": 1.0,
    "dated": 0.6,
    "graph": 1.5,
    "graph_augment": 0.3,
    "source_keyword": 1.0,
    "source_vector": 1.0,
    "source_note": 2.0,
}


def arm_weights(intent: Intent, tq: TimeQuery, found: Mapping[str, list[Hit]]) -> dict[str, float]:
    """The weight of each arm's ranks in the fusion, for this question and what the arms
    found."""
    weights = dict(BASE_WEIGHTS)
    for name in found:
        if name.startswith(("keyword_x", "vector_x", "source_keyword_x", "source_vector_x")):
            weights[name] = EXPANSION_WEIGHT
    if intent.kind == "identifier":
        weights["keyword"] = 2.0
        weights["source_keyword"] = 2.0
    elif intent.kind == "entity":
        weights["title"] = 2.0
    elif intent.kind == "relational":
        weights["graph"] = 2.5
    elif intent.kind == "concept":
        # A sentence with no name in it: meaning matters more than shared words.
        for arm in ("vector", "source_vector"):
            weights[arm] = 1.4
        for arm in ("keyword", "source_keyword"):
            weights[arm] = 0.8
    if tq.window is not None:
        weights["timeline"] = 1.5
        weights["dated"] = 1.0
    for arm in ("keyword", "source_keyword"):
        hits = found.get(arm, [])
        strong = ("all_terms", "rare_term")
        if len(intent.terms) >= 3 and hits and all(h.detail not in strong for h in hits):
            # No chunk has all the words of a long question: weak evidence.
            weights[arm] *= PARTIAL_KEYWORD
    if any(h.detail == "rare_term" for h in found.get("source_keyword", [])):
        # The question names a word only one or two notes hold (a ticket, a figure, a
        # place): those notes answer it. Among notes alike in every other word, the
        # nearest in meaning add nothing but noise to that (measured: eval_search).
        weights["source_keyword"] = max(weights["source_keyword"], 2.0)
        for arm in [a for a in weights if a.startswith("source_vector")]:
            weights[arm] = 0.0
    return weights
