from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from types import MappingProxyType

import pytest

from memserver.clients.config import EndpointSettings
from memserver.clients.llm import (
    LLMClient,
    Reranker,
    TokenBudget,
    extract_json_object,
    strip_think,
)
from memserver.errors import BudgetExceeded, LLMError
from tests.fixtures.llm_server import HTTPError, LLMServer, Reply, Stall, tool_call

USER = [{"role": "user", "content": "hello"}]


Closer = list[LLMClient | Reranker]


@pytest.fixture
def opened() -> Iterator[Closer]:
    """Clients made by a test, closed after it (unclosed sockets fail the suite)."""
    clients: Closer = []
    yield clients
    for item in clients:
        item.close()


@pytest.fixture
def client(opened: Closer) -> Callable[..., LLMClient]:
    def make(endpoint: EndpointSettings, budget: TokenBudget | None = None) -> LLMClient:
        llm = LLMClient(endpoint, budget, backoff=0.01, max_backoff=0.05)
        opened.append(llm)
        return llm

    return make


@pytest.fixture
def reranker(opened: Closer, llm_endpoint: EndpointSettings) -> Callable[[], Reranker]:
    def make() -> Reranker:
        rr = Reranker(dataclasses.replace(llm_endpoint, name="rerank", model="rr"))
        opened.append(rr)
        return rr

    return make


def test_chat_returns_text_and_usage(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.enqueue("Hi there")
    result = client(llm_endpoint).chat(USER)
    assert result.content == "Hi there"
    assert result.tool_calls == ()
    assert result.usage["total_tokens"] == (
        result.usage["prompt_tokens"] + result.usage["completion_tokens"]
    )
    assert llm_server.requests[0]["model"] == "test-model"
    assert llm_server.requests[0]["messages"] == USER


def test_chat_parses_tool_calls_and_sends_tools(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "kb_search",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
            },
        }
    ]
    llm_server.enqueue(
        Reply(
            tool_calls=[
                tool_call("kb_search", {"query": "Globex"}, id="c1"),
                tool_call("x", "{bad"),
            ]
        )
    )
    result = client(llm_endpoint).chat(USER, tools=tools)
    assert [c.name for c in result.tool_calls] == ["kb_search", "x"]
    assert result.tool_calls[0].id == "c1"
    assert result.tool_calls[0].arguments == {"query": "Globex"}
    assert result.tool_calls[1].arguments == {}
    assert result.tool_calls[1].raw_arguments == "{bad"
    assert result.finish_reason == "tool_calls"
    assert llm_server.requests[0]["tools"] == tools
    message = result.as_message()
    assert message["tool_calls"][0]["function"]["name"] == "kb_search"


def test_think_blocks_are_stripped(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.enqueue("<think>The user wants a greeting.\nOK.</think>\n\nHello!")
    assert client(llm_endpoint).chat(USER).content == "Hello!"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<think>a</think>b<think>c</think>d", "bd"),
        ("reasoning without an opening tag</think>answer", "answer"),
        ("answer<think>truncated reasoning", "answer"),
        ("<thinking>x</thinking> y", "y"),
        ("no tags", "no tags"),
    ],
)
def test_strip_think_variants(raw: str, clean: str) -> None:
    assert strip_think(raw) == clean


def test_extract_json_object_finds_first_object_in_text() -> None:
    text = 'Sure! Here it is:\n```json\n{"a": {"b": "}"}, "c": [1]}\n```\nand {"d": 2}'
    assert extract_json_object(text) == {"a": {"b": "}"}, "c": [1]}
    assert extract_json_object('<think>{not this}</think> {"x": 1}') == {"x": 1}
    assert extract_json_object("no json here") is None


def test_chat_json_uses_json_mode(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.enqueue('{"answer": 42}')
    value = client(llm_endpoint).chat_json([{"role": "user", "content": "Give JSON"}])
    assert value == {"answer": 42}
    assert llm_server.requests[0]["response_format"] == {"type": "json_object"}


def test_chat_json_falls_back_when_json_mode_is_rejected(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.json_mode_supported = False
    llm_server.enqueue('<think>hmm</think>Here you go: {"folders": {"people": 0.9}} done', "{}")
    llm = client(llm_endpoint)
    assert llm.chat_json(USER) == {"folders": {"people": 0.9}}
    assert "response_format" in llm_server.requests[0]
    assert "response_format" not in llm_server.requests[1]
    # The client remembers: the next call goes straight to plain text.
    assert llm.chat_json(USER) == {}
    assert len(llm_server.requests) == 3
    assert "response_format" not in llm_server.requests[2]
    # A message mentioning JSON was added, as OpenAI requires for JSON mode.
    assert "json" in json.dumps(llm_server.requests[0]["messages"]).lower()


def test_chat_json_repairs_once_then_names_the_endpoint(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.enqueue("not json", '{"ok": true}')
    assert client(llm_endpoint).chat_json(USER) == {"ok": True}
    llm_server.enqueue("still not json", "nope")
    with pytest.raises(LLMError) as info:
        client(llm_endpoint).chat_json(USER)
    assert llm_server.base_url in str(info.value)


def test_retries_on_429_then_succeeds(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.enqueue(HTTPError(429, headers={"Retry-After": "0"}), 503, "finally")
    assert client(llm_endpoint).chat(USER).content == "finally"
    assert len(llm_server.requests) == 3


def test_gives_up_after_bounded_attempts_with_endpoint_in_error(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.enqueue(*([HTTPError(500, "boom")] * 5))
    with pytest.raises(LLMError) as info:
        client(llm_endpoint).chat(USER)
    message = str(info.value)
    assert llm_server.base_url in message
    assert "HTTP 500" in message and "boom" in message and "3 attempts" in message
    assert len(llm_server.requests) == 3  # 1 + max_retries (2)


def test_client_errors_are_not_retried(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.api_key = "right"
    with pytest.raises(LLMError) as info:
        client(llm_endpoint).chat(USER)
    assert "HTTP 401" in str(info.value) and "api_key_env" in str(info.value)
    assert len(llm_server.requests) == 1


def test_api_key_is_sent_as_bearer(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.api_key = "sk-test"
    llm_server.enqueue("ok")
    endpoint = dataclasses.replace(llm_endpoint, api_key="sk-test")
    assert client(endpoint).chat(USER).content == "ok"
    assert llm_server.calls[0].headers["authorization"] == "Bearer sk-test"


def test_timeout_is_retried_and_reported(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    endpoint = dataclasses.replace(
        llm_endpoint, timeout=0.2, options=MappingProxyType({"max_retries": 1})
    )
    llm_server.enqueue(Stall(1.0, then="late"), "on time")
    assert client(endpoint).chat(USER).content == "on time"
    llm_server.enqueue(Stall(1.0), Stall(1.0))
    with pytest.raises(LLMError, match=r"timed out after 0\.2s"):
        client(endpoint).chat(USER)


def test_unreachable_endpoint_is_named(
    client: Callable[..., LLMClient], llm_endpoint: EndpointSettings
) -> None:
    endpoint = dataclasses.replace(
        llm_endpoint, base_url="http://127.0.0.1:9/v1", options=MappingProxyType({"max_retries": 0})
    )
    with pytest.raises(LLMError) as info:
        client(endpoint).chat(USER)
    assert "cannot reach http://127.0.0.1:9/v1" in str(info.value)


def test_budget_counts_usage_and_stops_the_run(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    budget = TokenBudget(100)
    llm = client(llm_endpoint, budget)
    llm_server.enqueue(
        Reply("a", usage={"prompt_tokens": 50, "completion_tokens": 30, "total_tokens": 80})
    )
    llm_server.enqueue(
        Reply("b", usage={"prompt_tokens": 50, "completion_tokens": 30, "total_tokens": 80})
    )
    assert llm.chat(USER).content == "a"
    assert budget.used == 80 and budget.remaining == 20
    # The answer already paid for is returned; the budget is now overspent...
    assert llm.chat(USER).content == "b"
    assert budget.used == 160
    # ...so the next call stops before reaching the server.
    llm_server.enqueue("c")
    with pytest.raises(BudgetExceeded, match="160 of 100 tokens"):
        llm.chat(USER)
    assert len(llm_server.requests) == 2


def test_budget_refuses_a_prompt_larger_than_what_is_left(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    llm_server.enqueue("unused")
    llm = client(llm_endpoint, TokenBudget(50))
    with pytest.raises(BudgetExceeded):
        llm.chat([{"role": "user", "content": "x" * 1000}])
    assert llm_server.requests == []


def test_budget_charge_is_strict_by_default() -> None:
    budget = TokenBudget(10)
    budget.charge({"prompt_tokens": 4, "completion_tokens": 4})
    assert budget.used == 8
    with pytest.raises(BudgetExceeded):
        budget.charge({"total_tokens": 5})
    unlimited = TokenBudget(None)
    unlimited.charge({"total_tokens": 10**9})
    assert unlimited.remaining is None


def test_stream_chat_yields_text_without_think_and_charges_usage(
    client: Callable[..., LLMClient], llm_server: LLMServer, llm_endpoint: EndpointSettings
) -> None:
    budget = TokenBudget(None)
    llm_server.stream_chunk_chars = 3  # splits the tags across chunks
    llm_server.enqueue("<think>private reasoning</think>\nThe answer is 42.")
    pieces = list(client(llm_endpoint, budget).stream_chat(USER))
    assert "".join(pieces) == "The answer is 42."
    assert len(pieces) > 1
    assert llm_server.requests[0]["stream"] is True
    assert budget.used > 0 and budget.calls == 1


def test_reranker_jina_shape(llm_server: LLMServer, reranker: Callable[[], Reranker]) -> None:
    scores = reranker().rerank("globex contract", ["weather today", "globex signed a contract"])
    assert scores[1] > scores[0]
    body = llm_server.calls[-1].body
    assert body["documents"] == ["weather today", "globex signed a contract"]
    assert body["model"] == "rr"


def test_reranker_tei_shape(llm_server: LLMServer, reranker: Callable[[], Reranker]) -> None:
    llm_server.rerank_shape = "tei"
    rr = reranker()
    assert rr.rerank("alpha", ["beta", "alpha beta"]) == [0.0, 1.0]
    assert rr.rerank("beta", ["beta"]) == [1.0]
    # The first call learned the TEI shape; later calls send it directly.
    assert [call.body.get("texts") is not None for call in llm_server.calls] == [False, True, True]


def test_reranker_failure_names_the_url(
    llm_server: LLMServer, reranker: Callable[[], Reranker]
) -> None:
    llm_server.enqueue_rerank(HTTPError(500, "down"))
    rr = reranker()
    with pytest.raises(LLMError, match=r"rerank: .*/v1/rerank answered HTTP 500"):
        rr.rerank("q", ["d"])
    assert rr.rerank("q", []) == []
