"""A question in one language about a note written in the other: the glossary's business
words carry it across ("нэхэмжлэлийг хэн илгээх вэ?" is answered by the English action
item "Alex Kim: send invoice for the pilot")."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_who_sends_the_invoice_asked_in_mongolian(example: IngestServer) -> None:
    first = lines(ask(example, "Globex-ийн пилотын нэхэмжлэлийг хэн илгээх ёстой вэ?"))[0]
    assert "Alex Kim: send invoice for the pilot" in first, first
