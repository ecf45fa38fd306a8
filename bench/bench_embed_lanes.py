"""How long a query embedding waits while passages are being embedded (the local model).

The model is the local embedder of ``--engine`` (default: the default engine), called as
the index calls it (``LocalEmbedder.embed_passages``: the onnx engines spread a call over
worker threads, one a core, at the calling thread's priority; ``embed_query`` on the
caller's thread). A thread embeds passages (150-word windows of example_kb's notes, ``--batch`` a call)
without pause; meanwhile the main thread embeds ``--queries`` short questions, one
every 50 ms, and times each. Compared, in one run:

- ``idle``: no passages being embedded (the floor);
- ``lock``: one lock around every model call (queries and passage batches), as the
  local embedder had it;
- ``concurrent``: no lock (the engine is re-entrant; what ``LocalEmbedder`` does now);
- ``concurrent+nice``: no lock, the passage thread at nice +10 (the background
  embedder's priority; Linux).

Reported: query p50/p95 per lane and the passages per second the thread managed.

    .venv/bin/python -m bench.bench_embed_lanes --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # as memserver.clients.embed sets it

from bench.common import percentile
from memserver.clients.embed import DEFAULT_ENGINE, LOCAL_ENGINES, LocalEmbedder

ROOT = Path(__file__).resolve().parents[1]

QUESTIONS = (
    "When was the latest meeting with Globex?",
    "Who does Bob Martinez report to?",
    "pricing per seat decision",
    "what happened last week in sales",
    "Mongolian localization status",
)


class Model:
    """The embedder's two calls under the names the lanes use."""

    def __init__(self, embedder: LocalEmbedder) -> None:
        self.embedder = embedder

    def passage(self, texts: list[str]) -> None:
        self.embedder.embed_passages(texts)

    def query(self, text: str) -> None:
        self.embedder.embed_query(text)


def windows(words: int = 150) -> list[str]:
    out = []
    for path in sorted((ROOT / "example_kb" / "source").rglob("*.md")):
        text = path.read_text(encoding="utf-8").split()
        out += [" ".join(text[i : i + words]) for i in range(0, len(text), words)]
    return sorted(out, key=len)


def lane(model: Model, texts: list[str], mode: str, batch: int, n: int) -> dict[str, Any]:
    lock = threading.Lock()
    stop = threading.Event()
    done = [0, 0.0]

    def passages() -> None:
        if mode.endswith("nice") and sys.platform.startswith("linux"):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        began, i = time.perf_counter(), 0
        while not stop.is_set():
            group = [texts[(i + k) % len(texts)] for k in range(batch)]
            i += batch
            if mode == "lock":
                with lock:
                    model.passage(group)
            else:
                model.passage(group)
            done[0] += batch
        done[1] = time.perf_counter() - began

    def query(text: str) -> None:
        if mode == "lock":
            with lock:
                model.query(text)
        else:
            model.query(text)

    worker = threading.Thread(target=passages) if mode != "idle" else None
    if worker is not None:
        worker.start()
        time.sleep(0.5)  # let the first batch start
    seconds = timed(query, n)
    stop.set()
    if worker is not None:
        worker.join()
    return {
        "p50_ms": round(percentile(seconds, 0.5) * 1000, 1),
        "p95_ms": round(percentile(seconds, 0.95) * 1000, 1),
        "passages_per_s": round(done[0] / done[1], 1) if done[1] else 0.0,
    }


def timed(query: Callable[[str], None], n: int) -> list[float]:
    out = []
    for i in range(n):
        began = time.perf_counter()
        query(QUESTIONS[i % len(QUESTIONS)])
        out.append(time.perf_counter() - began)
        time.sleep(0.05)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--engine", choices=LOCAL_ENGINES, default=DEFAULT_ENGINE)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    model = Model(LocalEmbedder(engine=args.engine))
    texts = windows()
    model.query("warm up")
    model.passage(texts[: args.batch])
    result: dict[str, Any] = {
        "engine": args.engine,
        "load_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    for mode in ("idle", "lock", "concurrent", "concurrent+nice"):
        result[mode] = lane(model, texts, mode, args.batch, args.queries)
    result["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(json.dumps(result, indent=2) if args.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
