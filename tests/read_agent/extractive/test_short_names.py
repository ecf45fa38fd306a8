"""A who question answered by a sentence that names the person by a short name ("Priya
will own ...") says whose name it is, from the entity index (an alias of her page), and
cites her page; a name the line already says in full is not said again."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_first_name_in_a_who_answer_is_said_in_full(example: IngestServer) -> None:
    first = lines(ask(example, "Who is responsible for the rollout at Globex end to end?"))[0]
    assert "Priya will own" in first, first
    assert "Priya: Priya Shah [people/priya-shah]" in first, first


def test_a_full_name_is_not_said_again(example: IngestServer) -> None:
    first = lines(ask(example, "Who is the sponsor of the Globex pilot?"))[0]
    assert "Bob Martinez" in first and ": Bob Martinez [" not in first, first
