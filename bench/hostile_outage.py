"""The limits issue's outage attacks (44, item 5) for ``bench_hostile``, on a system of
their own: ``memserver up`` (hash embedder, no ingest) on a fresh copy of example_kb,
so the main run's server and honest client are not touched. One line each.

- **frozen database** (every PostgreSQL process stopped by SIGSTOP): the memory server's
  ``/healthz``, an MCP call on a session opened before, the console signed in, the read
  agent's ``/ask`` on its open session and its ``/healthz``, and ``memserver token list``
  on *another* knowledge base: what each answered and how long it took (goal: 503
  within 5 s, the other knowledge base not waiting); then how long until ``/healthz``
  is 200 again once it is resumed;
- **stopped database** (PostgreSQL's fast shutdown): the same answers, and how long
  until ``up`` has restarted it and ``/healthz`` is 200 (goal: under 30 s), with
  ``token list`` on the other knowledge base meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import anyio
import httpx2
import psutil
from anyio.from_thread import BlockingPortal, start_blocking_portal

from bench.common import create_token, free_port, stop_process, wait_ready
from memserver.clients.mcp import MemoryClient, open_http
from memserver.db import pgserver
from memserver.up.working_copy import prepare

Timed = Callable[[int, str, Callable[[], Awaitable[str]]], None]
ITEM = 44
ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path(tempfile.gettempdir()) / "memserver-bench"
FOREIGN = (
    *("DATABASE_URL", "LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY", "MEMORY_URL"),
    *("MEMORY_TOKEN", "MEMORY_CONFIG", "MEMORY_KB", "READ_AGENT_API_KEY"),
)


def cli(kb: Path) -> list[str]:
    return [sys.executable, "-m", "memserver.cli", "--kb", str(kb)]


@contextlib.contextmanager
def frozen(pgdata: Path) -> Iterator[int]:
    """Every process of the PostgreSQL serving ``pgdata`` stopped (SIGSTOP) inside."""
    pid = pgserver.running_pid(pgdata)
    assert pid is not None, f"no PostgreSQL running for {pgdata}"
    postmaster = psutil.Process(pid)
    processes = [postmaster, *postmaster.children(recursive=True)]
    for proc in processes:
        proc.suspend()
    try:
        yield len(processes)
    finally:
        for proc in processes:
            with contextlib.suppress(psutil.Error):
                proc.resume()


def status_of(response: httpx2.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        body = {}
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return f"HTTP {response.status_code}" + (f" {code}" if code else "")


class System:
    """``memserver up`` on a copy of example_kb, its tokens, a console and read agent
    client that signed in / asked before the outage, and an MCP session kept open."""

    def __init__(self, work: Path) -> None:
        self.kb = work / "kb"
        self.other = work / "other"
        prepare(self.kb, ROOT / "example_kb")
        prepare(self.other, ROOT / "example_kb")
        self.url = f"http://127.0.0.1:{free_port()}"
        self.agent = f"http://127.0.0.1:{free_port()}"
        self.key = secrets.token_urlsafe(16)
        env = {k: v for k, v in os.environ.items() if k not in FOREIGN}
        self.env = {**env, "READ_AGENT_API_KEY": self.key, "PYTHONUNBUFFERED": "1"}
        argv = [*cli(self.kb), "up", "--json", "--no-ingest", "--embedder", "hash"]
        argv += ["--addr", self.url.removeprefix("http://")]
        argv += ["--agent-addr", self.agent.removeprefix("http://")]
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env, cwd=ROOT
        )
        wait_ready(self.url, timeout=240)
        wait_ready(self.agent, timeout=120)
        self.admin = create_token(cli(self.kb), "bench-outage-admin", "*", write=True)
        self.console = httpx2.Client(base_url=self.url, timeout=30)
        form = self.console.get("/ui/login")
        nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
        data = {"csrf": nonce.group(1) if nonce else "", "token": self.admin}
        assert self.console.post("/ui/login", data=data).status_code == 303
        self.asker = httpx2.Client(
            base_url=self.agent, timeout=30, headers={"Authorization": f"Bearer {self.key}"}
        )
        assert self.ask().status_code == 200  # the read agent's session is open now
        self.token_list_elsewhere()  # the other knowledge base's database made once
        self.elsewhere = self.token_list_elsewhere()[0]

    def token_list_elsewhere(self) -> tuple[float, int]:
        """``memserver token list`` on the other knowledge base: seconds, exit status."""
        started = time.perf_counter()
        done = subprocess.run(
            [*cli(self.other), "token", "list", "--json"],
            env=self.env,
            capture_output=True,
            timeout=300,
            check=False,
        )
        return time.perf_counter() - started, done.returncode

    @property
    def pgdata(self) -> Path:
        return self.kb / ".memserver" / "pg"

    def ask(self) -> httpx2.Response:
        return self.asker.post("/ask", json={"question": "Who leads the Globex rollout?"})

    def close(self) -> None:
        self.console.close()
        self.asker.close()
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)

    def until_healthy(self, limit: float) -> str:
        started = time.perf_counter()
        while time.perf_counter() - started < limit:
            with contextlib.suppress(httpx2.HTTPError):
                if httpx2.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    return "healthy again"
            time.sleep(0.1)
        return f"NOT healthy within {limit:.0f} s"


def run_outage_attacks(timeout: float, timed: Timed) -> None:
    SCRATCH.mkdir(mode=0o755, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-outage-", dir=SCRATCH))
    system = System(work)
    try:
        # The MCP session stays open across the outages, in an event loop of its own
        # (each attack runs in its own loop, as bench_hostile times it).
        with (
            start_blocking_portal() as portal,
            portal.wrap_async_context_manager(
                open_http(f"{system.url}/mcp", system.admin, timeout=timeout)
            ) as memory,
        ):
            portal.call(memory.call, "kb_list_pages", {"limit": 1})  # verified and open
            for outage in ("frozen", "stopped"):
                if outage == "frozen":
                    with frozen(system.pgdata):
                        _endpoints(system, portal, memory, outage, timed)
                    since = time.perf_counter()  # resumed
                else:
                    pid = pgserver.running_pid(system.pgdata)
                    assert pid is not None
                    os.kill(pid, signal.SIGINT)  # PostgreSQL's fast shutdown
                    since = time.perf_counter()
                    _endpoints(system, portal, memory, outage, timed)
                back = system.until_healthy(120.0)
                what = "resumed" if outage == "frozen" else "stopped (up restarts it)"
                line = f"{back}; {time.perf_counter() - since:.1f} s after it was {what}"

                async def recovery(line: str = line) -> str:
                    return line

                timed(ITEM, f"§5 {outage} database: recovery", recovery)
    finally:
        system.close()
        shutil.rmtree(work, ignore_errors=True)


def _endpoints(
    system: System, portal: BlockingPortal, memory: MemoryClient, outage: str, timed: Timed
) -> None:
    """One line per endpoint while the database is ``outage``."""

    def http(call: Callable[[], httpx2.Response]) -> Callable[[], Awaitable[str]]:
        async def run() -> str:
            return status_of(await anyio.to_thread.run_sync(call))

        return run

    async def query() -> str:
        result = await memory.call_result("kb_query", {"question": "Globex rollout"})
        text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
        return f"{'ToolError' if result.is_error else 'ok'}: {' '.join(text.split()[:6])}"

    async def mcp() -> str:
        return await anyio.to_thread.run_sync(lambda: portal.call(query))

    async def other_kb() -> str:
        took, code = await anyio.to_thread.run_sync(system.token_list_elsewhere)
        return (
            f"exit {code} in {took:.1f} s (before the outage: {system.elsewhere:.1f} s; "
            "it starts that knowledge base's own PostgreSQL)"
        )

    def health() -> httpx2.Response:
        return httpx2.get(f"{system.url}/healthz", timeout=30)

    timed(ITEM, f"§5 {outage} database: memserver /healthz", http(health))
    timed(ITEM, f"§5 {outage} database: MCP kb_query (open session)", mcp)
    timed(
        ITEM, f"§5 {outage} database: console signed in", http(lambda: system.console.get("/ui/"))
    )
    timed(ITEM, f"§5 {outage} database: read agent /ask (open session)", http(system.ask))
    agent_health = http(lambda: system.asker.get("/healthz"))
    timed(ITEM, f"§5 {outage} database: read agent /healthz", agent_health)
    timed(ITEM, f"§5 {outage} database: token list, another KB", other_kb)


__all__ = ["run_outage_attacks"]
