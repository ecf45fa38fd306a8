"""The MCP memory server: scoped tools over Streamable HTTP (bearer tokens) or stdio.

``MemoryServer`` is an ``MCPServer`` that knows who is calling. Over HTTP the caller
is the token the ``TokenVerifier`` accepted (``get_access_token()``); over stdio it is
fixed at start (``MEMORY_TOKEN`` or ``--trusted``). For every call it

- hides tools the caller may not use (``list_tools``) and refuses them if called;
- maps obvious argument aliases onto the real names, refuses unknown arguments, and
  rewrites argument-validation failures into a message that says how to call the tool;
- runs the tool with ``memserver.server.tools.base.current()`` bound to the caller's scope;
- serves the memory's pages and schema as resources and two prompts, in the caller's
  scope (``memserver.server.resources``), and announces page changes to the clients
  listening for them (``memserver.server.notifications``);
- translates memory system errors into an error result that says what failed, for a
  model (the text) and for a program (``{"error": {"kind", ...}}``, ``ToolErrorKind``
  in ``memserver.errors``), and appends an audit row
  (committed before the result goes back; concurrent calls share one write,
  ``memserver.server.audit_writer``).

Over HTTP (``memserver.server.http_app``) tokens are checked by
``memserver.server.verifier``; over stdio it is served by ``memserver.server.stdio``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, Unpack

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp_types import (
    CallToolResult,
    InputRequiredResult,
    SubscriptionsListenRequestParams,
    ToolAnnotations,
)
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

from memserver import __version__
from memserver.errors import (
    DatabaseUnavailable,
    MemoryError_,
    ScopeError,
    StoreError,
    ToolErrorKind,
    UserError,
)
from memserver.server.audit import AuditEntry, AuditLog, make_entry
from memserver.server.audit_writer import AuditWriter
from memserver.server.notifications import ScopedListen
from memserver.server.prose_scope import redact_for, redact_references, scope_safe_message
from memserver.server.resources import ResourcesAndPrompts
from memserver.server.scope import Scope
from memserver.server.tokens import TokenStore
from memserver.server.tools import base as toolbase
from memserver.server.tools.base import (
    COMMON_ALIASES,
    Access,
    MemoryToolError,
    Services,
    ToolOptions,
)
from memserver.server.verifier import StoreTokenVerifier, VerifiedToken

logger = logging.getLogger(__name__)

_F = TypeVar("_F", bound=Callable[..., Any])

INSTRUCTIONS = """\
A company memory: schema-shaped pages (people, meetings, decisions, ...) with dated
timelines, built from raw source documents. Start with kb_schema to see the folders
you may read. Pages are addressed by id = "folder/slug". Cite pages as [folder/slug]
and give dates. Only folders granted to your token are visible."""


@dataclass(frozen=True)
class ToolSpec:
    """How the server treats one tool: who may call it and which aliases it accepts."""

    name: str
    access: Access
    aliases: Mapping[str, str] = field(default_factory=dict)


class MemoryServer(MCPServer[Any]):
    """An MCP server whose tools are filtered, checked and audited per caller."""

    def __init__(
        self,
        services: Services,
        *,
        tokens: TokenStore | None = None,
        audit: AuditLog | None = None,
        fixed_scope: Scope | None = None,
        fixed_secret: str | None = None,
        public_url: str | None = None,
    ) -> None:
        """HTTP: ``tokens`` and ``public_url`` (bearer auth). Stdio: ``fixed_scope``, plus
        ``tokens`` and the token's ``fixed_secret`` when the scope is a token's, so that
        revoking it also stops the session."""
        if fixed_scope is not None and tokens is not None and not fixed_secret:
            raise ValueError("a token-scoped stdio server needs the token's secret to re-check it")
        if fixed_scope is None and tokens is None:
            raise ValueError("a MemoryServer needs either a fixed scope (stdio) or a token store")
        auth = None
        verifier = None
        if fixed_scope is None and tokens is not None:
            verifier = StoreTokenVerifier(tokens)
            auth = AuthSettings(
                issuer_url=public_url or "http://127.0.0.1",  # type: ignore[arg-type]
                resource_server_url=None,
                validate_token_resource=False,
            )
        self.verifier = verifier  # the HTTP app checks a token before reading the body
        self.public_url = public_url  # where clients reach it (the OAuth issuer)
        self.bus = InMemorySubscriptionBus()  # resource-updated events to listen streams
        super().__init__(
            name="memory",
            title="Memory System",
            instructions=INSTRUCTIONS,
            version=__version__,
            token_verifier=verifier,
            auth=auth,
            log_level="WARNING",
            subscriptions=self.bus,
        )
        # The SDK wraps every request in an OpenTelemetry span, a no-op without an
        # exporter that still cost ~4% of the server's CPU per call: dropped, as the SDK
        # documents (``Server.middleware``). We export no traces.
        self._lowlevel_server.middleware = [
            m
            for m in self._lowlevel_server.middleware
            if not isinstance(m, OpenTelemetryMiddleware)
        ]
        self.services = services
        self.tokens = tokens
        self.audit = audit
        self._audit_writer = AuditWriter(audit) if audit is not None else None
        self.fixed_scope = fixed_scope
        self._fixed_secret = fixed_secret
        self._specs: dict[str, ToolSpec] = {}
        # Resources, prompts and listen streams in the caller's scope, in place of the
        # SDK's unscoped ones (memserver.server.resources, memserver.server.notifications).
        ResourcesAndPrompts(self).register(self._lowlevel_server)
        self.listen = ScopedListen(self, self.bus)
        self._lowlevel_server.add_request_handler(
            "subscriptions/listen", SubscriptionsListenRequestParams, self.listen
        )

    # -- registration -----------------------------------------------------------------

    def memory_tool(
        self, *, access: Access, title: str, **options: Unpack[ToolOptions]
    ) -> Callable[[_F], _F]:
        """Register a tool: its docstring is the prompt, its signature the input schema.

        ``access`` decides who sees it; READ tools are annotated read-only. The
        ``aliases`` option adds tool-specific argument aliases on top of ``COMMON_ALIASES``.
        """
        destructive = options.get("destructive", False)
        idempotent = options.get("idempotent", False)
        aliases = options.get("aliases") or {}

        def decorator(fn: _F) -> _F:
            name = fn.__name__
            spec = ToolSpec(name=name, access=access, aliases=dict(aliases))
            self.add_tool(
                _guarded(fn, spec),
                name=name,
                title=title,
                # the docstring without its indentation, wherever the function stands
                description=inspect.cleandoc(fn.__doc__ or ""),
                annotations=ToolAnnotations(
                    title=title,
                    read_only_hint=access is Access.READ,
                    destructive_hint=destructive if access is not Access.READ else False,
                    idempotent_hint=idempotent or access is Access.READ,
                    open_world_hint=False,
                ),
                structured_output=True,
            )
            self._specs[name] = spec
            return fn

        return decorator

    def close(self) -> None:
        """Write the audit rows still waiting (the server is stopping)."""
        if self._audit_writer is not None:
            self._audit_writer.close()

    async def record_audit(self, entry: AuditEntry) -> None:
        """Append an audit row that is not a tool call's (a refused HTTP request)."""
        if self._audit_writer is not None:
            await self._audit_writer.record(entry)

    def spec(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def database_problem(self) -> str | None:
        """None when the index database answers, else why not (for ``/healthz``)."""
        if self.tokens is not None:
            return self.tokens.db.ping()
        return self.services.kb().db.ping()

    def specs(self) -> list[ToolSpec]:
        """Every registered tool, in registration order."""
        return list(self._specs.values())

    # -- per-caller behaviour ------------------------------------------------------------

    def caller_scope(self) -> Scope:
        """The scope of the current request (stdio: fixed; HTTP: the bearer token)."""
        if self.fixed_scope is not None:
            if self.tokens is None:  # trusted
                return self.fixed_scope
            # Re-checked by the secret's hash, not the name: a revoked token whose name was
            # given to a new token must not inherit the new token's rights.
            current = self.tokens.verify(self._fixed_secret or "")
            if current is None:
                raise ScopeError(
                    f"token {self.fixed_scope.token_name!r} is revoked or expired",
                    "ask for a new token",
                )
            return Scope.of_token(current)
        access = get_access_token()
        if access is None or self.tokens is None:
            raise ScopeError("no token on this request", "send Authorization: Bearer <token>")
        # Every MCP call is its own HTTP request, verified against the store just now
        # (StoreTokenVerifier): a token revoked mid-session stops at its next call.
        record = access.record if isinstance(access, VerifiedToken) else None
        if record is None:
            record = self.tokens.get(access.client_id)
        if not record.is_active():
            raise ScopeError(f"token {record.name!r} is {record.status()}", "ask for a new token")
        return Scope.of_token(record)

    async def list_tools(self) -> list[MCPTool]:
        try:
            scope = self.caller_scope()
        except MemoryError_:
            return []
        tools = await super().list_tools()
        return [t for t in tools if self._visible(t.name, scope)]

    def _visible(self, name: str, scope: Scope) -> bool:
        spec = self._specs.get(name)
        return spec is not None and spec.access.allows(scope)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """An MCP call; every failure comes back as an error result with its kind."""
        try:
            return await self._call(name, arguments, context, self.caller_scope)
        except MemoryToolError as error:
            logger.info("tool %r failed (%s): %r", name, error.kind, str(error))
            return toolbase.error_result(error)
        except UnexpectedToolError as exc:
            # The message names only the tool; the cause stays in this log.
            logger.error(
                "tool %r raised an unexpected exception", name, exc_info=exc.__cause__ or exc
            )
            return toolbase.error_result(MemoryToolError(str(exc), ToolErrorKind.INTERNAL))

    async def call_as(
        self, scope: Scope, name: str, arguments: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Run tool ``name`` in this process for ``scope`` (the web console's caller),
        exactly as an MCP call runs it: hidden tools refused, aliases, checks, the same
        audit row; returns its structured result, raises ``MemoryToolError``."""
        result = await self._call(name, dict(arguments), None, lambda: scope)
        if not isinstance(result, CallToolResult) or result.is_error:
            raise MemoryToolError(f"{name} did not return a result", ToolErrorKind.INTERNAL)
        return dict(result.structured_content or {})

    async def _call(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[Any, Any] | None,
        scope_of_caller: Callable[[], Scope],
    ) -> CallToolResult | InputRequiredResult:
        started = time.perf_counter()
        caller = "-"
        outcome = "ok"
        scope: Scope | None = None
        try:
            scope = scope_of_caller()
            caller = scope.token_name
            spec = self._specs.get(name)
            if spec is None or not spec.access.allows(scope):
                if spec is not None:
                    spec.access.require(scope, name)
                visible = ", ".join(sorted(n for n in self._specs if self._visible(n, scope)))
                raise MemoryToolError(
                    f"unknown tool {name!r}; the tools you can call are: {visible}",
                    ToolErrorKind.UNKNOWN_TOOL,
                )
            prepared = self._prepare_arguments(spec, arguments)
            with toolbase.calling(toolbase.CallContext(name, scope, self.services)):
                return await super().call_tool(name, prepared, context)
        except UnexpectedToolError:
            outcome = "error:internal"
            raise
        except ToolError as exc:
            error = self._scoped(self._explain(name, exc), scope, arguments)
            outcome = f"error:{error.kind}"
            raise error from exc
        except MemoryError_ as exc:
            error = self._scoped(toolbase.to_tool_error(exc), scope, arguments)
            outcome = f"error:{error.kind}"
            raise error from exc
        except BaseException:
            outcome = "error:internal"
            raise
        finally:
            if self._audit_writer is not None:
                elapsed = (time.perf_counter() - started) * 1000
                try:  # written with the concurrent calls' rows, off the event loop
                    entry = make_entry(caller, name, arguments, outcome, elapsed)
                    await self._audit_writer.record(entry)
                except DatabaseUnavailable as exc:
                    logger.warning("could not write the audit log: %s", exc.message)
                except StoreError:
                    logger.exception("could not write the audit log")

    # -- arguments ---------------------------------------------------------------------

    def _prepare_arguments(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Rename aliases, parse JSON-encoded objects, refuse unknown arguments."""
        tool = self._tool_manager.get_tool(spec.name)
        assert tool is not None
        properties: dict[str, Any] = tool.parameters.get("properties", {})
        aliases = {**COMMON_ALIASES, **spec.aliases}
        out: dict[str, Any] = {}
        unknown: list[str] = []
        for key, value in arguments.items():
            target = key if key in properties else aliases.get(key)
            if target is None or target not in properties:
                unknown.append(key)
                continue
            if target in out and key != target:
                continue  # the real name wins over an alias given alongside it
            out[target] = _decode_json(value, properties[target])
        if unknown:
            raise MemoryToolError(
                f"unknown argument(s) {', '.join(map(repr, unknown))} for {spec.name}. "
                f"{_usage(spec.name, tool.parameters)}",
                ToolErrorKind.ARGUMENTS,
            )
        return out

    def _scoped(
        self, error: MemoryToolError, scope: Scope | None, arguments: Mapping[str, Any]
    ) -> MemoryToolError:
        """The error as a caller with limited folders may read it: no other folder named."""
        if scope is None or scope.folders is None:
            return error
        try:
            folders = self.services.schema().folders
        except MemoryError_:
            return error
        visible = {n for f in folders if scope.allows_folder(f.name) for n in (f.name, f.type)}
        hidden = {n for f in folders for n in (f.name, f.type)} - visible
        said = json.dumps(arguments, ensure_ascii=False, default=str)
        folder_names = [f.name for f in folders if not scope.allows_folder(f.name)]

        def safe(text: str) -> str:
            return scope_safe_message(self._redacted(text, folder_names, said), hidden, said)

        message = safe(str(error))
        problems = [
            dataclasses.replace(
                p, location=safe(p.location), message=safe(p.message), fix=safe(p.fix)
            )
            for p in error.problems
        ]
        if message == str(error) and problems == list(error.problems):
            return error
        return error.reworded(message, problems)

    def _redacted(self, text: str, hidden_folders: list[str], said: str) -> str:
        """An error's text without references to hidden pages the caller did not name."""
        try:
            redacted: str = redact_references(text, hidden_folders, self.services.kb(), said)
        except MemoryError_:
            return text
        return redacted

    def _explain(self, name: str, exc: ToolError) -> MemoryToolError:
        """A ToolError from the SDK or a tool, rewritten for the model (and classified)."""
        cause = exc.__cause__
        if isinstance(cause, MemoryToolError):
            if cause.kind == "unavailable":  # about the server, not this call: said as is,
                return cause  # whether the token check or the tool met the outage
            return cause.reworded(f"{name}: {cause}")
        if isinstance(exc, MemoryToolError):
            return exc
        if isinstance(cause, ValidationError):
            tool = self._tool_manager.get_tool(name)
            properties = tool.parameters.get("properties", {}) if tool is not None else {}
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                + (
                    f" (got {json.dumps(err['input'], default=str)[:80]})"
                    if err["type"] != "missing"
                    else ""
                )
                + _allowed_range(properties.get(str(err["loc"][0])) if err["loc"] else None)
                for err in cause.errors()
            )
            usage = _usage(name, tool.parameters) if tool is not None else ""
            return MemoryToolError(
                f"invalid arguments for {name}: {problems}. {usage}", ToolErrorKind.ARGUMENTS
            )
        return MemoryToolError(str(exc), ToolErrorKind.INVALID)


def _guarded(fn: Callable[..., Any], spec: ToolSpec) -> Callable[..., Any]:
    """Re-check access inside the tool, keep out-of-scope references out of what it
    returns, and translate memory system errors into ToolError."""

    def translate(exc: MemoryError_) -> MemoryToolError:
        if isinstance(exc, DatabaseUnavailable):  # expected while PostgreSQL restarts
            logger.warning("tool %s failed: %s", spec.name, exc.message)
        elif not isinstance(exc, UserError):
            logger.error("tool %s failed", spec.name, exc_info=exc)
        return toolbase.to_tool_error(exc)

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            spec.access.require(toolbase.current().scope, spec.name)
            try:
                return _in_scope(await fn(*args, **kwargs), spec, kwargs)
            except MemoryToolError:
                raise
            except MemoryError_ as exc:
                raise translate(exc) from exc

        return run_async

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            spec.access.require(toolbase.current().scope, spec.name)
            return _in_scope(fn(*args, **kwargs), spec, kwargs)
        except MemoryToolError:
            raise
        except MemoryError_ as exc:
            raise translate(exc) from exc

    return run


def _in_scope(result: Any, spec: ToolSpec, arguments: Mapping[str, Any]) -> Any:
    """A read tool's result without references to pages the caller cannot see (its own
    words, ``arguments``, echoed back as it wrote them)."""
    call = toolbase.current()
    if spec.access is not Access.READ:
        return result
    said = json.dumps(arguments, ensure_ascii=False, default=str) if arguments else ""
    return redact_for(result, call.scope, call.services, said)


def _decode_json(value: Any, schema: Mapping[str, Any]) -> Any:
    """A JSON string where an object or array is expected is parsed (models often do this)."""
    if not isinstance(value, str):
        return value
    types = {schema.get("type")} | {s.get("type") for s in schema.get("anyOf", [])}
    if "$ref" in schema or any("$ref" in s for s in schema.get("anyOf", [])):
        types.add("object")
    if "string" in types or not types & {"object", "array"}:
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    return decoded if isinstance(decoded, dict | list) else value


def _allowed_range(schema: Mapping[str, Any] | None) -> str:
    """`` (allowed: 0 to 10000000)`` for a numeric argument with bounds, else ``""``."""
    if not schema:
        return ""
    options = [schema, *schema.get("anyOf", [])]
    low = next((s["minimum"] for s in options if "minimum" in s), None)
    high = next((s["maximum"] for s in options if "maximum" in s), None)
    if low is None and high is None:
        return ""
    return (
        f" (allowed: {low if low is not None else '...'} to {high if high is not None else '...'})"
    )


def _usage(name: str, parameters: Mapping[str, Any]) -> str:
    """``Call kb_get_page with: id (string, required), ...`` from an input schema."""
    properties: dict[str, Any] = parameters.get("properties", {})
    required = set(parameters.get("required", []))
    parts = []
    for arg, schema in properties.items():
        options = [schema, *schema.get("anyOf", [])]
        types = [
            "YYYY-MM-DD" if s.get("format") == "date" else s.get("enum") and "|".join(s["enum"])
            for s in options
        ]
        types += [s.get("type") for s in options]
        kind = "/".join(t for t in dict.fromkeys(types) if t and t != "null") or "object"
        flag = ", required" if arg in required else ""
        parts.append(f"{arg} ({kind}{flag})")
    return f"Call {name} with: {', '.join(parts) or 'no arguments'}."


# -- building and serving ----------------------------------------------------------------


def build_server(
    services: Services,
    *,
    tokens: TokenStore | None = None,
    audit: AuditLog | None = None,
    fixed_scope: Scope | None = None,
    fixed_secret: str | None = None,
    public_url: str | None = None,
) -> MemoryServer:
    """A MemoryServer with every tool group of ``memserver.server.tools`` registered."""
    from memserver.server.tools import register_all

    server = MemoryServer(
        services,
        tokens=tokens,
        audit=audit,
        fixed_scope=fixed_scope,
        fixed_secret=fixed_secret,
        public_url=public_url,
    )
    register_all(server)
    return server
