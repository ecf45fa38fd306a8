"""The memory server's read tools as OpenAI function tools, and calling them for the model.

The tools come from MCP ``list_tools`` with the agent's token, so a narrower token
means fewer tools; only read-only tools are kept (a write token never lets the read
agent write). Each becomes an OpenAI function tool with the server's own description
and input schema.

``Toolset.run`` executes one call the model asked for and always returns text for the
model: the result as compact JSON, or the server's error message (so the model can fix
its call). A memory that cannot answer at all (its database does not answer, or the
session closed) is no message for the model: it is MemoryUnavailableError, which the
HTTP API answers with 503 ``memory_unavailable``. It also records the call and collects the pages the result contained
(``citations.pages_in``), which are the only pages an answer may cite.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, Tool

from memserver.clients.mcp import MemoryClient, result_text, tool_call_error
from memserver.errors import ToolErrorKind
from read_agent.errors import MemoryUnavailableError
from read_agent.tools.citations import CitedPage, merge_pages, pages_in

MAX_RESULT_CHARS = 16_000
MAX_DESCRIPTION_CHARS = 1_500


@dataclass(frozen=True)
class ToolRecord:
    """One tool call made while answering: for ``--json`` output and the bench."""

    name: str
    arguments: Mapping[str, Any]
    ok: bool
    error: str | None = None
    pages: tuple[str, ...] = ()  # page ids in the result
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "arguments": dict(self.arguments),
            "ok": self.ok,
            "error": self.error,
            "pages": list(self.pages),
            "ms": round(self.seconds * 1000, 1),
        }


@dataclass
class CallLog:
    """What one question's tool calls produced: records, pages seen, degraded reasons."""

    records: list[ToolRecord] = field(default_factory=list)
    pages: dict[str, CitedPage] = field(default_factory=dict)
    degraded: dict[str, None] = field(default_factory=dict)
    seconds: float = 0.0


def to_openai_tool(tool: Tool) -> dict[str, Any]:
    """An MCP tool as an OpenAI ``{"type": "function", "function": {...}}`` tool."""
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    description = (tool.description or tool.title or tool.name).strip()
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[:MAX_DESCRIPTION_CHARS].rsplit(" ", 1)[0] + " …"
    return {
        "type": "function",
        "function": {"name": tool.name, "description": description, "parameters": schema},
    }


def is_read_tool(tool: Tool) -> bool:
    """Read-only tools only: the server marks them with ``readOnlyHint``."""
    return bool(tool.annotations is not None and tool.annotations.read_only_hint)


class Toolset:
    """The read tools one token may call, bound to an open MCP session."""

    def __init__(self, memory: MemoryClient, tools: list[Tool]) -> None:
        self.memory = memory
        self.tools = {tool.name: tool for tool in tools if is_read_tool(tool)}
        # The session's connection closed under a call: every later call on it fails the
        # same way, so its owner must open a new one (read_agent.connection.AgentPool).
        self.broken = False

    @classmethod
    async def discover(cls, memory: MemoryClient) -> Toolset:
        return cls(memory, await memory.list_tools())

    @property
    def names(self) -> list[str]:
        return list(self.tools)

    def openai_tools(self) -> list[dict[str, Any]]:
        return [to_openai_tool(tool) for tool in self.tools.values()]

    def accepts(self, tool: str, argument: str) -> bool:
        schema = self.tools[tool].input_schema or {}
        return argument in (schema.get("properties") or {})

    def with_now(
        self, tool: str, arguments: Mapping[str, Any], now: dt.datetime | None
    ) -> dict[str, Any]:
        """``arguments`` plus the reference time, when the tool takes one and none was given."""
        out = dict(arguments)
        if now is not None and tool in self.tools and self.accepts(tool, "now"):
            out.setdefault("now", now.isoformat())
        return out

    async def call(
        self, name: str, arguments: Mapping[str, Any], log: CallLog
    ) -> tuple[bool, str, Any]:
        """Call a tool; returns (ok, text for the model, structured result or None)."""
        started = time.perf_counter()
        structured: Any = None
        if name not in self.tools:
            ok = False
            text = unknown_tool(name, list(self.tools))
        else:
            try:
                result = await self.memory.call_result(name, arguments)
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:  # no answer can come from this session
                    self.broken = True
                    raise MemoryUnavailableError(
                        f"the memory server closed the session during {name}: {exc}",
                        "check that the memory server is running; ask again",
                    ) from exc
                ok, text = False, f"{name} failed: {exc}"
            else:
                ok = not result.is_error
                structured = result.structured_content
                if not ok:
                    failure = tool_call_error(name, result)
                    if failure.kind is ToolErrorKind.UNAVAILABLE:  # nothing to answer from
                        raise MemoryUnavailableError(failure.message, failure.hint) from failure
                    text = result_text(result) or f"{name} reported an error"
                    structured = None
                elif structured is not None:
                    text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
                else:
                    text = result_text(result)
        elapsed = time.perf_counter() - started
        log.seconds += elapsed
        pages: list[CitedPage] = list(pages_in(structured)) if structured is not None else []
        merge_pages(log.pages, pages)
        if isinstance(structured, Mapping):
            for reason in structured.get("degraded") or ():
                log.degraded.setdefault(str(reason), None)
        log.records.append(
            ToolRecord(
                name=name,
                arguments=dict(arguments),
                ok=ok,
                error=None if ok else text,
                pages=tuple(dict.fromkeys(p.id for p in pages)),
                seconds=elapsed,
            )
        )
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + " … [truncated: ask for fewer results or one page]"
        return ok, text if ok else f"Error: {text}", structured


def unknown_tool(name: str, names: list[str]) -> str:
    """What a model that called a tool it does not have reads: what to call instead."""
    text = f"there is no tool {name!r}. The tools you can call are: {', '.join(names)}."
    if "kb_query" in names:
        text += ' For most questions call kb_query with {"question": "<the question>"}.'
    return text + " Or answer now from the results you already have."
