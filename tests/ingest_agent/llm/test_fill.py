"""The small profile's extraction: the rules read the note, the model fills empty fields."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator

import pytest

from ingest_agent.extract.rules import RulesExtractor
from ingest_agent.llm.extractor import LLMExtractor
from ingest_agent.records import Source
from memserver.clients.config import EndpointSettings
from memserver.clients.llm import LLMClient
from memserver.clients.profile import SMALL
from memserver.kb.schema import load_schema
from tests.fixtures.kb import EXAMPLE_KB
from tests.fixtures.llm_server import LLMServer

SCHEMA = load_schema(EXAMPLE_KB)
NOTE = Source(
    "people/bob.md",
    "---\ntype: person\ntitle: Bob Martinez\n---\n\n"
    "Bob Martinez runs operations from the Austin office.\n\n"
    "Alice Chen, our account manager, introduced him.\n",
    "0" * 64,
    dt.date(2026, 11, 12),
)


@pytest.fixture
def extractor(llm_endpoint: EndpointSettings) -> Iterator[LLMExtractor]:
    client = LLMClient(llm_endpoint, max_attempts=1)
    yield LLMExtractor(SCHEMA, client, SMALL)
    client.close()


def test_the_model_fills_only_empty_fields_and_what_the_note_does_not_say_is_dropped(
    llm_server: LLMServer, extractor: LLMExtractor
) -> None:
    rules = RulesExtractor(SCHEMA).extract(NOTE)
    assert [(d.folder, d.title, d.page.fields) for d in rules.drafts] == [
        ("people", "Bob Martinez", {})
    ]
    llm_server.enqueue(
        json.dumps(
            {
                "people/Bob Martinez": {
                    "location": "Austin office",
                    "email": "bob@globex.com",  # written nowhere
                    "role": "account manager",  # stated, but of Alice
                },
                "people/Alice Chen": {"role": "account manager"},  # not asked about
            }
        )
    )
    filled = extractor.fill(NOTE, rules)
    asked = llm_server.requests[0]
    assert asked["response_format"]["type"] == "json_schema"
    properties = asked["response_format"]["json_schema"]["schema"]["properties"]
    assert list(properties) == ["people/Bob Martinez"]
    assert {"role", "email", "location"} <= set(properties["people/Bob Martinez"]["properties"])
    [draft] = filled.drafts
    assert draft.page.fields == {"location": "Austin office"}
    assert filled.extractor == "llm"
    assert any("bob@globex.com" in d and "not what the note says" in d for d in filled.dropped)
    assert any("role" in d and "not stated next to 'Bob Martinez'" in d for d in filled.dropped)
    assert filled.filled_of("people", ["Bob Martinez"]) == {"location"}


def test_nothing_empty_means_no_model_call(llm_server: LLMServer, extractor: LLMExtractor) -> None:
    note = Source("n.md", "Nothing to read here.", "0" * 64, dt.date(2026, 11, 12))
    rules = RulesExtractor(SCHEMA).extract(note)
    assert extractor.fill(note, rules) is rules
    assert llm_server.requests == []
