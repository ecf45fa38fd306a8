"""An item of a list whose label says a word asked ("Action plan:" for "what did they
plan ...") brings the rest of its list: the label names what is asked."""

from __future__ import annotations

from read_agent.extractive.evidence import Evidence
from read_agent.extractive.ranking import with_lists
from read_agent.reading import read

PAGE = "incidents/2026-07-01-renewal-note-harbor-freight"


def item(text: str, heading: str, kind: str = "section") -> Evidence:
    return Evidence(text, PAGE, "Harbor Freight renewal note", "2026-07-01", kind, heading)


PLAN = [
    item("Jonathan drafts a revised proposal with a 25% discount.", "Notes Action plan"),
    item("Maya runs a workshop on Harbor's reporting.", "Notes Action plan"),
    item("Luis assesses the risk of a switch.", "Notes Action plan"),
]
POINTS = [item("Harbor's renewal needs a $12,000 commitment.", "Notes Key points")]


def test_an_item_under_a_label_asked_brings_its_list_in_the_page_s_order() -> None:
    reading = read("What did we plan to keep Harbor as a customer?")
    top = [PLAN[1], POINTS[0]]
    shown = with_lists(top, [*POINTS, *PLAN], reading)
    assert shown == [PLAN[1], PLAN[0], PLAN[2], POINTS[0]]


def test_a_label_the_question_does_not_ask_brings_nothing() -> None:
    reading = read("What discount did Harbor get?")
    assert with_lists([PLAN[0]], PLAN, reading) == [PLAN[0]]
    # nor does a note's turn under its speaker's name
    turn = item("I will send the plan.", "Maya", kind="source")
    asked = read("What did Maya plan?")
    assert with_lists([turn], [turn, *PLAN], asked) == [turn]
