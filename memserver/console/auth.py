"""Signing in and out: a token secret (or ``up``'s login link) for a session cookie.

The sign-in form is protected before any session exists by a double-submit token: a
random value in a ``SameSite=Strict`` cookie that the form must repeat.
"""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import Response

from memserver.console.guard import CSRF_FIELD, check_csrf
from memserver.console.sessions import COOKIE, IDLE_SECONDS, Session
from memserver.console.web import (
    PREFIX,
    SignInRequired,
    blocking,
    console_of,
    form_of,
    redirect,
    render,
    signed_in,
    url,
)
from memserver.errors import ScopeError

LOGIN_COOKIE = "ms_console_login"


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _login_page(request: Request, *, error: str = "", status: int = 200) -> Response:
    nonce = secrets.token_urlsafe(24)
    reason = request.query_params.get("reason", "")
    response = render(
        request, None, "login.html", status, login_csrf=nonce, error=error, reason=reason
    )
    response.set_cookie(
        LOGIN_COOKIE,
        nonce,
        max_age=3600,
        path=PREFIX,
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
    return response


def _start(request: Request, session: Session) -> Response:
    response = redirect(url())
    response.set_cookie(
        COOKIE,
        session.id,
        max_age=IDLE_SECONDS,
        path=PREFIX,
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
    response.delete_cookie(LOGIN_COOKIE, path=PREFIX)
    return response


async def login(request: Request) -> Response:
    console = console_of(request)
    if request.method == "GET":
        key = request.query_params.get("key")
        if key:
            session = console.sessions.sign_in_trusted(key)
            if session is None:
                return _login_page(request, error="this login link is not valid", status=401)
            return _start(request, session)
        return _login_page(request)
    form = await request.form()
    try:
        check_csrf(form.get(CSRF_FIELD), request.cookies.get(LOGIN_COOKIE) or secrets.token_hex())
    except ScopeError as exc:
        return _login_page(request, error=exc.message, status=403)
    secret = str(form.get("token") or "")
    session = await blocking(console.sessions.sign_in, secret)
    audit = console.audit
    if session is None:
        if audit is not None:
            await blocking(audit.record, "-", "console.login", {}, "error:auth", 0.0)
        return _login_page(
            request,
            error="that token is unknown, expired or revoked",
            status=401,
        )
    if audit is not None:
        await blocking(audit.record, session.token_name, "console.login", {}, "ok", 0.0)
    return _start(request, session)


async def logout(request: Request) -> Response:
    try:
        caller = await signed_in(request)
    except SignInRequired:
        return redirect(url("login"))
    await form_of(request, caller)
    console_of(request).sessions.sign_out(caller.session.id)
    response = redirect(url("login"))
    response.delete_cookie(COOKIE, path=PREFIX)
    return response
