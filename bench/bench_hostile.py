"""Hostile input against a live memory server and read agent (loopback only, bounded).

Starts ``memserver serve`` and ``read-agent serve`` (subprocesses, 127.0.0.1) on a copy
of example_kb with the local embedder (the stalls this guards against came from
embedding), ingests it with the rules extractor, then runs each attack of the hardening
issue (items 6-12), of the trust issue (30: item 1, an injected note and a model that
obeys it, ``bench.hostile_injection``; items 2 and 5-8, ``bench.hostile_trust``), of
trust's second round (44: item 1, the server's write gate with and without a model and
the read agent with a model that obeys a note, ``bench.hostile_injection``; item 3, the
leaks, ``bench.hostile_trust``) and of the limits issue (44: items 2, 4, 5 and 6, printed
as item 44 with their section, ``bench.hostile_limits``, ``bench.hostile_files``,
``bench.hostile_crash``, ``bench.hostile_outage``) in turn, every one bounded by
``--attack-timeout`` (the crash and outage ones, on systems of their own, by 30 minutes;
``--only injection``: item 1 alone, ``--only trust``: issue 44's items 1 and 3,
``--only limits``: issue 44's items 2, 4, 5 and 6). An
honest client asks ``kb_query`` over its own MCP session, paced, in a thread. Printed:
per attack its outcome (HTTP status or the first words of the error) and how long the
answer took; the server's RSS before, at its peak and after; the honest query's p50 and
p95 while idle (measured first, in the same run) and during the attacks, and their ratio.

    nice -n 10 .venv/bin/python -m bench.bench_hostile
    nice -n 10 .venv/bin/python -m bench.bench_hostile --port 9717 --agent-port 9718 --json
    nice -n 10 .venv/bin/python -m bench.bench_hostile --only injection
    nice -n 10 .venv/bin/python -m bench.bench_hostile --only trust

Goals (the issue's): every attack answered in under 2 s with a clear error, RSS growth
under 100 MB, honest p95 during attacks / idle p95 <= 1.5.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil

from bench.common import create_token, free_port, percentile, stop_process, wait_ready
from bench.hostile_crash import run_crash_attacks
from bench.hostile_files import run_file_attacks
from bench.hostile_injection import (
    run_gate_attacks,
    run_injection_attacks,
    run_read_agent_attack,
)
from bench.hostile_limits import run_limit_attacks
from bench.hostile_outage import run_outage_attacks
from bench.hostile_trust import run_leak_attacks, run_trust_attacks
from memserver.clients.mcp import open_http
from memserver.errors import MemoryError_
from tests.fixtures.hostile import ALIAS_BOMB, MCP_HEADERS, MCP_INITIALIZE

ROOT = Path(__file__).resolve().parents[1]

HONEST_QUESTION = "When was the latest meeting with Globex, and what was decided?"
NOW = "2026-11-20T12:00:00+08:00"


@dataclass
class Outcome:
    attack: str
    item: int
    status: str
    seconds: float
    started: float = 0.0


@dataclass
class Target:
    kb: Path
    url: str  # memory server base URL
    agent: str  # read agent base URL
    agent_key: str
    reader: str
    writer: str
    flooder: str
    pid: int
    timeout: float
    outcomes: list[Outcome] = field(default_factory=list)


# -- the honest client -------------------------------------------------------------------


class Honest:
    """Paced kb_query calls in a thread of their own; latencies by phase."""

    def __init__(self, url: str, token: str, pause: float) -> None:
        self.url, self.token, self.pause = url, token, pause
        self.phase = "idle"
        self.latencies: dict[str, list[float]] = {"idle": [], "attacks": []}
        self.errors = 0
        self.broken: list[str] = []
        self.timed: list[tuple[float, float]] = []  # (start, seconds) of every query
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: anyio.run(self._loop), daemon=True)

    async def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                await self._session()
            except Exception as exc:  # the session broke: count it, open a new one
                self.errors += 1
                self.broken.append(f"{type(exc).__name__}: {first_words(str(exc))}")
                await anyio.sleep(self.pause)

    async def _session(self) -> None:
        async with open_http(f"{self.url}/mcp", self.token, timeout=120) as memory:
            while not self._stop.is_set():
                phase = self.phase
                started = time.perf_counter()
                try:
                    await memory.call("kb_query", {"question": HONEST_QUESTION, "now": NOW})
                except MemoryError_:
                    self.errors += 1
                took = time.perf_counter() - started
                self.latencies[phase].append(took)
                self.timed.append((started, took))
                await anyio.sleep(self.pause)

    def start(self) -> None:
        self._thread.start()

    def wait_for(self, phase: str, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(self.latencies[phase]) < count and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=120)


# -- attacks ---------------------------------------------------------------------------------


def first_words(text: str, n: int = 12) -> str:
    return " ".join(text.split()[:n])


async def mcp_attack(target: Target, secret: str, tool: str, args: dict[str, Any]) -> str:
    async with open_http(f"{target.url}/mcp", secret, timeout=target.timeout) as memory:
        result = await memory.call_result(tool, args)
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    return f"{'ToolError' if result.is_error else 'ok'}: {first_words(text)}"


def timed(
    target: Target,
    item: int,
    name: str,
    run: Callable[[], Awaitable[str]],
    bound: float | None = None,
) -> None:
    async def bounded() -> str:
        with anyio.fail_after(bound or target.timeout):
            return await run()

    started = time.perf_counter()
    try:
        status = anyio.run(bounded)
    except TimeoutError:
        status = f"NO ANSWER within {bound or target.timeout:.0f} s"
    except Exception as exc:  # the outcome of an attack, whatever it is, is recorded
        status = f"{type(exc).__name__}: {first_words(str(exc))}"
    target.outcomes.append(Outcome(name, item, status, time.perf_counter() - started, started))


def http_attack(method: str, url: str, **kwargs: Any) -> Callable[[], Awaitable[str]]:
    async def run() -> str:
        async with httpx2.AsyncClient(timeout=30) as client:
            response = await client.request(method, url, **kwargs)
        try:
            message = response.json().get("error", {})
            message = message.get("message", "") if isinstance(message, dict) else str(message)
        except ValueError:
            message = response.text
        return f"HTTP {response.status_code}: {first_words(message)}"

    return run


def run_attacks(target: Target, only: str = "all") -> None:
    w, r = target.writer, target.reader
    if only == "limits":
        run_issue44_limits(target)
        return
    config = target.kb.parent / "config.yaml"

    def record(item: int, name: str, run: Callable[[], Awaitable[str]]) -> None:
        timed(target, item, name, run)

    if only == "trust":  # issue 44, items 1 and 3 alone
        run_gate_attacks(target.url, config, target.kb, w, target.timeout, record)
        run_read_agent_attack(target.url, target.kb, config, target.timeout, record)
        run_leak_attacks(target.url, target.kb, w, target.timeout, record)
        return
    # issue 30 (trust), item 1: an injected note, a model that obeys it
    run_injection_attacks(target.url, config, target.kb, w, target.timeout, record)
    # issue 44, item 1: the write gate, with and without a model; the read agent
    run_gate_attacks(target.url, config, target.kb, w, target.timeout, record)
    run_read_agent_attack(target.url, target.kb, config, target.timeout, record)
    if only == "injection":
        return

    def tool(item: int, name: str, secret: str, tool_name: str, args: dict[str, Any]) -> None:
        timed(target, item, name, lambda: mcp_attack(target, secret, tool_name, args))

    # 6: YAML
    markdown = f"---\ntitle: Bomb\ntype: person\n{ALIAS_BOMB}\n---\n\n## Summary\nx\n"
    tool(
        6,
        "frontmatter alias bomb (kb_put_page)",
        w,
        "kb_put_page",
        {"folder": "people", "markdown": markdown},
    )
    big = "\n".join(f"k{i}: {'v' * 100}" for i in range(10_000))
    tool(
        6,
        "1 MB frontmatter (kb_put_page)",
        w,
        "kb_put_page",
        {"folder": "people", "markdown": f"---\ntitle: Big\ntype: person\n{big}\n---\n"},
    )
    schema_kb = Path(tempfile.mkdtemp(prefix="hostile-schema-"))
    (schema_kb / "schema.yaml").write_text(f"{ALIAS_BOMB}\nfolders: []\n", encoding="utf-8")

    async def schema_check() -> str:
        command = [sys.executable, "-m", "memserver.cli", "--kb", str(schema_kb), "schema-check"]
        done = await anyio.run_process(command, check=False)
        return f"exit {done.returncode}: {first_words(done.stderr.decode())}"

    timed(target, 6, "schema.yaml alias bomb (schema-check)", schema_check)
    shutil.rmtree(schema_kb, ignore_errors=True)

    # 7: outsized texts
    tool(
        7,
        "20 KB question (kb_query, read token)",
        r,
        "kb_query",
        {"question": "globex pricing " * 1400},
    )
    tool(
        7,
        "20,000-character title (kb_put_page)",
        w,
        "kb_put_page",
        {"folder": "people", "page": {"title": "T" * 20_000}},
    )

    # 8: outsized sources
    huge = target.kb / "source" / "hostile" / "huge-note.md"
    huge.parent.mkdir(parents=True, exist_ok=True)
    with huge.open("w", encoding="utf-8") as out:
        line = "A line of a very large note about Globex pricing.\n"
        out.write(line * (50_000_000 // len(line)))
    tool(8, "50 MB note: source_pending (scan)", w, "source_pending", {"limit": 10})
    tool(8, "50 MB note: source_read", w, "source_read", {"path": "hostile/huge-note.md"})
    huge.unlink()
    long = target.kb / "source" / "hostile" / "long-note.md"
    long.write_text("Line of a long note about the Globex rollout.\n" * 40_000, encoding="utf-8")

    async def read_pages() -> str:
        async with open_http(f"{target.url}/mcp", w, timeout=target.timeout) as memory:
            pages, offset = 0, 0
            while offset is not None:
                page = await memory.call(
                    "source_read", {"path": "hostile/long-note.md", "offset": offset}
                )
                pages, offset = pages + 1, page["next_offset"]
        return f"ok: {page['total_chars']:,} characters in {pages} pages"

    timed(target, 8, "1.8 MB note read page by page (source_read)", read_pages)
    long.unlink()

    # 9: slugs in bytes
    tool(
        9,
        "90-character CJK title (kb_put_page)",
        w,
        "kb_put_page",
        {"folder": "people", "page": {"title": "漢字" * 45}},
    )

    # 10: sessions and sockets
    async def flood() -> str:
        codes: dict[int, int] = {}
        flooder = {"Authorization": f"Bearer {target.flooder}"}
        opened: list[str] = []
        async with httpx2.AsyncClient(base_url=target.url, timeout=30) as client:
            for _ in range(200):
                answer = await client.post(
                    "/mcp", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **flooder}
                )
                codes[answer.status_code] = codes.get(answer.status_code, 0) + 1
                if answer.status_code == 200:
                    opened.append(answer.headers["mcp-session-id"])
            reader = {"Authorization": f"Bearer {r}"}
            other = await client.post(
                "/mcp", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **reader}
            )
            for session in opened:  # tidy up after
                await client.delete("/mcp", headers={**flooder, "mcp-session-id": session})
            await client.delete(
                "/mcp",
                headers={**reader, "mcp-session-id": other.headers.get("mcp-session-id", "")},
            )
        shown = ", ".join(f"{n}x HTTP {code}" for code, n in sorted(codes.items()))
        return f"sessions: {shown}; another token meanwhile HTTP {other.status_code}"

    timed(target, 10, "200 sessions opened by one token", flood)

    async def idle_sockets() -> str:
        host, port = target.url.removeprefix("http://").split(":")
        socks = [socket.create_connection((host, int(port))) for _ in range(1000)]
        try:
            async with httpx2.AsyncClient(timeout=30) as client:
                alive = (await client.get(f"{target.url}/healthz")).status_code
            started = time.perf_counter()
            closed = 0
            for sock in socks:
                sock.settimeout(max(0.1, 30 - (time.perf_counter() - started)))
                with contextlib.suppress(TimeoutError):
                    closed += sock.recv(1) == b""
            return f"healthz HTTP {alive} meanwhile; {closed}/1000 idle sockets closed by the server in {time.perf_counter() - started:.1f} s"
        finally:
            for sock in socks:
                sock.close()

    timed(target, 10, "1,000 idle sockets", idle_sockets)

    # 11: the read agent's body
    key = {"Authorization": f"Bearer {target.agent_key}", "Content-Type": "application/json"}

    async def declared_200mb() -> str:
        """Announce 200 MB, send the first megabyte, read what the server says."""
        host, port = target.agent.removeprefix("http://").split(":")
        head = (
            f"POST /ask HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer "
            f"{target.agent_key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {200 << 20}\r\n\r\n"
        )
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(head.encode() + b" " * (1 << 20))
            answer = sock.recv(4096).decode(errors="replace")
        status, _, rest = answer.partition("\r\n")
        return f"{status.removeprefix('HTTP/1.1 ')}: {first_words(rest.rpartition(chr(10))[2], 14)}"

    timed(target, 11, "200 MB body (read agent /ask)", declared_200mb)
    deep = b"[" * 100_000 + b"]" * 100_000
    timed(
        target,
        11,
        "100k-deep JSON (read agent /ask)",
        http_attack("POST", f"{target.agent}/ask", content=deep, headers=key),
    )
    timed(
        target,
        11,
        "foreign Host, DNS rebinding (read agent)",
        http_attack(
            "POST",
            f"{target.agent}/ask",
            content=b'{"question":"x"}',
            headers={**key, "Host": "evil.example.com"},
        ),
    )
    timed(
        target,
        11,
        "no API key (read agent)",
        http_attack("POST", f"{target.agent}/ask", json={"question": "x"}),
    )

    # 12: bad values
    tool(
        12,
        "NUL byte in a page body",
        w,
        "kb_put_page",
        {"folder": "people", "page": {"title": "Nul", "sections": {"Summary": "a\x00b"}}},
    )
    tool(12, "offset=1e20 (kb_list_pages)", r, "kb_list_pages", {"offset": 10**20})
    tool(
        12,
        "now=0001-01-01 (kb_query)",
        r,
        "kb_query",
        {"question": "what happened last week", "now": "0001-01-01"},
    )
    tool(12, "window at year 9999 (kb_timeline)", r, "kb_timeline", {"window": "9999-12"})
    tool(
        12,
        "window from year 1 (kb_timeline)",
        r,
        "kb_timeline",
        {"window": "from 0001-01-01 to 9999-12-31"},
    )
    tool(
        12,
        "version=1e20 (kb_history)",
        r,
        "kb_history",
        {"id": "people/bob-martinez", "version": 10**20},
    )

    # issue 44, item 3: the leaks that remained (before item 5's wrong sign-ins, which
    # lock this address out of the console for a while)
    run_leak_attacks(target.url, target.kb, w, target.timeout, record)
    # issue 30 (trust): items 2, 6, 7, 5 and 8
    run_trust_attacks(target.url, target.kb, w, target.timeout, record)
    run_issue44_limits(target)


def run_issue44_limits(target: Target) -> None:
    """Issue 44, items 2, 4, 5 and 6: hidden lines, files, crash and outage, shared
    limits (``bench.hostile_limits``, ``bench.hostile_files``, and on systems of their
    own ``bench.hostile_crash`` and ``bench.hostile_outage``)."""

    def on(item: int, name: str, run: Callable[[], Awaitable[str]]) -> None:
        timed(target, item, name, run)

    def long(item: int, name: str, run: Callable[[], Awaitable[str]]) -> None:
        timed(target, item, name, run, bound=1800)

    run_limit_attacks(target.url, target.kb, target.writer, target.timeout, on)
    run_file_attacks(target.url, target.kb, target.writer, target.timeout, on, target.pid)
    run_crash_attacks(target.timeout, long)
    run_outage_attacks(target.timeout, long)


# -- setup --------------------------------------------------------------------------------------


class RSS:
    """The server's resident memory, sampled in a thread."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.peak = self.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def now(self) -> int:
        return int(self.proc.memory_info().rss)

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self.now())

    def __enter__(self) -> RSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def main() -> int:
    # 1,000 idle sockets are one of the attacks: this process must be able to open them
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--port", type=int, default=0, help="memory server port (default: a free one)"
    )
    parser.add_argument(
        "--agent-port", type=int, default=0, help="read agent port (default: a free one)"
    )
    parser.add_argument("--embedder", default="local", choices=("local", "hash"))
    parser.add_argument(
        "--attack-timeout", type=float, default=60.0, help="seconds an attack may take at most"
    )
    parser.add_argument(
        "--honest-pause", type=float, default=0.1, help="seconds between honest queries"
    )
    parser.add_argument("--idle-queries", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--only",
        default="all",
        choices=("all", "injection", "trust", "limits"),
        help="injection: only the injected-note attacks (issue 30, item 1, and issue 44, "
        "item 1); trust: only issue 44's items 1 and 3; limits: only issue 44's items 2, "
        "4, 5 and 6",
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    kb = work / "kb"
    shutil.copytree(
        ROOT / "example_kb",
        kb,
        ignore=shutil.ignore_patterns(".memserver", "knowledge", "manifest.json"),
    )
    config = work / "config.yaml"
    config.write_text(f"embedding:\n  provider: {args.embedder}\n", encoding="utf-8")
    command = [sys.executable, "-m", "memserver.cli", "--kb", str(kb), "--config", str(config)]
    port, agent_port = args.port or free_port(), args.agent_port or free_port()
    url, agent = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{agent_port}"
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "MEMORY_", "READ_AGENT_"))
    }
    server = subprocess.Popen([*command, "serve", "--addr", f"127.0.0.1:{port}"], env=env)
    agent_proc: subprocess.Popen[bytes] | None = None
    try:
        wait_ready(url, timeout=180)
        writer = create_token(command, "bench-writer", "*", write=True)
        reader = create_token(command, "bench-reader", "*")
        flooder = create_token(command, "bench-flooder", "*")
        honest_token = create_token(command, "bench-honest", "*")
        ingest = [
            sys.executable,
            "-m",
            "ingest_agent.cli",
            "--config",
            str(config),
            "--url",
            f"{url}/mcp",
            "--rules",
            "--json",
        ]
        started = time.perf_counter()
        subprocess.run(
            ingest,
            env={**env, "MEMORY_TOKEN": writer},
            check=True,
            capture_output=True,
            timeout=1800,
        )
        ingested = time.perf_counter() - started
        agent_key = "ra_bench-" + os.urandom(8).hex()
        agent_env = {
            **env,
            "MEMORY_URL": f"{url}/mcp",
            "MEMORY_TOKEN": reader,
            "READ_AGENT_API_KEY": agent_key,
        }
        agent_proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "read_agent.cli",
                "--config",
                str(config),
                "serve",
                "--addr",
                f"127.0.0.1:{agent_port}",
            ],
            env=agent_env,
        )
        wait_ready(agent, timeout=120)
        target = Target(
            kb, url, agent, agent_key, reader, writer, flooder, server.pid, args.attack_timeout
        )
        honest = Honest(url, honest_token, args.honest_pause)
        honest.start()
        honest.wait_for("idle", args.idle_queries, timeout=600)
        with RSS(server.pid) as rss:
            before = rss.now()
            honest.phase = "attacks"
            run_attacks(target, args.only)
            honest.stop()
            after = rss.now()
        report = summary(target, honest, before, rss.peak, after, ingested)
    finally:
        if agent_proc is not None:
            stop_process(agent_proc)
        stop_process(server)
        shutil.rmtree(work, ignore_errors=True)
    print_report(report, args.json)
    return 0


def summary(
    target: Target, honest: Honest, before: int, peak: int, after: int, ingested: float
) -> dict[str, Any]:
    idle, attacks = honest.latencies["idle"], honest.latencies["attacks"]
    idle_p95, attack_p95 = percentile(idle, 0.95), percentile(attacks, 0.95)
    return {
        "load": os.getloadavg(),
        "ingest_seconds": round(ingested, 1),
        "attacks": [
            {
                "attack": o.attack,
                "item": o.item,
                "status": o.status,
                "seconds": round(o.seconds, 3),
                "honest_worst_ms": round(worst_during(honest, o) * 1000, 1),
            }
            for o in target.outcomes
        ],
        "slowest_attack_s": round(max(o.seconds for o in target.outcomes), 3),
        "rss_mb": {
            "before": before >> 20,
            "peak": peak >> 20,
            "after": after >> 20,
            "growth": (after - before) >> 20,
            "peak_growth": (peak - before) >> 20,
        },
        "honest": {
            "idle": {
                "n": len(idle),
                "p50_ms": round(percentile(idle, 0.5) * 1000, 1),
                "p95_ms": round(idle_p95 * 1000, 1),
            },
            "attacks": {
                "n": len(attacks),
                "p50_ms": round(percentile(attacks, 0.5) * 1000, 1),
                "p95_ms": round(attack_p95 * 1000, 1),
            },
            "p95_ratio": round(attack_p95 / idle_p95, 2) if idle_p95 else None,
            "errors": honest.errors,
            "broken_sessions": honest.broken,
        },
    }


def worst_during(honest: Honest, attack: Outcome) -> float:
    """The slowest honest query that overlapped the attack (0 when none did)."""
    end = attack.started + attack.seconds
    return max(
        (took for start, took in honest.timed if start < end and start + took > attack.started),
        default=0.0,
    )


def print_report(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return
    print(f"load average {report['load']}; ingest (rules) {report['ingest_seconds']} s")
    print(f"{'item':>4}  {'attack':<45} {'seconds':>8} {'honest max ms':>13}  outcome")
    for o in report["attacks"]:
        print(
            f"{o['item']:>4}  {o['attack']:<45} {o['seconds']:>8.3f} "
            f"{o['honest_worst_ms']:>13.1f}  {o['status']}"
        )
    rss = report["rss_mb"]
    print(
        f"server RSS MB: before {rss['before']}, peak {rss['peak']}, after {rss['after']} (growth {rss['growth']}, peak growth {rss['peak_growth']})"
    )
    h = report["honest"]
    print(
        f"honest kb_query: idle p50/p95 {h['idle']['p50_ms']}/{h['idle']['p95_ms']} ms (n={h['idle']['n']}); "
        f"during attacks {h['attacks']['p50_ms']}/{h['attacks']['p95_ms']} ms (n={h['attacks']['n']}); "
        f"p95 ratio {h['p95_ratio']}; errors {h['errors']}"
    )
    for broken in h["broken_sessions"]:
        print(f"  honest session broke: {broken}")


if __name__ == "__main__":
    sys.exit(main())
