"""`memserver up`: the main job, from a fresh copy of example_kb to an answer and a clean stop."""

from __future__ import annotations

import errno
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import httpx2
import psutil
import pytest

from memserver.clients.mcp import open_http
from memserver.db import pgserver
from memserver.db.database import Database
from memserver.kb.layout import KBPaths
from memserver.kb.manifest import Manifest, Status
from memserver.server.tokens import TokenStore
from memserver.up.supervise import Child
from memserver.up.tokens import INGEST_TOKEN, READ_TOKEN, ensure_tokens
from tests.fixtures.server import copy_example_kb

READY_TIMEOUT = 120.0  # embedded PostgreSQL start, migrations, reindex, both servers
INGEST_TIMEOUT = 180.0  # the rules extractor on all of example_kb (about 30-40 s)
STOP_TIMEOUT = 60.0
NOW = "2026-11-20T12:00:00+08:00"  # example_kb's reference time
# Variables that would point the system elsewhere than the fresh copy, or at a model.
_FOREIGN_ENV = (
    "DATABASE_URL",
    "LLM_BASE_URL",
    "LLM_MODEL",
    "LLM_API_KEY",
    "MEMORY_URL",
    "MEMORY_TOKEN",
    "MEMORY_CONFIG",
    "MEMORY_KB",
    "READ_AGENT_API_KEY",
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def poll(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """``check()``'s first truthy result, polled for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


class Lines:
    """A child's stdout, read line by line in a thread (so waits on it are bounded)."""

    def __init__(self, stream: IO[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        with stream:
            for line in stream:
                self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {text!r} within {timeout:.0f}s:\n{self.text()}")
            try:
                line = self._queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"output ended before {text!r}:\n{self.text()}")
            self.seen.append(line)
            if text in line:
                return

    def text(self) -> str:
        return "".join(self.seen)


@pytest.fixture
def up_kb(pg_scratch: Path) -> Path:
    """A fresh copy of example_kb where an embedded PostgreSQL may run (not tmp_path)."""
    return copy_example_kb(pg_scratch / "kb")


@pytest.fixture
def running_up(up_kb: Path) -> Iterator[tuple[subprocess.Popen[str], Lines, int, int]]:
    addr_port, agent_port = free_port(), free_port()
    argv = [
        *(sys.executable, "-m", "memserver.cli", "--kb", str(up_kb), "up"),
        *("--addr", f"127.0.0.1:{addr_port}", "--agent-addr", f"127.0.0.1:{agent_port}"),
        *("--embedder", "hash", "--watch", "2s"),
    ]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_env()
    )
    assert proc.stdout is not None
    try:
        yield proc, Lines(proc.stdout), addr_port, agent_port
    finally:
        if proc.poll() is None:  # the test failed before its own stop
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                for child in psutil.Process(proc.pid).children(recursive=True):
                    child.kill()
                proc.kill()
                proc.wait(10)


def all_ingested(kb: Path) -> bool:
    entries = Manifest(KBPaths.of(kb)).entries()
    sources = list((kb / "source").rglob("*.md"))
    done = [e for e in entries if e.status == Status.INGESTED]
    assert not [e for e in entries if e.status == Status.FAILED], entries
    return bool(sources) and len(done) == len(sources)


async def list_pages(url: str, token: str) -> dict[str, Any]:
    async with open_http(url, token) as memory:
        return await memory.call("kb_list_pages", {"limit": 500})


async def call(url: str, token: str, tool: str, args: dict[str, Any]) -> Any:
    async with open_http(url, token) as memory:
        return await memory.call(tool, args)


def cited_ids(text: str) -> list[str]:
    return re.findall(r"\[([^\[\]/\s]+/[^\[\]\s]+)\]", text)


def test_up_ingests_answers_and_stops_cleanly(
    running_up: tuple[subprocess.Popen[str], Lines, int, int], up_kb: Path
) -> None:
    proc, lines, addr_port, agent_port = running_up
    lines.wait_for("Press Ctrl-C to stop everything.", READY_TIMEOUT)
    banner = lines.text()
    assert "no model" in banner or "none: the ingest agent uses the rules extractor" in banner
    assert f"http://127.0.0.1:{agent_port}/v1" in banner
    memory_url = f"http://127.0.0.1:{addr_port}"
    assert httpx2.get(f"{memory_url}/healthz", timeout=5).status_code == 200
    health = httpx2.get(f"http://127.0.0.1:{agent_port}/healthz", timeout=5).json()
    assert health["llm"] is False

    # The banner's console link signs a browser in as the trusted admin.
    link = re.search(rf"{memory_url}/ui/login\?key=\S+", banner)
    assert link is not None
    with httpx2.Client(timeout=10) as browser:
        assert browser.get(link.group(0)).status_code == 303
        assert browser.get(f"{memory_url}/ui/tokens").status_code == 200
    # It says which period the example's notes cover, and how to ask as of it.
    notes = re.search(r"The notes in source/ run from (\S+) to (\S+)\. ", banner)
    assert notes is not None and notes.group(1).startswith("2026-06")
    assert notes.group(2).startswith("2026-11") and f"--now {notes.group(2)}" in banner

    # The secrets are private files, and the read token is the one in the MCP snippet.
    state = KBPaths.of(up_kb).state
    tokens = state / "tokens"
    assert tokens.stat().st_mode & 0o777 == 0o700
    for name in (INGEST_TOKEN, READ_TOKEN):
        assert (tokens / f"{name}.token").stat().st_mode & 0o777 == 0o600
    read_secret = (tokens / f"{READ_TOKEN}.token").read_text().strip()
    assert f"Bearer {read_secret}" in banner
    # The read agent asks for its own API key, kept with the tokens and in every snippet.
    key_file = tokens / "read-agent.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    agent_key = key_file.read_text().strip()
    assert f"-H 'Authorization: Bearer {agent_key}'" in banner
    assert f"API key {agent_key}" in banner
    keyed = {"Authorization": f"Bearer {agent_key}"}

    # The ingest agent (rules extractor) turns every source into pages, and up shows each
    # note as it finishes, then the run's totals.
    poll(lambda: all_ingested(up_kb), INGEST_TIMEOUT, "the ingest agent's first pass")
    lines.wait_for("note(s) ingested", INGEST_TIMEOUT)
    sources = len(list((up_kb / "source").rglob("*.md")))
    shown = [line.split() for line in lines.seen if line.startswith("ingested ")]
    assert [n[1] for n in shown] == [f"{i}/{sources}" for i in range(1, sources + 1)]
    assert f"({sources}/{sources} notes ingested)" in lines.seen[-1]
    listed = anyio.run(list_pages, f"{memory_url}/mcp", read_secret)
    ids = {page["id"] for page in listed["pages"]}
    assert listed["total"] >= 30
    assert ids and all((up_kb / "knowledge" / f"{page_id}.md").is_file() for page_id in ids)

    # A question over HTTP is answered from those pages, with citations of them.
    question = "When was the latest meeting with Globex, and what was decided?"
    refused = httpx2.post(
        f"http://127.0.0.1:{agent_port}/ask", json={"question": question}, timeout=60
    )
    assert refused.status_code == 401
    asked = httpx2.post(
        f"http://127.0.0.1:{agent_port}/ask",
        json={"question": question, "now": NOW},
        headers=keyed,
        timeout=60,
    ).json()
    cited = [c["id"] for c in asked["citations"]]
    assert cited and set(cited) <= ids
    assert set(cited_ids(asked["answer"])) & ids
    assert any(c.startswith("meetings/") and "globex" in c for c in cited)
    assert cited and all((up_kb / "knowledge" / f"{c}.md").is_file() for c in cited)
    # The console's Ask view asks the read agent `up` started, with its key.
    with httpx2.Client(base_url=memory_url, timeout=60) as browser:
        browser.get(link.group(0))
        form = browser.get("/ui/ask").text
        assert "No read agent is connected" not in form
        csrf = re.search(r'name="csrf" value="([^"]+)"', form)
        assert csrf is not None
        sent = {"csrf": csrf.group(1), "question": question, "now": NOW}
        assert browser.post("/ui/ask", data=sent).status_code == 303
        answered = browser.get("/ui/ask").text
    assert re.search(r'class="citation" href="/ui/page/meetings/[^"]*globex', answered)
    chat = httpx2.post(
        f"http://127.0.0.1:{agent_port}/v1/chat/completions",
        json={"model": "anything", "messages": [{"role": "user", "content": question}]},
        headers=keyed,
        timeout=60,
    ).json()
    assert set(cited_ids(chat["choices"][0]["message"]["content"])) & ids

    # A note dropped into source/ is searchable with include_sources after the agent's
    # next look for work (watch: 2 s), with no reindex.
    note = up_kb / "source" / "late" / "2026-11-19-quokka.md"
    note.parent.mkdir()
    note.write_text("# Quokka\n\nThe Quokkaberry scanner reached Zanzibar.\n", encoding="utf-8")
    query = {"question": "Quokkaberry scanner", "include_sources": True, "now": NOW}

    def found() -> bool:
        result = anyio.run(call, f"{memory_url}/mcp", read_secret, "kb_query", query)
        return "source/late/2026-11-19-quokka.md" in {r["id"] for r in result["results"]}

    poll(found, INGEST_TIMEOUT, "the new note in the source index")

    # PostgreSQL stops under it: up says so and starts it again; questions work again.
    stopped = pgserver.running_pid(state / "pg")
    assert stopped is not None
    os.kill(stopped, signal.SIGINT)  # PostgreSQL's fast shutdown
    lines.wait_for("the embedded PostgreSQL stopped; restarting it", 60)
    lines.wait_for("the embedded PostgreSQL is running again", 60)
    again = httpx2.post(
        f"http://127.0.0.1:{agent_port}/ask",
        json={"question": question, "now": NOW},
        headers=keyed,
        timeout=60,
    )
    assert again.status_code == 200 and set(c["id"] for c in again.json()["citations"]) <= ids

    # Ctrl-C stops everything: the agents, the memory server and the embedded PostgreSQL.
    postmaster = pgserver.running_pid(state / "pg")
    assert postmaster is not None
    # Every process is looked up now, while it runs: after the stop it may be gone already.
    postgres = psutil.Process(postmaster)
    children = psutil.Process(proc.pid).children(recursive=True)
    assert len(children) >= 2  # the read agent and the ingest agent
    proc.send_signal(signal.SIGINT)
    assert proc.wait(STOP_TIMEOUT) == 0
    lines.wait_for("stopped.", 5)
    _, alive = psutil.wait_procs([*children, postgres], timeout=15)
    assert not alive, alive
    assert pgserver.running_pid(state / "pg") is None
    for log in ("memserver.log", "read-agent.log", "ingest-agent.log"):
        assert (state / "logs" / log).is_file()
    assert "Traceback" not in (state / "logs" / "memserver.log").read_text()


def test_up_refuses_a_port_in_use_before_starting_anything(tmp_path: Path) -> None:
    kb = copy_example_kb(tmp_path / "kb")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = [sys.executable, "-m", "memserver.cli", "--kb", str(kb), "up"]
        result = subprocess.run(
            [*argv, "--addr", f"127.0.0.1:{port}", "--embedder", "hash"],
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=60,
        )
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "--addr" in result.stderr
    assert not (kb / ".memserver" / "pg").exists()


def test_up_cannot_lose_its_ports_to_a_program_that_listens_after_it_started(
    up_kb: Path,
) -> None:
    """Another program bound to the same ports (allowed with SO_REUSEADDR while nobody
    listens) tries to listen once up has started: up holds both ports from the start,
    so the other program fails, not up (it used to fail later with Errno 98)."""
    ports = free_port(), free_port()
    rivals = []
    for port in ports:
        rival = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        rival.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        rival.bind(("127.0.0.1", port))
        rivals.append(rival)
    argv = [
        *(sys.executable, "-m", "memserver.cli", "--kb", str(up_kb), "up", "--no-ingest"),
        *("--addr", f"127.0.0.1:{ports[0]}", "--agent-addr", f"127.0.0.1:{ports[1]}"),
        *("--embedder", "hash"),
    ]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_env()
    )
    assert proc.stdout is not None
    lines = Lines(proc.stdout)
    try:
        lines.wait_for("starting", READY_TIMEOUT)  # printed once up holds its ports
        for rival in rivals:
            with pytest.raises(OSError) as taken:
                rival.listen()
            assert taken.value.errno == errno.EADDRINUSE
        lines.wait_for("Press Ctrl-C to stop everything.", READY_TIMEOUT)
    finally:
        for rival in rivals:
            rival.close()
        proc.send_signal(signal.SIGINT)
        status = proc.wait(STOP_TIMEOUT)
    assert status == 0, lines.text()


def run_up_briefly(kb: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``memserver up`` expected to refuse at once (bounded: it must not start anything)."""
    return subprocess.run(
        [sys.executable, "-m", "memserver.cli", "--kb", str(kb), "up", *args],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
    )


def test_up_refuses_a_directory_without_schema(tmp_path: Path) -> None:
    result = run_up_briefly(tmp_path)
    assert result.returncode == 2
    assert "no schema.yaml" in result.stderr
    assert not (tmp_path / ".memserver").exists()


def test_up_refuses_a_watch_interval_it_cannot_read_before_starting_anything(
    tmp_path: Path,
) -> None:
    kb = copy_example_kb(tmp_path / "kb")
    result = run_up_briefly(kb, "--watch", "soon")
    assert result.returncode == 2
    assert "cannot read the duration 'soon'" in result.stderr
    assert not (kb / ".memserver" / "pg").exists()


def test_tokens_are_reused_while_valid_and_replaced_when_revoked_or_lost(
    database: Database, tmp_path: Path
) -> None:
    paths = KBPaths.of(tmp_path)
    store = TokenStore(database)
    first = ensure_tokens(paths, store)
    ingest = store.verify(first.ingest)
    assert ingest is not None and ingest.write and ingest.all_folders
    read = store.verify(first.read)
    assert read is not None and not read.write and read.all_folders

    again = ensure_tokens(paths, store)
    assert (again.ingest, again.read) == (first.ingest, first.read)

    store.revoke(READ_TOKEN)
    (first.directory / f"{INGEST_TOKEN}.token").unlink()
    third = ensure_tokens(paths, store)
    assert third.read != first.read and store.verify(third.read) is not None
    assert third.ingest != first.ingest and store.verify(third.ingest) is not None
    assert store.verify(first.ingest) is None  # the lost secret's token was revoked
    assert (third.directory / f"{READ_TOKEN}.token").read_text().strip() == third.read


def test_a_child_that_dies_is_reported_with_this_runs_log_tail(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "agent.log"
    log.parent.mkdir()
    log.write_text("an older run's line\n")
    script = "import sys; print('cannot reach the memory server'); sys.exit(3)"
    child = Child("test agent", [sys.executable, "-c", script], clean_env(), log)
    child.start()
    assert child.wait(30) == 3
    error = child.failure()
    assert "the test agent exited with status 3" in str(error)
    assert "cannot reach the memory server" in str(error)
    assert "older run" not in str(error)
