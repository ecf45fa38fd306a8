"""Helpers shared by the benchmark scripts: ports, readiness, percentiles, processes,
tokens and the scripted model server."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import httpx2

from memserver.clients.config import EndpointSettings
from memserver.clients.llm import LLMClient

CHECKOUT = Path(__file__).resolve().parents[1]


def this_checkout(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with this checkout first on ``PYTHONPATH``. The venv's commands
    (``memserver``, ``read-agent``, ``ingest-agent``) load the tree that ran ``pip install
    -e``; a bench run from another worktree would measure that tree's code, not its own."""
    paths = [str(CHECKOUT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values`` by linear interpolation; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def hash_kb_copy(root: Path, prefix: str) -> tuple[Path, Path, list[str]]:
    """A temporary copy of example_kb with a config for the hash embedder: (work dir,
    knowledge base, the ``memserver`` command line for it)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    kb = work / "kb"
    shutil.copytree(root / "example_kb", kb, ignore=shutil.ignore_patterns(".memserver"))
    config = work / "config.yaml"
    config.write_text("embedding:\n  provider: hash\n  dims: 384\n")
    command = [sys.executable, "-m", "memserver.cli", "--kb", str(kb), "--config", str(config)]
    return work, kb, command


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(base: str, timeout: float = 60.0) -> None:
    """Poll ``base``/healthz until it answers 200, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx2.get(f"{base}/healthz", timeout=2.0).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"server at {base} not ready after {timeout}s")


def stop_process(process: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    """SIGTERM, wait, then kill: the server under test never outlives the benchmark."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


def create_token(command: Sequence[str], name: str, folders: str, *, write: bool = False) -> str:
    """A new token's secret, made the way a user makes one (``memserver token create``)."""
    args = [*command, "token", "create", "--name", name, "--folders", folders, "--json"]
    out = subprocess.run(
        [*args, "--write"] if write else args,
        check=True,
        capture_output=True,
        text=True,
        env=this_checkout(os.environ),
    )
    secret: str = json.loads(out.stdout)["secret"]
    return secret


@contextlib.contextmanager
def scripted_llm(
    default: Callable[[dict[str, Any]], Any], timeout: float = 30.0
) -> Iterator[tuple[LLMClient, Any]]:
    """An LLMClient talking over real HTTP to the tests' scripted model server."""
    from tests.fixtures.llm_server import LLMServer, serve_app

    server = LLMServer()
    server.default = default
    with serve_app(server.app()) as url:
        server.url = url
        endpoint = EndpointSettings(
            name="llm",
            base_url=server.base_url,
            model=server.model,
            timeout=timeout,
            options=MappingProxyType({"max_retries": 0}),
        )
        with LLMClient(endpoint, max_attempts=1) as llm:
            yield llm, server
