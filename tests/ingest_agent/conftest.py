"""Fixtures for the ingest agent: a fresh memory server per test, and the agent's CLI.

- ``fresh_server`` (function): a new copy of example_kb with its own database (hash
  embedder), served over real HTTP on a free loopback port; ``.write_token`` is a
  ``--folders '*' --write`` token. Every test starts un-ingested.
- ``small_server`` (function): the same with example_kb's schema and four short
  meeting notes, for tests that need a few sources, not the whole example.
- ``ingest`` (function): ``ingest(server, *args, llm=None)`` runs ``ingest_agent.cli.main``
  against the server with ``--json`` and returns (exit status, summary). Without
  ``llm`` no LLM is configured (the rules extractor runs); with an ``LLMServer`` the
  agent's LLM settings point at it.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memserver.clients.config import Settings, load_settings
from memserver.clients.embed import HashEmbedder
from memserver.db.database import create_database, drop_database, with_database
from memserver.kb.layout import KBPaths
from memserver.server.audit import AuditLog
from memserver.server.mcp_server import MemoryServer
from memserver.server.tokens import TokenStore
from memserver.server.tools.base import Services
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.llm_server import LLMServer
from tests.fixtures.server import EXAMPLE_KB, copy_example_kb, serve_memory

ENV_KEYS = (
    "LLM_BASE_URL",
    "LLM_MODEL",
    "LLM_API_KEY",
    "MEMORY_URL",
    "MEMORY_TOKEN",
    "MEMORY_BUDGET_TOKENS",
    "DATABASE_URL_UNUSED",
)


@dataclass
class IngestServer:
    base_url: str
    kb_dir: Path
    server: MemoryServer
    write_token: str

    @property
    def url(self) -> str:
        return f"{self.base_url}/mcp"

    @property
    def paths(self) -> KBPaths:
        return KBPaths.of(self.kb_dir)

    def kb(self) -> Any:
        return self.server.services.kb()

    def manifest(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.paths.manifest.read_text(encoding="utf-8"))
        return data


@contextlib.contextmanager
def serve_kb(kb_dir: Path, pg_url: str, settings: Settings | None = None) -> Iterator[IngestServer]:
    """Serve ``kb_dir`` over HTTP on a free loopback port with a new database (the
    server's own ``settings``: none by default)."""
    paths = KBPaths.of(kb_dir)
    db_name = f"ingest_{uuid.uuid4().hex[:12]}"
    create_database(pg_url, db_name)
    kb = KnowledgeBase.open(
        kb_dir, embedder=HashEmbedder(), database_url=with_database(pg_url, db_name)
    )
    tokens = TokenStore(kb.db)
    secret = tokens.create(f"ingest-{uuid.uuid4().hex[:6]}", "*", write=True).secret
    # The server's own settings: no LLM and no laya unless given, whatever the agent under
    # test uses (kb_route would otherwise ask the agent's scripted model).
    own = settings if settings is not None else load_settings(env={})
    services = Services(paths=paths, kb_opener=lambda: kb, settings=own)
    try:
        with serve_memory(services, tokens, AuditLog(kb.db)) as (base_url, server):
            yield IngestServer(base_url, kb_dir, server, secret)
    finally:
        services.close()  # the router's model client too
        kb.close()
        drop_database(pg_url, db_name)


@pytest.fixture
def fresh_server(tmp_path: Path, pg_url: str) -> Iterator[IngestServer]:
    with serve_kb(copy_example_kb(tmp_path / "kb"), pg_url) as server:
        yield server


def small_kb(root: Path) -> Path:
    """example_kb's schema with four short meeting notes (a.md .. d.md, one day apart)."""
    kb_dir = root / "small"
    (kb_dir / "source").mkdir(parents=True)
    shutil.copy(EXAMPLE_KB / "schema.yaml", kb_dir / "schema.yaml")
    for day, name in enumerate("abcd", start=1):
        (kb_dir / "source" / f"{name}.md").write_text(
            f"---\ntitle: Sync {name}\ndate: 2026-09-0{day}\nattendees: [Alice Chen]\n---\n\n"
            f"Notes of sync {name}.\n",
            encoding="utf-8",
        )
    return kb_dir


@pytest.fixture
def small_server(tmp_path: Path, pg_url: str) -> Iterator[IngestServer]:
    """``small_kb`` served (see ``serve_kb``)."""
    with serve_kb(small_kb(tmp_path), pg_url) as server:
        yield server


Ingest = Callable[..., tuple[int, dict[str, Any]]]


@pytest.fixture
def ingest(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Ingest:
    from ingest_agent.cli import main

    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)

    def run(
        server: IngestServer, *args: str, llm: LLMServer | None = None
    ) -> tuple[int, dict[str, Any]]:
        monkeypatch.setenv("MEMORY_TOKEN", server.write_token)
        if llm is not None:
            monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
            monkeypatch.setenv("LLM_MODEL", llm.model)
        else:
            monkeypatch.delenv("LLM_BASE_URL", raising=False)
            monkeypatch.delenv("LLM_MODEL", raising=False)
        capsys.readouterr()
        status = main(["--url", server.url, "--json", *args])
        out = capsys.readouterr().out
        return status, (json.loads(out) if out.strip().startswith("{") else {"output": out})

    return run
