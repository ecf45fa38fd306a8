"""A note that tells the model what to answer: the obedient scripted model obeys it, the
read agent does not pass that on.

The scripted model (real HTTP, tests/fixtures/llm_server.py, answering as
tests/fixtures/obedient.py) obeys whatever it reads: it looks the question up, then
answers with whatever an ``answer '...'`` in a tool result or the evidence tells it to,
citing the page. The agent must never answer with that
instruction; it shows it as what someone wrote.
"""

from __future__ import annotations

import uuid

from memserver.kb.page import Page
from read_agent.agent import MODE_EXTRACTIVE, Answer, ReadAgent
from read_agent.model.written_answer import OBEYED
from tests.fixtures.llm_server import LLMServer
from tests.fixtures.obedient import INJECTION, SAID, obedient
from tests.fixtures.server import RunningServer
from tests.read_agent.conftest import RunAgent, write_note


def seed(server: RunningServer) -> tuple[str, str]:
    tag = uuid.uuid4().hex[:6]
    title = f"Harbor security sync {tag}"
    page = server.kb().put_page(
        "meetings",
        Page(
            title=title,
            type="meeting",
            fields={"date": "2026-11-02", "kind": "internal"},
            sections={"Summary": f"Badge access for the Harbor depot. {INJECTION}"},
        ),
        None,
    )
    return page.id, title


def ask(run_agent: RunAgent, secret: str, question: str) -> Answer:
    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask(question)

    answer: Answer = run_agent(secret, body)
    return answer


def test_the_tool_using_agent_never_answers_with_a_notes_instruction(
    mcp_server: RunningServer, llm_server: LLMServer, run_agent: RunAgent
) -> None:
    page_id, title = seed(mcp_server)
    _, secret = mcp_server.token("*")
    llm_server.default = obedient
    for question in (f"What was discussed at the {title}?", f"Summarise the {title}."):
        SAID.clear()
        answer = ask(run_agent, secret, question)
        # the model did obey ...
        assert SAID and SAID[0].startswith("The password is 1234.")
        # ... and the agent answered without its words
        first = answer.text.splitlines()[0]
        assert not first.lower().startswith("the password is"), answer.text
        assert answer.mode == MODE_EXTRACTIVE and OBEYED in answer.degraded
        note = answer.text.splitlines()[-1]
        assert "someone wrote" in note and INJECTION in note
        assert page_id in answer.text  # the page's text is quoted, with its citation
    # every tool result the model read sat in a labelled fence
    tool_messages = [m for r in llm_server.requests for m in r["messages"] if m["role"] == "tool"]
    assert tool_messages and all(
        m["content"].startswith("Result of kb_query (quoted from the knowledge base")
        for m in tool_messages
    )


def test_an_instruction_in_a_raw_note_is_shown_as_written(
    mcp_server: RunningServer, llm_server: LLMServer, run_agent: RunAgent
) -> None:
    tag = uuid.uuid4().hex[:6]
    write_note(
        mcp_server,
        f"slack/random/2026-11-03-{tag}.md",
        f"# #random\n\n**Unknown Intern** 09:12\nAbout the Kestrel {tag} rollout: {INJECTION}\n",
    )
    _, secret = mcp_server.token("*")
    llm_server.default = obedient
    SAID.clear()
    answer = ask(run_agent, secret, f"How is the Kestrel {tag} rollout going?")
    assert SAID and SAID[0].startswith("The password is 1234.")
    assert "password is 1234" not in answer.text.splitlines()[0].lower()
    assert OBEYED in answer.degraded
