"""How the read agent reaches the memory server, and how agents are handed out.

Two ways to connect:

- over Streamable HTTP with ``MEMORY_URL`` + ``MEMORY_TOKEN`` (or the config ``mcp``
  block, which also carries TLS settings);
- with ``--kb DIR``: spawn ``memserver --kb DIR serve --stdio`` for local use, as the
  token in ``MEMORY_TOKEN`` when set, else ``--trusted``.

``AgentPool`` gives an agent per use. Over HTTP the sessions are kept open between
questions and lent one question at a time (``read_agent.mcp_sessions``; an agent with its
tool list and schema stays with its session; the MCP client starts its session again by
itself when the memory server restarted and no longer knows it). A stdio server is spawned once and shared, because starting it (and its database) per
question would be slow.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
from mcp.shared.exceptions import MCPError

from memserver.clients.config import Settings
from memserver.clients.llm import LLMClient
from memserver.clients.mcp import MemoryClient, connect, open_stdio
from memserver.errors import ConfigError, MemoryError_
from read_agent.agent import DEFAULT_MAX_STEPS, ReadAgent, ToolSupport
from read_agent.errors import MemoryUnavailableError
from read_agent.mcp_sessions import SessionPool
from read_agent.reading.fields import Embed

Connector = Callable[[], AbstractAsyncContextManager[MemoryClient]]


@dataclass(frozen=True)
class Target:
    """Where the memory server is: an MCP URL, or a knowledge base to serve over stdio."""

    connect: Connector
    shared: bool  # True: open once and share (stdio); False: one session per use
    description: str


def memory_target(
    settings: Settings, kb_dir: str | Path | None = None, config: str | None = None
) -> Target:
    """The memory server named by ``--kb``, else by MEMORY_URL/MEMORY_TOKEN or config."""
    if kb_dir is not None:
        kb = Path(kb_dir)
        if not (kb / "schema.yaml").is_file():
            raise ConfigError(
                f"no schema.yaml in {kb}", "pass --kb with a knowledge base directory"
            )
        token = settings.mcp.api_key
        env = {"MEMORY_CONFIG": str(Path(config).resolve())} if config else None

        def spawn() -> AbstractAsyncContextManager[MemoryClient]:
            return open_stdio(
                kb, token=token, trusted=not token, env=env, timeout=settings.mcp.timeout
            )

        who = "the token in MEMORY_TOKEN" if token else "--trusted"
        return Target(spawn, shared=True, description=f"stdio server for {kb} ({who})")
    if not settings.mcp.base_url:
        raise ConfigError(
            "no memory server to ask",
            "set MEMORY_URL and MEMORY_TOKEN (or the mcp block in config.yaml), "
            "or pass --kb DIR to serve a local knowledge base",
        )
    if not settings.mcp.api_key:
        env_name = settings.mcp.options.get("token_env", "MEMORY_TOKEN")
        raise ConfigError(
            f"no token for the memory server at {settings.mcp.base_url}",
            f"set {env_name} to a read token (`memserver token create --name reader ...`)",
        )

    def http() -> AbstractAsyncContextManager[MemoryClient]:
        return connect(settings.mcp)

    return Target(http, shared=False, description=settings.mcp.base_url)


def make_llm(settings: Settings, *, enabled: bool = True) -> LLMClient | None:
    """The chat model from settings (``LLM_BASE_URL``/``LLM_MODEL`` or config), or None."""
    if not enabled or settings.llm is None:
        return None
    # One model call, retries included, ends within llm.timeout: past it the answer is
    # written without the model instead of the question waiting on retries.
    return LLMClient(settings.llm, deadline=settings.llm.timeout)


class AgentPool:
    """Hands out ``ReadAgent``s over the target's MCP sessions (see the module docstring)."""

    def __init__(
        self,
        target: Target,
        llm: LLMClient | None,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
        budget_tokens: int | None = None,
        embed: Embed | None = None,
    ) -> None:
        self.target = target
        self.llm = llm
        self.max_steps = max_steps
        self.budget_tokens = budget_tokens
        self.embed = embed  # the reading's, when a question's words leave the field open
        self._shared: ReadAgent | None = None
        self._support = ToolSupport()  # what one session learns, every session knows
        self._stack: contextlib.AsyncExitStack | None = None
        self.sessions: SessionPool[ReadAgent] | None = None

    def _agent(self, memory: MemoryClient) -> ReadAgent:
        return ReadAgent(
            memory,
            self.llm,
            max_steps=self.max_steps,
            budget_tokens=self.budget_tokens,
            tool_support=self._support,
            embed=self.embed,
        )

    async def start(self) -> None:
        """Open the shared session (stdio), or check once that the server takes our token."""
        async with self.errors():
            if self.target.shared:
                self._stack = contextlib.AsyncExitStack()
                memory = await self._stack.enter_async_context(self.target.connect())
                self._shared = self._agent(memory)
                await self._shared.toolset()
            else:
                self.sessions = SessionPool(self.target.connect, self._agent)
                await self.sessions.start()
                try:
                    async with self.sessions.lease() as lease:  # kept for the first question
                        await lease.value.toolset()
                except BaseException:
                    await self.stop()  # the pool's task group is left in this task
                    raise

    def close(self) -> None:
        """Close the model client (after ``stop``; the pool is not used again)."""
        if self.llm is not None:
            self.llm.close()

    async def stop(self) -> None:
        if self._stack is not None:
            stack, self._stack, self._shared = self._stack, None, None
            await stack.aclose()
        if self.sessions is not None:
            sessions, self.sessions = self.sessions, None
            await sessions.stop()

    @contextlib.asynccontextmanager
    async def agent(self) -> AsyncIterator[ReadAgent]:
        """An agent for one question (or one chat session)."""
        async with self.errors():
            if self.target.shared:
                if self._shared is None:
                    raise RuntimeError("AgentPool.start() must run before agent() for stdio")
                yield self._shared
                return
            if self.sessions is None:
                raise RuntimeError("AgentPool.start() must run before agent()")
            async with self.sessions.lease() as lease:
                try:
                    yield lease.value
                finally:
                    if lease.value.broken:  # its connection closed: the next question opens anew
                        lease.discard()

    @contextlib.asynccontextmanager
    async def errors(self) -> AsyncIterator[None]:
        """Memory system errors out of exception groups; transport failures as one error."""
        try:
            yield
        except Exception as exc:
            inner = unwrap(exc)
            if isinstance(inner, MemoryError_):
                raise inner from exc
            if is_unavailable(exc):
                raise MemoryUnavailableError(
                    f"cannot reach the memory server ({self.target.description}): "
                    f"{type(inner).__name__}: {inner}",
                    "check that it is running and that MEMORY_URL (or --kb) points at it",
                ) from exc
            raise


def unwrap(exc: BaseException) -> BaseException:
    """The one exception inside nested single-member exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def is_unavailable(exc: BaseException) -> bool:
    """A transport failure talking to the memory server (also inside exception groups)."""
    if isinstance(exc, BaseExceptionGroup):
        return any(is_unavailable(e) for e in exc.exceptions)
    return isinstance(
        exc,
        OSError
        | httpx2.HTTPError
        | MCPError
        | anyio.BrokenResourceError
        | anyio.ClosedResourceError
        | anyio.EndOfStream,
    )


def env_api_key(name: str = "READ_AGENT_API_KEY") -> str | None:
    """The endpoint's own API key from the environment (None: no key required)."""
    value = os.environ.get(name, "").strip()
    return value or None
