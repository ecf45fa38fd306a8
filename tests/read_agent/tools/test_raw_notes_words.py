"""A question for someone's own words reads the raw notes even when pages answer: a page
keeps what the ingest agent took from a note, the note keeps what was said."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest

from read_agent.agent import ReadAgent
from read_agent.tools.raw_notes import asks_for_words
from tests.fixtures.server import RunningServer
from tests.read_agent.conftest import RunAgent, Seeded, write_note

NOW = dt.datetime.fromisoformat("2026-11-20T12:00:00+08:00")


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("What did Priya say about the Initech support tickets?", True),
        ("What has Bob mentioned about the rollout?", True),
        ("Who asked for a discount?", True),
        ("What did Alex Novak tell us? He told us twice.", True),
        ("Приа тасалбаруудын талаар юу хэлсэн бэ?", True),
        ("Бат юуны тухай ярьсан бэ?", True),
        ("Who does Bob Martinez report to?", False),
        ("Tell me about Globex", False),
        ("Who should write the proposal?", False),
    ],
)
def test_a_question_asks_for_someones_words(question: str, words: bool) -> None:
    assert asks_for_words(question) is words


def test_what_someone_said_is_read_from_the_notes_even_when_a_page_answers(
    mcp_server: RunningServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    person = seeded.person_title
    word = f"gyroscope{uuid.uuid4().hex[:6]}"
    note = (
        "# #testing — 2026-11-19\n\n"
        f"**{person}** 16:02\nThe {word} rig fails on cold mornings, keep it in the lab.\n\n"
        "**Alex Kim** 16:20\nThanks, noted.\n"
    )
    answer = _asked_after_the_note(
        mcp_server,
        run_agent,
        f"slack/testing/2026-11-19-{word}.md",
        note,
        f"What did {person} say about the rig?",
    )
    assert "cold mornings" in answer.text


def _asked_after_the_note(
    server: RunningServer, run_agent: RunAgent, rel: str, note: str, question: str
) -> Any:
    """The answer to ``question`` once a raw note is at ``source/<rel>``: the pages were
    searched, then the notes, and the note is cited."""
    note_id = write_note(server, rel, note)

    async def body(agent: ReadAgent) -> object:
        return await agent.ask(question, now=NOW)

    answer = run_agent(server.token("*")[1], body, llm=False)
    queries = [c for c in answer.tool_calls if c.name == "kb_query"]
    assert [bool(q.arguments.get("include_sources")) for q in queries] == [False, True]
    assert note_id in [c.id for c in answer.citations]
    return answer


def test_a_detail_no_page_holds_is_read_from_the_notes(
    mcp_server: RunningServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    # the pages hold the company, not the audit: no sentence of them holds every word
    # asked, so the raw notes are searched too, and the note's sentence answers
    word = f"forklift{uuid.uuid4().hex[:6]}"
    note = (
        "# Weekly update\n\n"
        f"- The {word} audit at {seeded.company_title} is booked for 2026-12-03.\n"
        "- Nothing else changed this week.\n"
    )
    answer = _asked_after_the_note(
        mcp_server,
        run_agent,
        f"updates/2026-11-19-{word}.md",
        note,
        f"When is the {word} audit at {seeded.company_title}?",
    )
    assert "2026-12-03" in answer.text.splitlines()[0]


def test_pages_holding_every_word_asked_need_no_notes(
    mcp_server: RunningServer, seeded: Seeded, run_agent: RunAgent
) -> None:
    async def body(agent: ReadAgent) -> object:
        return await agent.ask(f"Who runs testing at Acme, {seeded.person_title}?", now=NOW)

    answer = run_agent(mcp_server.token("*")[1], body, llm=False)
    queries = [c for c in answer.tool_calls if c.name == "kb_query"]
    assert queries and not any(q.arguments.get("include_sources") for q in queries)
