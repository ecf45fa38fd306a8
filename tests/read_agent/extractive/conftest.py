"""The example knowledge base as the rules extractor ingests it, served once for every
test of the extractive answer, and how a test asks it a question."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator, Sequence

import anyio
import pytest

from ingest_agent.agent import IngestAgent
from ingest_agent.memory import Memory
from memserver.clients.mcp import open_http
from read_agent.agent import Answer, ReadAgent
from read_agent.reading.conversation import Turn
from read_agent.reading.fields import Embed
from tests.fixtures.server import copy_example_kb
from tests.ingest_agent.conftest import IngestServer, serve_kb

NOW = dt.datetime.fromisoformat("2026-11-20T12:00:00+08:00")


@pytest.fixture(scope="package")
def example(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> Iterator[IngestServer]:
    """example_kb, ingested once by the rules extractor (no model) over MCP."""
    with serve_kb(copy_example_kb(tmp_path_factory.mktemp("answers") / "kb"), pg_url) as server:

        async def run() -> None:
            async with open_http(server.url, server.write_token, timeout=60) as session:
                memory = Memory(session)
                agent = IngestAgent(memory, await memory.start())
                summary = await agent.run()
                assert summary.count("ingested") == 28, summary.as_dict()

        anyio.run(run)
        yield server


def ask(
    server: IngestServer,
    question: str,
    *,
    now: dt.datetime = NOW,
    history: Sequence[Turn] = (),
    embed: Embed | None = None,
) -> Answer:
    _, secret = _read_token(server)

    async def run() -> Answer:
        async with open_http(server.url, secret, timeout=30) as memory:
            with anyio.fail_after(60):
                agent = ReadAgent(memory, None, embed=embed)
                return await agent.ask(question, now=now, history=history)

    return anyio.run(run)


def _read_token(server: IngestServer) -> tuple[str, str]:
    tokens = server.server.tokens
    assert tokens is not None
    name = f"read-{uuid.uuid4().hex[:8]}"
    return name, tokens.create(name, "*").secret


def lines(answer: Answer) -> list[str]:
    return answer.text.splitlines()
