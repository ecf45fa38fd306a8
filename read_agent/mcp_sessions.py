"""MCP sessions over HTTP kept open between questions, and lent one question at a time.

Opening a session per question cost more than answering it: the MCP handshake, the tool
listing, ``kb_schema``, and the SDK compiling every tool's output-schema validator anew
(each ``ClientSession`` keeps its own), about 0.3 s of the read agent's CPU per
question. A session here is opened once and lent to one question at a time; an idle one
is kept for ``MAX_IDLE_SECONDS`` (well inside the memory server's own idle expiry, and
so a changed schema is seen within that time), at most ``MAX_IDLE`` of them.

The MCP client's task group must be entered and left in one task, so each session lives
in a keeper task of the pool's own task group (opened by ``start``, closed by ``stop``,
both from the same task: the app's lifespan or the CLI's main). A session that failed
is closed, never lent again; the caller decides whether to retry on a fresh one.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

import anyio
from anyio.abc import TaskGroup, TaskStatus

from memserver.clients.mcp import MemoryClient

logger = logging.getLogger(__name__)

MAX_IDLE: Final = 4
MAX_IDLE_SECONDS: Final = 120.0

T = TypeVar("T")


@dataclass
class Lease(Generic[T]):
    """One open session and what the owner built on it (e.g. an agent with its caches)."""

    memory: MemoryClient
    value: T
    fresh: bool = True  # not lent before: a failure on it is not a stale session's
    _closed: anyio.Event = field(default_factory=anyio.Event)
    _idle_since: float = 0.0
    _broken: bool = False

    def close(self) -> None:
        self._closed.set()

    def discard(self) -> None:
        """Never lend this session again (it failed); closed when its use ends."""
        self._broken = True


class SessionPool(Generic[T]):
    """Lends sessions from ``connect``; ``build`` makes the owner's value for a new one."""

    def __init__(
        self,
        connect: Callable[[], AbstractAsyncContextManager[MemoryClient]],
        build: Callable[[MemoryClient], T],
        *,
        max_idle: int = MAX_IDLE,
        max_idle_seconds: float = MAX_IDLE_SECONDS,
    ) -> None:
        self._connect = connect
        self._build = build
        self.max_idle = max_idle
        self.max_idle_seconds = max_idle_seconds
        self._idle: list[Lease[T]] = []
        self._group: TaskGroup | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self.opened = 0  # sessions opened so far (for tests and logs)

    @property
    def running(self) -> bool:
        return self._group is not None

    async def start(self) -> None:
        stack = contextlib.AsyncExitStack()
        self._group = await stack.enter_async_context(anyio.create_task_group())
        self._stack = stack

    async def stop(self) -> None:
        """Close every session (idle or lent) and wait for their keepers to finish."""
        stack, self._stack, group, self._group = self._stack, None, self._group, None
        idle, self._idle = self._idle, []
        for lease in idle:
            lease.close()
        if group is not None:
            group.cancel_scope.cancel()  # lent ones too: their keepers stop now
        if stack is not None:
            await stack.aclose()

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[Lease[T]]:
        """A session for one use; it goes back to the pool unless the use raised."""
        lease = self._take() or await self._open()
        try:
            yield lease
        except BaseException:
            lease._broken = True
            raise
        finally:
            self._give_back(lease)

    def _take(self) -> Lease[T] | None:
        now = time.monotonic()
        while self._idle:
            lease = self._idle.pop()  # newest first: the oldest ones age out
            if now - lease._idle_since <= self.max_idle_seconds:
                lease.fresh = False
                return lease
            lease.close()
        return None

    def _give_back(self, lease: Lease[T]) -> None:
        if lease._broken or self._group is None or len(self._idle) >= self.max_idle:
            lease.close()
            return
        lease._idle_since = time.monotonic()
        self._idle.append(lease)

    async def _open(self) -> Lease[T]:
        if self._group is None:
            raise RuntimeError("SessionPool.start() must run before lease()")
        lease: Lease[T] = await self._group.start(self._keep)
        self.opened += 1
        return lease

    async def _keep(self, *, task_status: TaskStatus[Any]) -> None:
        """Open a session, hand it over, and keep it until its lease is closed. An error
        before the hand-over goes to the caller of ``_open``; one after it (the session
        broke while lent or idle) is logged here, so it never ends the pool's task group."""
        handed = False
        try:
            async with self._connect() as memory:
                lease = Lease(memory, self._build(memory))
                handed = True
                task_status.started(lease)
                await lease._closed.wait()
        except Exception as exc:
            if not handed:
                raise
            logger.debug("an MCP session closed with %s: %s", type(exc).__name__, exc)
