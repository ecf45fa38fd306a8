"""A question whose words ask a field the page it names does not hold ("which company
employs Alex Novak?", none recorded) is answered by what the page does say, its fields
and newest facts, the field asked said first to be not recorded; never by another
page's value of that field."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_field_the_page_does_not_hold_is_said_not_recorded(example: IngestServer) -> None:
    said = lines(ask(example, "Which company employs Alex Novak, and in what role?"))
    assert said[0].startswith("Alex Novak — company: not recorded; role: Procurement Manager")
    assert "reports to: Joanna Price" in said[0], said[0]
    assert any("Initech" in x for x in said[1:5]), said  # his newest facts name it
    held = lines(ask(example, "Which company does Bob Martinez work for?"))[0]
    assert "company: Globex" in held and "not recorded" not in held, held


def test_a_question_of_the_memory_s_kinds_is_not_answered_by_the_profile(
    example: IngestServer,
) -> None:
    # whether the sources agree is the brief's to answer, not the page's profile
    said = lines(ask(example, "Do the sources agree on Alex Novak's company?"))
    assert not said[0].startswith("Alex Novak — company: not recorded"), said[0]
