"""Startup and per-call costs: page parsing, CLI start, HTTP client latency.

Three measurements (``--only`` picks some):

- ``page``: ``parse_page`` and ``render_page`` on 200 generated pages (``bench/gen_kb.py``,
  seed 7; what ``kb.get_page`` parses), microseconds of CPU per page (process time, so
  other load on a shared machine counts less), best of ``--rounds``.
- ``cli``: wall and CPU time (user + system, which other load on a shared machine
  disturbs less) of ``python -m memserver.cli --help`` in a fresh process, median of
  ``--runs``; with ``--importtime`` also the slowest top-level imports
  (``python -X importtime``; modules loaded by ``importlib.import_module``, like the
  command modules themselves, are not listed, their own imports are).
- ``http``: per-call latency of ``LLMClient.chat`` (the ``openai`` client over
  ``memserver.clients.tls.http_client``, one reused connection) against the scripted LLM server
  of ``tests/fixtures/llm_server.py``, and of a bare ``GET /health`` through the same
  kind of client; p50 and p95 of ``--calls`` calls after one warm-up call.

``--root DIR`` measures another checkout of the project instead of this one (its
``memserver``, ``tests/fixtures`` and ``bench/gen_kb.py``), for before/after figures::

    git archive <commit> | tar -x -C /tmp/before
    .venv/bin/python -m bench.bench_startup --root /tmp/before --json
    .venv/bin/python -m bench.bench_startup --json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def _use_root(root: Path) -> None:
    """Import ``memserver`` and ``tests`` from ``root`` (ahead of the install).

    Only for ``--root`` naming another checkout: measuring that checkout's code is the
    point, so it goes first on ``sys.path``; this checkout is imported as installed.
    """
    if root == HERE:
        return
    if str(root) in sys.path:
        sys.path.remove(str(root))
    sys.path.insert(0, str(root))


def _gen_kb(root: Path) -> ModuleType:
    """``bench/gen_kb.py`` of ``root``: this package's, or loaded from the other checkout."""
    if root == HERE:
        from bench import gen_kb

        return gen_kb
    spec = importlib.util.spec_from_file_location("root_gen_kb", root / "bench" / "gen_kb.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no bench/gen_kb.py under {root}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def bench_page(root: Path, rounds: int) -> dict[str, Any]:
    gen_kb = _gen_kb(root)
    SCHEMA, generate_pages = gen_kb.SCHEMA, gen_kb.generate_pages

    import memserver.kb.frontmatter as frontmatter
    from memserver.kb.page import parse_page, render_page
    from memserver.kb.schema import load_schema

    schema = load_schema(SCHEMA)
    pages = generate_pages(200, 7, schema)
    texts = [render_page(p.page, schema.folder(p.folder)) for p in pages]

    def per_page(fn: Callable[[], object]) -> float:
        best = float("inf")
        for _ in range(rounds):
            start = time.process_time()
            fn()
            best = min(best, (time.process_time() - start) / len(pages) * 1e6)
        return round(best, 1)

    loader = getattr(frontmatter, "_Loader", None)
    return {
        "pages": len(pages),
        "avg_chars": sum(map(len, texts)) // len(texts),
        "yaml_loader": next((c.__name__ for c in loader.__mro__[1:2]), "?") if loader else "?",
        "parse_us": per_page(lambda: [parse_page(text) for text in texts]),
        "render_us": per_page(
            lambda: [render_page(p.page, schema.folder(p.folder)) for p in pages]
        ),
    }


def bench_cli(root: Path, runs: int, importtime: bool) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "memserver.cli", "--help"]
    subprocess.run(command, cwd=root, env=env, check=True, capture_output=True)  # warm caches
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, cwd=root, env=env, check=True, capture_output=True)
        walls.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    result: dict[str, Any] = {
        "runs": runs,
        "help_wall_ms_p50": round(statistics.median(walls), 1),
        "help_wall_ms_min": round(min(walls), 1),
        "help_cpu_ms_p50": round(statistics.median(cpus), 1),
    }
    if importtime:
        traced = subprocess.run(
            [sys.executable, "-X", "importtime", *command[1:]],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        top: list[tuple[int, str]] = []
        for line in traced.stderr.splitlines():
            parts = line.removeprefix("import time:").split("|")
            if len(parts) == 3 and parts[1].strip().isdigit() and not parts[2].startswith("  "):
                top.append((int(parts[1]), parts[2].strip()))  # top-level imports only
        result["imports_ms"] = {n: round(us / 1000, 1) for us, n in sorted(top, reverse=True)[:8]}
    return result


def bench_http(calls: int) -> dict[str, Any]:
    from bench.common import percentile, scripted_llm
    from memserver.clients.tls import http_client

    def timed(fn: Callable[[], object]) -> dict[str, float]:
        fn()  # connects
        walls = []
        for _ in range(calls):
            start = time.perf_counter()
            fn()
            walls.append((time.perf_counter() - start) * 1000)
        return {
            "p50_ms": round(statistics.median(walls), 2),
            "p95_ms": round(percentile(walls, 0.95), 2),
        }

    messages = [{"role": "user", "content": "hello"}]
    with scripted_llm(lambda body: "an answer", timeout=5.0) as (llm, server):
        chat = timed(lambda: llm.chat(messages))
        with http_client(llm.endpoint) as client:
            get = timed(lambda: client.get(server.url + "/health").raise_for_status())
    return {"calls": calls, "chat": chat, "get_health": get}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE, help="checkout to measure")
    parser.add_argument(
        "--only", nargs="+", choices=("page", "cli", "http"), default=("page", "cli", "http")
    )
    parser.add_argument("--rounds", type=int, default=10, help="page: rounds (best is kept)")
    parser.add_argument("--runs", type=int, default=10, help="cli: --help runs")
    parser.add_argument("--importtime", action="store_true", help="cli: slowest imports")
    parser.add_argument("--calls", type=int, default=50, help="http: calls per measurement")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    _use_root(root)
    results: dict[str, Any] = {"root": str(root), "load": os.getloadavg()[0]}
    if "page" in args.only:
        results["page"] = bench_page(root, args.rounds)
    if "cli" in args.only:
        results["cli"] = bench_cli(root, args.runs, args.importtime)
    if "http" in args.only:
        results["http"] = bench_http(args.calls)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for key, value in results.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
