from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memserver.clients.config import EndpointSettings
from memserver.clients.laya import (
    MAX_QUESTIONS,
    MAX_STATE_CHARS,
    LayaClient,
    NoulAnswer,
    folder_question,
)
from memserver.errors import LayaError
from memserver.kb.schema import FolderSpec
from tests.fixtures.llm_server import LayaServer

FOLDERS = [
    FolderSpec(name="people", type="person", description="People: employees and contacts."),
    FolderSpec(name="meetings", type="meeting", description="Meetings, syncs and calls."),
]

MakeLaya = Callable[..., LayaClient]


@pytest.fixture
def make_laya(laya_endpoint: EndpointSettings) -> Iterator[MakeLaya]:
    clients: list[LayaClient] = []

    def make(endpoint: EndpointSettings | None = None, **options: Any) -> LayaClient:
        client = LayaClient(endpoint or laya_endpoint, backoff=0.01, max_wait=0.05, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def test_one_noul_question_per_folder_from_its_description(
    laya_server: LayaServer, make_laya: MakeLaya
) -> None:
    laya_server.keywords = {"meetings": ["sync"], "people": ["hired"]}
    scores = make_laya().folder_scores("Weekly sync with Globex", FOLDERS)
    assert scores == {"meetings": pytest.approx(0.9), "people": pytest.approx(0.1)}
    body = laya_server.requests[0]
    assert body["state"] == "Weekly sync with Globex"
    assert body["model"] == "jev-latest"
    assert set(body["questions"]) == {"people", "meetings"}
    question = body["questions"]["meetings"]
    assert question["type"] == "noul"
    assert "Meetings, syncs and calls" in question["instructions"]
    assert set(question["criteria"]) == {"true", "false"}
    assert "min_confidence" not in body


def test_answer_confidence_is_the_calibrated_probability() -> None:
    assert NoulAnswer(noul=0.7, answer_confidence=0.95).p_yes == pytest.approx(0.95)
    assert NoulAnswer(noul=0.3, answer_confidence=0.8).p_yes == pytest.approx(0.2)
    assert NoulAnswer(noul=0.65).p_yes == pytest.approx(0.65)


def test_scripted_answers_and_rules(laya_server: LayaServer, make_laya: MakeLaya) -> None:
    laya_server.answers = {"people": 0.8}
    laya_server.rule = lambda state, qid, question: 0.3 if qid == "meetings" else None
    assert make_laya().folder_scores("anything", FOLDERS) == {
        "people": pytest.approx(0.8),
        "meetings": pytest.approx(0.3),
    }


def test_bearer_key_and_min_confidence_are_sent(
    laya_server: LayaServer, make_laya: MakeLaya, laya_endpoint: EndpointSettings
) -> None:
    laya_server.api_key = "laya-secret"
    endpoint = dataclasses.replace(
        laya_endpoint, api_key="laya-secret", options={"min_confidence": 0.6}
    )
    assert make_laya(endpoint).folder_scores("people", FOLDERS)["people"] == pytest.approx(0.9)
    assert laya_server.calls[0].headers["authorization"] == "Bearer laya-secret"
    assert laya_server.requests[0]["min_confidence"] == 0.6
    with pytest.raises(LayaError, match="HTTP 401: invalid API key"):
        make_laya().folder_scores("people", FOLDERS)


def test_limits_split_questions_and_truncate_state(
    laya_server: LayaServer, make_laya: MakeLaya
) -> None:
    folders = [FolderSpec(name=f"f{i}", type=f"t{i}", description=f"folder {i}") for i in range(70)]
    scores = make_laya().folder_scores("x" * (MAX_STATE_CHARS + 10), folders)
    assert len(scores) == 70
    assert [len(body["questions"]) for body in laya_server.requests] == [MAX_QUESTIONS, 6]
    assert {len(body["state"]) for body in laya_server.requests} == {MAX_STATE_CHARS}


def test_503_is_retried_after_retry_after(laya_server: LayaServer, make_laya: MakeLaya) -> None:
    laya_server.error_mode, laya_server.error_times, laya_server.retry_after = "503", 1, "0"
    assert make_laya().folder_scores("meetings", FOLDERS)["meetings"] == pytest.approx(0.9)
    assert len(laya_server.requests) == 2


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("detail", r"HTTP 422: body\.questions: field required"),
        ("error", r"HTTP 400: unknown model \(field model\)"),
        ("500", r"HTTP 500: internal error"),
        ("503", r"HTTP 503: model is loading"),
    ],
)
def test_both_error_body_shapes_are_read(
    laya_server: LayaServer, make_laya: MakeLaya, mode: str, expected: str
) -> None:
    laya_server.error_mode = mode
    with pytest.raises(LayaError, match=expected):
        make_laya().folder_scores("text", FOLDERS)


def test_unreachable_sidecar_is_named(make_laya: MakeLaya, laya_endpoint: EndpointSettings) -> None:
    endpoint = dataclasses.replace(laya_endpoint, base_url="http://127.0.0.1:9")
    client = make_laya(endpoint)
    with pytest.raises(LayaError, match=r"laya: cannot reach http://127\.0\.0\.1:9/v1/systemone"):
        client.folder_scores("text", FOLDERS)
    assert client.health() is False


def test_health(laya_server: LayaServer, make_laya: MakeLaya) -> None:
    client = make_laya()
    assert client.health() is True
    laya_server.error_mode = "503"
    assert client.health() is False


def test_folder_question_falls_back_to_the_name() -> None:
    question = folder_question(FolderSpec(name="notes", type="note", description=""))
    assert '"notes"' in question.instructions
    assert question.as_dict()["type"] == "noul"
