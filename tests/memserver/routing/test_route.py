from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from memserver.cli import main
from memserver.clients.config import EndpointSettings
from memserver.clients.laya import LayaClient
from memserver.clients.llm import LLMClient, TokenBudget
from memserver.errors import NotFoundError
from memserver.kb.layout import KBPaths
from memserver.kb.schema import FieldSpec, FolderSpec, Schema
from memserver.routing.router import Router
from tests.fixtures.llm_server import LayaServer, LLMServer, hashed_embedding

SCHEMA = Schema(
    timezone="UTC",
    rules="",
    folders=(
        FolderSpec(
            name="people",
            type="person",
            description="People: employees and contacts, their roles and promotions.",
            fields=(FieldSpec("role", "string"), FieldSpec("reports_to", "link")),
        ),
        FolderSpec(
            name="meetings",
            type="meeting",
            description="Meetings, weekly syncs and calls with attendees and outcomes.",
            fields=(FieldSpec("date", "date"), FieldSpec("attendees", "links")),
        ),
        FolderSpec(
            name="decisions",
            type="decision",
            description="Decisions taken, with the reasons and who decided.",
        ),
    ),
)

TEXT = "Weekly sync with Globex: Alice and Bob discussed the carrier contract"


MakeClients = Callable[..., tuple[LLMClient, LayaClient]]


@pytest.fixture
def clients(
    llm_endpoint: EndpointSettings, laya_endpoint: EndpointSettings
) -> Iterator[MakeClients]:
    made: list[LLMClient | LayaClient] = []

    def make(
        llm: EndpointSettings | None = None,
        laya: EndpointSettings | None = None,
        budget: TokenBudget | None = None,
    ) -> tuple[LLMClient, LayaClient]:
        pair = (
            LLMClient(llm or llm_endpoint, budget, max_attempts=1),
            LayaClient(laya or laya_endpoint, max_attempts=1),
        )
        made.extend(pair)
        return pair

    yield make
    for client in made:
        client.close()


def embed(texts: Sequence[str]) -> list[np.ndarray]:
    return [np.asarray(hashed_embedding(text, 64)) for text in texts]


def test_laya_answers_first(
    laya_server: LayaServer, llm_server: LLMServer, clients: MakeClients
) -> None:
    laya_server.answers = {"meetings": 0.93, "people": 0.71, "decisions": 0.2}
    llm, laya = clients()
    result = Router(SCHEMA, llm, laya, embed).route(TEXT)
    assert result.stage == "laya"
    assert [(f.folder, f.score) for f in result.folders] == [("meetings", 0.93), ("people", 0.71)]
    assert result.degraded == ()
    assert [f.folder for f in result.scores] == ["meetings", "people", "decisions"]
    assert llm_server.requests == []  # the LLM was never asked


def test_a_stage_answering_none_is_an_answer(laya_server: LayaServer, clients: MakeClients) -> None:
    laya_server.answers = {"meetings": 0.3, "people": 0.1, "decisions": 0.1}
    llm, laya = clients()
    result = Router(SCHEMA, llm, laya, embed).route(TEXT)
    assert result.stage == "laya" and result.folders == ()


def test_laya_down_falls_through_to_the_llm(
    laya_server: LayaServer, llm_server: LLMServer, clients
) -> None:
    laya_server.error_mode = "500"
    llm_server.enqueue('{"folders": {"meetings": 0.9, "decisions": 0.55, "unknown": 1}}')
    llm, laya = clients()
    result = Router(SCHEMA, llm, laya, embed).route(TEXT)
    assert result.stage == "llm"
    assert result.names == ("meetings", "decisions")
    assert result.degraded == ("laya_unavailable",)
    prompt = json.dumps(llm_server.requests[0]["messages"])
    assert "meetings: Meetings, weekly syncs" in prompt and TEXT in prompt
    assert llm_server.requests[0]["response_format"] == {"type": "json_object"}


def test_llm_answer_shapes_are_tolerated(llm_server: LLMServer, clients: MakeClients) -> None:
    llm, _ = clients()
    router = Router(SCHEMA, llm, None, None)
    llm_server.enqueue('[ignored] {"folders": [{"folder": "People", "score": "0.8"}]}')
    assert router.route(TEXT).names == ("people",)
    llm_server.enqueue('{"meetings": {"probability": 0.7}, "decisions": 0.1}')
    assert router.route(TEXT).names == ("meetings",)


def test_laya_and_llm_down_fall_through_to_lexical(
    laya_server: LayaServer, llm_server: LLMServer, clients
) -> None:
    laya_server.error_mode = "detail"
    llm_server.enqueue(503)
    llm, laya = clients()
    result = Router(SCHEMA, llm, laya, embed).route(TEXT)
    assert result.stage == "lexical"
    assert result.degraded == ("laya_unavailable", "llm_unavailable")
    assert result.names[0] == "meetings"


def test_unreachable_sidecars_cost_accuracy_not_availability(
    clients: MakeClients, llm_endpoint: EndpointSettings, laya_endpoint: EndpointSettings
) -> None:
    llm, laya = clients(
        dataclasses.replace(llm_endpoint, base_url="http://127.0.0.1:9/v1"),
        dataclasses.replace(laya_endpoint, base_url="http://127.0.0.1:9"),
    )
    result = Router(SCHEMA, llm, laya, None).route("Alice was promoted; her new role is VP")
    assert result.stage == "lexical"
    assert result.names == ("people",)
    assert result.degraded == ("laya_unavailable", "llm_unavailable")


def test_llm_answer_without_folders_falls_through(
    llm_server: LLMServer, clients: MakeClients
) -> None:
    llm_server.enqueue('{"answer": "meetings I think"}')
    llm, _ = clients()
    result = Router(SCHEMA, llm, None, None).route(TEXT)
    assert result.stage == "lexical" and result.degraded == ("llm_unavailable",)


def test_spent_budget_skips_the_llm(llm_server: LLMServer, clients: MakeClients) -> None:
    budget = TokenBudget(10)
    budget.charge({"total_tokens": 10})
    llm, _ = clients(budget=budget)
    result = Router(SCHEMA, llm, None, None).route(TEXT)
    assert result.stage == "lexical"
    assert result.degraded == ("llm_budget_exceeded",)
    assert llm_server.requests == []


def test_lexical_keyword_overlap_without_embeddings() -> None:
    router = Router(SCHEMA, None, None, None)
    result = router.route("Alice reports_to Dana after her promotion; role: VP")
    assert result.stage == "lexical" and result.degraded == ()
    assert result.names == ("people",)
    assert result.scores[0].score > result.scores[1].score


def test_lexical_returns_the_best_folder_even_below_threshold() -> None:
    router = Router(SCHEMA, None, None, None, threshold=0.99)
    result = router.route("a short call")
    assert result.names == ("meetings",)
    assert result.folders[0].score < 0.99


def test_lexical_returns_nothing_without_any_signal() -> None:
    result = Router(SCHEMA, None, None, None).route("zzz qqq")
    assert result.stage == "lexical" and result.folders == ()


def test_lexical_blends_embedding_similarity() -> None:
    calls: list[int] = []

    def counting_embed(texts: Sequence[str]) -> list[np.ndarray]:
        calls.append(len(texts))
        return embed(texts)

    router = Router(SCHEMA, None, None, counting_embed)
    first = router.route("attendees outcomes syncs")
    assert first.names[0] == "meetings"
    router.route("another text")
    # Folder descriptions are embedded once, then one vector per routed text.
    assert calls == [3, 1, 1]


def test_failing_embedder_degrades_to_keywords() -> None:
    def broken(texts: Sequence[str]) -> list[np.ndarray]:
        raise RuntimeError("model file missing")

    result = Router(SCHEMA, None, None, broken).route("decisions taken and the reasons")
    assert result.names == ("decisions",)
    assert result.degraded == ("embedding_unavailable",)


def test_routing_within_a_folder_subset(laya_server: LayaServer, clients: MakeClients) -> None:
    _, laya = clients()
    laya_server.answers = {"meetings": 0.9, "people": 0.9}
    result = Router(SCHEMA, None, laya, None).route(TEXT, folders=["people"])
    assert result.names == ("people",)
    assert set(laya_server.requests[0]["questions"]) == {"people"}
    with pytest.raises(NotFoundError, match="no folder 'nope'"):
        Router(SCHEMA).route(TEXT, folders=["nope"])


def test_empty_text_routes_nowhere() -> None:
    assert Router(SCHEMA).route("   ").stage == "none"


def test_route_cli_json_uses_the_configured_laya(
    laya_server: LayaServer,
    example_kb: KBPaths,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("LLM_BASE_URL", "LLM_MODEL", "MEMORY_CA_FILE", "MEMORY_TLS_INSECURE"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.yaml"
    config.write_text(
        f"laya:\n  base_url: {laya_server.base_url}\n  threshold: 0.6\n"
        "embedding:\n  provider: hash\n"
    )
    laya_server.answers = {"meetings": 0.8}
    laya_server.rule = lambda state, qid, question: 0.05
    code = main(["--kb", str(example_kb.root), "--config", str(config), "route", "--json", TEXT])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stage"] == "laya"
    assert out["folders"] == [{"folder": "meetings", "score": 0.8}]
    assert "embedding_fallback_hash" in out["degraded"]
    assert laya_server.requests[0]["state"] == TEXT


def test_route_cli_text_output_without_sidecars(
    example_kb: KBPaths,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("LLM_BASE_URL", "LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n")
    code = main(
        ["--kb", str(example_kb.root), "--config", str(config), "route", "Alice", "was", "promoted"]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("stage: lexical")
    assert "* people" in out
