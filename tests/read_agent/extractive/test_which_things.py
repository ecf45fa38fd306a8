"""A question asking which things of a kind ("which warehouses ...") is answered by a
sentence that names them next to the kind, not by one holding more of its other words."""

from __future__ import annotations

from read_agent.extractive.ranking import names_things
from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines

ASKED = ["which", "warehouses", "does", "the", "globex", "pilot", "run", "at"]


def test_names_next_to_the_kind_asked_are_found() -> None:
    assert names_things("three warehouses (Denver, Aurora, Pueblo), $18,400", ["warehouses"], ASKED)
    assert names_things("Scope: Denver, Aurora and Pueblo warehouses.", ["warehouses"], ASKED)
    # one name, the subject's own, or a word opening a sentence or heading is no list
    assert not names_things("Globex's three Colorado warehouses", ["warehouses"], ASKED)
    assert not names_things("all eight Globex warehouses. ## Plan Week 0", ["warehouses"], ASKED)
    # names far from the kind name something else
    assert not names_things(
        "Alice Chen and Tom Becker met Bob Martinez about the roll-out plan for all warehouses",
        ["warehouses"],
        ASKED,
    )


def test_which_things_is_answered_by_the_sentence_naming_them(example: IngestServer) -> None:
    # the rollout brief's goal says "pilot" and "Globex warehouses", and not which
    first = lines(ask(example, "Which warehouses does the Globex pilot run at?"))[0]
    assert "Denver" in first and "Pueblo" in first, first
