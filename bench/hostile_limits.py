"""The limits issue's (44) attacks on what one client shares with others, for
``bench_hostile``: item 2 (a scoped write that used to drop hidden lines) and item 6
(the server's sessions, the console's sign-in limit). One line each.

- **§2**: a company page names five decisions on one day from one note (five lines that
  read ``Decision [redacted]`` to a ``companies`` token), three open questions about
  them and the same reference four times in a section; the ``companies`` writer reads it
  and writes it back with one field changed, as data and as markdown, ten times:
  every hidden original is counted after each write.
- **§6 sessions**: 32 tokens open 64 MCP sessions each (the issue filled the server's
  2,000 so); then a new token and an admin token open one.
- **§6 sign-in**: the owner signs in once in a browser; then 20 wrong sign-ins from
  loopback, five of them starting like the owner's token; then the owner's browser,
  a new browser with the owner's token, and the owner's browser with another token.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2

from bench.common import create_token
from memserver.clients.mcp import MemoryClient, open_http
from tests.fixtures.hostile import MCP_HEADERS, MCP_INITIALIZE

Timed = Callable[[int, str, Callable[[], Awaitable[str]]], None]
ITEM = 44


def _cli(kb: Path) -> list[str]:
    import sys

    config = kb.parent / "config.yaml"
    return [sys.executable, "-m", "memserver.cli", "--kb", str(kb), "--config", str(config)]


def run_limit_attacks(url: str, kb: Path, writer: str, timeout: float, timed: Timed) -> None:
    tag = uuid.uuid4().hex[:6]
    command = _cli(kb)

    async def session(secret: str, body: Callable[[MemoryClient], Awaitable[Any]]) -> Any:
        async with open_http(f"{url}/mcp", secret, timeout=timeout) as memory:
            return await body(memory)

    # §2: hidden lines through a scoped round trip
    company = f"companies/hidden-lines-{tag}"
    mentions: list[str] = []

    async def seed(memory: MemoryClient) -> None:
        for n in range(5):
            decision: dict[str, Any] = {
                "title": f"Hidden choice {n} {tag}",
                "fields": {"date": f"2026-07-1{n}", "status": "accepted"},
                "sections": {"Decision": f"Chosen {n}."},
            }
            written = await memory.call("kb_put_page", {"folder": "decisions", "page": decision})
            mentions.append(f"Decision “Hidden choice {n} {tag}” ({written['id']})")
        page: dict[str, Any] = {
            "title": f"Hidden Lines {tag}",
            "fields": {"status": "customer"},
            "sections": {"Summary": "A customer. " + " See ".join(mentions[:2] * 2) + "."},
            "timeline": [
                {"date": "2026-11-03", "text": m, "source": "notes/sync.md"} for m in mentions
            ],
            "open_questions": [f"Is {m} still current?" for m in mentions[:3]],
        }
        assert (await memory.call("kb_put_page", {"folder": "companies", "page": page}))[
            "id"
        ] == company

    anyio.run(session, writer, seed)
    scoped = create_token(command, f"bench-companies-{tag}", "companies", write=True)

    async def stored_text() -> str:
        page = await session(writer, lambda m: m.call("kb_get_page", {"id": company}))
        return str(page["markdown"])

    async def round_trips(memory: MemoryClient) -> str:
        before = await stored_text()
        counts = {m: before.count(m) for m in mentions}  # each hidden original, how often
        lost = 0
        for n in range(10):
            view = await memory.call("kb_get_page", {"id": company})
            if n % 2:
                markdown = view["markdown"].replace(
                    f"status: {view['fields']['status']}",
                    f"status: {('customer', 'churned')[n % 4 == 1]}",
                )
                args = {"id": company, "markdown": markdown}
            else:
                page = {
                    k: view[k]
                    for k in ("title", "sources", "sections", "timeline", "open_questions")
                }
                page["fields"] = {**view["fields"], "status": ("customer", "prospect")[n % 4 == 0]}
                args = {"id": company, "page": page}
            await memory.call("kb_put_page", {**args, "base_version": view["version"]})
            text = await stored_text()
            lost += sum(max(0, k - text.count(m)) for m, k in counts.items())
        shown = sorted({e["text"] for e in view["timeline"]})
        total = sum(counts.values())
        return f"10 round trips of {total} hidden references: {lost} lost; read as {shown[:2]} ..."

    timed(
        ITEM, "§2 companies writer: 5 identical hidden lines", lambda: session(scoped, round_trips)
    )

    # §6: sessions
    flooders = [create_token(command, f"bench-sessions-{tag}-{n}", "people") for n in range(32)]
    newcomer = create_token(command, f"bench-newcomer-{tag}", "people")

    async def sessions() -> str:
        opened: list[tuple[str, str]] = []
        codes: dict[int, int] = {}
        async with httpx2.AsyncClient(base_url=url, timeout=30) as client:

            async def initialize(secret: str) -> int:
                answer = await client.post(
                    "/mcp",
                    json=MCP_INITIALIZE,
                    headers={**MCP_HEADERS, "Authorization": f"Bearer {secret}"},
                )
                if answer.status_code == 200:
                    opened.append((secret, answer.headers["mcp-session-id"]))
                return answer.status_code

            for secret in flooders:
                for _ in range(64):
                    code = await initialize(secret)
                    codes[code] = codes.get(code, 0) + 1
            new, admin = await initialize(newcomer), await initialize(writer)
            for secret, sid in opened:
                await client.delete(
                    "/mcp", headers={"Authorization": f"Bearer {secret}", "mcp-session-id": sid}
                )
        shown = ", ".join(f"{n}x HTTP {c}" for c, n in sorted(codes.items()))
        return f"32 tokens x 64: {shown}; then a new token HTTP {new}, an admin token HTTP {admin}"

    timed(ITEM, "§6 32 tokens x 64 MCP sessions", sessions)

    # §6: the console's sign-in limit, one client against all
    owner = create_token(command, f"bench-owner-{tag}", "people")
    other = create_token(command, f"bench-other-{tag}", "people")

    async def sign_in(client: httpx2.AsyncClient, secret: str) -> int:
        form = await client.get("/ui/login")
        nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
        data = {"csrf": nonce.group(1) if nonce else "", "token": secret}
        return (await client.post("/ui/login", data=data)).status_code

    async def throttle() -> str:
        async with httpx2.AsyncClient(base_url=url, timeout=30) as browser:
            first = await sign_in(browser, owner)
            page = await browser.get("/ui/")
            nonce = re.search(r'name="csrf" value="([^"]+)"', page.text)
            await browser.post("/ui/logout", data={"csrf": nonce.group(1) if nonce else ""})
            wrong: dict[int, int] = {}
            for n in range(20):
                secret = f"{owner[:11]}wrong{n}" if n < 5 else f"ms_flood{n}-{tag}"
                async with httpx2.AsyncClient(base_url=url, timeout=30) as flood:
                    code = await sign_in(flood, secret)
                wrong[code] = wrong.get(code, 0) + 1
            async with httpx2.AsyncClient(base_url=url, timeout=30) as fresh:
                new_browser = await sign_in(fresh, owner)
            again = await sign_in(browser, owner)
            guessed = await sign_in(browser, other)
        shown = ", ".join(f"{n}x {c}" for c, n in sorted(wrong.items()))
        return (
            f"owner {first}; 20 wrong ({shown}); then the owner's browser {again}, "
            f"a new browser with the owner's token {new_browser}, the owner's browser "
            f"with another token {guessed}"
        )

    timed(ITEM, "§6 console: one client's 20 wrong sign-ins", throttle)


__all__ = ["run_limit_attacks"]
