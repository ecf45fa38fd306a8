"""The read agent depends on no wording of the memory server's errors: with every
message reworded (``reworded_errors``), a failed tool call still reaches the model as
the server's text, is recorded as failed, and the loop goes on to an answer."""

from __future__ import annotations

from typing import Any

from memserver.errors import ToolErrorKind
from read_agent.model.quoting import unfence
from tests.fixtures.llm_server import LLMServer
from tests.fixtures.server import RunningServer
from tests.read_agent.conftest import RunAgent, Seeded


def test_a_failed_tool_call_reaches_the_model_whatever_its_words(
    mcp_server: RunningServer,
    llm_server: LLMServer,
    seeded: Seeded,
    run_agent: RunAgent,
    reworded_errors: list[ToolErrorKind],
) -> None:
    _, secret = mcp_server.token("*")
    llm_server.enqueue(
        '{"name": "kb_get_page", "arguments": {"id": "meetings/no-such-meeting"}}',
        f'{{"name": "kb_get_page", "arguments": {{"id": "{seeded.meeting}"}}}}',
        f"A December trial was approved [{seeded.meeting}].",
    )

    async def body(agent: Any) -> Any:
        return await agent.ask("What did the Quillworks vendor review decide?")

    answer = run_agent(secret, body)
    assert reworded_errors == [ToolErrorKind.NOT_FOUND]
    told = [
        unfence(m["content"]) for m in llm_server.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert told == ["Error: Reworded failure #1."]
    assert [(c.name, c.ok) for c in answer.tool_calls] == [
        ("kb_get_page", False),
        ("kb_get_page", True),
    ]
    assert answer.mode == "agent" and seeded.meeting in answer.text
