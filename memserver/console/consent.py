"""The OAuth consent page: a signed-in person lets a remote MCP client use the memory.

A client sends the browser here from ``/authorize`` (``memserver.server.oauth``) with the
id of its kept request. The page names the client and where it will be sent back, and
offers the person's own folders (only those) and, for a write token, write access. The
answer goes back to the client's redirect URI: a code the client exchanges for its own
scoped token, or ``access_denied``. A person who is not signed in signs in first and
comes back. Approving and denying are audit rows (the client and what was granted).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from memserver.console.guard import HEADERS
from memserver.console.web import (
    PREFIX,
    ConsoleError,
    SignInRequired,
    blocking,
    console_of,
    form_of,
    redirect,
    render,
    signed_in,
    url,
)
from memserver.server.oauth import oauth_for

if TYPE_CHECKING:
    from memserver.console.sessions import Caller
    from memserver.server.mcp_server import MemoryServer
    from memserver.server.oauth import MemoryOAuth
    from memserver.server.oauth_store import Request as PendingRequest

CONSENT = "oauth/consent"
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")
_HOST = re.compile(r"^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$")


def oauth_of(server: MemoryServer) -> MemoryOAuth | None:
    """The server's authorization server, its consent page being this console's."""
    return oauth_for(server.tokens, server.audit, server.public_url, f"{PREFIX}/{CONSENT}")


def _oauth(request: Request) -> MemoryOAuth:
    oauth = console_of(request).oauth
    if oauth is None:
        raise ConsoleError(
            404,
            "OAuth is off on this server",
            "serve it at a public https URL (`memserver serve --public-url https://...`)",
        )
    return oauth


async def view(request: Request) -> Response:
    oauth = _oauth(request)
    request_id = request.query_params.get("request", "")
    try:
        caller = await signed_in(request)
    except SignInRequired:
        return redirect(url("login", next=url(CONSENT, request=request_id)))
    pending = await _pending(oauth, request_id)
    return _page(request, caller, pending, request_id)


async def answer(request: Request) -> Response:
    oauth = _oauth(request)
    caller = await signed_in(request)
    form = await form_of(request, caller)
    console = console_of(request)
    request_id = str(form.get("request") or "")
    pending = await _pending(oauth, request_id)
    client = {"client_id": pending.client.client_id, "client": pending.client.name}
    if form.get("decision") != "approve":
        target = await blocking(oauth.deny, request_id)
        await blocking(console.record, caller, "oauth.deny", client, "ok")
        return _back(target)
    offered = _folders(request, caller)
    chosen = [str(f) for f in form.getlist("folder")]
    write = form.get("write") == "1"
    if not chosen:
        return _page(request, caller, pending, request_id, "pick at least one folder", 400)
    refused = [f for f in chosen if f not in offered]
    if refused or (write and not caller.scope.write):
        await blocking(console.record, caller, "oauth.approve", client, "error:scope")
        raise ConsoleError(
            403,
            "you can only grant folders and access your own token has",
            f"your folders: {', '.join(offered)}; write: {'yes' if caller.scope.write else 'no'}",
        )
    target = await blocking(oauth.approve, request_id, chosen, write, caller.scope.token_name)
    granted = {**client, "folders": chosen, "write": write}
    await blocking(console.record, caller, "oauth.approve", granted, "ok")
    return _back(target)


async def _pending(oauth: MemoryOAuth, request_id: str) -> PendingRequest:
    pending = await blocking(oauth.pending, request_id) if request_id else None
    if pending is None:
        raise ConsoleError(
            404,
            "this sign-in request is unknown, already answered or expired",
            "start connecting again from the client",
        )
    return pending


def _back(target: str | None) -> Response:
    if target is None:
        raise ConsoleError(
            404,
            "this sign-in request was already answered or expired",
            "start again from the client",
        )
    return redirect(target)


def _folders(request: Request, caller: Caller) -> list[str]:
    names = console_of(request).services.schema().folder_names
    return caller.scope.filter_folders(names)


def _page(
    request: Request,
    caller: Caller,
    pending: PendingRequest,
    request_id: str,
    error: str = "",
    status: int = 200,
) -> Response:
    redirect_uri = str(pending.params["redirect_uri"])
    page = render(
        request,
        caller,
        "consent.html",
        status,
        client_name=pending.client.name,
        redirect_uri=redirect_uri,
        offered=_folders(request, caller),
        can_write=caller.scope.write,
        wants_write="write" in (pending.params.get("scopes") or []),
        request_id=request_id,
        error=error,
    )
    # The form's answer is a redirect to the client: the page's own policy must let the
    # form go there (form-action covers redirects), and nowhere else.
    policy = HEADERS["content-security-policy"].replace(
        "form-action 'self'", f"form-action 'self' {_source(redirect_uri)}".rstrip()
    )
    page.headers["content-security-policy"] = policy
    return page


def _source(uri: str) -> str:
    """``uri``'s origin as a CSP source (``https://host:port``; ``scheme:`` for an app's
    own scheme); empty when it cannot be said safely."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not _SCHEME.match(scheme):
        return ""
    if scheme not in ("http", "https"):
        return f"{scheme}:"
    host = parts.netloc.rsplit("@", 1)[-1]
    name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    name = name or host
    if not _HOST.match(name) or (port and not port.isdigit()):
        return ""
    return f"{scheme}://{host}"
