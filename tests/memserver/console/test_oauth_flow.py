"""OAuth 2.1 for a remote MCP client, end to end: the ``mcp`` SDK's own OAuth client
against the live console server, the consent given in the headless browser.

metadata -> dynamic registration -> /authorize -> sign-in and consent in the browser ->
code -> token -> tool calls inside the granted folders, refused outside them -> the
grant in the console's tokens view -> refresh (rotating both tokens) -> revoke at one
server, refused at once by a second server on the same database. Every secret the flow
made is then looked for in the server's logs and the audit rows: none may be there.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from selenium.webdriver.common.by import By

from memserver.clients.embed import HashEmbedder
from memserver.kb.layout import KBPaths
from memserver.server.audit import AuditLog
from memserver.server.tokens import TokenStore
from memserver.server.tools.base import Services
from memserver.store.knowledge_base import KnowledgeBase
from tests.fixtures.server import serve_memory
from tests.memserver.console.browser import WAIT, Browser
from tests.memserver.console.conftest import ConsoleServer, csrf_of

CLIENT_NAME = "Test Assistant"
# Loggers of the client side of this test (its own requests and the SDK client's debug
# lines): the server's logs are everything else.
CLIENT_LOGGERS = ("mcp.client", "httpx", "httpcore", "selenium", "urllib3", "asyncio")


class MemoryTokens:
    """The SDK client's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None
        self.seen: list[OAuthToken] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.seen.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@contextlib.contextmanager
def callback_server() -> Iterator[tuple[str, queue.Queue[dict[str, str]]]]:
    """The client's redirect URI: a loopback page that hands its query to the test."""
    got: queue.Queue[dict[str, str]] = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            got.put({k: v[0] for k, v in query.items()})
            body = b"<!doctype html><title>Signed in</title><p id=done>You can close this.</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the test reads the query instead."""

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/callback", got
    finally:
        server.shutdown()
        server.server_close()
        thread.join(WAIT)


def consent_in_browser(browser: Browser, url: str, secret: str, keep: set[str]) -> None:
    """What the person does: opens the link, signs in, keeps ``keep``, approves (read only)."""
    browser.sign_out()
    browser.driver.get(url)
    browser.find("#login-form")  # not signed in: the sign-in page first, then back
    browser.find("#token").send_keys(secret)
    browser.submit("#login-form")
    assert browser.text("#client-name") == CLIENT_NAME
    for box in browser.all("input[name=folder]"):
        if (box.get_attribute("value") in keep) != box.is_selected():
            box.click()
    assert not browser.find("#consent-write").is_selected()
    browser.screenshot("oauth-consent")
    browser.follow("#approve")
    browser.wait(lambda d: d.find_elements(By.ID, "done"))
    assert browser.errors() == []


@pytest.fixture
def server_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every log record of this test, uvicorn's access lines included."""
    caplog.set_level(logging.DEBUG)
    access = [logging.getLogger(n) for n in ("uvicorn.access", "uvicorn.error")]
    levels = [logger.level for logger in access]
    for logger in access:
        logger.setLevel(logging.INFO)
        logger.addHandler(caplog.handler)
    try:
        yield caplog
    finally:
        for logger, level in zip(access, levels, strict=True):
            logger.removeHandler(caplog.handler)
            logger.setLevel(level)


@contextlib.contextmanager
def second_server(console_server: ConsoleServer) -> Iterator[str]:
    """Another memory server on the same database (its own pool and knowledge base)."""
    url = console_server.kb().db.url
    kb = KnowledgeBase.open(console_server.kb_dir, embedder=HashEmbedder(), database_url=url)
    services = Services(paths=KBPaths.of(console_server.kb_dir), kb_opener=lambda: kb)
    tokens = TokenStore(kb.db)
    with serve_memory(services, tokens, AuditLog(kb.db)) as (base_url, _):
        yield f"{base_url}/mcp"


def status_with(url: str, access_token: str) -> int:
    """The HTTP status of an MCP request (initialize) made with this access token."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    headers = {
        "Authorization": f"Bearer {access_token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    return httpx2.post(url, json=body, headers=headers, timeout=WAIT).status_code


def test_a_remote_client_signs_in_with_oauth_and_stays_inside_what_was_granted(
    console_server: ConsoleServer, browser: Browser, server_logs: pytest.LogCaptureFixture
) -> None:
    base = console_server.base_url
    mcp_url = f"{base}/mcp"
    # the metadata a client starts from (RFC 9728, RFC 8414)
    refused = httpx2.post(mcp_url, json={}, timeout=WAIT)
    assert refused.status_code == 401
    resource_meta = f"{base}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{resource_meta}"' in refused.headers["www-authenticate"]
    prm = httpx2.get(resource_meta, timeout=WAIT).json()
    assert prm["resource"] == mcp_url and prm["authorization_servers"] == [base]
    asm = httpx2.get(f"{base}/.well-known/oauth-authorization-server", timeout=WAIT).json()
    assert asm["issuer"] == base and asm["code_challenge_methods_supported"] == ["S256"]
    assert {"authorization_code", "refresh_token"} <= set(asm["grant_types_supported"])
    assert asm["registration_endpoint"] == f"{base}/register"
    assert asm["revocation_endpoint"] == f"{base}/revoke"

    person, person_secret = console_server.token("people,meetings,decisions", write=True)
    storage = MemoryTokens()
    codes: list[str] = []
    with callback_server() as (callback_url, got):

        async def redirect(url: str) -> None:
            keep = {"people", "meetings"}
            await anyio.to_thread.run_sync(consent_in_browser, browser, url, person_secret, keep)

        async def callback() -> AuthorizationCodeResult:
            query = await anyio.to_thread.run_sync(lambda: got.get(timeout=WAIT))
            codes.append(query["code"])
            return AuthorizationCodeResult(code=query["code"], state=query.get("state"))

        oauth = OAuthClientProvider(
            server_url=mcp_url,
            client_metadata=OAuthClientMetadata(
                client_name=CLIENT_NAME,
                redirect_uris=[callback_url],  # type: ignore[list-item]
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="client_secret_post",
            ),
            storage=storage,
            redirect_handler=redirect,
            callback_handler=callback,
        )

        async def session() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            with anyio.fail_after(120):
                async with (
                    httpx2.AsyncClient(auth=oauth, timeout=WAIT) as http,
                    Client(streamable_http_client(mcp_url, http_client=http)) as client,
                ):
                    seen["tools"] = {t.name for t in (await client.list_tools()).tools}
                    people = await client.call_tool("kb_list_pages", {"folder": "people"})
                    seen["people"] = people.structured_content
                    hidden = await client.call_tool("kb_list_pages", {"folder": "decisions"})
                    seen["hidden"] = (hidden.is_error, hidden.structured_content)
                    write = await client.call_tool("kb_put_page", {"folder": "people", "page": {}})
                    seen["write"] = (write.is_error, write.structured_content)
                    first = storage.tokens
                    assert first is not None
                    oauth.context.token_expiry_time = time.time() - 1  # the hour has passed
                    again = await client.call_tool("kb_list_pages", {"folder": "meetings"})
                    seen["after_refresh"] = again.structured_content
                    seen["first"] = first
            return seen

        seen = anyio.run(session)

    # registration: a public client (PKCE, no secret kept anywhere)
    registered = storage.client
    assert registered is not None and registered.client_name == CLIENT_NAME
    assert registered.token_endpoint_auth_method == "none" and registered.client_secret is None
    # the token: ours, read only, for the two folders chosen
    first: OAuthToken = seen["first"]
    assert first.access_token.startswith("ms_") and first.refresh_token
    assert first.scope == "read"
    grant = console_server.tokens.verify(first.access_token) or console_server.tokens.get(
        next(t.name for t in console_server.tokens.list() if t.client == CLIENT_NAME)
    )
    assert grant.client == CLIENT_NAME and grant.folders == ("meetings", "people")
    assert not grant.write and grant.name.startswith("oauth-test-assistant-")
    # tool calls: inside the grant, and refused outside it
    assert "kb_put_page" not in seen["tools"] and "kb_list_pages" in seen["tools"]
    listed = seen["people"]["pages"]
    assert listed and all(p["id"].startswith("people/") for p in listed)
    assert seen["hidden"][0] and seen["hidden"][1]["error"]["kind"] == "not_found"
    assert seen["write"][0] and seen["write"][1]["error"]["kind"] == "scope"
    # refresh: both tokens rotated, the old access token refused at once
    second = storage.tokens
    assert second is not None and len(storage.seen) == 2
    assert second.access_token != first.access_token
    assert second.refresh_token != first.refresh_token
    assert seen["after_refresh"]["total"] >= 0
    assert status_with(mcp_url, first.access_token) == 401
    assert status_with(mcp_url, second.access_token) == 200
    # the grant in the console's tokens view, with the client's name
    _, admin = console_server.token("*", write=True, name="admin")
    with console_server.signed_in(admin) as client:
        listed = client.get("/ui/tokens").text
    assert (
        f'data-name="{grant.name}"' in listed and f'<td class="client">{CLIENT_NAME}</td>' in listed
    )
    # revoke (RFC 7009) at this server: refused at once here and at a second server
    assert registered.client_id is not None
    with second_server(console_server) as other:
        assert status_with(other, second.access_token) == 200
        revoked = httpx2.post(
            f"{base}/revoke",
            # (the SDK's revocation form wants the field, empty for a public client)
            data={
                "token": second.access_token,
                "client_id": registered.client_id,
                "client_secret": "",
            },
            timeout=WAIT,
        )
        assert revoked.status_code == 200
        assert status_with(other, second.access_token) == 401
    assert status_with(mcp_url, second.access_token) == 401
    assert console_server.tokens.get(grant.name).status() == "revoked"
    stale = httpx2.post(
        f"{base}/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": second.refresh_token,
            "client_id": registered.client_id,
        },
        timeout=WAIT,
    )
    assert stale.status_code == 400 and stale.json()["error"] == "invalid_grant"

    # no secret in the server's logs or in any audit row
    secrets = {
        first.access_token,
        second.access_token,
        first.refresh_token,
        second.refresh_token,
        *codes,
        person_secret,
        admin,
    }
    assert len(secrets) == 7 and all(secrets) and len(codes) == 1
    logged = "\n".join(
        f"{r.getMessage()} {r.args!r}"
        for r in server_logs.records
        if not r.name.startswith(CLIENT_LOGGERS)
    )
    assert "POST /token" in logged  # the access lines were captured
    assert not [s for s in secrets if s and s in logged]
    with console_server.kb().db.connection() as conn:
        rows = conn.execute("SELECT audit_log::text FROM audit_log").fetchall()
    audited = "\n".join(r[0] for r in rows)
    assert grant.name in audited and "oauth.token" in audited and "oauth.refresh" in audited
    assert "console.oauth.approve" in audited and person in audited  # who consented
    assert not [s for s in secrets if s and s in audited]


def test_the_consent_page_offers_only_the_signed_in_persons_folders(
    console_server: ConsoleServer,
) -> None:
    """Without a browser: a people-only reader cannot grant decisions or write access, and
    a denied request sends the client access_denied."""
    base = console_server.base_url
    registered = httpx2.post(
        f"{base}/register",
        json={"client_name": "Scoped App", "redirect_uris": ["http://127.0.0.1:9/cb"]},
        timeout=WAIT,
    ).json()
    assert registered["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in registered

    def authorize(state: str) -> str:
        answer = httpx2.get(
            f"{base}/authorize",
            params={
                "response_type": "code",
                "client_id": registered["client_id"],
                "redirect_uri": "http://127.0.0.1:9/cb",
                "code_challenge": "x" * 43,
                "code_challenge_method": "S256",
                "state": state,
                "scope": "read write",
            },
            timeout=WAIT,
        )
        assert answer.status_code == 302
        consent = answer.headers["location"]
        assert consent.startswith(f"{base}/ui/oauth/consent?request=")
        return consent.removeprefix(base)

    _, reader = console_server.token("people", name="reader")
    with console_server.client() as anonymous:
        path = authorize("s1")
        bounced = anonymous.get(path)
        assert bounced.status_code == 303 and bounced.headers["location"].startswith("/ui/login?")
        assert "next=%2Fui%2Foauth%2Fconsent" in bounced.headers["location"]
    with console_server.signed_in(reader) as client:
        page = client.get(path)
        assert page.status_code == 200 and "Scoped App" in page.text
        assert 'value="people"' in page.text and 'value="decisions"' not in page.text
        assert 'id="consent-write"' not in page.text  # a read token cannot grant writing
        assert "form-action 'self' http://127.0.0.1:9" in page.headers["content-security-policy"]
        form = {"csrf": csrf_of(page.text), "request": path.split("=", 1)[1], "decision": "approve"}
        widened = client.post("/ui/oauth/consent", data={**form, "folder": "decisions"})
        assert widened.status_code == 403
        writing = client.post("/ui/oauth/consent", data={**form, "folder": "people", "write": "1"})
        assert writing.status_code == 403
        denied = client.post("/ui/oauth/consent", data={**form, "decision": "deny"})
        assert denied.status_code == 303
        assert denied.headers["location"].startswith("http://127.0.0.1:9/cb?error=access_denied")
        assert "state=s1" in denied.headers["location"]
        gone = client.post("/ui/oauth/consent", data={**form, "folder": "people"})
        assert gone.status_code == 404  # answered once: the request is spent
        forged = client.post(
            "/ui/oauth/consent",
            data={**form, "csrf": "forged", "request": authorize("s2").split("=", 1)[1]},
        )
        assert forged.status_code == 403
    assert not [t for t in console_server.tokens.list() if t.client == "Scoped App"]
