"""The memory server over stdio (``memserver serve --stdio``), and clean shutdowns.

Every server process gets ``DATABASE_URL`` (a fresh database from ``database_url``):
tokens and the audit log live there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from memserver.clients.mcp import MemoryClient, open_stdio, server_command
from memserver.db.database import Database
from memserver.errors import ToolCallError
from memserver.server.audit import AuditLog
from memserver.server.tokens import TokenStore
from tests.fixtures.server import copy_example_kb, free_socket, wait_ready

TIMEOUT = 60


@pytest.fixture
def kb_dir(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DATABASE_URL", database_url)  # inherited by the server processes
    return copy_example_kb(tmp_path / "kb")


def run_stdio(kb: Path, body: Callable[[MemoryClient], Awaitable[Any]], **kwargs: Any) -> Any:
    async def main() -> Any:
        with anyio.fail_after(TIMEOUT):
            async with open_stdio(kb, **kwargs) as memory:
                return await body(memory)

    return anyio.run(main)


def test_stdio_token_sees_its_scope_and_is_audited(kb_dir: Path, database: Database) -> None:
    secret = TokenStore(database).create("stdio-reader", "people").secret

    async def body(memory: MemoryClient) -> tuple[list[str], dict[str, Any]]:
        return await memory.tool_names(), await memory.call("kb_schema")

    names, schema = run_stdio(kb_dir, body, token=secret)
    assert {"kb_schema", "kb_get_page", "kb_list_pages", "kb_history"} <= set(names)
    assert not {"kb_put_page", "source_pending", "source_read", "source_mark"} & set(names)
    assert [f["name"] for f in schema["folders"]] == ["people"]
    (entry,) = AuditLog(database).query()
    assert (entry.token, entry.tool, entry.outcome) == ("stdio-reader", "kb_schema", "ok")


def test_stdio_session_stops_working_when_its_token_is_revoked(
    kb_dir: Path, database: Database
) -> None:
    store = TokenStore(database)
    secret = store.create("stdio-revoked", "*").secret

    async def body(memory: MemoryClient) -> tuple[list[str], str]:
        await memory.call("kb_schema")
        store.revoke("stdio-revoked")
        with pytest.raises(ToolCallError) as info:
            await memory.call("kb_schema")
        return await memory.tool_names(), info.value.server_message

    names, message = run_stdio(kb_dir, body, token=secret)
    assert names == [] and "revoked" in message


def test_stdio_session_of_a_revoked_token_does_not_inherit_a_reused_name(
    kb_dir: Path, database: Database
) -> None:
    store = TokenStore(database)
    secret = store.create("stdio-reused", "people").secret

    async def body(memory: MemoryClient) -> tuple[list[str], str]:
        await memory.call("kb_schema")
        store.revoke("stdio-reused")
        store.create("stdio-reused", "*", write=True)  # same name, wider rights
        with pytest.raises(ToolCallError) as info:
            await memory.call("kb_schema")
        return await memory.tool_names(), info.value.server_message

    names, message = run_stdio(kb_dir, body, token=secret)
    assert names == [] and "revoked" in message


def test_stdio_trusted_has_every_tool_and_runs_the_pipeline(kb_dir: Path) -> None:
    async def body(memory: MemoryClient) -> tuple[list[str], dict[str, Any]]:
        return await memory.tool_names(), await memory.call("source_pending", {"limit": 3})

    names, pending = run_stdio(kb_dir, body, trusted=True)
    assert {"kb_put_page", "source_pending", "source_mark", "kb_get_page"} <= set(names)
    assert pending["total"] == 28 and len(pending["sources"]) == 3


def _serve(kb: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "memserver.cli", "--kb", str(kb), "serve", *extra]
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize("secret", ["", "ms_not-a-real-token"])
def test_stdio_without_a_valid_token_exits_with_a_clear_error(kb_dir: Path, secret: str) -> None:
    with _serve(kb_dir, "--stdio", env={"MEMORY_TOKEN": secret}) as proc:
        _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 2
    assert "MEMORY_TOKEN" in err and "--trusted" in err


def test_stdio_server_stops_cleanly_on_sigterm(kb_dir: Path) -> None:
    with _serve(kb_dir, "--stdio", "--trusted") as proc:
        assert proc.stdin is not None and proc.stdout is not None
        # one answered request proves it is serving before we signal it
        proc.stdin.write(
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            '"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}\n'
        )
        proc.stdin.flush()
        assert '"id":1' in proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=TIMEOUT) == 0


def test_http_server_stops_cleanly_on_sigterm(kb_dir: Path) -> None:
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()
    with _serve(kb_dir, "--addr", f"127.0.0.1:{port}") as proc:
        try:
            wait_ready(f"http://127.0.0.1:{port}", timeout=TIMEOUT)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=TIMEOUT) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_server_command_runs_this_interpreter(kb_dir: Path) -> None:
    argv = server_command(kb_dir, trusted=True)
    assert argv[0] == sys.executable and argv[-2:] == ["--stdio", "--trusted"]


@pytest.mark.parametrize("stdin", ["devnull", "empty pipe", "regular file"])
def test_end_of_input_exits_0_without_a_traceback(kb_dir: Path, tmp_path: Path, stdin: str) -> None:
    """``serve --stdio < /dev/null`` (epoll refuses /dev/null) used to crash with an
    ExceptionGroup traceback; every kind of finished input now ends the server cleanly."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with empty.open("rb") as file:
        kinds: dict[str, dict[str, Any]] = {
            "devnull": {"stdin": subprocess.DEVNULL},
            "empty pipe": {"input": ""},
            "regular file": {"stdin": file},
        }
        given = kinds[stdin]
        result = subprocess.run(
            server_command(kb_dir, trusted=True),
            capture_output=True,
            text=True,
            timeout=60,
            **given,
        )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "ExceptionGroup" not in result.stderr
