"""MCP resources, prompts and resource-updated notifications, through the SDK's own
client over HTTP, each in the token's scope: what a token cannot read is neither listed,
nor readable (it reads as missing), nor briefed on, nor announced."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from memserver.kb.page import Page, TimelineEntry
from tests.fixtures.server import RunningServer

WAIT = 30.0


@asynccontextmanager
async def client_for(server: RunningServer, secret: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=WAIT) as http,
        Client(streamable_http_client(server.url, http_client=http)) as client,
    ):
        yield client


def run(server: RunningServer, secret: str, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        with anyio.fail_after(WAIT * 2):
            async with client_for(server, secret) as client:
                return await body(client)

    return anyio.run(main)


@pytest.fixture(scope="module")
def pages(mcp_server: RunningServer) -> dict[str, str]:
    """A person and a decision they made, with a unique tag: {"person": id, "decision": id,
    "tag": tag}. Their words are the tag and few others: the session's server is shared,
    and a later test's search must not find them."""
    tag = uuid.uuid4().hex[:8]
    kb = mcp_server.kb()
    person = kb.put_page(
        "people",
        Page(
            title=f"Rhea Resource {tag}",
            type="person",
            fields={"role": "Buyer"},
            sections={"Summary": f"Rhea {tag} keeps the ledger."},
            timeline=(TimelineEntry(dt.date(2026, 5, 1), "Joined.", "team/roster.md"),),
        ),
        None,
    )
    decision = kb.put_page(
        "decisions",
        Page(
            title=f"Ledger format {tag}",
            type="decision",
            fields={
                "date": "2026-06-01",
                "status": "accepted",
                "decided_by": [f"Rhea Resource {tag}"],
            },
            sections={"Context": f"Ledger format {tag}.", "Decision": f"Columns {tag}."},
        ),
        None,
    )
    return {"person": person.id, "decision": decision.id, "tag": tag}


def test_resources_list_only_the_tokens_pages_with_the_schema_and_the_page_template(
    mcp_server: RunningServer, pages: dict[str, str]
) -> None:
    _, people = mcp_server.token("people")

    async def body(client: Client) -> tuple[list[str], list[str]]:
        uris: list[str] = []
        cursor = None
        while True:
            listed = await client.list_resources(cursor=cursor)
            uris += [str(r.uri) for r in listed.resources]
            cursor = listed.next_cursor
            if cursor is None:
                break
        templates = await client.list_resource_templates()
        return uris, [t.uri_template for t in templates.resource_templates]

    uris, templates = run(mcp_server, people, body)
    assert uris[0] == "kb://schema" and f"kb://{pages['person']}" in uris
    assert uris and all(u == "kb://schema" or u.startswith("kb://people/") for u in uris)
    assert len(uris) == len(set(uris))
    assert templates == ["kb://{folder}/{slug}"]
    _, everything = mcp_server.token("*")
    all_uris, _ = run(mcp_server, everything, body)
    assert f"kb://{pages['decision']}" in all_uris  # there to be hidden


def test_a_page_reads_as_markdown_and_a_hidden_page_reads_like_a_missing_one(
    mcp_server: RunningServer, pages: dict[str, str]
) -> None:
    _, people = mcp_server.token("people")

    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        read = await client.read_resource(f"kb://{pages['person']}")
        out["person"] = read.contents[0]
        schema = await client.read_resource("kb://schema")
        out["schema"] = json.loads(schema.contents[0].text)  # type: ignore[union-attr]
        for key, uri in (
            ("hidden", f"kb://{pages['decision']}"),
            ("missing", "kb://people/nobody-at-all"),
            ("odd", "kb://people"),
        ):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(uri)
            out[key] = refused.value.error.message
        return out

    out = run(mcp_server, people, body)
    assert out["person"].mime_type == "text/markdown"
    assert f"Rhea Resource {pages['tag']}" in out["person"].text
    assert [f["name"] for f in out["schema"]["folders"]] == ["people"]
    assert out["hidden"] == out["missing"].replace("people/nobody-at-all", pages["decision"])
    assert pages["tag"] not in out["hidden"].replace(pages["decision"], "")
    assert "kb://<folder>/<slug>" in out["odd"]


def test_prompts_brief_and_what_changed_come_from_the_tools_in_the_tokens_scope(
    mcp_server: RunningServer, pages: dict[str, str]
) -> None:
    _, people = mcp_server.token("people")
    _, everything = mcp_server.token("*")
    subject = f"Ledger format {pages['tag']}"

    async def body(client: Client) -> dict[str, Any]:
        listed = await client.list_prompts()
        brief = await client.get_prompt("brief", {"subject": subject})
        changed = await client.get_prompt("what_changed", {"since": "2000-01-01"})
        with pytest.raises(MCPError) as bad:
            await client.get_prompt("what_changed", {"since": "whenever-ish"})
        return {
            "names": [p.name for p in listed.prompts],
            "brief": brief.messages[0].content.text,  # type: ignore[union-attr]
            "changed": changed.messages[0].content.text,  # type: ignore[union-attr]
            "bad": bad.value.error.message,
        }

    seen = run(mcp_server, people, body)
    full = run(mcp_server, everything, body)
    assert seen["names"] == ["brief", "what_changed"]
    assert seen["brief"].startswith(f"Brief me on {subject}.")
    assert pages["decision"] in full["brief"] and pages["decision"] in full["changed"]
    for text in (seen["brief"], seen["changed"]):
        assert pages["decision"] not in text and "decisions/" not in text
    assert pages["person"] in seen["changed"]
    assert "neither a cursor nor a time" in seen["bad"]


def test_listeners_hear_of_changes_to_pages_they_may_read_and_stop_when_revoked(
    mcp_server: RunningServer, pages: dict[str, str]
) -> None:
    name, people = mcp_server.token("people")
    kb = mcp_server.kb()
    person_uri, decision_uri = f"kb://{pages['person']}", f"kb://{pages['decision']}"

    def rewrite(page_id: str, words: str) -> None:
        stored = kb.get_page(page_id)
        first = next(iter(stored.page.sections))
        sections = {**stored.page.sections, first: words}
        changed = Page(**{**stored.page.__dict__, "sections": sections})
        kb.put_page(stored.folder, changed, stored.version, slug=stored.slug)

    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with client.listen(resource_subscriptions=[person_uri, decision_uri]) as sub:
            out["honored"] = sub.honored.resource_subscriptions
            # the hidden page first: were it announced, it would come before the visible one
            await anyio.to_thread.run_sync(rewrite, pages["decision"], f"Rows {pages['tag']}.")
            await anyio.to_thread.run_sync(rewrite, pages["person"], f"Rhea {pages['tag']} moved.")
            out["first"] = await sub.__anext__()
            await anyio.to_thread.run_sync(mcp_server.tokens.revoke, name)
            try:
                async for event in sub:
                    out.setdefault("after", []).append(event)
            except Exception as exc:  # the stream ends when the token is revoked
                out["ended"] = type(exc).__name__
            else:
                out["ended"] = "graceful"
        return out

    out = run(mcp_server, people, body)
    assert out["honored"] == [person_uri]  # the decision is not the token's to watch
    assert out["first"] == ResourceUpdated(uri=person_uri)
    assert "after" not in out and out["ended"] == "SubscriptionLost", out
