"""The Ask view over HTTP, against a real ``read-agent serve --no-llm`` process: the
answer with its citations as console links, a follow-up read with the conversation, the
reference time, and what the view says when it cannot ask. Also ``/ui`` without a
slash, and the raw note a citation opens."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from memserver.console.app import console_app
from memserver.console.guard import ConsoleGuard
from memserver.console.web import Console
from memserver.server.http_app import transport_security
from tests.fixtures.server import free_socket, serve_on
from tests.memserver.console.conftest import ConsoleServer, csrf_of

NOTE = "decisions/2026-07-15-pricing-per-seat"


def _exchanges(html: str) -> list[str]:
    """The Ask view's exchanges, oldest first, as HTML."""
    return html.split('<li class="exchange"')[1:]


def _ask(client: httpx2.Client, question: str, now: str = "") -> httpx2.Response:
    csrf = csrf_of(client.get("/ui/ask").text)
    return client.post("/ui/ask", data={"csrf": csrf, "question": question, "now": now})


def test_ui_without_a_slash_opens_the_console(console_server: ConsoleServer) -> None:
    with console_server.client() as client:
        response = client.get("/ui", follow_redirects=True)
    assert response.status_code == 200
    assert response.url.path == "/ui/login"
    assert 'id="login-form"' in response.text


def test_ask_answers_with_links_and_a_follow_up_reads_the_conversation(
    console_server: ConsoleServer, read_agent: str
) -> None:
    _, secret = console_server.token("*")
    with console_server.signed_in(secret) as client:
        asked = _ask(client, "Who is Bob Martinez?", now="2026-11-20")
        assert asked.status_code == 303, asked.text
        first = _exchanges(client.get("/ui/ask").text)
        assert len(first) == 1
        assert 'class="cite" href="/ui/page/people/bob-martinez"' in first[0]
        # the lines come as objects: each date apart, no "date · " left in the words
        assert '<p class="line bullet"><span class="date">20' in first[0]
        assert " · " not in first[0].split('<div class="answer">')[1].split("</div>")[0]
        assert 'class="citation" href="/ui/page/people/bob-martinez">Bob Martinez</a>' in first[0]
        assert "Degraded: no language model is configured" in first[0]
        assert "as of 2026-11-20" in first[0]
        # "he" is Bob only if the agent was sent the first exchange too.
        assert _ask(client, "Who does he report to?", now="2026-11-20").status_code == 303
        both = _exchanges(client.get("/ui/ask").text)
        assert len(both) == 2 and "Who does he report to?" in both[1]
        assert "Dana Whitfield" in both[1]
        assert "people/bob-martinez" in both[1]
        csrf = csrf_of(client.get("/ui/ask").text)
        assert client.post("/ui/ask/clear", data={"csrf": csrf}).status_code == 303
        cleared = client.get("/ui/ask").text
        assert _exchanges(cleared) == []
        assert 'id="now" value="2026-11-20"' in cleared  # the reference time stays


def test_the_ask_view_says_which_period_the_pages_cover_and_keeps_the_reference_time(
    console_server: ConsoleServer,
) -> None:
    _, secret = console_server.token("*")
    with console_server.signed_in(secret) as client:
        shown = client.get("/ui/ask").text
        period = re.search(r"dated <strong>(\S+) to (\S+)</strong>", shown)
        assert period is not None and period.group(1) < "2026-07-01" < "2026-11-15" < period.group(
            2
        )
        assert "today (the server's clock)" in shown
        csrf = csrf_of(shown)
        set_now = client.post("/ui/ask", data={"csrf": csrf, "now": period.group(2)})
        assert set_now.status_code == 303
        shown = client.get("/ui/ask").text
        assert f'id="now" value="{period.group(2)}"' in shown
        assert re.search(rf"which is\s+<strong>{period.group(2)}</strong>", shown)


def test_a_bad_reference_time_is_named_with_its_fix(console_server: ConsoleServer) -> None:
    _, secret = console_server.token("*")
    with console_server.signed_in(secret) as client:
        response = _ask(client, "What happened last week?", now="last tuesday")
    assert response.status_code == 400
    assert "the reference time &#39;last tuesday&#39; is not an ISO date" in response.text
    assert "2026-09-20" in response.text  # how to write it
    assert "What happened last week?" in response.text  # the question is not lost


def test_a_token_for_some_folders_is_told_why_it_cannot_ask(
    console_server: ConsoleServer,
) -> None:
    _, secret = console_server.token("people")
    with console_server.signed_in(secret) as client:
        response = _ask(client, "Who is Bob Martinez?")
    assert response.status_code == 200
    assert 'id="not-all-folders"' in response.text
    assert _exchanges(response.text) == []


@pytest.fixture
def console_without_agent(console_server: ConsoleServer) -> Iterator[str]:
    """A second console on the same memory server, given no read agent."""
    sock: socket.socket = free_socket()
    host, port = sock.getsockname()
    guarded = ConsoleGuard(
        console_app(Console(console_server.server)), transport_security(host, port)
    )

    async def healthz(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/healthz", healthz), Mount("/ui", app=guarded)])
    with serve_on(sock, app) as url:
        yield url


def test_without_a_read_agent_the_ask_view_says_how_to_start_one(
    console_server: ConsoleServer, console_without_agent: str
) -> None:
    _, secret = console_server.token("*")
    with httpx2.Client(base_url=console_without_agent, timeout=30.0) as client:
        login = client.get("/ui/login")
        client.post("/ui/login", data={"csrf": csrf_of(login.text), "token": secret})
        response = _ask(client, "Who is Bob Martinez?")
    assert response.status_code == 200
    assert "No read agent is connected to this console" in response.text
    assert "<code>memserver up</code> starts one" in response.text
    assert 'id="ask-button" disabled' in response.text


def test_a_cited_note_opens_redacted_and_only_for_tokens_with_sources(
    console_server: ConsoleServer,
) -> None:
    _, everything = console_server.token("*")
    with console_server.signed_in(everything) as client:
        note = client.get(f"/ui/note/{NOTE}")
        outside = client.get("/ui/note/..%2F..%2F..%2Fetc%2Fpasswd")
        page = client.get("/ui/page/people/bob-martinez")
        linked = re.search(r'href="(/ui/note/[^"]+)" class="note"', page.text)
        assert linked is not None  # a page's sources open as notes
        opened = client.get(linked.group(1))
    assert note.status_code == 200
    assert f"source/{NOTE}" in note.text and "2026-07-15" in note.text
    assert outside.status_code in (400, 404) and "root:" not in outside.text
    assert opened.status_code == 200 and 'id="note-path"' in opened.text
    _, pages_only = console_server.token("people,decisions")
    with console_server.signed_in(pages_only) as client:
        refused = client.get(f"/ui/note/{NOTE}")
    assert refused.status_code == 403 and "may not see the raw sources" in refused.text
