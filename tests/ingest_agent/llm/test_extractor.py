"""LLM extraction against the scripted OpenAI-compatible server (real HTTP)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Iterator

import pytest

from ingest_agent.errors import ExtractionError
from ingest_agent.llm.asking import folder_prompt
from ingest_agent.llm.extractor import LLMExtractor, answer_schema
from ingest_agent.pages.merge import Order
from ingest_agent.records import Source
from memserver.clients.config import EndpointSettings
from memserver.clients.llm import LLMClient, TokenBudget
from memserver.errors import LLMError
from memserver.kb.page import Page
from memserver.kb.schema import load_schema
from tests.fixtures.kb import EXAMPLE_KB
from tests.fixtures.llm_server import LLMServer, Stall

SCHEMA = load_schema(EXAMPLE_KB)
NOTE = Source(
    "slack/deals/x.md",
    "Globex signed yesterday for 24,000 a year; Bob, our VP, was there. <private>salary 142,000</private>",
    "0" * 64,
    dt.date(2026, 11, 19),
)


@pytest.fixture
def clients() -> Iterator[list[LLMClient]]:
    made: list[LLMClient] = []
    yield made
    for client in made:
        client.close()


@pytest.fixture
def make(clients: list[LLMClient]) -> Callable[..., LLMExtractor]:
    def build(endpoint: EndpointSettings, budget: TokenBudget | None = None) -> LLMExtractor:
        client = LLMClient(endpoint, budget, max_attempts=2, backoff=0.01)
        clients.append(client)
        return LLMExtractor(SCHEMA, client)

    return build


def answer(*pages: dict) -> str:
    return json.dumps({"pages": list(pages)})


def test_a_valid_answer_becomes_drafts_with_dates_resolved_against_the_document(
    llm_server: LLMServer, llm_endpoint: EndpointSettings, make: Callable[..., LLMExtractor]
) -> None:
    llm_server.enqueue(
        answer(
            {
                "folder": "companies",
                "title": "Globex",
                "fields": {"status": "customer", "contract_value": "24,000"},
                "sections": {"Summary": "A customer.", "Gossip": "dropped"},
                "timeline": [
                    {"date": "yesterday", "text": "Contract signed."},
                    {"date": "someday", "text": "undatable"},
                ],
            }
        )
    )
    result = make(llm_endpoint).extract(NOTE, ("companies",), ["Globex"])
    [draft] = result.drafts
    assert result.extractor == "llm"
    assert draft.folder == "companies"
    assert draft.page.fields == {"status": "customer", "contract_value": 24000}
    assert list(draft.page.sections) == ["Summary"]
    assert [(e.date, e.source) for e in draft.page.timeline] == [
        (dt.date(2026, 11, 18), "slack/deals/x.md")
    ]
    assert any("Gossip" in d for d in result.dropped)
    assert any("timeline[1]" in d for d in result.dropped)
    request = json.dumps(llm_server.requests[0], ensure_ascii=False)
    assert "142,000" not in request and "[redacted]" in request
    system = llm_server.requests[0]["messages"][0]["content"]
    assert system.startswith("Task: extract")
    assert "Never guess a value" in system  # the schema's global rules
    assert "`role` is the current job title" in system  # and per-folder rules
    # the note's date is in the user message, so every note shares one system prompt
    assert "2026-11-19" in llm_server.requests[0]["messages"][1]["content"]
    assert "2026-11-19" not in system
    # asked under the answer's JSON Schema
    assert llm_server.requests[0]["response_format"]["type"] == "json_schema"


def test_an_unknown_folder_or_field_is_dropped_and_the_rest_kept(
    llm_server: LLMServer, llm_endpoint: EndpointSettings, make: Callable[..., LLMExtractor]
) -> None:
    llm_server.enqueue(
        answer(
            {"folder": "invoices", "title": "INV-1"},
            {"folder": "people", "title": "Bob", "fields": {"salary": 1, "role": "VP"}},
        )
    )
    result = make(llm_endpoint).extract(NOTE)
    assert [(d.folder, d.page.fields) for d in result.drafts] == [("people", {"role": "VP"})]
    assert any("no folder 'invoices'" in d and "INV-1" in d for d in result.dropped)
    assert any("no field 'salary'" in d for d in result.dropped)
    assert len(llm_server.requests) == 1  # nothing to retry: the answer was usable


def test_a_misshapen_answer_is_retried_once_with_the_problems_then_fails(
    llm_server: LLMServer, llm_endpoint: EndpointSettings, make: Callable[..., LLMExtractor]
) -> None:
    bad = answer({"folder": "people", "title": ""}, {"folder": "people", "fields": []})
    llm_server.enqueue(bad, answer({"folder": "people", "title": "Bob"}))
    result = make(llm_endpoint).extract(NOTE)
    assert [d.title for d in result.drafts] == ["Bob"]
    retry = llm_server.requests[1]["messages"][-1]["content"]
    assert "pages[0].title: missing" in retry
    llm_server.reset()
    llm_server.enqueue(bad, bad, bad)
    with pytest.raises(ExtractionError, match="title"):
        make(llm_endpoint).extract(NOTE)
    assert len(llm_server.requests) == 2


def test_not_json_and_timeouts_are_retried_once_then_fail(
    llm_server: LLMServer, llm_endpoint: EndpointSettings, make: Callable[..., LLMExtractor]
) -> None:
    llm_server.enqueue("no json here", "still none", answer())
    with pytest.raises(LLMError, match="JSON"):
        make(llm_endpoint).extract(NOTE)
    assert len(llm_server.requests) == 2
    llm_server.reset()
    fast = dataclasses.replace(llm_endpoint, timeout=0.3)
    llm_server.enqueue(Stall(2.0, then=answer()), Stall(2.0, then=answer()), answer())
    with pytest.raises(LLMError, match="timed out"):
        make(fast).extract(NOTE)
    assert len(llm_server.requests) == 2


def test_merge_keeps_sections_the_answer_leaves_out(
    llm_server: LLMServer, llm_endpoint: EndpointSettings, make: Callable[..., LLMExtractor]
) -> None:
    llm_server.enqueue(json.dumps({"sections": {"Summary": "VP of Operations now."}}))
    existing = Page(title="Bob", type="person", sections={"Summary": "Director.", "Role": "Ops."})
    merged = make(llm_endpoint).merge_sections(
        existing,
        SCHEMA.folder("people"),
        existing.sections,
        {"Summary": "Promoted to VP."},
        Order.NEWER,
        NOTE,
    )
    assert merged == {"Summary": "VP of Operations now.", "Role": "Ops."}
    system = llm_server.requests[0]["messages"][0]["content"]
    assert system.startswith("Task: merge") and "NEWER" in system


def test_the_budget_stops_before_a_call(
    llm_server: LLMServer, llm_endpoint: EndpointSettings, make: Callable[..., LLMExtractor]
) -> None:
    from memserver.errors import BudgetExceeded

    with pytest.raises(BudgetExceeded):
        make(llm_endpoint, TokenBudget(10)).extract(NOTE)
    assert llm_server.requests == []


def test_the_answer_schema_lists_only_schema_folders_and_fields() -> None:
    variants = answer_schema(SCHEMA)["properties"]["pages"]["items"]["oneOf"]
    assert [v["properties"]["folder"]["const"] for v in variants] == list(SCHEMA.folder_names)
    people = variants[0]["properties"]["fields"]
    assert people["additionalProperties"] is False
    assert set(people["properties"]) == set(SCHEMA.folder("people").field_names)


def test_the_model_is_told_what_each_decision_field_means() -> None:
    decisions = folder_prompt(SCHEMA.folder("decisions"))
    assert "alternatives (list): the options weighed and not chosen" in decisions
    assert "rationale (text): the deciding reason" in decisions
    assert "decided_on (date): the day it was decided" in decisions
    variants = answer_schema(SCHEMA)["properties"]["pages"]["items"]["oneOf"]
    [decision] = [v for v in variants if v["properties"]["folder"]["const"] == "decisions"]
    assert {"decided_on", "alternatives", "rationale", "superseded_by"} <= set(
        decision["properties"]["fields"]["properties"]
    )
