"""Every refused HTTP request is an audit row: who (a token's name, or a digest of a
wrong secret, never the secret), what was asked, and the status it got."""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid

import httpx2

from memserver.server.audit import AuditEntry
from tests.fixtures.server import RunningServer

INIT = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
JSON = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _rows(server: RunningServer, since: dt.datetime) -> list[AuditEntry]:
    return [r for r in server.audit.query(since=since) if r.outcome.startswith("refused:")]


def test_refusals_of_mcp_requests_are_audit_rows(mcp_server: RunningServer) -> None:
    name, secret = mcp_server.token("people", name="refused")
    wrong = f"ms_wrong-{uuid.uuid4().hex}"
    since = dt.datetime.now(dt.UTC)
    with httpx2.Client(base_url=mcp_server.base_url, timeout=30.0) as client:
        statuses = [
            client.post("/mcp", content=INIT, headers=JSON).status_code,
            client.post(
                "/mcp", content=INIT, headers={**JSON, "authorization": f"Bearer {wrong}"}
            ).status_code,
            client.post(
                "/mcp",
                content=INIT,
                headers={**JSON, "authorization": f"Bearer {secret}", "host": "evil.example"},
            ).status_code,
            client.post(
                "/mcp",
                content=b"x" * (5 * 1024 * 1024),
                headers={**JSON, "authorization": f"Bearer {secret}"},
            ).status_code,
        ]
    assert statuses == [401, 401, 421, 413]
    rows = _rows(mcp_server, since)
    mine = [
        r
        for r in rows
        if r.token in {"-", name, f"unknown:{hashlib.sha256(wrong.encode()).hexdigest()[:12]}"}
    ]
    got = {(r.token, r.outcome) for r in mine}
    wrong_id = f"unknown:{hashlib.sha256(wrong.encode()).hexdigest()[:12]}"
    assert {
        ("-", "refused:401"),
        (wrong_id, "refused:401"),
        (name, "refused:421"),
        (name, "refused:413"),
    } <= got
    assert mine and all(r.tool == "http POST /mcp" for r in mine)
    for row in rows:
        assert wrong not in str(row.as_dict()) and secret not in str(row.as_dict())


def test_an_answered_request_is_no_refusal_row(mcp_server: RunningServer) -> None:
    since = dt.datetime.now(dt.UTC)
    with httpx2.Client(base_url=mcp_server.base_url, timeout=30.0) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/healthz", headers={"host": "evil.example"}).status_code == 421
    rows = _rows(mcp_server, since)
    assert [(r.tool, r.outcome) for r in rows if r.tool.endswith("/healthz")] == [
        ("http GET /healthz", "refused:421")
    ]
