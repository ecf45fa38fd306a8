"""The console's request guard on its own: Host/Origin as the MCP endpoint checks them,
cross-origin forms refused even where those rules are off, headers on every answer."""

from __future__ import annotations

from typing import Any

import anyio
from starlette.responses import PlainTextResponse
from starlette.types import Message, Receive, Scope, Send

from memserver.console.guard import ConsoleGuard
from memserver.server.http_app import transport_security


async def ok(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("ok")(scope, receive, send)


def call(guard: ConsoleGuard, method: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    sent: list[Message] = []

    async def run() -> None:
        scope = {
            "type": "http",
            "method": method,
            "path": "/ui/",
            "raw_path": b"/ui/",
            "query_string": b"",
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        }
        messages = [{"type": "http.request", "body": b"", "more_body": False}]

        async def receive() -> dict[str, Any]:
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            sent.append(message)

        await guard(scope, receive, send)

    anyio.run(run)
    start = sent[0]
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}


def test_a_loopback_server_refuses_foreign_hosts_and_origins() -> None:
    guard = ConsoleGuard(ok, transport_security("127.0.0.1", 8787))
    assert call(guard, "GET", {"host": "127.0.0.1:8787"})[0] == 200
    assert call(guard, "GET", {"host": "evil.example:8787"})[0] == 421
    origin = {"host": "127.0.0.1:8787", "origin": "http://evil.example"}
    assert call(guard, "POST", origin)[0] == 403


def test_a_server_on_every_address_still_refuses_forms_from_other_origins() -> None:
    guard = ConsoleGuard(ok, transport_security("0.0.0.0", 8787))
    here = {"host": "memory.example:8787"}
    assert call(guard, "GET", here)[0] == 200  # any Host reaches a wildcard address
    assert call(guard, "POST", {**here, "origin": "http://memory.example:8787"})[0] == 200
    assert call(guard, "POST", {**here, "origin": "http://evil.example"})[0] == 403
    assert call(guard, "POST", {**here, "origin": "null"})[0] == 403


def test_every_answer_carries_the_security_headers() -> None:
    guard = ConsoleGuard(ok, transport_security("127.0.0.1", 8787))
    for headers in ({"host": "127.0.0.1:8787"}, {"host": "evil.example"}):
        _, sent = call(guard, "GET", headers)
        assert "frame-ancestors 'none'" in sent["content-security-policy"]
        assert sent["x-content-type-options"] == "nosniff"
