"""Ingest cost per source: example_kb through the ingest agent against a real server.

A fresh copy of example_kb gets its own database (hash embedder) and a memory server
on a free loopback port (Streamable HTTP, uvicorn in a thread). The agent runs in this
process over MCP with a write token:

- ``llm``: the scripted OpenAI-compatible test server (``tests/fixtures/llm_server.py``)
  answering with ``tests/ingest_agent/data/extractions.yaml``, so the model's latency is
  loopback transport, and what remains is the agent's and the server's own overhead;
- ``rules``: the deterministic extractor, no model.

Each mode ingests all 28 sources once, then runs a second, no-op pass. Reported per
source: wall time, time waiting for the model, MCP tool calls, LLM calls and tokens
(the scripted server counts characters / 4, like a tokenizer would roughly).

``--growth N ...``: how many passages the embedder is given against how many distinct
texts, as the same story grows: example_kb's notes N times over, copy k with every
"2026" read as 2026+k (its own meetings and updates, the same people, companies and
projects, whose pages grow a timeline), ingested with the rules extractor by a server
whose knowledge base embeds in the background as ``up`` does (a counting hash
embedder marked ``background``), until every vector is written.

    .venv/bin/python -m bench.bench_ingest            # both modes, a table
    .venv/bin/python -m bench.bench_ingest --json --modes llm
    .venv/bin/python -m bench.bench_ingest --growth 1 4 --json   # 28 and 112 notes

Uses the embedded PostgreSQL under /tmp/memserver-bench, or DATABASE_URL's server when
set (it must allow CREATE DATABASE).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import uvicorn

from bench.load_mcp import free_port, percentile, wait_ready
from ingest_agent.agent import IngestAgent, RunSummary
from ingest_agent.llm.extractor import LLMExtractor
from ingest_agent.memory import Memory
from memserver.clients.config import EndpointSettings, load_settings
from memserver.clients.embed import HashEmbedder
from memserver.clients.llm import LLMClient, TokenBudget
from memserver.clients.mcp import open_http
from memserver.db import pgserver
from memserver.db.database import create_database, drop_database, with_database
from memserver.kb.layout import KBPaths
from memserver.server.audit import AuditLog
from memserver.server.http_app import create_http_app
from memserver.server.mcp_server import build_server
from memserver.server.tokens import TokenStore
from memserver.server.tools.base import Services
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.llm_server import LLMServer, serve_app
from tests.ingest_agent.scripted import ScriptedModel

ROOT = Path(__file__).resolve().parents[1]

SCRATCH = Path(tempfile.gettempdir()) / "memserver-bench"
EXAMPLE_KB = ROOT / "example_kb"


def admin_url() -> tuple[str, Any]:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url, None
    SCRATCH.mkdir(mode=0o755, exist_ok=True)
    pgserver.reap_orphans(SCRATCH)
    server = pgserver.acquire(SCRATCH / "ingest-pg", lifetime="delete")
    return server.uri(), server


async def _ingest(url: str, token: str, llm: LLMServer | None) -> tuple[RunSummary, RunSummary]:
    budget = TokenBudget(None)
    client = None
    if llm is not None:
        endpoint = EndpointSettings(name="llm", base_url=llm.base_url, model=llm.model, timeout=30)
        client = LLMClient(endpoint, budget, max_attempts=2)
    try:
        async with open_http(url, token) as session:
            memory = Memory(session)
            schema = await memory.start()
            extractor = LLMExtractor(schema, client) if client is not None else None
            agent = IngestAgent(memory, schema, llm=extractor, budget=budget)
            first = await agent.run()
            memory.new_pass()
            second = await agent.run()
            return first, second
    finally:
        if client is not None:
            client.close()


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting every passage it is given; ``background`` as up's
    local model is (new texts are left to the background embedder)."""

    background = True

    def __init__(self) -> None:
        super().__init__()
        self.passages: list[str] = []
        self._count_lock = threading.Lock()

    def embed_passages(self, texts: Sequence[str]) -> list[np.ndarray]:
        with self._count_lock:
            self.passages.extend(texts)
        return super().embed_passages(texts)


def story_kb(kb_dir: Path, copies: int) -> int:
    """example_kb's schema and its notes ``copies`` times over (see the module docstring);
    returns the number of notes."""
    shutil.copytree(EXAMPLE_KB, kb_dir, ignore=shutil.ignore_patterns(".memserver", "knowledge"))
    (kb_dir / "manifest.json").unlink(missing_ok=True)
    notes = sorted((kb_dir / "source").rglob("*.md"))
    for k in range(1, copies):
        year = str(2026 + k)
        for note in notes:
            rel = note.relative_to(kb_dir / "source").as_posix().replace("2026", year)
            target = kb_dir / "source" / year / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(note.read_text(encoding="utf-8").replace("2026", year), "utf-8")
    return len(notes) * copies


def run_growth(copies: int, pg: str) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-growth-", dir=SCRATCH))
    kb_dir = work / "kb"
    notes = story_kb(kb_dir, copies)
    name = f"bench_growth_{uuid.uuid4().hex[:10]}"
    create_database(pg, name)
    embedder = CountingEmbedder()
    kb = KnowledgeBase.open(kb_dir, embedder=embedder, database_url=with_database(pg, name))
    started = getattr(kb, "start_background_embedding", lambda: False)()

    def settled() -> tuple[Any, ...]:
        background = getattr(kb, "background", None)
        if started and background is not None:
            assert background.wait_idle(600), "the background embedder did not finish"
        with kb.db.connection() as conn:
            rows = conn.execute(
                "SELECT (SELECT count(*) FROM chunks), (SELECT count(DISTINCT text) FROM chunks),"
                " (SELECT count(*) FROM chunks WHERE stale)"
            ).fetchone()
        assert rows is not None
        return tuple(rows)

    try:
        first, _, wall, rows = serve_and_ingest(kb, kb_dir, None, settled)
    finally:
        kb.close()
        drop_database(pg, name)
        shutil.rmtree(work, ignore_errors=True)
    passages = len(embedder.passages)
    distinct = len(set(embedder.passages))
    return {
        "notes": notes,
        "ingested": first.count("ingested"),
        "failed": first.count("failed"),
        "embedded_passages": passages,
        "distinct_texts": distinct,
        "ratio": round(passages / max(distinct, 1), 3),
        "chunk_rows": rows[0],
        "distinct_chunk_texts": rows[1],
        "stale_rows_left": rows[2],
        "background": bool(started),
        "wall_s": round(wall, 1),
    }


def run_mode(mode: str, pg: str, llm: LLMServer | None) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-ingest-", dir=SCRATCH))
    kb_dir = work / "kb"
    shutil.copytree(EXAMPLE_KB, kb_dir, ignore=shutil.ignore_patterns(".memserver", "knowledge"))
    (kb_dir / "manifest.json").unlink(missing_ok=True)
    name = f"bench_ingest_{uuid.uuid4().hex[:10]}"
    create_database(pg, name)
    kb = KnowledgeBase.open(kb_dir, embedder=HashEmbedder(), database_url=with_database(pg, name))
    try:
        first, second, wall, _ = serve_and_ingest(kb, kb_dir, llm)
        return report(mode, first, second, wall)
    finally:
        kb.close()
        drop_database(pg, name)
        shutil.rmtree(work, ignore_errors=True)


def serve_and_ingest(
    kb: KnowledgeBase, kb_dir: Path, llm: LLMServer | None, after: Callable[[], Any] = lambda: None
) -> tuple[RunSummary, RunSummary, float, Any]:
    """Serve ``kb`` over HTTP on a free port, run the agent's two passes, then ``after()``
    while the server (which closes ``kb`` when it stops) still runs."""
    token = TokenStore(kb.db).create(f"bench-{uuid.uuid4().hex[:6]}", "*", write=True).secret
    services = Services(
        paths=KBPaths.of(kb_dir), kb_opener=lambda: kb, settings=load_settings(env={})
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = build_server(services, tokens=TokenStore(kb.db), audit=AuditLog(kb.db))
    app = create_http_app(server, host="127.0.0.1", port=port)
    uv = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    try:
        wait_ready(base)
        started = time.perf_counter()
        first, second = anyio.run(_ingest, f"{base}/mcp", token, llm)
        wall = time.perf_counter() - started
        extra = after()
    finally:
        uv.should_exit = True
        thread.join(timeout=15)
    return first, second, wall, extra


def report(mode: str, first: RunSummary, second: RunSummary, wall: float) -> dict[str, Any]:
    seconds = [s.seconds * 1000 for s in first.sources]
    model = [s.model_seconds * 1000 for s in first.sources]
    own = [a - b for a, b in zip(seconds, model, strict=True)]
    tools = [s.tool_calls for s in first.sources]
    calls = [s.llm_calls for s in first.sources]
    tokens = [s.tokens for s in first.sources]
    n = len(first.sources)
    return {
        "mode": mode,
        "sources": n,
        "ingested": first.count("ingested"),
        "failed": first.count("failed"),
        "ms_per_source_p50": round(statistics.median(seconds), 1),
        "ms_per_source_p95": round(percentile(seconds, 0.95), 1),
        "ms_per_source_mean": round(statistics.fmean(seconds), 1),
        "model_ms_per_source_mean": round(statistics.fmean(model), 1),
        "own_ms_per_source_p50": round(statistics.median(own), 1),
        "own_ms_per_source_p95": round(percentile(own, 0.95), 1),
        "tool_calls_per_source_mean": round(statistics.fmean(tools), 1),
        "tool_calls_per_source_max": max(tools),
        "llm_calls_per_source_mean": round(sum(calls) / n, 2),
        "llm_calls_per_source_max": max(calls),
        "tokens_per_source_mean": round(sum(tokens) / n),
        "tokens_per_source_max": max(tokens),
        "tokens_total": sum(tokens),
        "first_pass_s": round(first.seconds, 2),
        "second_pass_s": round(second.seconds, 3),
        "second_pass_sources": len(second.sources),
        "wall_s": round(wall, 2),
        "per_source": [
            {
                "path": s.path,
                "ms": round(s.seconds * 1000, 1),
                "model_ms": round(s.model_seconds * 1000, 1),
                "tool_calls": s.tool_calls,
                "llm_calls": s.llm_calls,
                "tokens": s.tokens,
                "pages": len(s.pages),
            }
            for s in first.sources
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", nargs="+", default=["llm", "rules"], choices=["llm", "rules"])
    parser.add_argument("--json", action="store_true", help="print JSON results")
    parser.add_argument(
        "--growth", type=int, nargs="+", metavar="N", help="embedded passages at N copies"
    )
    args = parser.parse_args(argv)
    pg, handle = admin_url()
    if args.growth:
        try:
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            grown = [run_growth(n, pg) for n in args.growth]
        finally:
            if handle is not None:
                handle.release()
        print(json.dumps({"load_start": load, "runs": grown}, indent=2))
        return 0
    results = []
    try:
        llm = LLMServer()
        with serve_app(llm.app()) as url:
            llm.url = url
            for mode in args.modes:
                llm.reset()
                if mode == "llm":
                    ScriptedModel(llm)
                results.append(run_mode(mode, pg, llm if mode == "llm" else None))
    finally:
        if handle is not None:
            handle.release()
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(
        "| mode | ms/source p50 / p95 | model ms/source | own ms/source p50 / p95 "
        "| tool calls/source | LLM calls/source | tokens/source (mean / max) | 2nd pass |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['mode']} | {r['ms_per_source_p50']} / {r['ms_per_source_p95']} "
            f"| {r['model_ms_per_source_mean']} "
            f"| {r['own_ms_per_source_p50']} / {r['own_ms_per_source_p95']} "
            f"| {r['tool_calls_per_source_mean']} (max {r['tool_calls_per_source_max']}) "
            f"| {r['llm_calls_per_source_mean']} (max {r['llm_calls_per_source_max']}) "
            f"| {r['tokens_per_source_mean']} / {r['tokens_per_source_max']} "
            f"| {r['second_pass_s']} s, {r['second_pass_sources']} sources |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
