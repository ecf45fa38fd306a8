"""The evidence for a claim: the brief's quotes that say no word of the claim are not
evidence for it ("the Globex go-live ... in November 2026": not the same month's news
of the Mongolian localization); those that say some stay first, in the brief's order."""

from __future__ import annotations

from tests.ingest_agent.conftest import IngestServer
from tests.read_agent.extractive.conftest import ask, lines


def test_a_quote_saying_nothing_of_the_claim_is_no_evidence_for_it(
    example: IngestServer,
) -> None:
    said = lines(
        ask(
            example,
            "What records support the Globex go-live of all eight warehouses in November 2026?",
        )
    )
    assert said[0].startswith("Evidence for “Globex go-live of all eight warehouses"), said
    assert any("Go-live for all eight Globex warehouses on 2026-12-01" in x for x in said), said
    assert not any("Mongolian Localization moved" in x for x in said), said
