"""Fixtures for the web console: a live memory server with the console, and a browser.

- ``console_server`` (session): a copy of example_kb with its own database (hash
  embedder), every note but one ingested by the ingest agent (rules extractor, over
  real HTTP), served with the console on a free loopback port. The held-back note
  (``HELD``) is the one a test drops into ``source/`` to watch ingest progress.
- ``read_agent`` (session): a real ``read-agent serve --no-llm`` process with its own
  read token (all folders) and API key, on the address the console was given for its
  Ask view (``ConsoleServer.agent_url``); started by the tests that ask.
- ``browser`` (session): one headless Chromium (Debian's ``chromium`` and
  ``chromium-driver``, driven by selenium; nothing is downloaded).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memserver.clients.config import load_settings
from memserver.clients.embed import HashEmbedder
from memserver.console.agent_link import ReadAgentLink
from memserver.console.app import create_app
from memserver.db.database import create_database, drop_database, with_database
from memserver.kb.layout import KBPaths
from memserver.server.audit import AuditLog
from memserver.server.mcp_server import MemoryServer
from memserver.server.tokens import TokenStore
from memserver.server.tools.base import Services
from memserver.store.knowledge_base import KnowledgeBase
from memserver.store.reviews import Reviews
from tests.fixtures.server import copy_example_kb, free_socket, serve_memory, wait_ready
from tests.memserver.console.browser import Browser, open_browser

HELD = "one-on-ones/2026-09-29-maria-alex-1on1.md"
LOGIN_KEY = "trusted-login-key-for-tests"
AGENT_KEY = "ra_console-tests-read-agent-key"
# The agent's environment: no model, whatever the machine running the tests has set.
_AGENT_ENV = ("LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY", "MEMORY_URL", "MEMORY_BUDGET_TOKENS")


@dataclass
class ConsoleServer:
    base_url: str
    kb_dir: Path
    server: MemoryServer
    held: Path  # the held-back note, outside source/
    ingest_secret: str
    agent_url: str  # where the console's Ask view finds the read agent

    @property
    def ui(self) -> str:
        return f"{self.base_url}/ui"

    @property
    def paths(self) -> KBPaths:
        return KBPaths.of(self.kb_dir)

    @property
    def tokens(self) -> TokenStore:
        assert self.server.tokens is not None
        return self.server.tokens

    @property
    def audit(self) -> AuditLog:
        assert self.server.audit is not None
        return self.server.audit

    def kb(self) -> KnowledgeBase:
        return self.server.services.kb()

    def kb_reviews(self) -> Reviews:
        return Reviews(self.kb().db)

    def token(
        self, folders: str = "*", *, write: bool = False, name: str = "ui"
    ) -> tuple[str, str]:
        unique = f"{name}-{uuid.uuid4().hex[:8]}"
        return unique, self.tokens.create(unique, folders, write=write).secret

    def client(self) -> httpx2.Client:
        return httpx2.Client(base_url=self.base_url, timeout=30.0, follow_redirects=False)

    def call(self, secret: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One MCP tool call over HTTP, as an agent makes it."""
        import anyio

        from memserver.clients.mcp import open_http

        async def run() -> dict[str, Any]:
            async with open_http(f"{self.base_url}/mcp", secret) as memory:
                return await memory.call(tool, arguments)

        return anyio.run(run)

    @contextlib.contextmanager
    def signed_in(self, secret: str) -> Iterator[httpx2.Client]:
        """An HTTP client signed in to the console with ``secret`` (cookies kept)."""
        with self.client() as client:
            page = client.get("/ui/login")
            response = client.post("/ui/login", data={"csrf": csrf_of(page.text), "token": secret})
            assert response.status_code == 303, response.text
            yield client

    def ingest(self, *args: str) -> dict[str, Any]:
        """Run the ingest agent (rules extractor) once against this server."""
        import json

        from ingest_agent.cli import main

        out = _run_agent(
            main, ["--url", f"{self.base_url}/mcp", "--json", *args], self.ingest_secret
        )
        return json.loads(out) if out.strip().startswith("{") else {"output": out}


def csrf_of(html: str) -> str:
    """The CSRF token of the first form in a page."""
    import re

    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, html[:500]
    return found.group(1)


def _run_agent(main: Any, argv: list[str], token: str) -> str:
    import io
    from contextlib import redirect_stdout

    saved = {key: os.environ.get(key) for key in (*_AGENT_ENV, "MEMORY_TOKEN")}
    for key in _AGENT_ENV:
        os.environ.pop(key, None)
    os.environ["MEMORY_TOKEN"] = token
    buffer = io.StringIO()
    try:
        with redirect_stdout(buffer):
            status = main(argv)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert status == 0, buffer.getvalue()
    return buffer.getvalue()


@pytest.fixture(scope="session")
def console_server(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str
) -> Iterator[ConsoleServer]:
    root = tmp_path_factory.mktemp("console")
    kb_dir = copy_example_kb(root / "kb")
    held = root / "held.md"
    shutil.move(kb_dir / "source" / HELD, held)
    db_name = f"console_{uuid.uuid4().hex[:12]}"
    create_database(pg_url, db_name)
    kb = KnowledgeBase.open(
        kb_dir, embedder=HashEmbedder(), database_url=with_database(pg_url, db_name)
    )
    tokens = TokenStore(kb.db)
    ingest_secret = tokens.create(f"ingest-{uuid.uuid4().hex[:6]}", "*", write=True).secret
    services = Services(
        paths=KBPaths.of(kb_dir), kb_opener=lambda: kb, settings=load_settings(env={})
    )

    spare = free_socket()
    agent_url = f"http://127.0.0.1:{spare.getsockname()[1]}"
    spare.close()  # the read agent binds it itself (``read_agent``)
    link = ReadAgentLink(agent_url, AGENT_KEY)

    def make_app(server: MemoryServer, host: str, port: int) -> Any:
        return create_app(server, host=host, port=port, login_key=LOGIN_KEY, read_agent=link)

    try:
        with serve_memory(services, tokens, AuditLog(kb.db), make_app) as (base_url, server):
            running = ConsoleServer(base_url, kb_dir, server, held, ingest_secret, agent_url)
            running.ingest()
            yield running
    finally:
        kb.close()
        drop_database(pg_url, db_name)


@pytest.fixture(scope="session")
def read_agent(
    console_server: ConsoleServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """``read-agent serve --no-llm`` on the console's read agent address; its URL."""
    import signal
    import subprocess
    import sys

    _, secret = console_server.token("*", name="read-agent")
    env = {k: v for k, v in os.environ.items() if k not in (*_AGENT_ENV, "MEMORY_CONFIG")}
    env |= {
        "MEMORY_URL": f"{console_server.base_url}/mcp",
        "MEMORY_TOKEN": secret,
        "READ_AGENT_API_KEY": AGENT_KEY,
    }
    addr = console_server.agent_url.removeprefix("http://")
    command = [sys.executable, "-m", "read_agent.cli", "--no-llm", "serve", "--addr", addr]
    log = tmp_path_factory.mktemp("read-agent") / "stderr.log"
    with log.open("w", encoding="utf-8") as err:
        process = subprocess.Popen(command, env=env, stderr=err, text=True)
        try:
            wait_ready(console_server.agent_url, timeout=60)
            yield console_server.agent_url
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    assert process.returncode == 0, log.read_text(encoding="utf-8")[-3000:]


@pytest.fixture(scope="session")
def browser(console_server: ConsoleServer) -> Iterator[Browser]:
    with contextlib.ExitStack() as stack:
        yield stack.enter_context(open_browser(console_server.ui))
