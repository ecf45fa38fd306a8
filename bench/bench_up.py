"""``memserver up`` from a fresh copy of example_kb: banner -> every note ingested, and
questions asked while the ingest agent works against the same questions afterwards.

Runs ``memserver --kb COPY up --json`` (the default local embedder unless ``--embedder``,
no model, the embedded PostgreSQL of the copy) and reads its JSON lines: the banner
(``up``), one ``note`` per finished note, ``ingest_done``, ``vectors_done``. The count of
ingested notes is checked against the ledger (``manifest.json``) when ingest is done.

With ``--questions`` the same questions are asked through the read agent's ``POST
/ask`` (extractive, no model) in a loop from the banner until ingest is done ("during"),
then again the same number of times after the background embedder has caught up
("idle"); p50/p95 of both and their ratio come from the same run, so the machine's load
at that moment cancels out of the ratio (record ``uptime`` anyway). Without it the
startup figure is measured alone (questions slow the ingest a little).

CPU seconds of the memory server process (``up`` itself, with the embedder) and of its
children (agents, PostgreSQL) come from ``/proc`` via psutil.

    .venv/bin/python -m bench.bench_up --json                      # startup only
    .venv/bin/python -m bench.bench_up --questions --json          # and the question ratio
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

import httpx2
import psutil

from bench.common import percentile
from memserver.kb.layout import KBPaths
from memserver.kb.manifest import Manifest, Status
from memserver.up.working_copy import prepare

ROOT = Path(__file__).resolve().parents[1]

SCRATCH = Path(tempfile.gettempdir()) / "memserver-bench"
NOW = "2026-11-20T12:00:00+08:00"
QUESTIONS = (
    "When was the latest meeting with Globex, and what was decided?",
    "Who does Bob Martinez report to?",
    "What did we decide about pricing per seat?",
    "What happened last week?",
    "Who is the account owner of Initech?",
    "What is the status of the Mongolian localization project?",
    "When is the Initech renewal?",
    "Номин Трейд гэрээ",
)
# Variables that would point the run at another database, a model or other tokens.
_FOREIGN = (
    *("DATABASE_URL", "LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY", "MEMORY_URL"),
    *("MEMORY_TOKEN", "MEMORY_CONFIG", "MEMORY_KB", "READ_AGENT_API_KEY"),
)


AGENT_KEY = secrets.token_urlsafe(24)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def pump(stream: IO[str], lines: queue.Queue[tuple[float, str | None]]) -> None:
    for line in stream:
        lines.put((time.monotonic(), line))
    lines.put((time.monotonic(), None))


def agent_client() -> httpx2.Client:
    """A client of the read agent, with the API key this run gave it."""
    return httpx2.Client(timeout=120, headers={"Authorization": f"Bearer {AGENT_KEY}"})


def ask_loop(url: str, stop: threading.Event, gap: float, out: list[float]) -> None:
    """Ask QUESTIONS in turn until ``stop``; ``out`` gets each answer's seconds."""
    with agent_client() as client:
        i = 0
        while not stop.is_set():
            began = time.perf_counter()
            response = client.post(
                f"{url}/ask", json={"question": QUESTIONS[i % len(QUESTIONS)], "now": NOW}
            )
            response.raise_for_status()
            out.append(time.perf_counter() - began)
            i += 1
            stop.wait(gap)


def ask_n(url: str, n: int, gap: float) -> list[float]:
    out: list[float] = []
    with agent_client() as client:
        for i in range(n):
            began = time.perf_counter()
            response = client.post(
                f"{url}/ask", json={"question": QUESTIONS[i % len(QUESTIONS)], "now": NOW}
            )
            response.raise_for_status()
            out.append(time.perf_counter() - began)
            time.sleep(gap)
    return out


def cpu_seconds(proc: psutil.Process) -> tuple[float, float]:
    """(this process, its children) user + system CPU seconds, children still alive."""
    own = proc.cpu_times()
    kids = 0.0
    for child in proc.children(recursive=True):
        try:
            times = child.cpu_times()
            kids += times.user + times.system
        except psutil.Error:
            continue
    return own.user + own.system, kids


def tool_times(kb: Path) -> dict[str, dict[str, float]]:
    """Per MCP tool: calls, mean and total milliseconds (the server's audit log)."""
    from memserver.db.database import Database

    with Database.open(KBPaths.of(kb), max_size=1, migrate=False) as db, db.connection() as conn:
        rows = conn.execute(
            "SELECT tool, count(*), avg(duration_ms), sum(duration_ms) FROM audit_log"
            " GROUP BY tool ORDER BY sum(duration_ms) DESC"
        ).fetchall()
    return {
        tool: {"calls": int(n), "mean_ms": round(mean, 1), "total_s": round(total / 1000, 1)}
        for tool, n, mean, total in rows
    }


def query_times(kb: Path, split: float) -> dict[str, dict[str, float]]:
    """kb_query's own time in the server (audit log), before and after ``split``."""
    from memserver.db.database import Database

    with Database.open(KBPaths.of(kb), max_size=1, migrate=False) as db, db.connection() as conn:
        rows = conn.execute(
            "SELECT extract(epoch FROM created_at), duration_ms FROM audit_log"
            " WHERE tool = 'kb_query' ORDER BY id"
        ).fetchall()
    during = [float(d) / 1000 for at, d in rows if float(at) < split]
    idle = [float(d) / 1000 for at, d in rows if float(at) >= split]
    return {"during": ms(during), "idle": ms(idle)}


def ms(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 0.5) * 1000, 1),
        "p95_ms": round(percentile(values, 0.95) * 1000, 1),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    SCRATCH.mkdir(mode=0o755, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-up-", dir=SCRATCH))
    kb = work / "example_kb"
    prepare(kb, ROOT / "example_kb")
    argv = [sys.executable, "-m", "memserver.cli", "--kb", str(kb), "up", "--json"]
    argv += ["--addr", args.addr, "--agent-addr", args.agent_addr, "--watch", "5s"]
    if args.embedder:
        argv += ["--embedder", args.embedder]
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN}
    env["PYTHONUNBUFFERED"] = "1"
    env["READ_AGENT_API_KEY"] = AGENT_KEY
    result: dict[str, Any] = {"load_start": load(), "embedder": args.embedder or "local"}
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    assert proc.stdout is not None
    lines: queue.Queue[tuple[float, str | None]] = queue.Queue()
    threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
    agent = f"http://{args.agent_addr}"
    stop = threading.Event()
    during: list[float] = []
    asker: threading.Thread | None = None
    marks: dict[str, float] = {}
    ingest_done_epoch = 0.0
    notes = 0
    try:
        deadline = started + args.timeout
        while "vectors_done" not in marks or "ingest_done" not in marks:
            try:
                at, line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"not done within {args.timeout}s: {marks}") from None
            if line is None:
                raise RuntimeError(f"memserver up ended early (status {proc.wait()})")
            event = json.loads(line)
            kind = event.get("event")
            if kind == "up":
                marks["banner"] = at
                if args.questions:
                    asker = threading.Thread(
                        target=ask_loop, args=(agent, stop, args.gap, during), daemon=True
                    )
                    asker.start()
            elif kind == "note":
                notes += 1
            elif kind == "ingest_done" or (kind == "vectors_done" and "ingest_done" in marks):
                marks[kind] = at
                if kind == "ingest_done":
                    stop.set()
                    ingest_done_epoch = time.time()
                    entries = Manifest(KBPaths.of(kb)).entries()
                    result["ledger_ingested"] = sum(e.status is Status.INGESTED for e in entries)
                    result["ledger_total"] = len(entries)
                    result["cpu_at_ingest_done"] = cpu_seconds(psutil.Process(proc.pid))
        if asker is not None:
            asker.join(120)
        own, kids = cpu_seconds(psutil.Process(proc.pid))
        banner = marks["banner"]
        result |= {
            "start_to_banner_s": round(banner - started, 1),
            "banner_to_ingested_s": round(marks["ingest_done"] - banner, 1),
            "banner_to_vectors_s": round(marks["vectors_done"] - banner, 1),
            "notes": notes,
            "cpu_memserver_s": round(own, 1),
            "cpu_children_s": round(kids, 1),
        }
        result["tools"] = tool_times(kb)
        if args.questions:
            idle = ask_n(agent, max(len(during), len(QUESTIONS)), args.gap)
            result["kb_query_in_server"] = query_times(kb, ingest_done_epoch)
            result["during"] = ms(during)
            result["idle"] = ms(idle)
            result["p95_ratio"] = round(
                percentile(during, 0.95) / max(percentile(idle, 0.95), 1e-9), 2
            )
            result["p50_ratio"] = round(
                percentile(during, 0.5) / max(percentile(idle, 0.5), 1e-9), 2
            )
    finally:
        stop.set()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                for child in psutil.Process(proc.pid).children(recursive=True):
                    child.kill()
                proc.kill()
                proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    result["load_end"] = load()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", action="store_true", help="ask during and after ingest")
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between questions")
    parser.add_argument("--embedder", choices=("local", "hash"), default=None)
    parser.add_argument("--addr", default="127.0.0.1:9817")
    parser.add_argument("--agent-addr", default="127.0.0.1:9818")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>22}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
