"""A note's sentence may lead as the closest answer only where it gives the day a "when"
asks for and no page's sentence writes one ("Дархан дахь ... компанитай танилцах уулзалт
2026-11-03-ны өдөр")."""

from __future__ import annotations

from read_agent.extractive.answer import closest_candidates
from read_agent.extractive.evidence import Evidence
from read_agent.reading import read

PAGE = Evidence("Энхтуяа — логистикийн захирал", "people/энхтуяа", "Энхтуяа", "2026-08-12", "field")
NOTE = Evidence(
    "Дархан дахь нэг ложистикийн компанитай танилцах уулзалт 2026-11-03-ны өдөр товлогдсон.",
    "source/updates/2026-10-23-ub-office-weekly.md",
    "Weekly",
    "2026-10-23",
    "source",
)


def candidates(question: str, page: float, note: float, leads: bool = True) -> list[Evidence]:
    scored = [((1.0, page), PAGE), ((1.0, note), NOTE)]
    return closest_candidates(read(question), scored, [PAGE, NOTE], lambda p: leads)


def test_a_note_giving_the_day_asked_where_no_page_does_may_lead() -> None:
    assert candidates("When is the meeting in Darkhan?", 0.5, 0.5) == [NOTE]
    # not when it is off the subject or window asked
    assert candidates("When is the meeting in Darkhan?", 0.5, 0.5, leads=False) == [PAGE]


def test_a_note_does_not_lead_a_question_for_anything_else() -> None:
    # a "what" question: the page's sentence, even when the note holds more words
    assert candidates("What is planned in Darkhan?", 0.5, 0.5) == [PAGE]
    assert candidates("What is planned in Darkhan?", 0.5, 0.75) == [PAGE]
    # a note holding fewer of the words asked than the page does not lead either
    assert candidates("When is the meeting in Darkhan?", 0.75, 0.5) == [PAGE]
