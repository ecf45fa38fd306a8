"""PostgreSQL stops under a running memory server, then comes back.

The knowledge base runs on its own embedded PostgreSQL (not the session's), which the
test stops and starts. While it is down every call fails at once with a ToolError that
says so, /healthz says so; the first call after it is back succeeds.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest

from memserver.clients.mcp import MemoryClient, open_http
from memserver.db.database import Database
from memserver.errors import ToolCallError
from tests.fixtures.own_database import frozen_postgres, serve_on_own_database, stop_postgres

TIMEOUT = 60


@pytest.fixture
def own_database(pg_scratch: Path) -> Iterator[tuple[str, str, Database]]:
    """(base URL, read token, the token store's Database) of a server on its own PostgreSQL."""
    with serve_on_own_database(pg_scratch) as own:
        secret = own.tokens.create("outage-reader", "*").secret
        yield own.base_url, secret, own.db


def test_calls_fail_fast_while_the_database_is_down_and_work_when_it_is_back(
    own_database: tuple[str, str, Database], caplog: pytest.LogCaptureFixture
) -> None:
    base_url, secret, db = own_database
    caplog.set_level(logging.WARNING)

    async def body(memory: MemoryClient) -> tuple[list[str], dict[str, object]]:
        await memory.call("kb_list_pages", {"limit": 1})
        stop_postgres(db)
        errors = []
        for _ in range(3):
            with pytest.raises(ToolCallError) as caught:
                await memory.call("kb_list_pages", {"limit": 1})
            errors.append(caught.value.server_message)
        down = httpx2.get(f"{base_url}/healthz", timeout=30)
        assert down.status_code == 503 and "database unavailable" in down.json()["database"]
        assert db.server is not None
        await anyio.to_thread.run_sync(db.server.restart)
        back = await memory.call("kb_list_pages", {"limit": 1})  # the very first call after
        return errors, back

    async def main() -> tuple[list[str], dict[str, object]]:
        with anyio.fail_after(TIMEOUT):
            async with open_http(f"{base_url}/mcp", secret) as memory:
                return await body(memory)

    errors, back = anyio.run(main)
    for message in errors:
        assert message.startswith("database unavailable, retrying"), message
    assert back["total"] == 0
    assert httpx2.get(f"{base_url}/healthz", timeout=30).json()["database"] == "ok"
    # the server's log says it in one line per call, no traceback (an outage is expected)
    failed = [m for r in caplog.records if "tool kb_list_pages failed" in (m := r.getMessage())]
    assert len(failed) == 3 and all("database unavailable" in m for m in failed), failed
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []


def test_a_frozen_database_is_answered_at_once_and_found_again(
    own_database: tuple[str, str, Database],
) -> None:
    """PostgreSQL stopped by SIGSTOP keeps its sockets open and answers nothing: the
    calls waiting on it are cut once a new connection finds it silent, and later calls
    fail at once (the bench measures how fast: under 5 s)."""
    base_url, secret, db = own_database

    async def body() -> tuple[list[int], list[str], dict[str, object]]:
        async with open_http(f"{base_url}/mcp", secret, timeout=TIMEOUT) as memory:
            await memory.call("kb_list_pages", {"limit": 1})  # the token is known
            statuses, errors = [], []
            with frozen_postgres(db):
                async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
                    for _ in range(2):
                        statuses.append((await http.get(f"{base_url}/healthz")).status_code)
                        with pytest.raises(ToolCallError) as caught:
                            await memory.call("kb_list_pages", {"limit": 1})
                        errors.append(caught.value.server_message)
            while True:  # back within the test's bound once resumed
                try:
                    return statuses, errors, await memory.call("kb_list_pages", {"limit": 1})
                except ToolCallError:
                    await anyio.sleep(0.1)

    async def main() -> tuple[list[int], list[str], dict[str, object]]:
        with anyio.fail_after(TIMEOUT):
            return await body()

    statuses, errors, back = anyio.run(main)
    assert statuses == [503, 503]
    assert errors and all(m.startswith("database unavailable, retrying") for m in errors)
    assert back["total"] == 0
