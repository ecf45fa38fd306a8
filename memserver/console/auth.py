"""Signing in and out: a token secret (or ``up``'s login link) for a session cookie.

The sign-in form is protected before any session exists by a double-submit token: a
random value in a ``SameSite=Strict`` cookie that the form must repeat.
"""

from __future__ import annotations

import secrets

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from memserver.console.guard import CSRF_FIELD, check_csrf
from memserver.console.sessions import COOKIE, IDLE_SECONDS, ConsoleFull, Session
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
from memserver.errors import MemoryError_, ScopeError

LOGIN_COOKIE = "ms_console_login"
DEVICE_COOKIE = "ms_console_device"  # this browser signed in with a token before
DEVICE_SECONDS = 30 * 24 * 3600


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _next(value: object) -> str:
    """Where to go after signing in: a console page (``/ui/...``), never another site."""
    text = str(value or "")
    if text.startswith(f"{PREFIX}/") and not text.startswith("//") and "\\" not in text:
        return text
    return ""


def _login_page(
    request: Request, *, error: str = "", status: int = 200, next_page: str = ""
) -> Response:
    nonce = secrets.token_urlsafe(24)
    reason = request.query_params.get("reason", "")
    after = next_page or _next(request.query_params.get("next"))
    response = render(
        request,
        None,
        "login.html",
        status,
        login_csrf=nonce,
        error=error,
        reason=reason,
        next_page=after,
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


def _start(request: Request, session: Session, secret: str, next_page: str = "") -> Response:
    response = redirect(next_page or url())
    response.set_cookie(
        DEVICE_COOKIE,
        console_of(request).throttle.device_cookie(secret),
        max_age=DEVICE_SECONDS,
        path=PREFIX,
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
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


def _address(request: Request) -> str:
    return request.client.host if request.client is not None else "?"


def _device(request: Request, secret: str) -> str | None:
    """This browser's device id when it signed in with ``secret`` before."""
    return console_of(request).throttle.device(request.cookies.get(DEVICE_COOKIE), secret)


def _failed(request: Request, secret: str) -> None:
    console_of(request).throttle.failed(_address(request), secret, _device(request, secret))


def _throttled(request: Request, secret: str) -> Response | None:
    """The 429 page while this client (this browser, if it signed in with this token
    before; else this address) or this secret's prefix has failed too often."""
    wait = console_of(request).throttle.retry_after(
        _address(request), secret, _device(request, secret)
    )
    if wait is None:
        return None
    page = _login_page(
        request,
        error=(
            f"too many failed sign-ins from here or with that token; try again in {wait} s "
            "(a browser that signed in with this token before is not held back)"
        ),
        status=429,
    )
    page.headers["Retry-After"] = str(wait)
    return page


async def login(request: Request) -> Response:
    console = console_of(request)
    if request.method == "GET":
        key = request.query_params.get("key")
        if key:
            refused = _throttled(request, key)
            if refused is not None:
                return refused
            session = console.sessions.sign_in_trusted(key)
            if session is None:
                _failed(request, key)
                return _login_page(request, error="this login link is not valid", status=401)
            return _start(request, session, key)
        return _login_page(request)
    form = await request.form()
    after = _next(form.get("next"))
    try:
        check_csrf(form.get(CSRF_FIELD), request.cookies.get(LOGIN_COOKIE) or secrets.token_hex())
    except ScopeError as exc:
        return _login_page(request, error=exc.message, status=403, next_page=after)
    secret = str(form.get("token") or "")
    refused = _throttled(request, secret)
    if refused is not None:
        return refused
    try:
        session = await run_in_threadpool(console.sessions.sign_in, secret)
    except MemoryError_ as exc:
        if not isinstance(exc, ConsoleFull):
            raise ConsoleError.of(exc) from exc
        page = _login_page(request, error=f"{exc.message}: {exc.hint}", status=503)
        page.headers["Retry-After"] = "60"
        return page
    audit = console.audit
    if session is None:
        _failed(request, secret)
        if audit is not None:
            await blocking(audit.record, "-", "console.login", {}, "error:auth", 0.0)
        return _login_page(
            request,
            error="that token is unknown, expired or revoked",
            status=401,
            next_page=after,
        )
    if audit is not None:
        await blocking(audit.record, session.token_name, "console.login", {}, "ok", 0.0)
    return _start(request, session, secret, after)


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
