"""Meetings with a subject in a window: only that subject's meetings (the meetings whose
company field holds it), and when none is in the window, the nearest ones before and
after it: a window people speak of ("late October") has a fuzzy edge."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_only_the_subject_s_meetings_in_the_window(example: IngestServer) -> None:
    said = lines(ask(example, "Which meetings with Globex took place in October 2026?"))
    assert said[0].startswith("1 found: 2026-10-14"), said
    listed = [line for line in said if line.startswith("- ")]
    assert listed and all("Globex" in line for line in listed), listed
    assert not any("Initech" in line for line in listed), listed  # its renewal call, 10-20


def test_an_empty_window_names_the_subject_s_nearest_meetings(example: IngestServer) -> None:
    said = lines(ask(example, "Which meetings with Initech took place in late October 2026?"))
    assert said[0] == "No meetings between 2026-10-21 and 2026-10-31; the nearest:", said
    listed = [line for line in said if line.startswith("- ")]
    # the call of 2026-10-20, just before the window, with whom it was held
    assert listed and listed[0].startswith("- 2026-10-20 · Initech renewal call"), listed
    assert "Joanna Price" in listed[0], listed
    assert listed and all("Initech" in line for line in listed), listed


def test_the_first_line_names_a_whole_title(example: IngestServer) -> None:
    # the title holds a dash itself; what is said after it on its line is not the title
    said = lines(ask(example, "Which meetings with Initech took place in June 2026?"))
    assert said[0] == "1 found: 2026-06-25 · Initech — quarterly check-in (Q2).", said
