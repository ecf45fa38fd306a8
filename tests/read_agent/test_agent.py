"""The tool-calling loop against a real memory server and a scripted model."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from read_agent.agent import MODE_AGENT, MODE_EXTRACTIVE, Answer, ReadAgent, Turn
from read_agent.model.quoting import unfence
from read_agent.tools.citations import CitedPage, extract_citations
from tests.fixtures.llm_server import LLMServer, Reply, tool_call
from tests.fixtures.server import RunningServer
from tests.read_agent.conftest import RunAgent, Seeded


def _tool_names(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools") or ()}


def _tool_messages(request: dict[str, Any]) -> list[str]:
    return [unfence(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_answer_keeps_returned_citations_and_removes_a_fabricated_one(
    mcp_server: RunningServer, llm_server: LLMServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    _, secret = mcp_server.token("*")
    llm_server.enqueue(
        Reply(tool_calls=[tool_call("kb_get_page", {"id": seeded.meeting})]),
        f"The review on 2026-11-12 approved a December trial [{seeded.meeting}]. "
        "The budget was $1M [meetings/2026-11-13-made-up-meeting].",
    )

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask("What did the Quillworks vendor review decide?")

    answer = run_agent(secret, body)
    assert answer.mode == MODE_AGENT
    assert extract_citations(answer.text) == [seeded.meeting]
    assert "made-up-meeting" not in answer.text
    assert answer.removed_citations == ("meetings/2026-11-13-made-up-meeting",)
    assert answer.citations == (CitedPage(seeded.meeting, seeded.meeting_title, "2026-11-12"),)
    assert [(c.name, c.ok) for c in answer.tool_calls] == [("kb_get_page", True)]
    assert answer.tool_calls[0].pages == (seeded.meeting,)
    assert answer.steps == 2
    # the page went back to the model as the tool result
    page = json.loads(_tool_messages(llm_server.requests[1])[0])
    assert page["id"] == seeded.meeting and "December" in page["sections"]["Decisions"]
    assert answer.timings.model > 0 and answer.timings.tools > 0


def test_system_prompt_rules_and_only_read_tools_are_offered(
    mcp_server: RunningServer, llm_server: LLMServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    _, secret = mcp_server.token("*", write=True)  # even a write token: the agent only reads
    llm_server.enqueue("The knowledge base has no answer to this question.")

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask("Anything?", now=dt.datetime.fromisoformat("2026-11-20T12:00"))

    answer = run_agent(secret, body)
    request = llm_server.requests[0]
    names = _tool_names(request)
    assert {"kb_get_page", "kb_list_pages", "kb_schema", "kb_brief"} <= names
    assert not names & {"kb_put_page", "source_pending", "source_read", "source_mark"}
    system = request["messages"][0]
    assert system["role"] == "system"
    for rule in ("Today is 2026-11-20", "square brackets", "Give dates", "newest"):
        assert rule in system["content"]
    assert "no answer" in system["content"]
    assert "kb_brief answers what was decided" in system["content"]  # the model is told of it
    assert answer.citations == () and answer.removed_citations == ()


def test_folder_limited_token_never_yields_an_out_of_scope_citation(
    mcp_server: RunningServer, llm_server: LLMServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    _, secret = mcp_server.token("people,meetings")
    llm_server.enqueue(
        Reply(
            tool_calls=[
                tool_call("kb_get_page", {"id": seeded.company}),
                tool_call("kb_get_page", {"id": seeded.person}),
            ]
        ),
        f"{seeded.company_title} is a prospect [{seeded.company}]; "
        f"{seeded.person_title} is Head of Testing [{seeded.person}].",
    )

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask("Who is Zora and what is Quillworks?")

    answer = run_agent(secret, body)
    folders = {c.folder for c in answer.citations}
    assert folders == {"people"}
    cited = extract_citations(answer.text)
    assert cited and all(c.split("/")[0] in {"people", "meetings"} for c in cited)
    assert answer.removed_citations == (seeded.company,)
    # the refused page went back to the model as an error it can act on
    errors = [m for m in _tool_messages(llm_server.requests[1]) if m.startswith("Error:")]
    assert len(errors) == 1 and "no page" in errors[0]
    assert [c.ok for c in answer.tool_calls] == [False, True]


def test_tool_errors_and_bad_arguments_go_back_to_the_model(
    mcp_server: RunningServer, llm_server: LLMServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    _, secret = mcp_server.token("*")
    llm_server.enqueue(
        Reply(
            tool_calls=[
                tool_call("kb_put_page", {"folder": "people"}),
                tool_call("kb_list_pages", '{"folder": "meetings", "limit": '),
                tool_call("kb_list_pages", {"folder": "no-such-folder"}),
            ]
        ),
        "The knowledge base has no answer to this question.",
    )

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask("List things")

    answer = run_agent(secret, body)
    messages = _tool_messages(llm_server.requests[1])
    assert len(messages) == 3 and all(m.startswith("Error:") for m in messages)
    assert "there is no tool 'kb_put_page'" in messages[0] and "kb_query" in messages[0]
    assert "not a JSON object" in messages[1]
    assert "no-such-folder" in messages[2]
    assert [c.ok for c in answer.tool_calls] == [False, False, False]


def test_steps_are_bounded_and_the_last_turn_must_answer(
    mcp_server: RunningServer, llm_server: LLMServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    _, secret = mcp_server.token("*")

    def model(body: dict[str, Any]) -> Reply:
        if body.get("tool_choice") == "none":
            return Reply(content=f"{seeded.person_title} is Head of Testing [{seeded.person}].")
        done = sum(1 for m in body["messages"] if m.get("role") == "tool")
        # a different call each turn (an identical one is refused, see test_small_models)
        folder, slug = seeded.person.split("/", 1)
        asked = {"id": seeded.person} if done == 0 else {"folder": folder, "slug": slug}
        return Reply(tool_calls=[tool_call("kb_get_page", asked)])

    llm_server.default = model

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask("Who is Zora?")

    answer = run_agent(secret, body, max_steps=2)
    assert answer.steps == 3
    assert len(answer.tool_calls) == 2
    assert "step_limit" in answer.degraded
    assert [c.id for c in answer.citations] == [seeded.person]
    last = llm_server.requests[-1]
    assert last["tool_choice"] == "none"
    assert "used all your tool calls" in last["messages"][-1]["content"]


def test_history_turns_reach_the_model_and_known_pages_stay_citable(
    mcp_server: RunningServer, llm_server: LLMServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    _, secret = mcp_server.token("*")
    llm_server.enqueue(f"Yes, still Head of Testing [{seeded.person}].")
    known = {seeded.person: CitedPage(seeded.person, seeded.person_title)}
    history = [Turn("user", "Who is Zora?"), Turn("assistant", "Head of Testing.")]

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask("Is that still true?", history=history, known=known)

    answer = run_agent(secret, body)
    roles = [(m["role"], m["content"]) for m in llm_server.requests[0]["messages"][1:]]
    assert roles == [
        ("user", "Who is Zora?"),
        ("assistant", "Head of Testing."),
        ("user", "Is that still true?"),
    ]
    assert [c.id for c in answer.citations] == [seeded.person]


def test_budget_and_model_failures_fall_back_to_extractive(
    mcp_server: RunningServer,
    llm_server: LLMServer,
    seeded: Seeded,
    run_agent: RunAgent,
    llm_endpoint: Any,
) -> None:
    _, secret = mcp_server.token("*")
    llm_server.enqueue(503)

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask(f"Quillworks vendor review {seeded.tag}")

    answer = run_agent(secret, body)
    assert answer.mode == MODE_EXTRACTIVE
    assert answer.degraded[0] == "llm_unavailable"
    tiny = run_agent(secret, body, budget_tokens=5)
    assert tiny.mode == MODE_EXTRACTIVE and tiny.degraded[0] == "budget_exceeded"
    assert len(llm_server.requests) == 1  # the budget stopped the call before it was sent


def test_extractive_mode_answers_with_no_llm(
    mcp_server: RunningServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    _, secret = mcp_server.token("people,meetings")

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask(
            f"Quillworks vendor review {seeded.tag}",
            now=dt.datetime.fromisoformat("2026-11-20T12:00:00+08:00"),
        )

    answer = run_agent(secret, body, llm=False)
    assert answer.mode == MODE_EXTRACTIVE and answer.degraded[0] == "no_llm"
    assert "Extractive answer (no language model)" in answer.text
    assert seeded.meeting in [c.id for c in answer.citations]
    assert answer.citations and all(c.folder in {"people", "meetings"} for c in answer.citations)
    assert extract_citations(answer.text) == [c.id for c in answer.citations]
    call = answer.tool_calls[0]
    assert call.name == "kb_query" and call.arguments.get("now") == "2026-11-20T12:00:00+08:00"
    meeting_line = next(line for line in answer.text.splitlines() if seeded.meeting in line)
    assert "2026-11-12" in meeting_line


def test_now_is_passed_to_tools_that_take_it(
    mcp_server: RunningServer, llm_server: LLMServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    _, secret = mcp_server.token("*")
    llm_server.enqueue(
        Reply(tool_calls=[tool_call("kb_query", {"question": "latest Quillworks meeting"})]),
        f"The latest was on 2026-11-12 [{seeded.meeting}].",
    )

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask(
            "Latest Quillworks meeting?", now=dt.datetime.fromisoformat("2026-11-20T12:00")
        )

    answer = run_agent(secret, body)
    assert answer.tool_calls[0].arguments["now"] == "2026-11-20T12:00:00"
    assert answer.tool_calls[0].ok
