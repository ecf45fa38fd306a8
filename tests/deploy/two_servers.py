"""Two (or more) ``memserver serve`` processes over one PostgreSQL and one knowledge folder,
as several containers behind a load balancer would run: a copy of example_kb, the hash
embedder, a write token, each server on its own free loopback port."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memserver.db.database import Database
from memserver.server.tokens import TokenStore
from tests.deploy.compose_host import REPO, free_port
from tests.fixtures.server import wait_ready

READY_SECONDS = 120.0


@dataclass(frozen=True)
class Servers:
    kb: Path
    config: Path
    urls: tuple[str, ...]  # each server's MCP endpoint
    writer: str  # a write token's secret (all folders and source/)
    env: dict[str, str]

    def command(self, *argv: str) -> list[str]:
        return [sys.executable, "-m", "memserver.cli", "--kb", str(self.kb),
                "--config", str(self.config), *argv]  # fmt: skip


def server_env(database_url: str) -> dict[str, str]:
    dropped = ("LLM_", "MEMORY_", "EMBEDDING_", "READ_AGENT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    return {**env, "DATABASE_URL": database_url}


@contextlib.contextmanager
def two_servers(workdir: Path, database_url: str, count: int = 2) -> Iterator[Servers]:
    kb = workdir / "kb"
    shutil.copytree(REPO / "example_kb", kb, ignore=shutil.ignore_patterns(
        ".memserver", "knowledge", "manifest.json"))  # fmt: skip
    config = workdir / "config.yaml"
    shutil.copyfile(REPO / "config.dev.yaml", config)
    with Database.open(None, database_url, max_size=1) as db:
        writer = TokenStore(db).create("writer", "*", write=True).secret
    env = server_env(database_url)
    ports = [free_port() for _ in range(count)]
    servers = Servers(kb, config, tuple(f"http://127.0.0.1:{p}/mcp" for p in ports), writer, env)
    processes = []
    try:
        for port in ports:
            log = open(workdir / f"server-{port}.log", "wb")  # noqa: SIM115 (closed below)
            processes.append((subprocess.Popen(
                servers.command("serve", "--addr", f"127.0.0.1:{port}"),
                env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            ), log))  # fmt: skip
        for port in ports:
            wait_ready(f"http://127.0.0.1:{port}", timeout=READY_SECONDS)
        yield servers
    finally:
        for process, _ in processes:
            process.terminate()
        for process, log in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
            log.close()
