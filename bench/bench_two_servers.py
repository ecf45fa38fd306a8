"""Throughput of one memory server against two over one PostgreSQL and one folder.

Starts two ``memserver serve`` processes (hash embedder) on a copy of example_kb, both
over one database (an embedded PostgreSQL in a scratch directory, or a new database on
the server of DATABASE_URL), seeds pages, then runs ``--clients`` concurrent MCP
sessions for ``--duration`` seconds twice: all on the first server, then split evenly
over both. Each client loops over ``kb_put_page`` (a new page), ``kb_get_page`` (a
random seeded page) and ``kb_query`` (a seeded page's words). Prints calls/s per tool
and overall for each phase, their ratio and the load average (clients, servers and the
database share the machine's cores: on a 2-core machine the ratio shows what a second
process costs, not what a second machine would give).

    .venv/bin/python -m bench.bench_two_servers --clients 8 --duration 20 --json
    .venv/bin/python -m bench.bench_two_servers --clients 8 --duration 20 --two-first
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

from bench.common import create_token, free_port, hash_kb_copy, percentile, stop_process, wait_ready
from bench.load_mcp import Stats, seed, seed_page, timed_call
from memserver.clients.mcp import open_http
from memserver.db import pgserver
from memserver.db.database import create_database, drop_database, with_database

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path(tempfile.gettempdir()) / "memserver-bench-pg"


async def client_loop(
    url: str, secret: str, ids: list[str], deadline: float, stats: Stats, n: int, first: int
) -> None:
    rng = random.Random(n)
    async with open_http(url, secret) as memory:
        turn = 0
        while time.monotonic() < deadline:
            kind = turn % 3
            args: dict[str, Any]
            if kind == 0:
                folder, page = seed_page(first + n * 10_000 + turn)  # a new page each time
                tool, args = "kb_put_page", {"folder": folder, "page": page}
            elif kind == 1:
                tool, args = "kb_get_page", {"id": rng.choice(ids)}
            else:
                number = rng.randrange(len(ids))
                tool, args = "kb_query", {"question": f"load test number {number}"}
            await timed_call(memory, tool, args, stats)
            turn += 1


def phase(
    urls: list[str], secret: str, ids: list[str], clients: int, duration: float
) -> dict[str, Any]:
    stats = Stats()
    first = 1_000_000 * len(urls)  # the pages each phase creates are its own

    async def load() -> None:
        deadline = time.monotonic() + duration
        async with anyio.create_task_group() as tg:
            for n in range(clients):
                tg.start_soon(
                    client_loop, urls[n % len(urls)], secret, ids, deadline, stats, n, first
                )

    started = time.monotonic()
    anyio.run(load)
    elapsed = time.monotonic() - started
    every = [v for values in stats.latencies.values() for v in values]
    return {
        "servers": len(urls),
        "seconds": round(elapsed, 1),
        "calls_per_s": round(len(every) / elapsed, 1),
        "errors": sum(stats.errors.values()),
        "first_error": stats.first_error,
        "tools": {
            tool: {
                "calls_per_s": round(len(values) / elapsed, 1),
                "p50_ms": round(statistics.median(values) * 1000, 1),
                "p95_ms": round(percentile(values, 0.95) * 1000, 1),
            }
            for tool, values in sorted(stats.latencies.items())
        },
    }


def database_url(scratch: Path) -> tuple[str, Any]:
    """A fresh database and how to get rid of it."""
    given = os.environ.get("DATABASE_URL")
    if given:
        name = f"bench_two_{uuid.uuid4().hex[:8]}"
        create_database(given, name)
        return with_database(given, name), lambda: drop_database(given, name)
    server = pgserver.acquire(scratch / "data", lifetime="delete")
    return server.uri(), server.release


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of each phase")
    parser.add_argument("--pages", type=int, default=200, help="pages to seed")
    parser.add_argument(
        "--two-first", action="store_true", help="run the two-server phase first (load drifts)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)

    SCRATCH.mkdir(mode=0o755, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="two-", dir=SCRATCH))
    scratch.chmod(0o755)
    work, _, command = hash_kb_copy(ROOT, "two_servers_")
    url, dispose = database_url(scratch)
    env = {**os.environ, "DATABASE_URL": url}
    servers: list[subprocess.Popen[bytes]] = []
    try:
        subprocess.run([*command, "migrate"], env=env, check=True, capture_output=True)
        os.environ["DATABASE_URL"] = url  # for create_token's `memserver token create`
        secret = create_token(command, "bench-two", "*", write=True)
        ports = [free_port(), free_port()]
        for port in ports:
            servers.append(subprocess.Popen(
                [*command, "serve", "--addr", f"127.0.0.1:{port}"], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))  # fmt: skip
        for port in ports:
            wait_ready(f"http://127.0.0.1:{port}")
        urls = [f"http://127.0.0.1:{port}/mcp" for port in ports]
        ids = anyio.run(seed, urls[0], secret, args.pages)
        load_before = os.getloadavg()[0]
        if args.two_first:
            two = phase(urls, secret, ids, args.clients, args.duration)
            one = phase(urls[:1], secret, ids, args.clients, args.duration)
        else:
            one = phase(urls[:1], secret, ids, args.clients, args.duration)
            two = phase(urls, secret, ids, args.clients, args.duration)
        load_after = os.getloadavg()[0]
    finally:
        for server in servers:
            stop_process(server)
        dispose()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)

    report = {
        "clients": args.clients,
        "one_server": one,
        "two_servers": two,
        "ratio": round(two["calls_per_s"] / one["calls_per_s"], 2) if one["calls_per_s"] else None,
        "load": [round(load_before, 2), round(load_after, 2)],
        "order": "two first" if args.two_first else "one first",
        "cores": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for label, row in (("one server", one), ("two servers", two)):
            tools = ", ".join(
                f"{t} {r['calls_per_s']}/s p95 {r['p95_ms']} ms" for t, r in row["tools"].items()
            )
            print(f"{label}: {row['calls_per_s']} calls/s, {row['errors']} errors ({tools})")
        print(f"two / one: {report['ratio']}x; load {report['load']} on {report['cores']} cores")
    return 1 if one["errors"] or two["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
