"""What every console view shares: the ``Console`` (server, sessions, templates), the
signed-in caller of a request, tool calls in the caller's scope, forms with their CSRF
token, and rendering.

Views reach the memory through the MCP tools run in process (``MemoryServer.call_as``):
the same scope rules, argument checks and audit rows as an MCP client gets. What no
tool covers (the ledger, the review lists, tokens, the audit log) comes from the same
library objects the CLI and the tools use, with the caller's folders.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import Scope as ASGIScope

from memserver.console.agent_link import ReadAgentLink
from memserver.console.conversations import Conversations
from memserver.console.guard import CSRF_FIELD, check_csrf
from memserver.console.period import Period, dated_period
from memserver.console.sessions import COOKIE, Caller, Sessions, SignedOut
from memserver.console.snippets import matched_sentence
from memserver.console.throttle import SignInThrottle
from memserver.errors import (
    DatabaseUnavailable,
    MemoryError_,
    NotFoundError,
    ScopeError,
    ToolErrorKind,
    UserError,
    VersionConflictError,
)
from memserver.server.tools.base import MemoryToolError, to_tool_error
from memserver.terminal.progress import EmbeddingMeter

if TYPE_CHECKING:
    from memserver.server.audit import AuditLog
    from memserver.server.mcp_server import MemoryServer
    from memserver.server.oauth import MemoryOAuth
    from memserver.server.tokens import TokenStore
    from memserver.server.tools.base import Services
    from memserver.store.reviews import Reviews

logger = logging.getLogger(__name__)

PREFIX = "/ui"
_T = TypeVar("_T")
# How a tool's error kind is shown: the HTTP status of the page that says so.
_STATUS = {
    ToolErrorKind.NOT_FOUND: 404,
    ToolErrorKind.SCOPE: 403,
    ToolErrorKind.CONFLICT: 409,
    ToolErrorKind.BACKEND: 503,
    ToolErrorKind.SERVER: 500,
}


class ConsoleError(Exception):
    """A request the console refuses or cannot serve; shown as a page with the fix."""

    def __init__(
        self, status: int, message: str, hint: str = "", retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint
        self.retry_after = retry_after  # seconds, sent as Retry-After (429, 503)

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after else {}

    @classmethod
    def of(cls, exc: MemoryError_ | MemoryToolError) -> ConsoleError:
        """A memory system error (or a tool's) as the page that explains it."""
        if isinstance(exc, DatabaseUnavailable) or (
            isinstance(exc, MemoryToolError) and exc.kind == ToolErrorKind.UNAVAILABLE
        ):  # the outage page: what MCP clients read, with when to try again
            hint = exc.hint if isinstance(exc, DatabaseUnavailable) else ""
            return cls(
                503, exc.message if isinstance(exc, MemoryError_) else str(exc), hint or "", 5
            )
        if isinstance(exc, MemoryToolError):
            return cls(_STATUS.get(exc.kind, 400), str(exc))
        if isinstance(exc, UserError):
            status = 400
            if isinstance(exc, NotFoundError):
                status = 404
            elif isinstance(exc, VersionConflictError):
                status = 409
            elif isinstance(exc, ScopeError):
                status = 403
            return cls(status, exc.message, exc.hint or "")
        logger.error("console request failed", exc_info=exc)
        return cls(500, str(to_tool_error(exc)))


class SignInRequired(Exception):
    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class Console:
    """One console, mounted at ``/ui`` of one memory server's HTTP app."""

    def __init__(
        self,
        server: MemoryServer,
        *,
        login_key: str | None = None,
        read_agent: ReadAgentLink | None = None,
        sessions: Sessions | None = None,
        throttle: SignInThrottle | None = None,
        oauth: MemoryOAuth | None = None,
    ) -> None:
        self.server = server
        self.oauth = oauth  # None: OAuth is off (no consent page)
        self.read_agent = read_agent  # None: the Ask view says how to connect one
        self.conversations = Conversations()
        self.sessions = sessions or Sessions(server.tokens, login_key)
        self.throttle = throttle or SignInThrottle()
        self.templates = Environment(
            loader=PackageLoader("memserver.console", "templates"),
            autoescape=select_autoescape(default=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.filters["when"] = _when
        self.templates.filters["when_zone"] = _when_zone
        self.templates.globals["matched_sentence"] = matched_sentence
        self.templates.filters["json"] = lambda v: json.dumps(v, ensure_ascii=False, default=str)
        self.templates.globals["url"] = url
        self.vectors = EmbeddingMeter()  # the ingest view's embedding rate
        self.vectors_lock = threading.Lock()

    @property
    def services(self) -> Services:
        return self.server.services

    @property
    def tokens(self) -> TokenStore:
        if self.server.tokens is None:
            raise ConsoleError(404, "this server has no token store", "run `memserver serve`")
        return self.server.tokens

    @property
    def audit(self) -> AuditLog | None:
        return self.server.audit

    def reviews(self) -> Reviews:
        from memserver.store.reviews import Reviews

        return Reviews(self.services.kb().db)

    async def refusal_label(self, scope: ASGIScope) -> str | None:
        """Who a refused console request is: the token of its session cookie."""
        if not str(scope.get("path", "")).startswith(PREFIX):
            return None
        return self.sessions.name_of(Request(scope).cookies.get(COOKIE))

    def record(
        self, caller: Caller, action: str, arguments: Mapping[str, Any], outcome: str
    ) -> None:
        """An audit row for a console action that is not a tool call (``console.<action>``)."""
        if self.audit is not None:
            self.audit.record(caller.scope.token_name, f"console.{action}", arguments, outcome, 0.0)


def console_of(request: Request) -> Console:
    found: Console = request.app.state.console
    return found


def url(path: str = "", **query: Any) -> str:
    """A console URL: ``url("page/people/alice", v=2)`` -> ``/ui/page/people/alice?v=2``."""
    params = {k: v for k, v in query.items() if v not in (None, "", [], False)}
    text = f"{PREFIX}/{path.lstrip('/')}"
    return f"{text}?{urlencode(params, doseq=True)}" if params else text


async def blocking(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Run library code (database, files) off the event loop; its errors become pages."""
    try:
        return await run_in_threadpool(fn, *args, **kwargs)
    except (MemoryError_, MemoryToolError) as exc:
        raise ConsoleError.of(exc) from exc


async def signed_in(
    request: Request, *, write: bool = False, admin: bool = False, source: bool = False
) -> Caller:
    """The request's caller, re-checked now; refuses what the token may not do."""
    console = console_of(request)
    try:
        caller = await run_in_threadpool(console.sessions.caller, request.cookies.get(COOKIE))
    except SignedOut as exc:
        raise SignInRequired(exc.reason) from None
    except MemoryError_ as exc:  # the token store is unreachable: the outage page
        raise ConsoleError.of(exc) from exc
    if admin and not caller.admin:
        raise ConsoleError(
            403,
            f"this view is for admins; token {caller.scope.token_name!r} is not one",
            "sign in with a token for all folders ('*') with write access, or use the "
            "login link `memserver up` prints",
        )
    if write and not caller.scope.write:
        raise ConsoleError(
            403,
            f"token {caller.scope.token_name!r} is read-only",
            "sign in with a token created with --write to change anything",
        )
    if source and not caller.scope.source:
        raise ConsoleError(
            403,
            f"token {caller.scope.token_name!r} may not see the raw sources and their ledger",
            "sign in with a token whose folders include 'source' (or '*')",
        )
    return caller


async def current_caller(request: Request) -> Caller | None:
    """The signed-in caller, or None (for pages anyone may see, such as errors)."""
    try:
        return await run_in_threadpool(
            console_of(request).sessions.caller, request.cookies.get(COOKIE)
        )
    except (SignedOut, MemoryError_):
        return None


async def caller_period(request: Request, caller: Caller) -> Period | None:
    """The dates the caller's pages cover, in the caller's folders (``console.period``)."""
    console = console_of(request)
    folders = caller.scope.filter_folders(console.services.schema().folder_names)
    return await blocking(dated_period, console.services.kb().db, folders)


async def form_of(request: Request, caller: Caller) -> FormData:
    """The posted form, after its CSRF token is checked."""
    form = await request.form()
    try:
        check_csrf(form.get(CSRF_FIELD), caller.csrf)
    except ScopeError as exc:
        console_of(request).record(caller, "csrf", {"path": request.url.path}, "error:csrf")
        raise ConsoleError(403, exc.message, exc.hint or "") from None
    return form


async def tool(caller: Caller, request: Request, name: str, **arguments: Any) -> dict[str, Any]:
    """Run an MCP tool for the caller, in process; its error becomes a page."""
    args = {k: v for k, v in arguments.items() if v is not None}
    try:
        return await console_of(request).server.call_as(caller.scope, name, args)
    except MemoryToolError as exc:
        raise ConsoleError.of(exc) from exc


def render(
    request: Request, caller: Caller | None, template: str, status: int = 200, **context: Any
) -> HTMLResponse:
    console = console_of(request)
    page = console.templates.get_template(template).render(
        caller=caller,
        csrf=caller.csrf if caller is not None else "",
        path=request.url.path,
        folders=_folders(console, caller),
        **context,
    )
    return HTMLResponse(page, status_code=status)


def redirect(target: str) -> Response:
    return RedirectResponse(target, status_code=303)


def _folders(console: Console, caller: Caller | None) -> list[str]:
    if caller is None:
        return []
    try:
        names = console.services.schema().folder_names
    except MemoryError_:
        return []
    return caller.scope.filter_folders(names)


def _when(value: Any) -> str:
    """ISO text or a datetime as ``2026-09-08 14:03`` (dates as they are)."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)


def _when_zone(value: Any) -> str:
    """ISO text as ``2026-11-20 00:00 +08:00``: a reference time says its time zone."""
    try:
        moment = dt.datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    zone = moment.strftime("%z")
    zone = f"{zone[:3]}:{zone[3:]}" if zone else "(no time zone)"
    return f"{moment.strftime('%Y-%m-%d %H:%M')} {'UTC' if zone == '+00:00' else zone}"
