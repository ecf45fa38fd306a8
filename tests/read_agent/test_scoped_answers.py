"""The read agent's answers for a token with some folders name no page outside them:
what it reads over MCP is redacted (``memserver.server.prose_scope``), so the answer it
builds, with or without a model, cannot quote a hidden decision's id or title."""

from __future__ import annotations

import datetime as dt
import re
import uuid

import anyio

from memserver.clients.mcp import open_http
from read_agent.agent import Answer, ReadAgent
from tests.fixtures.server import RunningServer
from tests.read_agent.conftest import RunAgent

NOW = dt.datetime.fromisoformat("2026-11-20T12:00:00+08:00")


def test_an_extractive_answer_quotes_no_hidden_id_or_title(
    mcp_server: RunningServer, run_agent: RunAgent
) -> None:
    tag = uuid.uuid4().hex[:8]
    title = f"Per-seat pricing {tag}"
    _, admin = mcp_server.token("*", write=True, name="admin")

    async def seed() -> str:
        async with open_http(mcp_server.url, admin) as memory:
            decision = await memory.call(
                "kb_put_page",
                {
                    "folder": "decisions",
                    "page": {
                        "title": title,
                        "fields": {"date": "2026-07-15", "status": "accepted"},
                    },
                },
            )
            did = str(decision["id"])
            summary = (
                f"Quillon {tag} decided `{did}` (“{title}” ({did})), see [[{title}]] "
                f"and knowledge/{did.capitalize()}.md#why."
            )
            await memory.call(
                "kb_put_page",
                {
                    "folder": "people",
                    "page": {"title": f"Quillon {tag}", "sections": {"Summary": summary}},
                },
            )
            return did

    did = anyio.run(seed)
    _, secret = mcp_server.token("people,meetings", name="scoped")

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask(f"What did Quillon {tag} decide?", now=NOW)

    answer: Answer = run_agent(secret, body, llm=False)
    shown = str(answer.as_dict())
    assert f"Quillon {tag}" in shown  # the person's page was found and quoted
    for hidden in (did, did.split("/")[1], title):
        assert not re.search(re.escape(hidden), shown, re.IGNORECASE), hidden
