"""The HTTP guard and the connection deadline, on a real uvicorn server over real sockets.

A tiny JSON echo app stands behind ``HttpGuard``; the read agent and the memory server
use the same guard (their own tests check their wiring).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memserver.web.guard import GuardRules, HostRules, HttpGuard
from memserver.web.serve import GuardedH11
from tests.fixtures.server import free_socket, serve_on

KEY = "guard-test-key"


class QuickH11(GuardedH11):
    header_timeout = 0.5  # the same deadline, short enough for a test


@contextlib.contextmanager
def guarded(rules: GuardRules) -> Iterator[tuple[str, list[Any]]]:
    """An echo app behind the guard on a free port; yields (URL, bodies the app received)."""
    received: list[Any] = []

    async def echo(request: Request) -> JSONResponse:
        body = await request.json() if request.method == "POST" else None
        received.append(body)
        return JSONResponse({"ok": True, "body": body})

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    app = Starlette(
        routes=[Route("/echo", echo, methods=["GET", "POST"]), Route("/healthz", healthz)]
    )
    with serve_on(free_socket(), HttpGuard(app, rules), http=QuickH11) as url:
        yield url, received


@pytest.fixture(scope="module")
def keyed() -> Iterator[tuple[str, list[Any]]]:
    with guarded(GuardRules(api_key=KEY, max_body=1024, body_timeout=0.5)) as running:
        yield running


def _auth(**extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEY}", **extra}


def test_host_rules_accept_our_addresses_and_nothing_else() -> None:
    rules = HostRules.for_address("127.0.0.1", 8788)
    for host in ("127.0.0.1:8788", "localhost:9000", "[::1]:1", "127.0.0.1"):
        assert rules.host_allowed(host), host
    for bad in ("evil.example.com", "evil.example.com:8788", "127.0.0.1.evil.com:80", None):
        assert not rules.host_allowed(bad), bad
    assert rules.origin_allowed(None) and rules.origin_allowed("http://localhost:3000")
    assert not rules.origin_allowed("https://evil.example.com")
    assert not rules.origin_allowed("http://127.0.0.1.evil.com:80")
    anywhere = HostRules.for_address("0.0.0.0", 8788)  # a wildcard bind: a key protects it
    assert anywhere.host_allowed("my-server.lan:8788") and not anywhere.enabled


def test_a_request_is_served_only_with_our_host_origin_key_and_json(
    keyed: tuple[str, list[Any]],
) -> None:
    url, received = keyed
    ok = httpx2.post(f"{url}/echo", json={"x": 1}, headers=_auth())
    assert ok.status_code == 200 and ok.json()["body"] == {"x": 1}
    refused = {
        "host": httpx2.post(f"{url}/echo", json={}, headers=_auth(Host="evil.example.com")),
        "origin": httpx2.post(f"{url}/echo", json={}, headers=_auth(Origin="http://evil.example")),
        "key": httpx2.post(f"{url}/echo", json={}, headers={"Authorization": "Bearer wrong"}),
        "no key": httpx2.get(f"{url}/echo"),
        "text": httpx2.post(
            f"{url}/echo", content=b'{"x": 1}', headers=_auth(**{"Content-Type": "text/plain"})
        ),
    }
    codes = {name: r.status_code for name, r in refused.items()}
    assert codes == {"host": 421, "origin": 403, "key": 401, "no key": 401, "text": 415}
    for response in refused.values():
        error = response.json()["error"]
        assert error["message"] and error["code"]
    assert refused["key"].headers["www-authenticate"] == "Bearer"
    assert httpx2.get(f"{url}/healthz").status_code == 200  # public: no key needed
    assert received == [{"x": 1}]  # nothing refused reached the app


def test_an_oversized_body_is_refused_before_the_app_parses_it(
    keyed: tuple[str, list[Any]],
) -> None:
    url, received = keyed
    before = len(received)
    declared = httpx2.post(
        f"{url}/echo",
        content=b"[" + b"1," * 600 + b"1]",
        headers=_auth(**{"Content-Type": "application/json"}),
    )
    assert declared.status_code == 413 and "1024 bytes" in declared.json()["error"]["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while it arrives
        yield b"["
        for _ in range(200):
            yield b"1111111111,"
        yield b"1]"

    streamed = httpx2.post(
        f"{url}/echo", content=chunks(), headers=_auth(**{"Content-Type": "application/json"})
    )
    assert streamed.status_code == 413
    assert len(received) == before


def test_a_body_that_does_not_arrive_in_time_gets_408(keyed: tuple[str, list[Any]]) -> None:
    url, received = keyed
    before = len(received)
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            f"POST /echo HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {KEY}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode()
        )
        # The rest of the body never comes. The server answers and closes: read until
        # then (headers and body may arrive in separate segments on a loaded machine).
        parts = []
        while chunk := sock.recv(4096):
            parts.append(chunk)
        answer = b"".join(parts).decode()
    assert answer.startswith("HTTP/1.1 408") and "did not arrive" in answer
    assert len(received) == before


@pytest.mark.parametrize("start", [b"", b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n"])
def test_a_connection_that_sends_no_complete_request_is_closed(
    keyed: tuple[str, list[Any]], start: bytes
) -> None:
    url, _ = keyed
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(start)
        assert sock.recv(100) == b""  # closed by the server (bounded by the timeout above)
    # ... and after a complete response, the deadline starts again for the next request
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        response = b""
        while not response.endswith(b'{"status":"ok"}'):
            chunk = sock.recv(4096)
            assert chunk, response
            response += chunk
        assert response.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /heal")
        assert sock.recv(100) == b""
