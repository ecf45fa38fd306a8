"""Where the memory server's CPU goes while 20 clients call ``kb_get_page`` over MCP.

Starts ``memserver serve`` the way ``bench_mcp_overhead.py`` does (hash embedder,
200 seeded pages), runs ``--clients`` of its callers (``light``: JSON-RPC over plain
HTTP; ``sdk``: the ``mcp`` SDK's client) and samples the server process with py-spy
(``--gil``: only the thread holding the GIL, so what the samples share out is the
server's Python CPU). Each sample goes to the deepest part of the request path its
stack is in (the table below); prints the shares and writes py-spy's raw stacks.

py-spy is a measuring tool, not a dependency: ``.venv/bin/pip install py-spy`` first.

    nice -n 10 .venv/bin/python -m bench.profile_mcp --port 9617 --out /tmp/mcp.txt
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import anyio

from bench.bench_mcp_overhead import LightMcpCaller, McpCaller, throughput
from bench.common import create_token, hash_kb_copy, stop_process, wait_ready
from bench.load_mcp import FOLDERS, seed

ROOT = Path(__file__).resolve().parents[1]

# (part, pattern of a frame): a sample counts for the last part its stack passes through.
PARTS = (
    ("event loop and tasks (asyncio, anyio)", r"BaseEventLoop\._run_once|Handle\._run"),
    ("HTTP parsing and writing (uvicorn, h11)", r"H11Protocol|RequestResponseCycle|h11/"),
    (
        "Starlette routing",
        r"Starlette\.__call__|Router\.|Mount\.handle|Route\.handle|ServerErrorMiddleware"
        r"|ExceptionMiddleware|wrap_app_handling|ProxyHeadersMiddleware",
    ),
    ("ours: HttpGuard, SessionLimit, 503 wrapper", r"HttpGuard|SessionLimit|_UnavailableAs503"),
    ("SDK: auth middlewares", r"Authentication|AuthContext|RequireAuth|BearerAuthBackend"),
    ("ours: token check (thread hop, query)", r"StoreTokenVerifier|TokenStore\.verify"),
    (
        "SDK: HTTP exchange (JSON-RPC parse and models, headers, answer)",
        r"StreamableHTTP|RequestBodyLimit|handle_modern_request|_write |_mcp_param|_to_jsonrpc",
    ),
    ("SDK: runner and dispatch", r"serve_one|ServerRunner|RequestStateBoundary|OpenTelemetry"),
    (
        "SDK: tools/call (Context, argument model, result models)",
        r"MCPServer\._handle_call_tool|MCPServer\.call_tool|ToolManager|Tool\.run|FuncMetadata",
    ),
    (
        "ours: call wrapper (scope, aliases, audit hand-off)",
        r"MemoryServer\._call|MemoryServer\.call_tool|_prepare_arguments|AuditWriter\.record",
    ),
    ("thread hops (anyio to_thread, queue, wake-up)", r"run_sync_in_worker_thread|WorkerThread"),
    ("ours: the tool (KB read, page view, scope)", r"_guarded|kb_get_page|page_view|_in_scope"),
    ("ours: audit writer thread", r"AuditWriter\._run"),
    ("database driver and pool (psycopg)", r"psycopg"),
)


def shares(raw: Path) -> list[tuple[str, float]]:
    """Each part's share of the samples in py-spy's raw (collapsed) output."""
    counts: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        part = "other"
        for frame in stack.split(";"):
            part = next((name for name, p in PARTS if re.search(p, frame)), part)
        counts[part] += int(n)
    total = sum(counts.values()) or 1
    return [(part, n / total) for part, n in counts.most_common()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=9617)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--client", choices=("light", "sdk"), default="light")
    parser.add_argument("--out", type=Path, default=Path("mcp-profile.txt"))
    args = parser.parse_args(argv)
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        parser.error("py-spy is not installed: .venv/bin/pip install py-spy")
    work, _, command = hash_kb_copy(ROOT, "profile-mcp-")
    writer = create_token(command, "bench-writer", "*", write=True)
    reader = create_token(command, "bench-reader", ",".join(FOLDERS))
    server = subprocess.Popen([*command, "serve", "--addr", f"127.0.0.1:{args.port}"])
    caller = LightMcpCaller if args.client == "light" else McpCaller
    try:
        base = f"http://127.0.0.1:{args.port}"
        wait_ready(base)
        url = f"{base}/mcp"
        ids = anyio.run(seed, url, writer, 200)
        anyio.run(throughput, lambda n: caller(url, reader, ids, n), 2, 1.0)  # warm up
        record = [spy, "record", "-p", str(server.pid), "-d", str(int(args.seconds))]
        sampler = subprocess.Popen(
            [*record, "-r", "100", "--gil", "--threads", "-f", "raw", "-o", str(args.out)]
        )
        time.sleep(1.0)  # py-spy attaches
        load = anyio.run(
            throughput, lambda n: caller(url, reader, ids, n), args.clients, args.seconds - 2
        )
        sampler.wait(timeout=60)
    finally:
        stop_process(server)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.client} clients: {load['requests_per_s']} req/s; raw stacks in {args.out}")
    for part, share in shares(args.out):
        print(f"{share * 100:5.1f}%  {part}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
