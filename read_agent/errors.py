"""Errors raised by the read agent (on top of ``memserver.errors``).

They are translated once, at the edge: to a one-line message and a non-zero exit in
the CLI, and to an OpenAI-shaped JSON error (``{"error": {"message", "type",
"code"}}``) on HTTP.

Hierarchy (``memserver.errors`` classes in brackets)::

    [MemoryError_]
    ├── [UserError]
    │   ├── BadRequestError        an HTTP body the endpoint cannot use (HTTP 400)
    │   └── [ServerAuthError]      the memory server refused our token (HTTP 502 here)
    ├── [ToolCallError]            a tool failed outside the model loop (HTTP 502)
    └── MemoryUnavailableError     the memory server cannot be reached, or its database
                                   does not answer (HTTP 503)

A missing or wrong API key, a foreign Host or Origin, a body too large or not JSON are
refused before any of this by ``memserver.web.guard.HttpGuard`` (401, 421, 403, 413,
415).

Inside the tool-calling loop a failing tool is never raised: its message goes back to
the model as the tool's result, so the model can correct the call; except a memory that
cannot answer at all (kind ``unavailable``, or a closed session), which is raised as
MemoryUnavailableError.
"""

from __future__ import annotations

from memserver.errors import MemoryError_, UserError


class BadRequestError(UserError):
    """A request body the endpoint cannot use; ``param`` names the offending field."""

    def __init__(self, message: str, hint: str = "", param: str | None = None) -> None:
        super().__init__(message, hint)
        self.param = param


class MemoryUnavailableError(MemoryError_):
    """The memory server could not be reached or dropped the session."""
