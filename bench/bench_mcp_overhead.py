"""What the MCP layer costs, against floors measured in the same run on the same machine.

Two servers over one copy of example_kb (hash embedder, its embedded PostgreSQL, 200
seeded pages):

- ``memserver serve`` (Streamable HTTP, subprocess): ``kb_get_page`` over MCP, each
  client its own session, as the agents call it;
- the *floor* (this script with ``--serve-floor``, subprocess, uvicorn with the same
  settings): a bare Starlette app with ``GET /page?id=`` doing what the tool does
  without MCP (``KnowledgeBase.get_page`` and the page as JSON) and ``GET /empty``
  (a constant JSON object: HTTP alone).

Two kinds of MCP client call ``kb_get_page``, one after the other:

- ``mcp_kb_get_page``: the ``mcp`` SDK's client (``memserver.clients.mcp.open_http``),
  as the agents call it; its own CPU (JSON-RPC models, result validation) runs in this
  process, on the same cores as the server;
- ``mcp_light_kb_get_page``: a light client speaking the same protocol over the same
  HTTP client as the floor's (``httpx2``): ``server/discover`` once, then one
  ``tools/call`` POST per call with the headers and body the SDK sends, the JSON answer
  parsed and checked. Against the floor this isolates what the *server's* MCP layer
  costs.

Measured: throughput of ``--clients`` concurrent clients for ``--duration`` seconds
each (SDK MCP, light MCP, floor page, floor empty, taking turns in ``--rounds``
rounds, every client connected once before, so that the machine's load at each
moment falls on all four alike; connecting is not timed), the p50 of one client's
sequential round trips (``--single`` seconds), and the CPU milliseconds per request
of the server process and of this (client) process, which other load on the machine
disturbs less. The ratios are what count: the machine's load hits all sides alike.

    nice -n 10 .venv/bin/python -m bench.bench_mcp_overhead --json
    nice -n 10 .venv/bin/python -m bench.bench_mcp_overhead --ports 9617 9618 --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil

from bench.common import (
    create_token,
    free_port,
    hash_kb_copy,
    percentile,
    stop_process,
    wait_ready,
)
from bench.load_mcp import FOLDERS, seed
from memserver.clients.mcp import open_http

ROOT = Path(__file__).resolve().parents[1]

Call = Callable[[], Awaitable[None]]


def floor_app(kb_dir: str) -> Any:
    """The floor: Starlette, the knowledge base read, JSON; nothing else."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from memserver.clients.config import load_settings
    from memserver.store.knowledge_base import KnowledgeBase

    kb = KnowledgeBase.open(kb_dir, load_settings(os.environ.get("FLOOR_CONFIG")))

    def page(request: Request) -> JSONResponse:
        stored = kb.get_page(request.query_params["id"])
        p = stored.page
        return JSONResponse(
            {
                "id": stored.id,
                "folder": stored.folder,
                "slug": stored.slug,
                "version": stored.version,
                "title": p.title,
                "type": p.type,
                "effective_date": str(stored.effective_date),
                "fields": json.loads(json.dumps(dict(p.fields), default=str)),
                "sections": dict(p.sections),
                "timeline": [
                    {"date": e.date.isoformat(), "text": e.text, "source": e.source}
                    for e in p.timeline
                ],
                "markdown": stored.markdown,
            }
        )

    async def empty(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[Route("/page", page), Route("/empty", empty), Route("/healthz", empty)]
    )


def serve_floor(kb_dir: str, port: int) -> None:
    import uvicorn

    uvicorn.run(floor_app(kb_dir), host="127.0.0.1", port=port, log_level="warning")


@dataclass
class Load:
    """Calls of one kind of client, added up over rounds."""

    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    errors: int = 0
    server_cpu: float = 0.0
    client_cpu: float = 0.0

    def summary(self) -> dict[str, Any]:
        n = max(1, len(self.latencies))
        return {
            "requests": len(self.latencies),
            "requests_per_s": round(len(self.latencies) / max(self.seconds, 1e-9), 1),
            "p50_ms": round(percentile(self.latencies, 0.5) * 1000, 2),
            "p95_ms": round(percentile(self.latencies, 0.95) * 1000, 2),
            "errors": self.errors,
            "server_cpu_ms_per_request": round(self.server_cpu * 1000 / n, 2),
            "client_cpu_ms_per_request": round(self.client_cpu * 1000 / n, 2),
        }


async def run_calls(calls: Sequence[Call], seconds: float, load: Load) -> None:
    """One loop of sequential calls per connected client for ``seconds``, into ``load``."""
    began = time.monotonic()
    deadline = began + seconds
    ended = began

    async def loop(call: Call) -> None:
        nonlocal ended
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                await call()
            except Exception:  # counted; the run goes on
                load.errors += 1
            load.latencies.append(time.perf_counter() - started)
        ended = max(ended, time.monotonic())

    async with anyio.create_task_group() as tg:
        for call in calls:
            tg.start_soon(loop, call)
    load.seconds += ended - began


async def throughput(make: Callable[[int], Any], clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` clients (connecting is not timed) calling for ``seconds``."""
    load = Load()
    async with contextlib.AsyncExitStack() as stack:
        calls = [await stack.enter_async_context(make(n)) for n in range(clients)]
        await run_calls(calls, seconds, load)
    return load.summary()


async def take_turns(
    kinds: Mapping[str, Callable[[int], Any]],
    pids: Mapping[str, int],
    clients: int,
    seconds: float,
    rounds: int,
) -> dict[str, Load]:
    """Every kind's clients connected once, then the kinds call in turn, ``rounds``
    times ``seconds / rounds`` each, with the server's and this process's CPU."""
    loads = {name: Load() for name in kinds}
    async with contextlib.AsyncExitStack() as stack:
        calls = {
            name: [await stack.enter_async_context(make(n)) for n in range(clients)]
            for name, make in kinds.items()
        }
        for _ in range(rounds):
            for name, load in loads.items():
                before = cpu(pids[name]), own_cpu()
                await run_calls(calls[name], seconds / rounds, load)
                load.server_cpu += cpu(pids[name]) - before[0]
                load.client_cpu += own_cpu() - before[1]
    return loads


class McpCaller:
    def __init__(self, url: str, secret: str, ids: list[str], n: int) -> None:
        self.url, self.secret, self.ids = url, secret, ids
        self.rng = random.Random(n)

    async def __aenter__(self) -> Call:
        self._session = open_http(self.url, self.secret)
        memory = await self._session.__aenter__()

        async def call() -> None:
            result = await memory.call_result("kb_get_page", {"id": self.rng.choice(self.ids)})
            if result.is_error:
                raise RuntimeError(str(result.content[0]))

        return call

    async def __aexit__(self, *exc: object) -> None:
        await self._session.__aexit__(None, None, None)


MODERN_VERSION = "2026-07-28"  # what the SDK client speaks (no initialize, no session)
_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "bench-light", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class LightMcpCaller:
    """MCP over plain HTTP: the requests the SDK client sends, without its models."""

    def __init__(self, url: str, secret: str, ids: list[str], n: int) -> None:
        self.url, self.ids = url, ids
        self.rng = random.Random(n)
        self.headers = {
            "Authorization": f"Bearer {secret}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN_VERSION,
        }
        self.next_id = 0

    async def _post(self, method: str, params: dict[str, Any], **headers: str) -> Any:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        response = await self._client.post(
            self.url, json=body, headers={**self.headers, "Mcp-Method": method, **headers}
        )
        response.raise_for_status()
        answer = response.json()
        if "error" in answer:
            raise RuntimeError(str(answer["error"]))
        return answer["result"]

    async def __aenter__(self) -> Call:
        self._client = httpx2.AsyncClient(timeout=30)
        await self._post("server/discover", {"_meta": _META})

        async def call() -> None:
            params = {
                "name": "kb_get_page",
                "arguments": {"id": self.rng.choice(self.ids)},
                "_meta": _META,
            }
            result = await self._post("tools/call", params, **{"Mcp-Name": "kb_get_page"})
            if result.get("isError"):
                raise RuntimeError(str(result["content"][0]))

        return call

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()


class FloorCaller:
    def __init__(self, base: str, path: str, ids: list[str], n: int) -> None:
        self.base, self.path, self.ids = base, path, ids
        self.rng = random.Random(n)

    async def __aenter__(self) -> Call:
        self._client = httpx2.AsyncClient(base_url=self.base, timeout=30)

        async def call() -> None:
            params = {"id": self.rng.choice(self.ids)} if self.path == "/page" else None
            response = await self._client.get(self.path, params=params)
            response.raise_for_status()

        return call

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()


def cpu(pid: int) -> float:
    """User + system CPU seconds of a process (its threads included)."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(args: argparse.Namespace) -> dict[str, Any]:
    work, kb, command = hash_kb_copy(ROOT, "bench-mcp-")
    config = work / "config.yaml"
    writer = create_token(command, "bench-writer", "*", write=True)
    reader = create_token(command, "bench-reader", ",".join(FOLDERS))
    port, floor_port = args.ports or (free_port(), free_port())
    base, floor = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{floor_port}"
    server = subprocess.Popen([*command, "serve", "--addr", f"127.0.0.1:{port}"])
    env = {**os.environ, "FLOOR_CONFIG": str(config)}
    floor_proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.bench_mcp_overhead",
            "--serve-floor",
            str(kb),
            str(floor_port),
        ],
        env=env,
    )
    result: dict[str, Any] = {"load_start": " ".join(f"{x:.2f}" for x in os.getloadavg())}
    try:
        wait_ready(base)
        wait_ready(floor)
        url = f"{base}/mcp"
        ids = anyio.run(seed, url, writer, args.pages)
        kinds: dict[str, Callable[[int], Any]] = {
            "mcp_kb_get_page": lambda n: McpCaller(url, reader, ids, n),
            "mcp_light_kb_get_page": lambda n: LightMcpCaller(url, reader, ids, n),
            "floor_page": lambda n: FloorCaller(floor, "/page", ids, n),
            "floor_empty": lambda n: FloorCaller(floor, "/empty", ids, n),
        }
        for make in kinds.values():  # warm up each side once
            anyio.run(throughput, make, 2, 1.0)
        pids = {name: (server if name.startswith("mcp") else floor_proc).pid for name in kinds}
        # the kinds take turns, so that load swings on the machine hit them alike
        loads = anyio.run(take_turns, kinds, pids, args.clients, args.duration, args.rounds)
        for name, load in loads.items():
            result[name] = load.summary()
        for name, make in kinds.items():
            single = anyio.run(throughput, make, 1, args.single)
            result[name]["single_p50_ms"] = single["p50_ms"]
    finally:
        stop_process(server)
        stop_process(floor_proc)
        shutil.rmtree(work, ignore_errors=True)
    page, empty = result["floor_page"], result["floor_empty"]
    for caller, prefix in (("mcp_kb_get_page", ""), ("mcp_light_kb_get_page", "light_")):
        mcp = result[caller]
        for floor_name, floor_side in (("page", page), ("empty", empty)):
            result[f"{prefix}throughput_vs_floor_{floor_name}"] = round(
                mcp["requests_per_s"] / floor_side["requests_per_s"], 2
            )
            result[f"{prefix}round_trip_vs_floor_{floor_name}"] = round(
                mcp["single_p50_ms"] / floor_side["single_p50_ms"], 2
            )
    result["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per side")
    parser.add_argument(
        "--rounds", type=int, default=5, help="turns the sides take (duration split evenly)"
    )
    parser.add_argument("--single", type=float, default=5.0, help="seconds of one client")
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument(
        "--ports", nargs=2, type=int, metavar=("MCP", "FLOOR"), help="default: two free ports"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve-floor", nargs=2, metavar=("KB", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_floor:
        serve_floor(args.serve_floor[0], int(args.serve_floor[1]))
        return 0
    result = measure(args)
    print(json.dumps(result, indent=2) if args.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
