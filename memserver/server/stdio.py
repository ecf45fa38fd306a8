"""The memory server over stdin/stdout, stoppable by a signal."""

from __future__ import annotations

import os
import select
import signal
import stat
import sys
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
from mcp.server.stdio import stdio_server

from memserver.server.mcp_server import MemoryServer


class _StdinLines:
    """Lines from a pipe, read without a worker thread so that a signal can cancel the wait.

    The SDK reads stdin in a thread that cannot be cancelled, which would keep a stopped
    server alive until its client closes the pipe.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        pending = b""
        while True:
            await anyio.wait_readable(self.fd)
            chunk = os.read(self.fd, 65536)
            if not chunk:
                if pending:
                    yield pending.decode("utf-8", errors="replace")
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                yield line.decode("utf-8", errors="replace") + "\n"


def _pollable(fd: int) -> bool:
    """Pipes, sockets and terminals can be waited on; regular files and some devices
    (``/dev/null``) cannot: epoll refuses them, so ask epoll itself where there is one."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return False
    if not hasattr(select, "epoll"):
        return True
    poller = select.epoll()
    try:
        poller.register(fd, select.EPOLLIN)
    except OSError:
        return False
    finally:
        poller.close()
    return True


async def serve_stdio(server: MemoryServer) -> None:
    """Serve over stdin/stdout until EOF, SIGINT or SIGTERM; then close the services."""
    try:
        async with anyio.create_task_group() as tg:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(stop_on_signal)
            fd = sys.stdin.fileno()
            stdin = _StdinLines(fd) if _pollable(fd) else None
            async with stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream):
                lowlevel = server._lowlevel_server
                await lowlevel.run(
                    read_stream, write_stream, lowlevel.create_initialization_options()
                )
            tg.cancel_scope.cancel()
    finally:
        await anyio.to_thread.run_sync(server.close)
        await anyio.to_thread.run_sync(server.services.close)
