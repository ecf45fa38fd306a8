"""Fixtures for the read agent: pages seeded into the real memory server, tokens, an agent.

- ``seeded`` (module): a person, two meetings and a company with unique titles, written
  through the server's own ``KnowledgeBase.put_page`` and therefore indexed.
- ``run_agent(secret, body, llm=...)``: opens an MCP session over HTTP with the token
  and runs ``body(agent)`` in an event loop.
- ``read_agent_server``: ``read-agent serve``'s app under uvicorn (lifespan on) on a
  free loopback port, as a factory taking the pool options.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from memserver.clients.config import EndpointSettings
from memserver.clients.llm import LLMClient
from memserver.clients.mcp import open_http
from memserver.kb.page import Page, TimelineEntry
from read_agent.agent import ReadAgent
from tests.fixtures.server import RunningServer, free_socket, serve_on

NOW = "2026-11-20T12:00:00+08:00"


@dataclass(frozen=True)
class Seeded:
    tag: str
    person: str  # page ids
    meeting: str
    old_meeting: str
    company: str
    person_title: str
    meeting_title: str
    company_title: str


@pytest.fixture(scope="module")
def seeded(mcp_server: RunningServer) -> Seeded:
    import datetime as dt

    tag = uuid.uuid4().hex[:6]
    kb = mcp_server.kb()
    person_title = f"Zora Quill {tag}"
    company_title = f"Quillworks {tag}"
    meeting_title = f"Quillworks vendor review {tag}"
    person = kb.put_page(
        "people",
        Page(
            title=person_title,
            type="person",
            fields={"role": "Head of Testing", "location": "Denver"},
            sections={"Summary": f"{person_title} runs testing at Acme."},
            timeline=(TimelineEntry(dt.date(2026, 9, 21), "Promoted to Head of Testing"),),
        ),
        None,
    ).id
    company = kb.put_page(
        "companies",
        Page(
            title=company_title,
            type="company",
            fields={"status": "prospect"},
            sections={"Summary": f"{company_title} is a testing vendor."},
        ),
        None,
    ).id
    meeting = kb.put_page(
        "meetings",
        Page(
            title=meeting_title,
            type="meeting",
            fields={"date": "2026-11-12", "kind": "prospect"},
            sections={
                "Summary": f"Vendor review with {company_title}.",
                "Decisions": "Quillworks trial approved for December 2026.",
            },
        ),
        None,
    ).id
    old_meeting = kb.put_page(
        "meetings",
        Page(
            title=f"Quillworks intro call {tag}",
            type="meeting",
            fields={"date": "2026-07-01", "kind": "prospect"},
            sections={"Summary": f"First call with {company_title}."},
        ),
        None,
    ).id
    return Seeded(
        tag, person, meeting, old_meeting, company, person_title, meeting_title, company_title
    )


RunAgent = Callable[..., Any]


def write_note(server: RunningServer, rel: str, text: str) -> str:
    """A raw note at ``source/<rel>`` that no page was made from, indexed for search: its
    id as a citation gives it (``source/<rel>`` without ``.md``)."""
    path = server.kb_dir / "source" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    kb = server.kb()
    kb.manifest.scan()
    kb.reindex()
    return f"source/{rel.removesuffix('.md')}"


@pytest.fixture
def run_agent(mcp_server: RunningServer, llm_endpoint: EndpointSettings) -> RunAgent:
    """``run_agent(secret, body, llm=True, max_steps=6)`` -> whatever ``body(agent)`` returns."""

    def run(
        secret: str,
        body: Callable[[ReadAgent], Awaitable[Any]],
        *,
        llm: bool | LLMClient = True,
        max_steps: int = 6,
        budget_tokens: int | None = None,
    ) -> Any:
        client: LLMClient | None
        if isinstance(llm, LLMClient):
            client = llm
        else:
            client = LLMClient(llm_endpoint, max_attempts=1) if llm else None

        async def main() -> Any:
            async with open_http(mcp_server.url, secret, timeout=20) as memory:
                agent = ReadAgent(memory, client, max_steps=max_steps, budget_tokens=budget_tokens)
                with anyio.fail_after(30):
                    return await body(agent)

        try:
            return anyio.run(main)
        finally:
            if client is not None:
                client.close()

    return run


@contextlib.contextmanager
def serve_asgi(app: Any) -> Iterator[str]:
    """Run ``app`` (lifespan on) on a free loopback port until the block ends."""
    with serve_on(free_socket(), app) as url:
        yield url
