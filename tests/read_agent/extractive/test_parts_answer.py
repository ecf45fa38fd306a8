"""A question of several parts is answered part by part: the sentence holding most of
each part's words comes first among the evidence, in the parts' order."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_each_part_has_its_sentence_in_the_parts_order(example: IngestServer) -> None:
    question = "Which warehouses were in the Globex pilot scope, and what ETA accuracy did the pilot reach?"
    shown = lines(ask(example, question))[:5]
    scope = next(i for i, x in enumerate(shown) if "warehouses" in x and "Closest" not in x)
    accuracy = next(i for i, x in enumerate(shown) if "ETA accuracy" in x)
    assert scope < accuracy, shown
