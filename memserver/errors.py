"""Errors raised by the memory server and its library.

Every error carries what went wrong and how to fix it. They are translated once, at
the edge: to ``ToolError`` for a model calling an MCP tool, to an OpenAI-style JSON
error on HTTP, and to one line on stderr plus a non-zero exit in the CLI.

Hierarchy::

    MemoryError_                  base of everything below ("memory system error")
    ├── UserError                 the caller can fix it; the CLI prints one line, no traceback
    │   ├── ConfigError           a bad config.yaml key, env var, CA file, ...
    │   ├── SchemaError           schema.yaml problems (all of them, in .problems)
    │   ├── PageValidationError   a page that does not fit its folder (all problems)
    │   ├── ManifestError         manifest.json corrupt or unreadable
    │   ├── NotFoundError         no such page / source / token (or out of scope)
    │   ├── VersionConflictError  a write based on a stale version
    │   ├── ScopeError            the token may not do this
    │   └── EmbeddingModelChanged the index was built with another embedding model
    ├── StoreError                the database failed (start, connection, extension)
    │   └── DatabaseUnavailable   PostgreSQL does not answer right now (the server retries)
    ├── EmbeddingError            an embedder failed (the write path degrades, see store/page_writes.py)
    ├── LLMError                  an OpenAI-compatible endpoint failed (names the endpoint)
    │   ├── BudgetExceeded        the per-run token budget is spent
    │   ├── LLMTimeout            a model call passed its deadline (retries included)
    │   └── LLMUnusable           the answer is not what was asked (no JSON, not the schema)
    └── ToolCallError             an MCP tool call came back as an error (.kind, .problems)

A tool error crosses MCP with its kind (``ToolErrorKind``) in the result's structured
content, so a client decides what to do by the kind, never by the message's words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class Problem:
    """One problem found while validating a schema or a page.

    ``location`` is a path such as ``folders[2].fields[0].type`` or ``fields.role``;
    ``line`` is the YAML/markdown line when known; ``fix`` says what to write instead.
    """

    location: str
    message: str
    fix: str = ""
    line: int | None = None

    def __str__(self) -> str:
        where = self.location + (f" (line {self.line})" if self.line is not None else "")
        text = f"{where}: {self.message}"
        return f"{text}; {self.fix}" if self.fix else text

    def as_dict(self) -> dict[str, object]:
        return {
            "location": self.location,
            "message": self.message,
            "fix": self.fix,
            "line": self.line,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Problem:
        """The problem ``as_dict`` gave (what a tool error carries over MCP)."""
        line = data.get("line")
        return cls(
            location=str(data.get("location") or ""),
            message=str(data.get("message") or ""),
            fix=str(data.get("fix") or ""),
            line=line if isinstance(line, int) else None,
        )


class MemoryError_(Exception):
    """Base of all memory system errors: ``message`` plus an optional ``hint``."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UserError(MemoryError_):
    """A mistake the caller can fix; shown as one line, never a traceback."""


class ConfigError(UserError):
    """A bad configuration value; the message names the key or variable."""


class _ProblemsError(UserError):
    """An error that lists every problem at once, so the caller can fix all in one go."""

    what = "problems"

    def __init__(self, problems: Iterable[Problem], source: str = "") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.source = source
        head = f"{source}: " if source else ""
        count = len(self.problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{head}{count} {self.what}{'s' if count != 1 else ''}:\n{lines}")

    def problem_dicts(self) -> list[dict[str, object]]:
        return [p.as_dict() for p in self.problems]


class SchemaError(_ProblemsError):
    """schema.yaml does not describe a valid knowledge base."""

    what = "schema problem"


class PageValidationError(_ProblemsError):
    """A page does not fit its folder's fields and sections."""

    what = "page problem"


class ManifestError(UserError):
    """manifest.json cannot be read; it is never overwritten silently."""


class NotFoundError(UserError):
    """No such page, source or token, or it is outside the caller's scope."""


class VersionConflictError(UserError):
    """A write based on a version that is no longer current."""

    def __init__(self, page_id: str, base_version: int | None, current_version: int) -> None:
        self.page_id = page_id
        self.base_version = base_version
        self.current_version = current_version
        super().__init__(
            f"version conflict on {page_id}: the write is based on version {base_version}, "
            f"but the current version is {current_version}",
            "re-read the page, merge your change into it, and put again with "
            f"base_version={current_version}",
        )


class ScopeError(UserError):
    """The token does not allow this call."""


class EmbeddingModelChanged(UserError):
    """The index was built with a different embedding model or dimension."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(
            f"embedding model changed from {old} to {new}",
            "run `memserver reindex --force` to rebuild the index with the new model",
        )


class StoreError(MemoryError_):
    """The database failed: could not start, connect, or lacks an extension."""


class DatabaseUnavailable(StoreError):
    """PostgreSQL does not answer right now; the server keeps retrying on every call."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(
            f"database unavailable, retrying: PostgreSQL at {where} does not answer ({detail})",
            "try again in a few seconds; if it lasts, check that PostgreSQL is running",
        )


class EmbeddingError(MemoryError_):
    """An embedder failed to produce vectors."""


class LLMError(MemoryError_):
    """An OpenAI-compatible endpoint failed; the message names the endpoint."""


class BudgetExceeded(LLMError):
    """The run's token budget is spent; the run stops cleanly."""


class LLMTimeout(LLMError):
    """A model call passed its deadline; the caller falls back (rules, lexical, extractive)."""


class LLMUnusable(LLMError):
    """The model answered, but not with what was asked (no JSON object, not the schema)."""


def format_problems(problems: Sequence[Problem]) -> str:
    """Render problems as an indented list, one per line (for CLI and tool errors)."""
    return "\n".join(f"  - {p}" for p in problems)


class LayaError(MemoryError_):
    """The laya sidecar failed or refused a request; routing falls back to the next stage."""


class ToolErrorKind(StrEnum):
    """What kind of failure a memory server tool reports: the server sends it with every
    tool error (``{"error": {"kind", "message", "problems"}}`` in the structured content)
    and clients act on it. The message is for people and models and may be reworded."""

    VALIDATION = "validation"  # the page does not fit its folder; ``problems`` lists all
    CONFLICT = "conflict"  # a write based on a stale version: re-read, merge, retry
    NOT_FOUND = "not_found"  # no such page, source or folder (or out of scope)
    SCOPE = "scope"  # the token may not do this
    ARGUMENTS = "arguments"  # the call's arguments are wrong (missing, unknown, out of range)
    INVALID = "invalid"  # any other mistake the caller can fix
    UNKNOWN_TOOL = "unknown_tool"  # no such tool for this token
    UNAVAILABLE = "unavailable"  # the server's database does not answer now: try again later
    SETUP = "setup"  # the server is set up wrong (e.g. the embedding model changed): every
    # call fails the same way until its operator fixes it; a client stops, it marks nothing
    BACKEND = "backend"  # a model, embedder or other backend failed: try again later
    SERVER = "server"  # the server failed handling the call
    INTERNAL = "internal"  # a bug in the server; its log says more
    UNKNOWN = "unknown"  # the server did not say (an older server, or a local failure)

    @classmethod
    def of(cls, value: object) -> ToolErrorKind:
        """The kind named by ``value``; ``UNKNOWN`` for anything else."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.UNKNOWN


class ToolCallError(MemoryError_):
    """An MCP tool call came back as an error; ``tool`` names it, the text is the server's.

    ``kind`` says what failed (``ToolErrorKind``); ``problems`` are the page problems the
    server listed for a ``validation`` error (empty otherwise).
    """

    def __init__(
        self,
        tool: str,
        message: str,
        kind: ToolErrorKind = ToolErrorKind.UNKNOWN,
        problems: Sequence[Problem] = (),
    ) -> None:
        super().__init__(f"{tool} failed: {message}")
        self.tool = tool
        self.server_message = message
        self.kind = kind
        self.problems: tuple[Problem, ...] = tuple(problems)


class ServerAuthError(UserError):
    """The memory server refused the token (HTTP 401): unknown, expired or revoked."""


class ServiceError(MemoryError_):
    """A service started by ``memserver up`` stopped, or did not become healthy in time."""
