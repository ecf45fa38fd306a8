"""The limits issue's crash attacks (44, item 5) for ``bench_hostile``, on servers of
their own (hash embedder, a fresh copy of example_kb). One line each.

- **kill -9 under 100 writers**, 20 times: 100 MCP clients each write their own page
  over and over (every write names its number); at a random moment (0-2 s after each
  writer has written once) the server is killed with SIGKILL, started again, and every page is compared: its file
  with the database's current version, and the number stored with the writer's last
  acknowledged and last tried ones. Goal: 0 acknowledged writes lost, 0 page files
  holding a write the database does not (the issue found that in 2 of 4 kills). A write
  whose answer the kill cut off may be there or not, wholly: counted.
- **the ingest agent when the server dies**: one pass over example_kb with the rules
  extractor, the server killed after 3 s: how many lines the agent wrote, whether any
  was a traceback, and its exit status after its tries.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from bench.common import create_token, free_port, stop_process, wait_ready
from memserver.clients.mcp import open_http
from memserver.kb.page import parse_page

Timed = Callable[[int, str, Callable[[], Awaitable[str]]], None]
ITEM = 44
ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path(tempfile.gettempdir()) / "memserver-bench"
WRITERS = 100
KILLS = 20


class Server:
    """``memserver serve`` on ``kb``, started again after each kill."""

    def __init__(self, kb: Path, config: Path) -> None:
        self.command = [sys.executable, "-m", "memserver.cli", "--kb", str(kb)]
        self.command += ["--config", str(config)]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "MEMORY_"))}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [*self.command, "serve", "--addr", f"127.0.0.1:{self.port}"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_ready(self.url, timeout=180)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(60)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            stop_process(self.proc)


def _copy(prefix: str) -> tuple[Path, Path, Path]:
    SCRATCH.mkdir(mode=0o755, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=SCRATCH))
    kb = work / "kb"
    shutil.copytree(
        ROOT / "example_kb",
        kb,
        ignore=shutil.ignore_patterns(".memserver", "knowledge", "manifest.json"),
    )
    config = work / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n", encoding="utf-8")
    return work, kb, config


def _page(n: int, mark: int) -> dict[str, object]:
    return {
        "title": f"Crash Writer {n:03d}",
        "fields": {"role": f"Role mark-{mark}"},
        "sections": {"Summary": f"Written as mark {mark}."},
    }


def _mark(markdown: str) -> int:
    role = str(parse_page(markdown).fields.get("role", "Role mark-0"))
    return int(role.rsplit("-", 1)[1])


async def _write_until_killed(url: str, secret: str, tried: list[int], acked: list[int]) -> None:
    """Each writer writes its page again and again until its server goes away."""

    async def writer(n: int) -> None:
        try:
            async with open_http(f"{url}/mcp", secret, timeout=30) as memory:
                version: int | None = None
                try:
                    page = await memory.call("kb_get_page", {"id": f"people/crash-writer-{n:03d}"})
                    version = int(page["version"])
                except Exception:  # not written yet
                    version = None
                while True:
                    tried[n] += 1
                    args = {"folder": "people", "page": _page(n, tried[n])}
                    written = await memory.call("kb_put_page", {**args, "base_version": version})
                    version = int(written["version"])
                    acked[n] = tried[n]
        except Exception:  # the server was killed under it
            return

    async with anyio.create_task_group() as group:
        for n in range(WRITERS):
            group.start_soon(writer, n)


def run_crash_attacks(timeout: float, timed: Timed) -> None:
    work, kb, config = _copy("bench-crash-")
    server = Server(kb, config)
    try:
        server.start()
        secret = create_token(server.command, "bench-crash-writer", "*", write=True)
        tried, acked = [0] * WRITERS, [0] * WRITERS
        lost = unacked_in_file = disagree = cut_off = 0
        chance = random.Random()

        async def kill_twenty() -> str:
            nonlocal lost, unacked_in_file, disagree, cut_off
            for _ in range(KILLS):
                start = sum(acked)

                async def kill_when_writing(start: int = start) -> None:
                    # at a random moment once the writers are under way (each wrote once)
                    while sum(acked) < start + WRITERS:
                        await anyio.sleep(0.05)
                    await anyio.sleep(chance.uniform(0.0, 2.0))
                    await anyio.to_thread.run_sync(server.kill)

                async with anyio.create_task_group() as group:
                    group.start_soon(kill_when_writing)
                    await _write_until_killed(server.url, secret, tried, acked)
                await anyio.to_thread.run_sync(server.start)
                async with open_http(f"{server.url}/mcp", secret, timeout=60) as memory:
                    for n in range(WRITERS):
                        if tried[n] == 0:
                            continue
                        path = kb / "knowledge" / "people" / f"crash-writer-{n:03d}.md"
                        try:
                            stored = await memory.call(
                                "kb_get_page", {"id": f"people/crash-writer-{n:03d}"}
                            )
                        except Exception:
                            lost += acked[n] > 0
                            disagree += path.exists()
                            continue
                        on_disk = path.read_text(encoding="utf-8") if path.exists() else ""
                        disagree += on_disk != stored["markdown"]
                        in_db, in_file = (
                            _mark(stored["markdown"]),
                            _mark(on_disk or stored["markdown"]),
                        )
                        lost += in_db < acked[n]
                        unacked_in_file += in_file > in_db
                        cut_off += in_db > acked[n]
                        acked[n] = max(acked[n], in_db)
                        tried[n] = max(tried[n], in_db)
            writes = sum(acked)
            return (
                f"{KILLS} kills, {writes:,} acknowledged writes: {lost} lost, "
                f"{disagree} files unlike the database, {unacked_in_file} holding a write "
                f"the database does not; {cut_off} cut-off writes committed (whole)"
            )

        timed(ITEM, f"§5 kill -9 under {WRITERS} writers, x{KILLS}", kill_twenty)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    _ingest_agent_when_the_server_dies(timed)


def _ingest_agent_when_the_server_dies(timed: Timed) -> None:
    work, kb, config = _copy("bench-crash-ingest-")
    server = Server(kb, config)
    try:
        server.start()
        secret = create_token(server.command, "bench-ingest", "*", write=True)

        async def dying() -> str:
            argv = [sys.executable, "-m", "ingest_agent.cli", "--config", str(config)]
            argv += ["--url", f"{server.url}/mcp", "--rules"]
            agent = subprocess.Popen(
                argv,
                env={**server.env, "MEMORY_TOKEN": secret},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            await anyio.sleep(3)
            server.kill()
            _, err = await anyio.to_thread.run_sync(lambda: agent.communicate(timeout=180))
            lines = err.strip().splitlines()
            traceback = any("Traceback" in line or "ExceptionGroup" in line for line in lines)
            last = " ".join(lines[-1].split()[:12]) if lines else ""
            return (
                f"{len(lines)} lines on stderr, traceback: {traceback}, exit {agent.returncode}; "
                f"last: {last}"
            )

        timed(ITEM, "§5 the ingest agent when the server dies", dying)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


__all__ = ["run_crash_attacks"]
