"""The loop's guarded writes: a version conflict is re-read and merged, a schema
rejection gets one repair round."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from ingest_agent.agent import IngestAgent, _side_by_side
from ingest_agent.memory import Memory
from memserver.clients.mcp import MemoryClient, open_http
from memserver.kb.page import TimelineEntry
from tests.fixtures.llm_server import LLMServer
from tests.ingest_agent.conftest import Ingest, IngestServer
from tests.ingest_agent.scripted import ScriptedModel


class RacingClient(MemoryClient):
    """A real MCP session; right after the agent reads ``page_id`` the first time,
    another writer updates that page on the server (so the agent's put is stale)."""

    def __init__(self, inner: MemoryClient, server: IngestServer, page_id: str) -> None:
        super().__init__(inner.client)
        self.server = server
        self.page_id = page_id
        self.raced = False

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        result = await super().call(name, arguments)
        if name == "kb_get_page" and result.get("id") == self.page_id and not self.raced:
            self.raced = True
            kb = self.server.kb()
            stored = kb.get_page(self.page_id)
            entry = TimelineEntry(dt.date(2026, 9, 30), "Written by someone else.", "other.md")
            page = dataclasses.replace(stored.page, timeline=(*stored.page.timeline, entry))
            await anyio.to_thread.run_sync(
                lambda: kb.put_page("people", page, stored.version, written_by="other")
            )
        return result


def test_a_version_conflict_is_re_read_and_merged(small_server: IngestServer) -> None:
    async def run() -> tuple[Any, bool]:
        async with open_http(small_server.url, small_server.write_token) as inner:
            memory = Memory(inner)
            schema = await memory.start()
            await IngestAgent(memory, schema).run(["a.md"])
            racing = RacingClient(inner, small_server, "people/alice-chen")
            memory = Memory(racing)
            schema = await memory.start()
            summary = await IngestAgent(memory, schema).run(["b.md"])
            return summary, racing.raced

    summary, raced = anyio.run(run)
    assert raced
    [outcome] = summary.sources
    assert outcome.status == "ingested" and "people/alice-chen" in outcome.changed
    page = small_server.kb().get_page("people/alice-chen").page
    texts = {e.text for e in page.timeline}
    assert "Written by someone else." in texts  # the other writer's change survived
    assert any("Sync b" in t for t in texts) and any("Sync a" in t for t in texts)
    assert {"a.md", "b.md"} <= set(page.sources)


def decision_record(server: IngestServer, name: str) -> None:
    """Make ``name`` a decision record by its frontmatter, so a decision is expected of it
    (a decision the model finds in a meeting note would wait for review instead)."""
    note = server.paths.source / name
    note.write_text("---\ntype: decision\ndate: 2026-09-02\n---\n\nWe go live.\n")


def test_a_schema_rejection_gets_one_repair_round(
    small_server: IngestServer, ingest: Ingest, llm_server: LLMServer
) -> None:
    model = ScriptedModel(llm_server)
    decision_record(small_server, "b.md")
    decision = {"folder": "decisions", "title": "Go live", "fields": {"date": "2026-09-02"}}
    model.overrides = {"b.md": json.dumps({"pages": [decision]})}  # status is required
    model.fix = lambda page: {**page, "fields": {**page["fields"], "status": "accepted"}}
    status, summary = ingest(small_server, "--file", "b.md", llm=llm_server)
    assert status == 0, summary
    assert model.tasks["repair"] == 1
    repair = next(
        r for r in llm_server.requests if r["messages"][0]["content"].startswith("Task: repair")
    )
    assert "status" in repair["messages"][1]["content"]  # every problem listed
    page = small_server.kb().get_page("decisions/2026-09-02-go-live").page
    assert page.fields["status"] == "accepted"


def test_a_page_still_invalid_after_the_repair_fails_its_source(
    small_server: IngestServer, ingest: Ingest, llm_server: LLMServer
) -> None:
    model = ScriptedModel(llm_server)
    decision_record(small_server, "c.md")
    decision = {"folder": "decisions", "title": "Go live", "fields": {"date": "2026-09-02"}}
    model.overrides = {"c.md": json.dumps({"pages": [decision]})}
    status, summary = ingest(small_server, "--file", "c.md", llm=llm_server)
    assert status == 1
    [outcome] = summary["sources"]
    assert outcome["status"] == "failed" and "status" in outcome["error"]
    assert model.tasks["repair"] == 1


def test_writes_side_by_side_keep_their_order_and_raise_the_first_failure_as_itself() -> None:
    running = 0
    most = 0

    async def write(value: int) -> int:
        nonlocal running, most
        running += 1
        most = max(most, running)
        try:
            await anyio.sleep(0.01 * max(0, 5 - value))  # later calls finish first
        finally:
            running -= 1
        if value == 99:
            raise ValueError("refused")
        return value

    def calls(values: list[int]) -> list[Any]:
        return [lambda v=v: write(v) for v in values]

    assert anyio.run(_side_by_side, calls([1, 2, 3, 4, 5]), 2) == [1, 2, 3, 4, 5]
    assert most == 2
    with pytest.raises(ValueError, match="refused"):
        anyio.run(_side_by_side, calls([1, 99, 3]), 4)
    most = 0
    assert anyio.run(_side_by_side, calls([3, 1]), 1) == [3, 1]
    assert most == 1
