"""MCP load benchmark: concurrent MCP clients calling kb_get_page and kb_list_pages.

Starts a real ``memserver serve`` (a subprocess, Streamable HTTP on a free loopback
port) over a copy of ``example_kb`` with the offline hash embedder, seeds pages through
``kb_put_page`` with a write token, then runs ``--clients`` concurrent MCP sessions with
a read-only token for ``--duration`` seconds, each calling ``kb_get_page`` (a random
seeded page) and ``kb_list_pages`` (a random folder and offset) in turn. Prints
requests/s, p50/p95/p99 latency per tool and the error count.

    .venv/bin/python -m bench.load_mcp                 # 20 clients, 30 s, 200 pages
    .venv/bin/python -m bench.load_mcp --clients 5 --duration 5 --json

Uses the embedded PostgreSQL under the temporary knowledge base, or DATABASE_URL when
set. The clients run in this process (one event loop), the server in its own.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from bench.common import (
    create_token,
    free_port,
    hash_kb_copy,
    percentile,
    stop_process,
    wait_ready,
)
from memserver.clients.mcp import MemoryClient, open_http

ROOT = Path(__file__).resolve().parents[1]

FOLDERS = ("people", "companies", "meetings")


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    first_error: str | None = None

    def add(self, tool: str, seconds: float, ok: bool, error: str | None = None) -> None:
        self.latencies.setdefault(tool, []).append(seconds)
        if not ok:
            self.errors[tool] = self.errors.get(tool, 0) + 1
            self.first_error = self.first_error or error


def seed_page(i: int) -> tuple[str, dict[str, Any]]:
    """A valid page for one of FOLDERS (deterministic in ``i``)."""
    folder = FOLDERS[i % len(FOLDERS)]
    day = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"
    if folder == "people":
        page = {
            "title": f"Bench Person {i}",
            "fields": {"role": f"Engineer level {i % 5}", "location": "Ulaanbaatar"},
            "sections": {"Summary": f"Bench Person {i} works on load test number {i}."},
            "timeline": [{"date": day, "text": f"Joined the bench cohort {i}.", "source": "b.md"}],
        }
    elif folder == "companies":
        page = {
            "title": f"Bench Company {i}",
            "fields": {"industry": "logistics", "status": "prospect", "contract_value": i * 100},
            "sections": {"Summary": f"Bench Company {i} evaluates route planning."},
            "timeline": [{"date": day, "text": f"First call with company {i}.", "source": "b.md"}],
        }
    else:
        page = {
            "title": f"Bench sync {i}",
            "fields": {"date": day, "kind": "internal", "status": "done"},
            "sections": {
                "Summary": f"Weekly bench sync number {i}.",
                "Decisions": f"Keep measuring throughput ({i}).",
            },
        }
    return folder, page


async def seed(url: str, secret: str, count: int) -> list[str]:
    ids: list[str] = []

    async def writer(start: int) -> None:
        async with open_http(url, secret) as memory:
            for i in range(start, count, 4):
                folder, page = seed_page(i)
                result = await memory.call("kb_put_page", {"folder": folder, "page": page})
                ids.append(result["id"])

    async with anyio.create_task_group() as tg:
        for start in range(4):
            tg.start_soon(writer, start)
    return ids


async def client_loop(
    url: str, secret: str, ids: list[str], deadline: float, stats: Stats, seed_value: int
) -> None:
    rng = random.Random(seed_value)
    async with open_http(url, secret) as memory:
        turn = 0
        while time.monotonic() < deadline:
            args: dict[str, Any]
            if turn % 2 == 0:
                tool, args = "kb_get_page", {"id": rng.choice(ids)}
            else:
                tool = "kb_list_pages"
                args = {"folder": rng.choice(FOLDERS), "offset": rng.randrange(0, 40), "limit": 20}
            await timed_call(memory, tool, args, stats)
            turn += 1


async def timed_call(memory: MemoryClient, tool: str, args: dict[str, Any], stats: Stats) -> None:
    started = time.perf_counter()
    try:
        result = await memory.call_result(tool, args)
        ok = not result.is_error
        error = None if ok else str(result.content[0])[:200]
    except Exception as exc:  # a transport failure counts as an error, the run goes on
        ok, error = False, f"{type(exc).__name__}: {exc}"[:200]
    stats.add(tool, time.perf_counter() - started, ok, error)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load")
    parser.add_argument("--pages", type=int, default=200, help="pages to seed")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)

    work, _, command = hash_kb_copy(ROOT, "load_mcp_")
    writer = create_token(command, "bench-writer", "*", write=True)
    reader = create_token(command, "bench-reader", ",".join(FOLDERS))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([*command, "serve", "--addr", f"127.0.0.1:{port}"])
    try:
        wait_ready(base)
        url = f"{base}/mcp"
        t0 = time.monotonic()
        ids = anyio.run(seed, url, writer, args.pages)
        seed_seconds = time.monotonic() - t0
        stats = Stats()

        async def load() -> None:
            deadline = time.monotonic() + args.duration
            async with anyio.create_task_group() as tg:
                for n in range(args.clients):
                    tg.start_soon(client_loop, url, reader, ids, deadline, stats, n)

        t1 = time.monotonic()
        anyio.run(load)
        elapsed = time.monotonic() - t1
    finally:
        stop_process(server)
        shutil.rmtree(work, ignore_errors=True)

    every = [v for values in stats.latencies.values() for v in values]
    report: dict[str, Any] = {
        "clients": args.clients,
        "duration_s": round(elapsed, 1),
        "pages_seeded": len(ids),
        "seed_puts_per_s": round(len(ids) / seed_seconds, 1),
        "requests": len(every),
        "requests_per_s": round(len(every) / elapsed, 1),
        "errors": sum(stats.errors.values()),
        "first_error": stats.first_error,
        "p50_ms": round(statistics.median(every) * 1000, 1) if every else 0,
        "p95_ms": round(percentile(every, 0.95) * 1000, 1),
        "p99_ms": round(percentile(every, 0.99) * 1000, 1),
        "tools": {
            tool: {
                "requests": len(values),
                "errors": stats.errors.get(tool, 0),
                "p50_ms": round(statistics.median(values) * 1000, 1),
                "p95_ms": round(percentile(values, 0.95) * 1000, 1),
            }
            for tool, values in sorted(stats.latencies.items())
        },
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{report['clients']} clients, {report['duration_s']} s: {report['requests']} "
            f"requests, {report['requests_per_s']} req/s, p50 {report['p50_ms']} ms, "
            f"p95 {report['p95_ms']} ms, p99 {report['p99_ms']} ms, errors {report['errors']}"
        )
        for tool, row in report["tools"].items():
            print(
                f"  {tool}: {row['requests']} requests, p50 {row['p50_ms']} ms, "
                f"p95 {row['p95_ms']} ms, errors {row['errors']}"
            )
        print(f"  seeded {report['pages_seeded']} pages at {report['seed_puts_per_s']} puts/s")
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
