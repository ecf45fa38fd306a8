"""Structured output under a JSON Schema, and one deadline per call (retries included)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest

from memserver.clients.config import EndpointSettings
from memserver.clients.llm import LLMClient, schema_problems
from memserver.errors import LLMTimeout, LLMUnusable
from tests.fixtures.llm_server import LLMServer, Stall

USER = [{"role": "user", "content": "Who attended?"}]
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"attendees": {"type": "array", "items": {"type": "string"}}},
    "required": ["attendees"],
    "additionalProperties": False,
}


@pytest.fixture
def opened() -> Iterator[list[LLMClient]]:
    clients: list[LLMClient] = []
    yield clients
    for client in clients:
        client.close()


def make(opened: list[LLMClient], endpoint: EndpointSettings, **kwargs: Any) -> LLMClient:
    client = LLMClient(endpoint, backoff=0.01, max_backoff=0.05, **kwargs)
    opened.append(client)
    return client


def test_the_schema_is_sent_and_a_fitting_answer_returned(
    opened: list[LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.enqueue('{"attendees": ["Alice Chen"]}')
    value = make(opened, llm_endpoint).chat_structured(USER, SCHEMA, name="attendance")
    assert value == {"attendees": ["Alice Chen"]}
    sent = llm_server.requests[0]["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"] == {"name": "attendance", "schema": SCHEMA}


def test_an_answer_off_the_schema_is_repaired_once_then_unusable(
    opened: list[LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm = make(opened, llm_endpoint)
    llm_server.enqueue('{"attendees": "Alice"}', '{"attendees": ["Alice"]}')
    assert llm.chat_structured(USER, SCHEMA) == {"attendees": ["Alice"]}
    repair = llm_server.requests[1]["messages"][-1]["content"]
    assert "does not fit the JSON Schema" in repair and "attendees" in repair
    llm_server.enqueue('{"people": []}', "no json at all")
    with pytest.raises(LLMUnusable, match="does not fit the schema"):
        llm.chat_structured(USER, SCHEMA)
    # without validation any JSON object comes back for the caller to check
    llm_server.enqueue('{"people": []}')
    assert llm.chat_structured(USER, SCHEMA, validate=False) == {"people": []}


def test_a_provider_without_json_schema_is_asked_in_json_mode_from_then_on(
    opened: list[LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.json_schema_supported = False
    llm_server.enqueue('{"attendees": []}', '{"attendees": ["Bob"]}')
    llm = make(opened, llm_endpoint)
    assert llm.chat_structured(USER, SCHEMA) == {"attendees": []}
    assert llm.chat_structured(USER, SCHEMA) == {"attendees": ["Bob"]}
    formats = [r.get("response_format", {}).get("type") for r in llm_server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]


def test_a_call_past_its_deadline_is_given_up_without_another_attempt(
    opened: list[LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    # the endpoint would wait 30 s and retry twice; the deadline ends the call at 0.5 s
    endpoint = dataclasses.replace(
        llm_endpoint, timeout=30, options=MappingProxyType({"max_retries": 2})
    )
    llm_server.enqueue(Stall(3.0, then="late"), "never asked")
    with pytest.raises(LLMTimeout) as info:
        make(opened, endpoint, deadline=0.5).chat(USER)
    assert "within its 0.5s deadline after 1 attempt" in str(info.value)
    assert len(llm_server.requests) == 1
    assert llm_server.pending == 1


def test_schema_problems_name_where_the_answer_is_wrong() -> None:
    assert schema_problems({"attendees": ["A"]}, SCHEMA) == []
    assert schema_problems(None, SCHEMA) == ["the answer is not one JSON object"]
    problems = schema_problems({"attendees": [1], "title": "x"}, SCHEMA)
    assert any(p.startswith("attendees.0:") for p in problems)
    assert any("title" in p for p in problems)
