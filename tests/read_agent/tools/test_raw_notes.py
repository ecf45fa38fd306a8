"""The read agent falls back to the raw source notes when the pages do not answer, with
and without a model, and cites the note as ``[source/...]``."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from read_agent.agent import MODE_AGENT, MODE_EXTRACTIVE, Answer, ReadAgent
from read_agent.tools.citations import extract_citations
from read_agent.tools.raw_notes import answers, pages_answer
from tests.fixtures.llm_server import LLMServer, Reply, tool_call
from tests.fixtures.server import RunningServer
from tests.read_agent.conftest import RunAgent, Seeded, write_note

NOW = dt.datetime.fromisoformat("2026-11-20T12:00:00+08:00")


@pytest.fixture(scope="module")
def note(mcp_server: RunningServer) -> tuple[str, str]:
    """A raw note no page was made from (its id, its unique word), indexed for search."""
    word = f"zephyrine{uuid.uuid4().hex[:6]}"
    text = (
        f"---\ndate: 2026-11-18\n---\nCall with the warehouse team.\n"
        f"The {word} pallet wrapper jammed twice and Dana ordered a new motor.\n"
    )
    return write_note(mcp_server, f"notes/2026-11-18-{word}.md", text), word


def test_a_result_answers_only_with_more_than_nearness_in_meaning() -> None:
    assert answers({"id": "people/bob", "ranks": {"keyword": 1, "vector": 2}, "labels": []})
    assert not answers({"id": "people/bob", "ranks": {"vector": 1}, "labels": []})
    assert not answers({"id": "m/x", "ranks": {"keyword": 1}, "labels": ["outside_window"]})
    page = {"id": "people/bob", "ranks": {"vector": 1}, "labels": ["weak_semantic"]}
    note = {"id": "source/notes/a.md", "ranks": {"source_keyword": 1}, "labels": []}
    assert not pages_answer({"results": [page, note]})  # a note is not a page
    assert not pages_answer({"results": []}) and not pages_answer(None)


def ask_without_model(run_agent: RunAgent, secret: str, question: str) -> Answer:
    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask(question, now=NOW)

    answer: Answer = run_agent(secret, body, llm=False)
    return answer


def test_extractive_answer_falls_back_to_the_notes_and_cites_one(
    mcp_server: RunningServer, note: tuple[str, str], run_agent: RunAgent
) -> None:
    note_id, word = note
    question = f"What happened to the {word} pallet wrapper?"
    answer = ask_without_model(run_agent, mcp_server.token("*")[1], question)
    assert answer.mode == MODE_EXTRACTIVE
    queries = [c for c in answer.tool_calls if c.name == "kb_query"]
    assert len(queries) == 2
    assert not queries[0].arguments.get("include_sources")
    assert queries[1].arguments["include_sources"] is True
    assert note_id in [c.id for c in answer.citations]
    assert note_id in extract_citations(answer.text)
    assert "jammed" in answer.text
    # A token without the source folder gets no note, and is told why.
    pages_only = ask_without_model(run_agent, mcp_server.token("people,meetings")[1], question)
    assert note_id not in pages_only.text
    assert not [c.id for c in pages_only.citations if c.id.startswith("source/")]
    assert "sources_not_in_scope" in pages_only.degraded


def test_pages_that_answer_need_no_notes(
    mcp_server: RunningServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    _, secret = mcp_server.token("*")
    answer = ask_without_model(run_agent, secret, f"Quillworks vendor review {seeded.tag}")
    queries = [c for c in answer.tool_calls if c.name == "kb_query"]
    assert queries and not any(c.arguments.get("include_sources") for c in queries)
    assert seeded.meeting in [c.id for c in answer.citations]


def test_the_models_search_falls_back_to_the_notes_and_it_cites_one(
    mcp_server: RunningServer, llm_server: LLMServer, note: tuple[str, str], run_agent: RunAgent
) -> None:
    note_id, word = note
    _, secret = mcp_server.token("*")
    question = f"What happened to the {word} pallet wrapper?"
    llm_server.enqueue(
        Reply(tool_calls=[tool_call("kb_query", {"question": question})]),
        f"It jammed twice and Dana ordered a new motor (2026-11-18) [{note_id}.md].",
    )

    async def body(agent: ReadAgent) -> Answer:
        return await agent.ask(question, now=NOW)

    answer = run_agent(secret, body)
    assert answer.mode == MODE_AGENT
    assert [c.arguments.get("include_sources") for c in answer.tool_calls] == [None, True]
    # The model read the notes' result, not the empty page search.
    tool_result = next(m for m in llm_server.requests[1]["messages"] if m["role"] == "tool")
    assert note_id in tool_result["content"] and "jammed" in tool_result["content"]
    assert [c.id for c in answer.citations] == [note_id]
    assert not answer.removed_citations
