"""The onnx engine's built graph is kept on disk: reused by the next process, rebuilt when
it is damaged or refused, never loaded half-written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memserver.clients import e5_onnx, e5_smooth
from memserver.clients.e5_cache import (
    GRAPH_VERSION,
    cache_dir,
    graph_path,
    load_graph,
    read_cached,
    write_cached,
)


def _counting_build(calls: list[int], body: bytes = b"graph-1") -> Callable[[], bytes]:
    def build() -> bytes:
        calls.append(1)
        return body

    return build


def test_a_cached_graph_is_read_back_and_not_built_again(tmp_path: Path) -> None:
    path = graph_path(tmp_path, "int8", "ab" * 16, "1.2.3")
    assert path.name == f"e5-int8-{'ab' * 8}-ort1.2.3-g{GRAPH_VERSION}.onnx"
    calls: list[int] = []
    first = load_graph(path, _counting_build(calls), lambda graph: graph.decode())
    second = load_graph(path, _counting_build(calls), lambda graph: graph.decode())
    assert first == second == "graph-1"
    assert calls == [1]  # built once, read the second time
    assert read_cached(path) == b"graph-1"


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: data[:-1] + bytes([data[-1] ^ 0xFF]),  # a byte changed
        lambda data: b"",  # empty
    ],
)
def test_a_damaged_cache_file_is_rebuilt_and_rewritten(
    tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    path = tmp_path / "onnx" / "e5.onnx"
    assert write_cached(path, b"graph-1")
    path.write_bytes(damage(path.read_bytes()))
    assert read_cached(path) is None
    calls: list[int] = []
    opened = load_graph(path, _counting_build(calls, b"graph-2"), lambda graph: graph)
    assert opened == b"graph-2" and calls == [1]
    assert read_cached(path) == b"graph-2"


def test_a_graph_the_runtime_refuses_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "e5.onnx"
    write_cached(path, b"stale")  # whole, but not what the runtime takes

    def open_graph(graph: bytes) -> bytes:
        if graph == b"stale":
            raise RuntimeError("invalid protobuf")
        return graph

    calls: list[int] = []
    assert load_graph(path, _counting_build(calls, b"fresh"), open_graph) == b"fresh"
    assert calls == [1] and read_cached(path) == b"fresh"


def test_an_unwritable_cache_leaves_the_graph_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    calls: list[int] = []
    path = blocker / "onnx" / "e5.onnx"
    assert load_graph(path, _counting_build(calls), lambda graph: graph) == b"graph-1"
    assert calls == [1] and not write_cached(path, b"x")


def test_the_smoothings_key_changes_with_its_alpha_and_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = e5_smooth.calibration_key()
    monkeypatch.setattr(e5_smooth, "ALPHA", 0.5)
    assert e5_smooth.calibration_key() != key
    monkeypatch.undo()
    monkeypatch.setattr(e5_smooth, "CALIBRATION", (*e5_smooth.CALIBRATION, "one more"))
    assert e5_smooth.calibration_key() != key


def test_the_cache_directory_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_CACHE_DIR", "/somewhere/cache")
    assert cache_dir() == Path("/somewhere/cache")
    monkeypatch.delenv("MEMORY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert cache_dir() == Path("/xdg/memserver")


def test_the_engine_starts_from_its_cached_graph_with_the_same_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = ["Globex signed the renewal on 2026-03-01.", "Melanie: That's great!"]
    first = e5_onnx.OnnxE5("int8", cache=tmp_path)
    assert first.graph_file.parent == tmp_path / "onnx" and first.graph_file.exists()
    assert f"int8s{e5_smooth.calibration_key()}-" in first.graph_file.name
    vectors = first.encode(texts)

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cached graph should have been used")

    monkeypatch.setattr(e5_onnx, "build_graph", no_build)
    second = e5_onnx.OnnxE5("int8", cache=tmp_path)
    assert np.allclose(second.encode(texts), vectors, atol=1e-6)
    monkeypatch.undo()
    # damaged on disk: the next start builds it again and gives the same vectors
    first.graph_file.write_bytes(first.graph_file.read_bytes()[:1000])
    third = e5_onnx.OnnxE5("int8", cache=tmp_path)
    assert np.allclose(third.encode(texts), vectors, atol=1e-6)
    assert read_cached(third.graph_file) is not None
