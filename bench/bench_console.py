"""Console page latency: p50/p95 of every console view at 10,000 generated pages.

Generates a knowledge base with bench/gen_kb.py (``--pages``, seed 7), indexes it with the
hash embedder (reused when already built, as bench_search_latency.py does), flags
``--flagged`` changes and records as many conflicts so the review view has work, then
starts a real ``memserver serve`` (subprocess, the console at /ui, hash embedder) on
``--port``, signs in with an all-folders write token the way a browser does (login form,
cookie, CSRF) and fetches each view ``--rounds`` times with varied arguments, one request
at a time, timing the whole HTTP round trip on the client. Prints a table of p50/p95 per
view and over all pages, and the machine's load before and after.

The Ask view's answer is the read agent's work, so it is timed apart: a real
``read-agent --no-llm serve`` on ``--port`` + 1 (the console reaches it through
``READ_AGENT_URL``), ``--asks`` questions posted to ``/ui/ask`` (the 303 after the
answer), reported as their own row and not counted in "all views".

    nice -n 10 .venv/bin/python -m bench.bench_console [--pages 10000] [--rounds 40]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import httpx2

from bench.bench_search_latency import build, queries
from bench.common import create_token, percentile, stop_process, wait_ready
from bench.gen_kb import GenPage
from memserver.clients.embed import HashEmbedder
from memserver.store.knowledge_base import KnowledgeBase

REPO = Path(__file__).resolve().parents[1]

MONTHS = [f"2026-{m:02d}" for m in range(1, 13)]


def flag_changes(root: Path, pages: list[GenPage], count: int) -> None:
    """``count`` people pages rewritten with a review flag and a conflict (once per KB)."""
    marker = root / ".bench-flagged"
    if marker.is_file() or count <= 0:
        return
    people = [p for p in pages if p.folder == "people"][:count]
    with KnowledgeBase.open(root, embedder=HashEmbedder(), database_url=None) as kb:
        for made in people:
            stored = kb.get_page(made.id)
            page = dataclasses.replace(stored.page, aliases=(*stored.page.aliases, "bench"))
            kb.put_page(
                made.folder,
                page,
                stored.version,
                slug=made.slug,
                written_by="bench",
                review="bench: a changed alias",
                conflicts=[{"field": "role", "old_value": "a", "new_value": "b"}],
            )
    marker.write_text(str(count))


def sign_in(client: httpx2.Client, secret: str) -> str:
    """Sign in as a browser does; the session's CSRF token."""
    page = client.get("/ui/login")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None
    response = client.post("/ui/login", data={"csrf": token.group(1), "token": secret})
    assert response.status_code == 303, response.text[:300]
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/ui/").text)
    assert found is not None
    return found.group(1)


def views(pages: list[GenPage], rng: random.Random, n: int) -> dict[str, Callable[[], str]]:
    """View name -> a function giving the next URL to fetch for it."""
    people = [p for p in pages if p.folder == "people"]
    dated = [p for p in pages if p.date is not None]
    asked = iter(queries(pages, n, seed=11) * 2)

    def page_url() -> str:
        return f"/ui/page/{rng.choice(people).id}"

    return {
        "search": lambda: "/ui/?" + urlencode({"q": next(asked)}),
        "page": page_url,
        "diff": lambda: f"/ui/page/{rng.choice(people).id}/diff?a=1&b=1",
        "graph depth 1": lambda: f"/ui/graph?id={rng.choice(people).id}&depth=1",
        "graph depth 2": lambda: f"/ui/graph?id={rng.choice(people).id}&depth=2",
        "timeline month": lambda: f"/ui/timeline?window={rng.choice(MONTHS)}",
        "timeline page": lambda: f"/ui/timeline?page={rng.choice(dated).id}",
        "timeline default": lambda: "/ui/timeline",
        "ask view": lambda: "/ui/ask",
        "ingest": lambda: "/ui/ingest",
        "review": lambda: "/ui/review",
        "audit": lambda: "/ui/audit",
        "tokens": lambda: "/ui/tokens",
    }


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=40, help="requests per view")
    parser.add_argument("--flagged", type=int, default=50)
    parser.add_argument("--asks", type=int, default=20, help="questions asked in the Ask view")
    parser.add_argument("--port", type=int, default=9517)
    parser.add_argument("--root", type=Path, default=REPO / "bench" / "out" / "console")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    root = args.root / f"kb{args.pages}"
    made, built = build(root, args.pages, 7)
    flag_changes(root, made, args.flagged)
    config = args.root / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n  dims: 384\n")
    command = [sys.executable, "-m", "memserver.cli", "--kb", str(root), "--config", str(config)]
    secret = create_token(command, f"bench-{int(time.time())}", "*", write=True)
    reader = create_token(command, f"bench-reader-{int(time.time())}", "*")
    base = f"http://127.0.0.1:{args.port}"
    agent = f"http://127.0.0.1:{args.port + 1}"
    key = f"ra_bench-{os.getpid()}"
    env = {**os.environ, "READ_AGENT_URL": agent, "READ_AGENT_API_KEY": key}
    server = subprocess.Popen([*command, "serve", "--addr", f"127.0.0.1:{args.port}"], env=env)
    agent_env = {**env, "MEMORY_URL": f"{base}/mcp", "MEMORY_TOKEN": reader}
    for name in ("LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY", "MEMORY_CONFIG"):
        agent_env.pop(name, None)
    agent_command = [sys.executable, "-m", "read_agent.cli", "--no-llm", "serve"]
    reading: subprocess.Popen[str] | None = None
    times: dict[str, list[float]] = {}
    statuses: dict[str, set[int]] = {}
    asked: list[float] = []
    load_before = load()
    try:
        wait_ready(base, timeout=120)
        # The read agent connects to the memory server as it starts: only once it answers.
        reading = subprocess.Popen(
            [*agent_command, "--addr", agent.removeprefix("http://")], env=agent_env, text=True
        )
        wait_ready(agent, timeout=120)
        with httpx2.Client(base_url=base, timeout=120.0) as client:
            csrf = sign_in(client, secret)
            rng = random.Random(7)
            plan = views(made, rng, args.rounds)
            for url_of in plan.values():  # warm: the knowledge base opens on first use
                client.get(url_of())
            for _ in range(args.rounds):
                for name, url_of in plan.items():
                    url = url_of()
                    began = time.perf_counter()
                    response = client.get(url)
                    times.setdefault(name, []).append((time.perf_counter() - began) * 1000)
                    statuses.setdefault(name, set()).add(response.status_code)
            for question in queries(made, args.asks, seed=13):
                form = {"csrf": csrf, "question": question, "now": "2026-12-31"}
                began = time.perf_counter()
                response = client.post("/ui/ask", data=form)
                asked.append((time.perf_counter() - began) * 1000)
                statuses.setdefault("ask (read agent)", set()).add(response.status_code)
    finally:
        if reading is not None:
            stop_process(reading)
        stop_process(server)
    load_after = load()
    every = [t for values in times.values() for t in values]
    rows = {
        name: {"p50": percentile(v, 0.5), "p95": percentile(v, 0.95), "n": len(v)}
        for name, v in [*times.items(), ("all views", every), ("ask (read agent)", asked)]
    }
    report = {
        "pages": args.pages,
        "built_s": round(built, 1),
        "rounds": args.rounds,
        "load_before": load_before,
        "load_after": load_after,
        "statuses": {k: sorted(v) for k, v in statuses.items()},
        "views": rows,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{args.pages} pages; load {load_before} -> {load_after}; statuses {report['statuses']}"
        )
        print("| view | requests | p50 ms | p95 ms |\n|---|---:|---:|---:|")
        for name, row in rows.items():
            print(f"| {name} | {row['n']} | {row['p50']:.1f} | {row['p95']:.1f} |")
    expected = {name: {303} if name == "ask (read agent)" else {200} for name in statuses}
    return 0 if statuses == expected else 1


if __name__ == "__main__":
    raise SystemExit(main())
