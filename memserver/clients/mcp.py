"""A small MCP client for the memory server, shared by both agents (and the tests, the bench).

::

    async with open_http("http://127.0.0.1:8787/mcp", token) as memory:
        page = await memory.call("kb_get_page", {"id": "people/alice-smith"})

    async with open_stdio(kb_dir, token=token) as memory:   # spawns `memserver serve --stdio`
        ...

    async with connect(settings.mcp) as memory:             # URL, token and TLS from config
        ...

``call`` returns the tool's structured content and raises ``ToolCallError`` when the
result is an error: the server's message (which says how to fix the call), its ``kind``
(``ToolErrorKind``: act on it, never on the words) and a page's ``problems``. A refused
token raises ``ServerAuthError``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2

from memserver.errors import ConfigError, Problem, ServerAuthError, ToolCallError, ToolErrorKind

if TYPE_CHECKING:  # mcp takes over a second to import: the functions import it on use
    from mcp import Client
    from mcp_types import CallToolResult, Tool

    from memserver.clients.config import EndpointSettings

DEFAULT_TIMEOUT = 60.0


class _AuthWatch:
    """An httpx2 response hook remembering a 401/403 (the MCP transport hides the status)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.status: int | None = None

    async def __call__(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            self.status = response.status_code

    def error(self) -> ServerAuthError | None:
        if self.status is None:
            return None
        return ServerAuthError(
            f"the memory server at {self.where} refused the token (HTTP {self.status})",
            "the token is unknown, expired or revoked: check MEMORY_TOKEN, or create one "
            "with `memserver token create`",
        )


class MemoryClient:
    """An open MCP session with the memory server."""

    def __init__(self, client: Client, watch: _AuthWatch | None = None) -> None:
        self.client = client
        self._watch = watch

    def _refused(self, exc: BaseException) -> None:
        error = self._watch.error() if self._watch is not None else None
        if error is not None:
            raise error from exc

    async def list_tools(self) -> list[Tool]:
        """The tools this token may use (the server hides the others)."""
        from mcp.shared.exceptions import MCPError

        try:
            return list((await self.client.list_tools(cache_mode="refresh")).tools)
        except MCPError as exc:
            self._refused(exc)
            raise

    async def tool_names(self) -> list[str]:
        return [tool.name for tool in await self.list_tools()]

    async def call_result(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> CallToolResult:
        """The raw result, errors included (for callers that show errors to a model)."""
        from mcp.shared.exceptions import MCPError

        try:
            return await self.client.call_tool(name, dict(arguments or {}))
        except MCPError as exc:
            self._refused(exc)
            raise

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool and return its structured content; ToolCallError if it failed."""
        result = await self.call_result(name, arguments)
        if result.is_error:
            raise tool_call_error(name, result)
        if result.structured_content is not None:
            return dict(result.structured_content)
        return {"text": result_text(result)}


def tool_call_error(name: str, result: CallToolResult) -> ToolCallError:
    """The error of a failed call: the text a model reads, the kind and problems the
    server sent as structured content (``MemoryToolError.content``; ``UNKNOWN`` when it
    sent none)."""
    error = (result.structured_content or {}).get("error")
    details: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    problems = details.get("problems")
    listed = problems if isinstance(problems, list) else []
    return ToolCallError(
        name,
        result_text(result) or str(details.get("message") or "the tool reported an error"),
        ToolErrorKind.of(details.get("kind")),
        [Problem.from_dict(p) for p in listed if isinstance(p, Mapping)],
    )


def result_text(result: CallToolResult) -> str:
    """The text blocks of a result, joined (what a model would read)."""
    from mcp_types import TextContent

    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


@asynccontextmanager
async def _session(client: Client, watch: _AuthWatch | None = None) -> AsyncIterator[MemoryClient]:
    try:
        async with client:
            yield MemoryClient(client, watch)
    except Exception as exc:
        error = watch.error() if watch is not None else None
        if error is not None:
            raise error from exc
        raise


def http_timeout(timeout: float) -> httpx2.Timeout:
    """The HTTP timeouts under an MCP session whose requests time out after ``timeout``.

    A response is read for longer than the MCP request timeout, so a slow tool call ends
    as the session's own timeout (an ``MCPError`` the caller handles, the session still
    open), never as a read timeout inside the transport's task (which ends the session).
    """
    return httpx2.Timeout(timeout, read=max(2 * timeout, 300.0))


@asynccontextmanager
async def open_http(
    url: str,
    token: str,
    *,
    http_client: httpx2.AsyncClient | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> AsyncIterator[MemoryClient]:
    """A session over Streamable HTTP with ``Authorization: Bearer <token>``.

    Pass ``http_client`` to control TLS (it must already carry the Authorization header).
    """
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    if not token:
        raise ConfigError(
            "no memory server token", "set MEMORY_TOKEN (see `memserver token create`)"
        )
    own = http_client is None
    http = http_client or httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=http_timeout(timeout)
    )
    watch = _AuthWatch(url)
    http.event_hooks["response"] = [*http.event_hooks["response"], watch]
    try:
        client = Client(
            streamable_http_client(url, http_client=http),
            read_timeout_seconds=timeout,
            cache=None,
        )
        async with _session(client, watch) as memory:
            yield memory
    finally:
        if own:
            await http.aclose()


@asynccontextmanager
async def connect(endpoint: EndpointSettings) -> AsyncIterator[MemoryClient]:
    """A session from the ``mcp`` settings block: URL, token (from env) and TLS."""
    from memserver.clients.tls import async_http_client

    if not endpoint.base_url:
        raise ConfigError("no memory server URL", "set MEMORY_URL or mcp.url in config.yaml")
    token = endpoint.api_key or ""
    if not token:
        env = endpoint.options.get("token_env", "MEMORY_TOKEN")
        raise ConfigError("no memory server token", f"set {env} (see `memserver token create`)")
    http = async_http_client(
        endpoint,
        headers={"Authorization": f"Bearer {token}"},
        timeout=http_timeout(endpoint.timeout),
    )
    try:
        async with open_http(
            endpoint.base_url, token, http_client=http, timeout=endpoint.timeout
        ) as memory:
            yield memory
    finally:
        await http.aclose()


def server_command(kb_dir: Path | str, *, trusted: bool = False) -> list[str]:
    """The command that serves ``kb_dir`` over stdio with this interpreter."""
    args = [sys.executable, "-m", "memserver.cli", "--kb", str(kb_dir), "serve", "--stdio"]
    return [*args, "--trusted"] if trusted else args


@asynccontextmanager
async def open_stdio(
    kb_dir: Path | str,
    *,
    token: str | None = None,
    trusted: bool = False,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> AsyncIterator[MemoryClient]:
    """Spawn ``memserver --kb DIR serve --stdio`` (with MEMORY_TOKEN, or --trusted) and connect."""
    from mcp import Client, StdioServerParameters

    if not trusted and not token:
        raise ConfigError(
            "no memory server token for stdio",
            "set MEMORY_TOKEN, or use trusted=True for local admin use",
        )
    argv = list(command) if command is not None else server_command(kb_dir, trusted=trusted)
    child_env = {**os.environ, **(env or {})}
    if token:
        child_env["MEMORY_TOKEN"] = token
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env)
    client = Client(params, read_timeout_seconds=timeout, cache=None)
    async with _session(client) as memory:
        yield memory
