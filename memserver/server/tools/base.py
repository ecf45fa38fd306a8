"""What a tool sees while it runs, and the helpers every tool module shares.

A tool module (``memserver/server/tools/<group>.py``) defines its tools as top-level
functions marked ``@tool(access=..., title=...)``; ``register(host, module)`` adds a
module's tools to the server (``MemoryServer.memory_tool``), in the order they are
defined, each function's docstring its description and its signature its input schema.
Inside a tool body, ``current()`` gives the caller's ``Scope`` and the ``Services``
(paths, schema, manifest, knowledge base); ``calling(CallContext(...))`` makes a caller
current, so a tool function can also be called directly. Raise memory system errors
(``NotFoundError``, ``PageValidationError`` ...) freely: the server translates them
into a ``ToolError`` the model can act on, and records the outcome in the audit log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar, Unpack

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from memserver.errors import (
    ConfigError,
    DatabaseUnavailable,
    EmbeddingError,
    EmbeddingModelChanged,
    LLMError,
    MemoryError_,
    NotFoundError,
    PageValidationError,
    Problem,
    ScopeError,
    ToolErrorKind,
    UserError,
    VersionConflictError,
)
from memserver.kb.layout import KBPaths
from memserver.server.ingest_progress import IngestProgress
from memserver.server.scope import Scope
from memserver.server.source_indexing import SourceIndexer

if TYPE_CHECKING:
    from memserver.clients.config import Settings
    from memserver.kb.manifest import Manifest
    from memserver.kb.schema import Schema
    from memserver.store.knowledge_base import KnowledgeBase


class Access(StrEnum):
    """Who may see and call a tool."""

    READ = "read"  # any token; results filtered to its folders
    WRITE = "write"  # tokens created with --write
    PIPELINE = "pipeline"  # --write tokens that include 'source' (or '*')

    def allows(self, scope: Scope) -> bool:
        if self is Access.READ:
            return True
        if self is Access.WRITE:
            return scope.write
        return scope.can_use_pipeline

    def require(self, scope: Scope, tool: str) -> None:
        if self.allows(scope):
            return
        if self is Access.WRITE:
            raise ScopeError(
                f"tool {tool} writes, and token {scope.token_name!r} is read-only",
                "use a token created with --write",
            )
        raise ScopeError(
            f"tool {tool} is a source pipeline tool, and token {scope.token_name!r} "
            "lacks 'source' or write access",
            "use a token created with --folders including 'source' (or '*') and --write",
        )


_F = TypeVar("_F", bound=Callable[..., Any])


class ToolOptions(TypedDict, total=False):
    """How a tool is annotated beyond its access and title."""

    destructive: bool  # a write that removes or replaces (default False)
    idempotent: bool  # calling it twice does what calling it once does (reads always are)
    aliases: Mapping[str, str]  # tool-specific argument aliases beyond COMMON_ALIASES


class ToolHost(Protocol):
    """What ``register`` needs of the server: the decorator that adds a tool
    (``MemoryServer.memory_tool``). Typed here so the tool modules need not import the
    server that imports them."""

    def memory_tool(
        self, *, access: Access, title: str, **options: Unpack[ToolOptions]
    ) -> Callable[[_F], _F]: ...


@dataclass(frozen=True)
class ToolDef:
    """A tool function and how it is registered (``@tool``)."""

    fn: Callable[..., Any]
    access: Access
    title: str
    options: ToolOptions

    @property
    def name(self) -> str:
        return self.fn.__name__


# module name -> tool name -> definition, in the order the module defines them
_tools: dict[str, dict[str, ToolDef]] = {}


def tool(*, access: Access, title: str, **options: Unpack[ToolOptions]) -> Callable[[_F], _F]:
    """Mark a top-level function as a tool of its module (see the module docstring);
    the function itself is returned unchanged."""

    def decorator(fn: _F) -> _F:
        _tools.setdefault(fn.__module__, {})[fn.__name__] = ToolDef(fn, access, title, options)
        return fn

    return decorator


def tools_of(module: str) -> list[ToolDef]:
    """The tools ``module`` (its ``__name__``) defines, in order."""
    return list(_tools.get(module, {}).values())


def register(host: ToolHost, module: str) -> None:
    """Add the tools of ``module`` to ``host``."""
    for definition in tools_of(module):
        host.memory_tool(access=definition.access, title=definition.title, **definition.options)(
            definition.fn
        )


# Upper bounds of numeric arguments (PostgreSQL integer and bigint limits are far above;
# anything past these is a mistake, refused with the range rather than failing in SQL).
MAX_OFFSET = 10_000_000
MAX_VERSION = 2**31 - 1

# Argument names models commonly use instead of ours, mapped to ours. A tool gets an
# alias only when it has the target parameter and not the alias itself.
COMMON_ALIASES: Mapping[str, str] = {
    "page_id": "id",
    "page": "id",
    "path": "id",
    "page_path": "id",
    "slug_id": "id",
    "folder_name": "folder",
    "collection": "folder",
    "source": "path",
    "source_path": "path",
    "file": "path",
    "filename": "path",
    "expected_version": "base_version",
    "parent_version": "base_version",
    "max_results": "limit",
    "top_k": "limit",
    "k": "limit",
    "page_size": "limit",
    "skip": "offset",
    "q": "query",
    "question": "query",
    "text": "query",
    "start_date": "start",
    "from": "start",
    "since": "start",
    "end_date": "end",
    "to": "end",
    "until": "end",
}


class MemoryToolError(ToolError):
    """A tool failure the caller can act on.

    ``kind`` goes into the audit outcome and to the client (``error_result``), with the
    ``problems`` of a page that does not fit its folder.
    """

    def __init__(
        self,
        message: str,
        kind: ToolErrorKind = ToolErrorKind.INVALID,
        problems: Sequence[Problem] = (),
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.problems: tuple[Problem, ...] = tuple(problems)

    def reworded(self, message: str, problems: Sequence[Problem] | None = None) -> MemoryToolError:
        """The same error (kind, problems unless given) said with ``message``."""
        return MemoryToolError(message, self.kind, self.problems if problems is None else problems)

    def content(self) -> dict[str, Any]:
        """What the client reads: ``{"error": {"kind", "message", "problems"}}``."""
        return {
            "error": {
                "kind": str(self.kind),
                "message": str(self),
                "problems": [p.as_dict() for p in self.problems],
            }
        }


def error_result(error: MemoryToolError) -> CallToolResult:
    """A tool error as MCP sends it: the message as text for a model to read, and its
    kind (and problems) as structured content for a program to act on."""
    return CallToolResult(
        content=[TextContent(type="text", text=str(error))],
        structured_content=error.content(),
        is_error=True,
    )


def to_tool_error(exc: BaseException) -> MemoryToolError:
    """Translate a memory system error into the message a model should read."""
    if isinstance(exc, MemoryToolError):
        return exc
    if isinstance(exc, PageValidationError):
        return MemoryToolError(
            f"{exc}\nFix every problem listed above and send the whole page again "
            "(same base_version).",
            ToolErrorKind.VALIDATION,
            exc.problems,
        )
    if isinstance(exc, VersionConflictError):
        return MemoryToolError(str(exc), ToolErrorKind.CONFLICT)
    if isinstance(exc, NotFoundError):
        return MemoryToolError(str(exc), ToolErrorKind.NOT_FOUND)
    if isinstance(exc, ScopeError):
        return MemoryToolError(str(exc), ToolErrorKind.SCOPE)
    if isinstance(exc, EmbeddingModelChanged | ConfigError):
        return MemoryToolError(str(exc), ToolErrorKind.SETUP)  # the server's, not the call's
    if isinstance(exc, UserError):
        return MemoryToolError(str(exc), ToolErrorKind.INVALID)
    if isinstance(exc, DatabaseUnavailable):
        return MemoryToolError(str(exc), ToolErrorKind.UNAVAILABLE)
    if isinstance(exc, LLMError | EmbeddingError):
        return MemoryToolError(f"{exc} (a backend failed; try again later)", ToolErrorKind.BACKEND)
    if isinstance(exc, MemoryError_):
        return MemoryToolError(
            "the memory server failed while handling this call; try again later",
            ToolErrorKind.SERVER,
        )
    return MemoryToolError(
        "internal error in the memory server; see its log", ToolErrorKind.INTERNAL
    )


@dataclass
class Services:
    """Everything tools reach, opened lazily so a server without pages still serves sources.

    ``kb_opener`` builds the knowledge base service (PostgreSQL, embedder) on first use,
    which then embeds new texts in the background (``start_background_embedding``);
    ``settings`` are the server's (tools that call an LLM, reranker or laya use them);
    ``pipeline_lock`` serialises manifest writes from concurrent pipeline calls;
    ``ingest`` follows the ingest agent's run through the pipeline tools; ``sources``
    keeps the source index in line with each scan (large notes in the background).
    """

    paths: KBPaths
    kb_opener: Callable[[], KnowledgeBase] | None = None
    settings: Settings | None = None  # what the server runs with (LLM, rerank, laya ...)
    pipeline_lock: threading.Lock = field(default_factory=threading.Lock)
    ingest: IngestProgress = field(default_factory=IngestProgress)
    sources: SourceIndexer = field(default_factory=SourceIndexer)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _kb: KnowledgeBase | None = field(default=None, repr=False)
    _manifest: Manifest | None = field(default=None, repr=False)
    _schema: tuple[tuple[int, int], Schema] | None = field(default=None, repr=False)
    _closers: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def schema(self) -> Schema:
        """The schema, re-read when schema.yaml changes on disk."""
        from memserver.kb.schema import load_schema

        st = self.paths.schema.stat()
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            if self._schema is None or self._schema[0] != stamp:
                self._schema = (stamp, load_schema(self.paths.schema))
            return self._schema[1]

    def manifest(self) -> Manifest:
        from memserver.kb.manifest import DEFAULT_MAX_SOURCE_BYTES, Manifest

        with self._lock:
            if self._manifest is None:
                limit = self.settings.source_max_bytes if self.settings is not None else None
                self._manifest = Manifest(self.paths, limit or DEFAULT_MAX_SOURCE_BYTES)
            return self._manifest

    def kb(self) -> KnowledgeBase:
        with self._lock:
            if self._kb is None:
                self._kb = self._open_kb()
                self._kb.start_background_embedding()
            return self._kb

    def _open_kb(self) -> KnowledgeBase:
        if self.kb_opener is not None:
            return self.kb_opener()
        from memserver.store.knowledge_base import KnowledgeBase

        return KnowledgeBase.open(self.paths.root, self.settings)

    def on_close(self, closer: Callable[[], None]) -> None:
        """Have ``close`` call ``closer`` (what a tool opened for this server: its router)."""
        with self._lock:
            self._closers.append(closer)

    def close(self) -> None:
        with self._lock:
            closers, self._closers = self._closers, []
            if self._kb is not None:
                self._kb.close()
                self._kb = None
        for closer in closers:
            closer()


@dataclass(frozen=True)
class CallContext:
    """The caller of the running tool."""

    tool: str
    scope: Scope
    services: Services

    @property
    def folders(self) -> frozenset[str] | None:
        """The scope to pass to the knowledge base service (None = all folders)."""
        return self.scope.folders


_current: ContextVar[CallContext] = ContextVar("memserver_tool_call")


def current() -> CallContext:
    """The running tool's caller (only inside a tool body)."""
    try:
        return _current.get()
    except LookupError:
        raise RuntimeError("current() is only available inside a memory server tool") from None


@contextmanager
def calling(call: CallContext) -> Iterator[CallContext]:
    """Run the block as ``call``'s caller (what the server does around a tool)."""
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)


def page_id(id: str | None = None, folder: str | None = None, slug: str | None = None) -> str:
    """The ``folder/slug`` id a caller meant, from ``id`` or ``folder`` + ``slug``.

    Accepts the forms models produce: ``knowledge/people/alice.md``, ``[people/alice]``,
    ``people/alice.md``, or a bare slug with ``folder``.
    """
    text = (id or "").strip().strip("[]").strip()
    if text:
        text = text.removeprefix("knowledge/").removesuffix(".md").strip("/")
        if "/" not in text and folder:
            text = f"{folder.strip()}/{text}"
    elif folder and slug:
        text = f"{folder.strip()}/{slug.strip().removesuffix('.md')}"
    if "/" not in text or text.count("/") != 1 or text.startswith("/") or text.endswith("/"):
        got = id or "/".join(p for p in (folder, slug) if p) or "nothing"
        raise MemoryToolError(
            f"cannot tell which page you mean (got {got!r}); pass id='<folder>/<slug>' "
            "such as id='people/alice-smith', or folder='people' and slug='alice-smith'",
            ToolErrorKind.ARGUMENTS,
        )
    return text


def page_not_found(page: str) -> NotFoundError:
    """The one message for a missing *or* out-of-scope page, so existence never leaks."""
    return NotFoundError(
        f"no page {page!r}",
        "check the id with kb_list_pages or kb_query; ids look like 'folder/slug'",
    )


def require_visible(page: str, scope: Scope) -> None:
    """Out-of-scope pages are reported exactly like missing ones."""
    if not scope.page_visible(page):
        raise page_not_found(page)
