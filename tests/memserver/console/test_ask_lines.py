"""The Ask view renders what the read agent sent: an extractive answer's lead and lines
as objects (each date apart, citations as links, every field escaped), never its text
parsed back; a model's answer as its paragraphs with the citations listed as links.

A stand-in read agent answers the console with canned chat completions, so the view is
shown exactly the objects a test chose (the real agent is tested in ``test_ask``)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route

from memserver.console.agent_link import ReadAgentLink
from memserver.console.app import console_app
from memserver.console.guard import ConsoleGuard
from memserver.console.web import Console
from memserver.server.http_app import transport_security
from tests.fixtures.server import free_socket, serve_on
from tests.memserver.console.conftest import ConsoleServer, csrf_of

HOSTILE = "<script>alert(1)</script>"
LINES = {
    "lead": {
        "text": "Bob Martinez — reports to: Dana Whitfield",
        "date": "2026-09-21",
        "cited": ["people/bob-martinez"],
    },
    "lines": [
        {
            "text": f"Bob said {HOSTILE} at the review.",
            "date": "2026-09-21",
            "said_on": "2026-09-22",
            "label": "direct",
            "source": "source/meetings/review.md",
            "author": "Alex Kim",
            "cited": ["people/bob-martinez"],
        },
        {"text": "Karen Lee — role: CFO", "label": "inferred", "cited": ["people/not-cited"]},
        {
            "text": "Reports to Dana Whitfield: ",
            "parts": [{"text": "Bob Martinez ", "cited": "people/bob-martinez"}],
        },
        "not a line",
    ],
    "window": "2026-09-01 and 2026-09-30",
    "notes": ["notes are still being ingested."],
}
CITATIONS = [
    {"id": "people/bob-martinez", "title": "Bob Martinez", "date": None},
    {"id": "source/meetings/review.md", "title": "Review notes", "date": "2026-09-22"},
]
MODEL_TEXT = "Bob reports to Dana [people/bob-martinez].\n\nShe leads <b>operations</b>."


def _completion(text: str, mode: str, lines: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "memory",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "memory": {"citations": CITATIONS, "mode": mode, "degraded": [], **lines},
    }


@pytest.fixture
def console_with_stand_in(console_server: ConsoleServer) -> Iterator[str]:
    """A console on the same memory server whose read agent answers "model" questions
    as a model would, any other extractively with ``LINES``."""

    async def completions(request: Request) -> JSONResponse:
        asked = (await request.json())["messages"][-1]["content"]
        if "model" in asked:
            # the message ends with a sources list for chat UIs; the text without it is
            # in the memory extension, which the view shows (it parses neither)
            listed = MODEL_TEXT + "\n\nSources:\n- [people/bob-martinez] Bob Martinez"
            shown: dict[str, Any] = {"lead": None, "lines": [], "answer": MODEL_TEXT}
            return JSONResponse(_completion(listed, "agent", shown))
        # the text says something else: the view must show the objects, not parse it
        return JSONResponse(_completion("2026-01-01 · [people/karen-lee]", "extractive", LINES))

    async def healthz(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    agent_sock: socket.socket = free_socket()
    agent = Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/v1/chat/completions", completions, methods=["POST"]),
        ]
    )
    sock: socket.socket = free_socket()
    host, port = sock.getsockname()
    with serve_on(agent_sock, agent) as agent_url:
        console = Console(console_server.server, read_agent=ReadAgentLink(agent_url))
        guarded = ConsoleGuard(console_app(console), transport_security(host, port))
        app = Starlette(routes=[Route("/healthz", healthz), Mount("/ui", app=guarded)])
        with serve_on(sock, app) as url:
            yield url


def _asked(console_server: ConsoleServer, url: str, question: str) -> tuple[str, str]:
    """The Ask view's latest exchange and its answer, as HTML."""
    _, secret = console_server.token("*")
    with httpx2.Client(base_url=url, timeout=30.0) as client:
        login = client.get("/ui/login")
        client.post("/ui/login", data={"csrf": csrf_of(login.text), "token": secret})
        csrf = csrf_of(client.get("/ui/ask").text)
        asked = client.post("/ui/ask", data={"csrf": csrf, "question": question})
        assert asked.status_code == 303, asked.text
        shown = client.get("/ui/ask").text
    exchange = shown.split('id="latest"')[1].split("</li>\n</ol>")[0]
    return exchange, exchange.split('<div class="answer">')[1].split("</div>")[0]


def test_an_extractive_answer_is_rendered_from_its_objects(
    console_server: ConsoleServer, console_with_stand_in: str
) -> None:
    _, answer = _asked(console_server, console_with_stand_in, "Who does Bob report to?")
    bob = '<a class="cite" href="/ui/page/people/bob-martinez" title="Bob Martinez">'
    lead, quoted, inferred, listed = answer.split('<p class="line')[1:]
    assert lead.startswith('"><span class="date">2026-09-21</span> Bob Martinez — reports to')
    assert f"{bob}[people/bob-martinez]</a></p>" in lead
    assert '<span class="said">(said on 2026-09-22)</span>' in quoted
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in quoted and HOSTILE not in answer
    note = '<a class="cite" href="/ui/note/meetings/review.md" title="Review notes">'
    assert f"(direct: {note}[source/meetings/review.md]</a>, by Alex Kim)" in quoted
    assert "[people/not-cited]</p>" in inferred and "/ui/page/people/not-cited" not in answer
    assert f"Reports to Dana Whitfield: Bob Martinez {bob}" in listed
    assert 'Dates: <span class="date">2026-09-01 and 2026-09-30</span>' in answer
    assert "Note: notes are still being ingested." in answer
    assert "karen-lee" not in answer and "2026-01-01" not in answer  # the text is not read


def test_a_model_answer_is_its_paragraphs_and_its_citations_links(
    console_server: ConsoleServer, console_with_stand_in: str
) -> None:
    exchange, answer = _asked(console_server, console_with_stand_in, "Ask the model who Bob is")
    assert answer.count('<p class="paragraph">') == 2 and 'class="line' not in answer
    assert "Sources:" not in answer
    assert "Bob reports to Dana [people/bob-martinez].</p>" in answer  # words, not a link
    assert "She leads &lt;b&gt;operations&lt;/b&gt;." in answer
    listed = '<a class="citation" href="/ui/page/people/bob-martinez">Bob Martinez</a>'
    assert listed in exchange and "written by the model" in exchange
