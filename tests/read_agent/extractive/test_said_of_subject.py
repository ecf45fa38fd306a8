"""What a question asks of the subject it names is answered of that subject: a figure
said of another does not lead, a name that owns what follows is asked for that, and a
day's own pages come first in its listing."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_figure_said_of_another_subject_does_not_lead(example: IngestServer) -> None:
    # the pricing review Alex Kim attended gives a figure of Nomin Trade's: not his pay
    first = lines(ask(example, "What is Alex Kim's pay?"))[0]
    assert "6 dispatchers" not in first and "Nomin Trade" not in first, first


def test_a_name_that_owns_what_follows_is_asked_for_that(example: IngestServer) -> None:
    first = lines(ask(example, "Who is Globex's CEO?"))[0]
    assert "Dana Whitfield" in first and not first.startswith("Globex"), first


def test_a_day_lists_its_own_pages_before_what_came_of_them(example: IngestServer) -> None:
    first, *rest = lines(ask(example, "What happened on 2026-10-14?"))
    listed = [x for x in rest if x.startswith("- ")]
    assert first.startswith(f"{len(listed)} found: 2026-10-14 · Globex pilot review"), first
    assert "Globex pilot review" in listed[0], listed[:3]
    decisions = [x for x in listed if "[decisions/" in x]
    assert decisions and not any("Decision “" in x for x in listed)  # each listed once
