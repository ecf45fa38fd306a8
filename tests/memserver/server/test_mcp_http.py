"""The memory server over real Streamable HTTP with the real MCP client."""

from __future__ import annotations

import datetime as dt
import json
import socket
import uuid
from typing import Any

import httpx2
import pytest
from mcp_types import Tool

from memserver import cli
from memserver.clients.mcp import MemoryClient, result_text
from memserver.errors import ServerAuthError, ToolCallError
from memserver.server.source_names import label
from memserver.server.tools.base import Access
from tests.fixtures.server import RunningServer, run_session

WRITE_TOOLS = {"kb_put_page"}
PIPELINE_TOOLS = {"source_pending", "source_read", "source_mark"}
READ_TOOLS = {"kb_schema", "kb_get_page", "kb_list_pages", "kb_history"}


run = run_session


def tools_with(server: RunningServer, *access: Access) -> set[str]:
    """Every registered tool (any area's) with one of these access levels."""
    return {spec.name for spec in server.server.specs() if spec.access in access}


def test_healthz_answers_without_a_token(mcp_server: RunningServer) -> None:
    response = httpx2.get(f"{mcp_server.base_url}/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


def test_mcp_without_a_bearer_token_is_401(mcp_server: RunningServer) -> None:
    response = httpx2.post(
        mcp_server.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_token_lifecycle_create_use_revoke(mcp_server: RunningServer) -> None:
    name, secret = mcp_server.token("people,meetings")

    async def body(memory: MemoryClient) -> None:
        schema = await memory.call("kb_schema")
        assert [f["name"] for f in schema["folders"]] == ["people", "meetings"]
        mcp_server.tokens.revoke(name)
        # the open session is refused on its very next request
        with pytest.raises(ServerAuthError, match="401"):
            await memory.call("kb_schema")

    run(mcp_server, secret, body)
    with pytest.raises(ServerAuthError, match="refused the token"):
        run(mcp_server, secret, lambda m: m.tool_names())


def test_expired_and_unknown_tokens_get_401(mcp_server: RunningServer) -> None:
    past = dt.datetime.now(dt.UTC) - dt.timedelta(days=2)
    expired = mcp_server.tokens.create(
        "expired-once", "*", expires=past + dt.timedelta(days=1), now=past
    )
    with pytest.raises(ServerAuthError):
        run(mcp_server, expired.secret, lambda m: m.tool_names())
    with pytest.raises(ServerAuthError):
        run(mcp_server, "ms_" + "x" * 43, lambda m: m.tool_names())


def test_read_only_token_sees_no_write_tool_and_cannot_call_one(
    mcp_server: RunningServer,
) -> None:
    name, secret = mcp_server.token("*")

    async def body(memory: MemoryClient) -> tuple[set[str], str, str]:
        names = set(await memory.tool_names())
        put = await memory.call_result(
            "kb_put_page", {"folder": "people", "page": {"title": "Mallory"}}
        )
        pending = await memory.call_result("source_pending", {})
        assert put.is_error and pending.is_error
        return names, result_text(put), result_text(pending)

    names, put_error, pending_error = run(mcp_server, secret, body)
    assert names == tools_with(mcp_server, Access.READ) and names >= READ_TOOLS
    assert "read-only" in put_error and "--write" in put_error
    assert "--write" in pending_error
    outcomes = {e.tool: e.outcome for e in mcp_server.audit.query(token=name)}
    assert outcomes == {"kb_put_page": "error:scope", "source_pending": "error:scope"}


def test_write_token_without_source_gets_no_pipeline_tools(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("people", write=True)
    names = set(run(mcp_server, secret, lambda m: m.tool_names()))
    assert names == tools_with(mcp_server, Access.READ, Access.WRITE)
    assert names >= WRITE_TOOLS and not PIPELINE_TOOLS & names
    _, secret = mcp_server.token("people,source", write=True)
    names = set(run(mcp_server, secret, lambda m: m.tool_names()))
    assert names == tools_with(mcp_server, *Access)
    assert names >= PIPELINE_TOOLS


def test_tools_carry_annotations_and_typed_schemas(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("*", write=True)
    listed: list[Tool] = run(mcp_server, secret, lambda m: m.list_tools())
    tools = {t.name: t for t in listed}
    reader, writer = tools["kb_get_page"].annotations, tools["kb_put_page"].annotations
    assert reader is not None and reader.read_only_hint is True
    assert writer is not None and writer.read_only_hint is False
    props = tools["kb_list_pages"].input_schema["properties"]
    assert props["limit"]["type"] == "integer"
    assert "page" in tools["kb_put_page"].input_schema["properties"]
    assert tools and all(t.description and len(t.description) > 80 for t in tools.values())
    assert tools and all(t.output_schema is not None for t in tools.values())


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("kb_list_pages", {"limit": "ten"}, ["limit", "integer", "Call kb_list_pages with"]),
        ("kb_list_pages", {"colour": "red"}, ["'colour'", "Call kb_list_pages with", "folder"]),
        ("kb_get_page", {}, ["id='<folder>/<slug>'", "folder='people'"]),
        ("kb_get_page", {"id": "alice"}, ["id='<folder>/<slug>'"]),
        ("kb_list_pages", {"start": "last tuesday"}, ["start", "YYYY-MM-DD"]),
        ("kb_nonexistent", {}, ["unknown tool", "kb_get_page"]),
        ("kb_put_page", {"folder": "people"}, ["exactly one of page", "markdown"]),
    ],
)
def test_bad_arguments_say_how_to_fix_the_call(
    mcp_server: RunningServer, tool: str, arguments: dict[str, Any], expected: list[str]
) -> None:
    name, secret = mcp_server.token("*", write=True)

    async def body(memory: MemoryClient) -> str:
        with pytest.raises(ToolCallError) as info:
            await memory.call(tool, arguments)
        return info.value.server_message

    message = run(mcp_server, secret, body)
    for part in expected:
        assert part in message
    (entry,) = mcp_server.audit.query(token=name)
    assert entry.tool == tool and entry.outcome.startswith("error:")


def test_unknown_host_header_is_refused(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("*")
    response = httpx2.post(
        mcp_server.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {secret}",
            "Host": "evil.example:80",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert response.status_code in (400, 403, 421)


def test_health_answers_only_the_hosts_the_endpoint_answers(mcp_server: RunningServer) -> None:
    health = f"{mcp_server.base_url}/healthz"
    assert httpx2.get(health, timeout=10).json()["status"] == "ok"
    foreign = httpx2.get(health, headers={"Host": "evil.example"}, timeout=10)
    assert foreign.status_code == 421
    assert "evil.example" in foreign.text


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-token", "Basic abc"])
def test_a_request_without_a_valid_token_is_refused_before_its_body_is_read(
    mcp_server: RunningServer, authorization: str | None
) -> None:
    # Headers that announce a large body, and no body: the answer must not wait for it.
    host, port = mcp_server.base_url.removeprefix("http://").split(":")
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "Content-Length: 3000000",
    ]
    if authorization is not None:
        lines.append(f"Authorization: {authorization}")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while b"Bearer <token>" not in answer:  # each recv bounded by the socket's timeout
            chunk = conn.recv(4096)
            if not chunk:
                break
            answer += chunk
    text = answer.decode("latin-1")
    assert text.startswith("HTTP/1.1 401"), text
    assert "Bearer <token>" in text


def test_audit_rows_and_cli_show_calls_and_last_use(
    mcp_server: RunningServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", mcp_server.database_url)  # the server's database
    name, secret = mcp_server.token("people")
    run(mcp_server, secret, lambda m: m.call("kb_schema", {}))
    kb = str(mcp_server.kb_dir)
    assert cli.main(["--kb", kb, "audit", "--token", name, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["entries"]
    assert [(r["token"], r["tool"], r["outcome"]) for r in rows] == [(name, "kb_schema", "ok")]
    assert len(rows[0]["args_sha256"]) == 64 and rows[0]["duration_ms"] >= 0
    assert cli.main(["--kb", kb, "token", "list", "--json"]) == 0
    listed = {t["name"]: t for t in json.loads(capsys.readouterr().out)["tokens"]}
    assert listed[name]["last_used"] == rows[0]["time"]
    assert "sha256" not in listed[name] and listed[name]["status"] == "active"


def test_pipeline_tools_read_redacted_sources_and_mark_them(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("people,source", write=True)
    rel = f"tests/2020-01-0{1}-{secret[-6:].lower()}.md"
    path = mcp_server.paths.source / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("Kickoff with Globex.\n<private>salary 9000</private>\nNext step: pilot.\n")

    async def body(memory: MemoryClient) -> tuple[dict[str, Any], ...]:
        pending = await memory.call("source_pending", {"limit": 1000})
        read = await memory.call("source_read", {"source": rel})  # alias of path
        bad = await memory.call_result("source_mark", {"path": rel, "status": "ingested"})
        assert bad.is_error and "hash" in result_text(bad)
        marked = await memory.call(
            "source_mark",
            {"path": rel, "status": "ingested", "hash": read["hash"], "pages": '["people/x"]'},
        )
        after = await memory.call("source_pending", {"limit": 1000})
        return pending, read, marked, after

    pending, read, marked, after = run(mcp_server, secret, body)
    paths = [s["path"] for s in pending["sources"]]
    assert rel in paths
    dates = [s["doc_date"] for s in pending["sources"]]
    assert dates == sorted(dates)  # oldest document first
    assert "salary" not in read["content"] and "[redacted]" in read["content"]
    assert read["redacted"] is True and read["doc_date"] == "2020-01-01"
    assert marked["status"] == "ingested" and marked["pages"] == ["people/x"]
    assert rel not in [s["path"] for s in after["sources"]]


def test_source_read_of_a_missing_or_escaping_path_is_a_clear_error(
    mcp_server: RunningServer,
) -> None:
    _, secret = mcp_server.token("source", write=True)

    async def body(memory: MemoryClient) -> list[str]:
        out = []
        for rel in ("no/such-file.md", "../schema.yaml"):
            result = await memory.call_result("source_read", {"path": rel})
            assert result.is_error
            out.append(result_text(result))
        return out

    missing, escaping = run(mcp_server, secret, body)
    assert "no source file 'no/such-file.md'" in missing and "check the path" in missing
    # refused for the path itself, before any file is opened: the fix, and nothing read
    assert "refused source path '../schema.yaml': it contains '..'" in escaping, escaping
    assert "give a path relative to source/" in escaping
    assert "folders" not in escaping and "timezone" not in escaping


def _person(tag: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": f"Pat Example {tag}",
        "fields": {"role": "Analyst", "location": "Ulaanbaatar"},
        "aliases": [f"Pat {tag}"],
        "sections": {"Summary": f"Pat {tag} analyses routes."},
        "timeline": [{"date": "2026-09-01", "text": "Joined Acme.", "source": "hr.md"}],
        **extra,
    }


def test_put_then_get_by_any_spelling_of_the_id(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("people", write=True)
    tag = uuid.uuid4().hex[:8]

    async def body(memory: MemoryClient) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        # the page arrives as a JSON string, as some clients send objects
        put = await memory.call(
            "kb_put_page", {"folder": "people", "page": json.dumps(_person(tag))}
        )
        folder, slug = put["id"].split("/")
        spellings = [
            {"id": put["id"]},
            {"page_id": put["id"]},
            {"path": f"knowledge/{put['id']}.md"},
            {"folder": folder, "slug": slug},
            {"id": slug, "folder": folder},
        ]
        return put, [await memory.call("kb_get_page", args) for args in spellings]

    put, pages = run(mcp_server, secret, body)
    assert put["created"] is True and put["version"] == 1 and put["id"].startswith("people/")
    assert pages and all(p["id"] == put["id"] and p["version"] == 1 for p in pages)
    page = pages[0]
    assert page["title"] == f"Pat Example {tag}" and page["fields"]["role"] == "Analyst"
    # a token without the source folder reads a note's path as its label
    shown = label("hr.md")
    assert page["timeline"] == [{"date": "2026-09-01", "text": "Joined Acme.", "source": shown}]
    assert f"Pat {tag} analyses routes." in page["markdown"]


def test_put_reports_every_problem_at_once(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("meetings", write=True)
    page = {
        "title": "Broken sync",
        "fields": {"kind": "party", "attendees": "not-a-list-of-links", "colour": "red"},
        "sections": {"Summery": "typo heading"},
        "timeline": [{"date": "last tuesday", "text": "x"}],
    }

    async def body(memory: MemoryClient) -> str:
        with pytest.raises(ToolCallError) as info:
            await memory.call("kb_put_page", {"folder": "meetings", "page": page})
        return info.value.server_message

    message = run(mcp_server, secret, body)
    for expected in ("date", "kind", "last tuesday", "Summery", "Fix every problem"):
        assert expected in message
    assert message.count("\n  - ") >= 4


def test_guarded_writes_refuse_stale_versions(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("people", write=True)
    tag = uuid.uuid4().hex[:8]

    async def body(memory: MemoryClient) -> tuple[Any, ...]:
        first = await memory.call("kb_put_page", {"folder": "people", "page": _person(tag)})
        target = {"id": first["id"]}
        again = await memory.call_result("kb_put_page", {**target, "page": _person(tag)})
        changed = _person(tag, fields={"role": "Lead Analyst"})
        second = await memory.call(
            "kb_put_page", {**target, "page": changed, "expected_version": first["version"]}
        )
        stale = await memory.call_result(
            "kb_put_page", {**target, "page": changed, "base_version": first["version"]}
        )
        history = await memory.call("kb_history", {**target, "version": 1})
        return first, again, second, stale, history

    first, again, second, stale, history = run(mcp_server, secret, body)
    assert first["version"] == 1
    assert again.is_error and "base_version" in again.content[0].text
    assert second["version"] == 2 and second["created"] is False
    assert stale.is_error and "base_version=2" in stale.content[0].text
    assert [v["version"] for v in history["versions"]] == [2, 1]
    assert "Analyst" in history["markdown"] and "Lead Analyst" not in history["markdown"]


def test_markdown_put_and_paginated_listing(mcp_server: RunningServer) -> None:
    _, secret = mcp_server.token("projects", write=True)
    tag = uuid.uuid4().hex[:8]
    markdowns = [
        f"---\ntitle: Route Project {tag} {n}\ntype: project\nstatus: active\n---\n\n"
        f"## Summary\nProject number {n}.\n"
        for n in range(3)
    ]

    async def body(memory: MemoryClient) -> tuple[list[str], list[dict[str, Any]]]:
        ids = [
            (await memory.call("kb_put_page", {"folder": "projects", "markdown": md}))["id"]
            for md in markdowns
        ]
        pages: list[dict[str, Any]] = []
        offset: int | None = 0
        while offset is not None:
            listing = await memory.call(
                "kb_list_pages", {"folder": "projects", "limit": 2, "offset": offset}
            )
            pages += listing["pages"]
            offset = listing["next_offset"]
        return ids, pages

    ids, pages = run(mcp_server, secret, body)
    listed = [p["id"] for p in pages]
    assert set(ids) <= set(listed) and len(listed) == len(set(listed))
    assert listed and all(i.startswith("projects/") for i in listed)


def test_out_of_scope_folders_are_refused_for_listing_and_writing(
    mcp_server: RunningServer,
) -> None:
    _, secret = mcp_server.token("people", write=True)

    async def body(memory: MemoryClient) -> tuple[str, str]:
        listing = await memory.call_result("kb_list_pages", {"folder": "decisions"})
        put = await memory.call_result(
            "kb_put_page", {"folder": "decisions", "page": {"title": "Sneaky"}}
        )
        assert listing.is_error and put.is_error
        return result_text(listing), result_text(put)

    listing, put = run(mcp_server, secret, body)
    assert "your folders are: people" in listing
    assert "may not write to folder 'decisions'" in put
