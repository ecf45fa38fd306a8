"""Hostile input against the real memory server, over real MCP and HTTP: every attack
gets a clear error naming the argument and the limit, and nothing is stored half-way.

Alias bombs in frontmatter and in schema.yaml, outsized questions and titles, outsized
and long sources, titles whose slugs are too many bytes, session floods, NUL bytes and
numbers and dates past what the server takes.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

from ingest_agent.memory import Memory
from memserver.clients.mcp import MemoryClient, result_text
from memserver.errors import ToolCallError
from memserver.kb.layout import SLUG_MAX_BYTES
from memserver.server.sessions import MAX_SESSIONS_PER_TOKEN
from tests.fixtures.hostile import ALIAS_BOMB, MCP_HEADERS, MCP_INITIALIZE
from tests.fixtures.server import RunningServer, run_session

run = run_session


def error_of(server: RunningServer, secret: str, tool: str, args: dict[str, Any]) -> str:
    """The ToolError message of one call that must fail."""

    async def body(memory: MemoryClient) -> str:
        with pytest.raises(ToolCallError) as caught:
            await memory.call(tool, args)
        return caught.value.server_message

    message: str = run(server, secret, body)
    assert "Error executing tool" not in message and "internal error" not in message
    return message


# -- 6: YAML alias bombs --------------------------------------------------------------------


def test_an_alias_bomb_in_frontmatter_is_refused_naming_anchors(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("people", write=True)
    markdown = f"---\ntitle: Bomb\ntype: person\n{ALIAS_BOMB}\n---\n\n## Summary\nx\n"
    message = error_of(
        mcp_server, secret, "kb_put_page", {"folder": "people", "markdown": markdown}
    )
    assert "anchors and aliases" in message and "frontmatter" in message
    assert not (mcp_server.paths.knowledge / "people" / "bomb.md").exists()


def test_outsized_frontmatter_is_refused_naming_the_limit(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("people", write=True)
    lines = "\n".join(f"k{i}: {'v' * 100}" for i in range(1200))
    markdown = f"---\ntitle: Big Front\ntype: person\n{lines}\n---\n"
    message = error_of(
        mcp_server, secret, "kb_put_page", {"folder": "people", "markdown": markdown}
    )
    assert "100,000 allowed" in message


def test_schema_check_refuses_an_alias_bomb_and_keeps_reasonable_reuse(tmp_path: Path) -> None:
    def check(schema: str) -> subprocess.CompletedProcess[str]:
        (tmp_path / "schema.yaml").write_text(schema, encoding="utf-8")
        command = [sys.executable, "-m", "memserver.cli", "--kb", str(tmp_path), "schema-check"]
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    bomb = check(f"{ALIAS_BOMB}\nfolders: []\n")
    assert bomb.returncode == 2 and "200,000 values" in bomb.stderr
    assert "Traceback" not in bomb.stderr
    reuse = check(
        "folders:\n"
        "  - {name: people, type: person, description: People., fields: &f [{name: role, type: string}]}\n"
        "  - {name: staff, type: staff, description: Staff., fields: *f}\n"
    )
    assert reuse.returncode == 0, reuse.stderr


# -- 7: outsized texts ----------------------------------------------------------------------


def test_an_outsized_question_or_title_is_refused_naming_the_limit(
    mcp_server: RunningServer,
) -> None:
    _, reader = mcp_server.token("*")
    message = error_of(mcp_server, reader, "kb_query", {"question": "globex pricing " * 1400})
    assert "question" in message and "8000 characters" in message
    _, writer = mcp_server.token("people", write=True)
    page = {"title": "T" * 20_000}
    message = error_of(mcp_server, writer, "kb_put_page", {"folder": "people", "page": page})
    assert "title" in message and "20000 bytes" in message and "500" in message


# -- 8: outsized and long sources -------------------------------------------------------


def test_a_source_over_the_size_limit_is_failed_with_the_reason(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("source", write=True)
    rel = f"tests/huge-{uuid.uuid4().hex[:8]}.md"
    path = mcp_server.paths.source / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("A line of a huge note.\n" * 140_000, encoding="utf-8")  # 3.2 MB
    try:

        async def body(memory: MemoryClient) -> tuple[dict[str, Any], str]:
            pending = await memory.call("source_pending", {"limit": 1000})
            read = await memory.call_result("source_read", {"path": rel})
            assert read.is_error
            return pending, result_text(read)

        pending, read_error = run(mcp_server, secret, body)
    finally:
        path.unlink()
    assert rel not in [s["path"] for s in pending["sources"]]
    assert "larger than the limit of 2,097,152 bytes" in read_error
    entry = mcp_server.server.services.manifest().get(rel)
    assert entry.status.value == "failed" and "sources.max_bytes" in (entry.error or "")


def test_a_long_source_is_read_in_pages_and_joined_by_the_agent(
    mcp_server: RunningServer,
) -> None:
    _, secret = mcp_server.token("*", write=True)
    rel = f"tests/long-{uuid.uuid4().hex[:8]}.md"
    path = mcp_server.paths.source / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(f"Line {i} of a long note about Globex.\n" for i in range(7000))  # ~260k
    path.write_text(text, encoding="utf-8")

    async def body(memory: MemoryClient) -> tuple[dict[str, Any], dict[str, Any], str]:
        first = await memory.call("source_read", {"path": rel})
        rest = await memory.call("source_read", {"path": rel, "offset": first["next_offset"]})
        agent = Memory(memory)
        await agent.start()
        return first, rest, (await agent.read(rel)).content

    try:
        first, rest, whole = run(mcp_server, secret, body)
    finally:
        path.unlink()
    assert first["total_chars"] == len(text) and first["next_offset"] == 100_000
    assert len(first["content"]) == 100_000 and rest["offset"] == 100_000
    assert whole == text


# -- 9: slugs in bytes --------------------------------------------------------------------


@pytest.mark.parametrize(
    "title",
    [
        "長期的な価格戦略についての定例会議の議事録と決定事項の確認" * 3,
        "🎉 Монгол хэлний хувилбарын " * 8,
    ],
)
def test_a_long_non_latin_title_gets_a_file_name_under_200_bytes(
    mcp_server: RunningServer, title: str
) -> None:
    _, secret = mcp_server.token("people", write=True)
    tag = uuid.uuid4().hex[:6]
    page = {"title": f"{title} {tag}", "sections": {"Summary": "A long name."}}
    put = run(
        mcp_server, secret, lambda m: m.call("kb_put_page", {"folder": "people", "page": page})
    )
    slug = put["id"].split("/", 1)[1]
    assert len(slug.encode("utf-8")) <= SLUG_MAX_BYTES
    assert (mcp_server.paths.knowledge / "people" / f"{slug}.md").is_file()
    got = run(mcp_server, secret, lambda m: m.call("kb_get_page", {"id": put["id"]}))
    assert got["title"] == f"{title} {tag}"  # the title itself is kept whole


# -- 10: session floods -------------------------------------------------------------------


def test_one_token_cannot_hold_more_than_its_share_of_sessions(mcp_server: RunningServer) -> None:
    _, flooder = mcp_server.token("*")
    _, other = mcp_server.token("*")
    auth = {"Authorization": f"Bearer {flooder}"}
    opened: list[str] = []
    with httpx2.Client(base_url=mcp_server.base_url, timeout=30) as http:

        def initialize() -> httpx2.Response:
            answer = http.post("/mcp", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **auth})
            if answer.status_code == 200:
                opened.append(answer.headers["mcp-session-id"])
            return answer

        def close(session: str) -> int:
            return http.delete("/mcp", headers={**auth, "mcp-session-id": session}).status_code

        try:
            assert {initialize().status_code for _ in range(MAX_SESSIONS_PER_TOKEN)} == {200}
            refused = initialize()
            assert refused.status_code == 429
            message = refused.json()["error"]["message"]
            assert f"{MAX_SESSIONS_PER_TOKEN} open MCP sessions" in message and "DELETE" in message
            # another token is not affected, and closing a session makes room again
            assert run(mcp_server, other, lambda m: m.call("kb_schema"))["folders"]
            assert close(opened.pop()) in (200, 204)
            assert initialize().status_code == 200
        finally:
            for session in opened:
                close(session)


# -- 12: bad values get the argument and its range -------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("kb_list_pages", {"offset": 10**20}, ["offset", "10000000"]),
        ("kb_list_pages", {"offset": 1e20}, ["offset", "allowed: 0 to 10000000"]),
        ("kb_history", {"id": "people/x", "version": 10**20}, ["version", "2147483647"]),
        (
            "kb_query",
            {"question": "what happened last week", "now": "0001-01-01"},
            ["now=", "1000-01-01", "8999-12-31"],
        ),
        ("kb_latest", {"folder": "meetings", "now": "9999-12-31"}, ["now=", "8999-12-31"]),
        ("kb_timeline", {"window": "from 0001-01-01 to 9999-12-31"}, ["0001-01-01", "between"]),
        ("kb_timeline", {"window": "9999-12"}, ["9999-12", "between"]),
    ],
)
def test_values_past_the_range_name_the_argument_and_the_range(
    mcp_server: RunningServer, tool: str, args: dict[str, Any], expected: list[str]
) -> None:
    _, secret = mcp_server.token("*")
    message = error_of(mcp_server, secret, tool, args)
    for part in expected:
        assert part in message, message


def test_a_nul_byte_in_a_page_is_a_validation_problem_naming_where(
    mcp_server: RunningServer,
) -> None:
    _, secret = mcp_server.token("people", write=True)
    page = {"title": "Nul Person", "sections": {"Summary": "before\x00after"}}
    message = error_of(mcp_server, secret, "kb_put_page", {"folder": "people", "page": page})
    assert "sections.Summary" in message and "NUL" in message
    markdown = "---\ntitle: Nul Markdown\ntype: person\n---\n\n## Summary\na\x00b\n"
    message = error_of(
        mcp_server, secret, "kb_put_page", {"folder": "people", "markdown": markdown}
    )
    assert "NUL" in message
    assert not list(mcp_server.paths.knowledge.glob("people/nul-*.md"))
