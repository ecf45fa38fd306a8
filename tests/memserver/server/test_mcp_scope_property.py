"""Property: whatever a token's scope and whatever tools it calls, nothing out of scope leaks.

Pages are seeded in every folder with unique markers in their ids, titles and text;
meetings link to people so that a link field could leak a person's title, and the prose
of every page (a section and a timeline line) names the page seeded before it, in
another folder, the ways pages name each other: ``Decision “Title” (decisions/slug)`` as
the ingest agent writes it, a markdown link ``[Title](folder/slug)`` and a wikilink.
Then, for random token scopes and random tool calls (every tool the token can see, with
ids of pages in and out of scope), no response (results or errors) contains the id,
title or text of a page outside the token's folders.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memserver.clients.mcp import MemoryClient, open_http
from tests.fixtures.server import RunningServer

FOLDERS = ("people", "companies", "meetings", "decisions", "projects")
TIMEOUT = 60


@dataclass(frozen=True)
class Seeded:
    id: str
    folder: str
    title: str
    marker: str

    def leaks(self) -> tuple[str, ...]:
        return (self.id, self.title, self.marker)


def _mention(other: Seeded | None) -> str:
    """How the prose of a page names another one (as the agent and authors write it)."""
    if other is None:
        return ""
    kind = other.folder.removesuffix("s").capitalize()
    return (
        f" {kind} “{other.title}” ({other.id}); see [{other.title}]({other.id}) and [[{other.id}]]."
    )


def _page(
    folder: str, tag: str, person_title: str | None, other: Seeded | None = None
) -> dict[str, Any]:
    marker = f"mark{tag}"
    title = {
        "people": f"Zed Person {tag}",
        "companies": f"Zed Company {tag}",
        "meetings": f"Zed Sync {tag}",
        "decisions": f"Zed Decision {tag}",
        "projects": f"Zed Project {tag}",
    }[folder]
    fields_of: dict[str, dict[str, Any]] = {
        "meetings": {"date": "2026-03-04", "attendees": [person_title] if person_title else []},
        "decisions": {"date": "2026-03-05", "status": "accepted"},
        "companies": {"status": "customer"},
        "people": {"role": f"Role {marker}"},
        "projects": {"status": "active"},
    }
    fields = fields_of[folder]
    first_section = {
        "people": "Summary",
        "companies": "Summary",
        "meetings": "Summary",
        "decisions": "Context",
        "projects": "Summary",
    }[folder]
    page: dict[str, Any] = {
        "title": title,
        "fields": fields,
        "sections": {first_section: f"Notes {marker} about {title}.{_mention(other)}"},
    }
    if folder != "meetings":
        text = f"Event {marker}.{_mention(other)}"
        page["timeline"] = [{"date": "2026-03-06", "text": text, "source": "p.md"}]
    return page


@pytest.fixture(scope="module")
def seeded(mcp_server: RunningServer) -> list[Seeded]:
    _, secret = mcp_server.token("*", write=True, name="seeder")

    async def seed(memory: MemoryClient) -> list[Seeded]:
        out: list[Seeded] = []
        person_title: str | None = None
        for _round in range(2):
            for folder in FOLDERS:
                tag = uuid.uuid4().hex[:10]
                page = _page(folder, tag, person_title, out[-1] if out else None)
                result = await memory.call("kb_put_page", {"folder": folder, "page": page})
                out.append(Seeded(result["id"], folder, page["title"], f"mark{tag}"))
                if folder == "people":
                    person_title = page["title"]
        return out

    async def main() -> list[Seeded]:
        with anyio.fail_after(TIMEOUT):
            async with open_http(mcp_server.url, secret) as memory:
                return await seed(memory)

    return anyio.run(main)


def _arguments(tool: Any, target: Seeded, folder: str | None) -> dict[str, Any]:
    """Plausible arguments for any tool, aimed at ``target``."""
    props = tool.input_schema.get("properties", {})
    args: dict[str, Any] = {}
    if "id" in props:
        args["id"] = target.id
    if "query" in props:
        args["query"] = f"{target.title} {target.marker}"
    if "text" in props and "query" not in props:
        args["text"] = target.title
    if "name" in props:
        args["name"] = target.title
    if "title" in props:
        args["title"] = target.title
    if "folder" in props and "id" not in args and folder is not None:
        args["folder"] = folder
    if "start" in props and "end" in props:
        args["start"], args["end"] = "2026-01-01", "2027-01-01"
    return args


def _texts(result: Any) -> str:
    parts = [getattr(block, "text", "") for block in result.content]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


scopes = st.sets(st.sampled_from(FOLDERS), min_size=1, max_size=len(FOLDERS) - 1)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    folders=scopes,
    write=st.booleans(),
    picks=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 10_000)), max_size=8),
)
def test_no_out_of_scope_id_title_or_text_in_any_response(
    mcp_server: RunningServer,
    seeded: list[Seeded],
    folders: set[str],
    write: bool,
    picks: list[tuple[int, int]],
) -> None:
    _, secret = mcp_server.token(",".join(sorted(folders)), write=write, name="prop")
    hidden = [s for s in seeded if s.folder not in folders]
    assert hidden

    async def explore(memory: MemoryClient) -> list[tuple[str, dict[str, Any], str]]:
        tools = [t for t in await memory.list_tools()]
        calls: list[tuple[str, dict[str, Any]]] = [("kb_schema", {}), ("kb_list_pages", {})]
        for folder in FOLDERS:
            calls.append(("kb_list_pages", {"folder": folder, "limit": 500}))
        for target in hidden:
            calls.append(("kb_get_page", {"id": target.id}))
        for target in (s for s in seeded if s.folder in folders):  # their prose names others
            calls.append(("kb_get_page", {"id": target.id}))
            calls.append(("kb_history", {"id": target.id, "version": 1}))
        readable = [t for t in tools if t.annotations is None or t.annotations.read_only_hint]
        for tool_pick, target_pick in picks:
            tool = readable[tool_pick % len(readable)]
            target = seeded[target_pick % len(seeded)]
            calls.append((tool.name, _arguments(tool, target, target.folder)))
        seen = []
        for name, args in calls:
            result = await memory.call_result(name, args)
            seen.append((name, args, _texts(result)))
        return seen

    async def main() -> list[tuple[str, dict[str, Any], str]]:
        with anyio.fail_after(TIMEOUT):
            async with open_http(mcp_server.url, secret) as memory:
                return await explore(memory)

    for name, args, text in anyio.run(main):
        for page in hidden:
            for secret_text in page.leaks():
                # the caller's own arguments may be echoed back in an error message
                if any(secret_text in json.dumps(v) for v in args.values()):
                    continue
                assert secret_text not in text, f"{name}({args}) leaked {secret_text!r}"


def test_in_scope_pages_are_all_listed(mcp_server: RunningServer, seeded: list[Seeded]) -> None:
    """The filter is not simply hiding everything: granted pages are found."""
    _, secret = mcp_server.token("people,meetings", name="prop-visible")

    async def main() -> tuple[set[str], dict[str, Any]]:
        with anyio.fail_after(TIMEOUT):
            async with open_http(mcp_server.url, secret) as memory:
                listed: set[str] = set()
                for folder in ("people", "meetings"):
                    page = await memory.call("kb_list_pages", {"folder": folder, "limit": 500})
                    listed |= {p["id"] for p in page["pages"]}
                meeting = next(s for s in seeded if s.folder == "meetings")
                return listed, await memory.call("kb_get_page", {"id": meeting.id})

    listed, meeting = anyio.run(main)
    assert {s.id for s in seeded if s.folder in ("people", "meetings")} <= listed
    assert meeting["fields"].get("attendees")  # people are in scope: the link stays
