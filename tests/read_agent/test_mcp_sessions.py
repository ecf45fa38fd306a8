"""The read agent keeps its MCP sessions between questions over HTTP, lends each to one
question at a time, and gets past a memory server that restarted under it."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import anyio
import pytest

from memserver.clients.config import EndpointSettings
from memserver.clients.mcp import connect
from memserver.server.http_app import create_http_app
from memserver.server.mcp_server import build_server
from read_agent.agent import Answer
from read_agent.connection import AgentPool, Target
from read_agent.mcp_sessions import SessionPool
from tests.fixtures.server import RunningServer, free_socket, serve_on
from tests.read_agent.conftest import Seeded


class Restartable:
    """A memory server for ``mcp_server``'s knowledge base on one fixed port, which can be
    stopped and started again (a new server: it knows none of the old sessions)."""

    def __init__(self, mcp_server: RunningServer) -> None:
        self.source = mcp_server.server
        sock = free_socket()
        self.host, self.port = sock.getsockname()[:2]
        sock.close()
        self.url = f"http://{self.host}:{self.port}"
        self._running: contextlib.ExitStack | None = None

    def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        server = build_server(
            self.source.services,
            tokens=self.source.tokens,
            audit=self.source.audit,
            public_url=self.url,
        )
        stack = contextlib.ExitStack()
        stack.enter_context(serve_on(sock, create_http_app(server, host=self.host, port=self.port)))
        self._running = stack

    def stop(self) -> None:
        if self._running is not None:
            running, self._running = self._running, None
            running.close()

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def restartable(mcp_server: RunningServer) -> Iterator[Restartable]:
    server = Restartable(mcp_server)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _pool(url: str, secret: str) -> AgentPool:
    endpoint = EndpointSettings(name="mcp", base_url=f"{url}/mcp", api_key=secret, timeout=20)
    return AgentPool(Target(lambda: connect(endpoint), False, url), None)


async def ask(pool: AgentPool, text: str) -> Answer:
    async with pool.agent() as agent:
        return await agent.ask(text)


def question(seeded: Seeded) -> str:
    return f"What was decided at the {seeded.meeting_title}?"


def test_questions_share_a_kept_session_and_concurrent_ones_get_their_own(
    restartable: Restartable, mcp_server: RunningServer, seeded: Seeded
) -> None:
    secret = mcp_server.token("people,meetings", name="kept")[1]
    pool = _pool(restartable.url, secret)

    async def main() -> tuple[list[Answer], int, int]:
        await pool.start()
        try:
            assert pool.sessions is not None
            answers = [await ask(pool, question(seeded)) for _ in range(3)]
            one_by_one = pool.sessions.opened
            held = anyio.Event()
            entered = 0

            async def hold() -> None:
                nonlocal entered
                async with pool.agent():
                    entered += 1
                    if entered == 3:
                        held.set()
                    await held.wait()  # all three lent at once

            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    for _ in range(3):
                        group.start_soon(hold)
            return answers, one_by_one, pool.sessions.opened
        finally:
            await pool.stop()

    answers, one_by_one, together = anyio.run(main)
    assert answers and all(seeded.meeting in {c.id for c in a.citations} for a in answers), answers
    assert one_by_one == 1  # start's check and three questions: one session
    assert together == 3  # three at once: the kept one and two more


def test_a_kept_session_outlives_a_restart_of_the_memory_server(
    restartable: Restartable, mcp_server: RunningServer, seeded: Seeded
) -> None:
    secret = mcp_server.token("people,meetings", name="restart")[1]
    pool = _pool(restartable.url, secret)

    async def main() -> tuple[Answer, Answer, int, int]:
        await pool.start()
        try:
            assert pool.sessions is not None
            with anyio.fail_after(120):
                before = await ask(pool, question(seeded))
                opened = pool.sessions.opened
                await anyio.to_thread.run_sync(restartable.restart)
                after = await ask(pool, question(seeded))
            return before, after, opened, pool.sessions.opened
        finally:
            await pool.stop()

    before, after, opened, reopened = anyio.run(main)
    assert seeded.meeting in {c.id for c in before.citations}
    assert seeded.meeting in {c.id for c in after.citations}, after.text
    assert opened == 1
    assert reopened <= 2  # the MCP client starts its session again (or we open one)


def test_an_idle_session_past_its_age_is_closed_not_lent(
    restartable: Restartable, mcp_server: RunningServer
) -> None:
    secret = mcp_server.token("people", name="aged")[1]
    endpoint = EndpointSettings(
        name="mcp", base_url=f"{restartable.url}/mcp", api_key=secret, timeout=20
    )
    pool: SessionPool[int] = SessionPool(
        lambda: connect(endpoint), lambda memory: 0, max_idle_seconds=0.0
    )

    async def main() -> tuple[bool, bool, int]:
        await pool.start()
        try:
            async with pool.lease() as first:
                await first.memory.list_tools()
            async with pool.lease() as second:  # the first is older than 0 s by now
                await second.memory.list_tools()
            return first.fresh, second.fresh, pool.opened
        finally:
            await pool.stop()

    assert anyio.run(main) == (True, True, 2)
