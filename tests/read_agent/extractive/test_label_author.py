"""A label that opens a line of a chat message ("For everyone: ...") is not who said it."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_label_in_a_chat_message_is_not_its_author(example: IngestServer) -> None:
    said = lines(ask(example, "What invoice numbering rule did Maria set?"))
    rule = [line for line in said if "INV-YYYY-NNN" in line]
    assert rule and "by For everyone" not in rule[0], said
