"""A window and a subject, nothing else asked ("what happened with Initech at the end of
June 2026?"): the events of that subject in the window, not its profile nor everyone's
events; a part of a month is read as its days."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_the_subject_s_events_in_a_part_of_a_month(example: IngestServer) -> None:
    said = lines(ask(example, "What happened with Initech at the end of June 2026?"))
    assert "Dates: 2026-06-21 and 2026-06-30" in "\n".join(said), said
    listed = [line for line in said if line.startswith("- ")]
    assert listed and all("Initech" in line for line in listed), listed
    assert any("quarterly check-in" in line for line in listed), listed


def test_a_sentence_saying_a_day_of_the_window_is_in_it(example: IngestServer) -> None:
    # the project's line is not dated, but it writes 2026-09-14, inside mid-September:
    # it leads before the August sentence that only says "starting mid-September"
    first = lines(ask(example, "When did the Globex pilot start in mid-September 2026?"))[0]
    assert "Start: 2026-09-14 (pilot)" in first, first
