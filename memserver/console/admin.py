"""Admin views: the audit log (filtered by token, tool, outcome and time) and the tokens
(list with last use, create with the secret shown once, revoke). For a ``*`` + write
token or a trusted session only; every change is an audit row."""

from __future__ import annotations

import datetime as dt

from starlette.requests import Request
from starlette.responses import Response

from memserver.console.sessions import Caller
from memserver.console.web import (
    ConsoleError,
    blocking,
    console_of,
    form_of,
    redirect,
    render,
    signed_in,
    url,
)
from memserver.server.audit import UseWindow
from memserver.server.tokens import CreatedToken, parse_instant

AUDIT_LIMIT = 500


async def _instant(text: str) -> dt.datetime | None:
    """``1d``, ``12h`` (that long ago) or an ISO date/time; None for an empty field."""
    return await blocking(parse_instant, text, past=True) if text else None


async def audit(request: Request) -> Response:
    caller = await signed_in(request, admin=True)
    query = request.query_params
    filters = {k: query.get(k, "").strip() for k in ("token", "tool", "outcome", "since", "until")}
    log = console_of(request).audit
    rows = []
    if log is not None:
        rows = await blocking(
            log.query,
            since=await _instant(filters["since"]),
            until=await _instant(filters["until"]),
            token=filters["token"] or None,
            tool=filters["tool"] or None,
            outcome=filters["outcome"] or None,
            limit=AUDIT_LIMIT,
        )
    return render(request, caller, "audit.html", rows=list(reversed(rows)), filters=filters)


async def tokens(request: Request) -> Response:
    caller = await signed_in(request, admin=True)
    return await _tokens_page(request, caller)


async def _tokens_page(
    request: Request,
    caller: Caller,
    *,
    created: CreatedToken | None = None,
    error: str = "",
    status: int = 200,
) -> Response:
    console = console_of(request)
    listed = await blocking(console.tokens.list)
    used: list[dt.datetime | None] = [None] * len(listed)
    if console.audit is not None:
        windows = [UseWindow(t.name, t.created, t.revoked) for t in listed]
        used = await blocking(console.audit.last_used_during, windows)
    rows = list(zip(listed, used, strict=True))
    return render(request, caller, "tokens.html", status, rows=rows, created=created, error=error)


async def create_token(request: Request) -> Response:
    caller = await signed_in(request, admin=True)
    form = await form_of(request, caller)
    console = console_of(request)
    name = str(form.get("name") or "").strip()
    expires = str(form.get("expires") or "").strip()
    try:
        created = await blocking(
            console.tokens.create,
            name,
            str(form.get("folders") or "").strip(),
            write=form.get("write") == "1",
            expires=await blocking(parse_instant, expires) if expires else None,
            known_folders=console.services.schema().folder_names,
        )
    except ConsoleError as exc:
        await blocking(console.record, caller, "token.create", {"name": name}, "error:invalid")
        error = f"{exc.message} ({exc.hint})" if exc.hint else exc.message
        return await _tokens_page(request, caller, error=error, status=exc.status)
    await blocking(console.record, caller, "token.create", {"name": name}, "ok")
    return await _tokens_page(request, caller, created=created)


async def revoke_token(request: Request) -> Response:
    caller = await signed_in(request, admin=True)
    form = await form_of(request, caller)
    console = console_of(request)
    name = str(form.get("name") or "").strip()
    await blocking(console.tokens.revoke, name)
    await blocking(console.record, caller, "token.revoke", {"name": name}, "ok")
    return redirect(url("tokens"))
