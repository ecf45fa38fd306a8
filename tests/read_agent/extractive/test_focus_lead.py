"""A question that asks for a thing by its kind ("what ETA accuracy did ...") is answered
by a sentence that names that kind, before one that holds more of the question's other
words but names nothing of the kind asked."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_sentence_naming_the_kind_asked_for_leads(example: IngestServer) -> None:
    # the project's goal holds "Globex", "eight" and "warehouses" but names no accuracy
    first = lines(ask(example, "What ETA accuracy did Globex reach across all eight warehouses?"))[
        0
    ]
    assert "ETA accuracy" in first, first


def test_a_kind_no_sentence_names_changes_nothing(example: IngestServer) -> None:
    first = lines(ask(example, "Which port did the Globex pilot use?"))[0]
    assert first.startswith("The knowledge base has no sentence that answers"), first
