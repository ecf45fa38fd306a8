"""The console refuses clearly and keeps a record: 403s are audit rows with the
session's token, sign-ins are rate limited, sessions are capped per token."""

from __future__ import annotations

import datetime as dt
from contextlib import ExitStack
from pathlib import Path

import httpx2
from starlette.applications import Starlette

from memserver.console.app import create_app
from memserver.console.sessions import Sessions
from memserver.console.throttle import PREFIX_CHARS, SignInLimits, SignInThrottle
from memserver.console.web import Console
from memserver.server.mcp_server import MemoryServer
from tests.fixtures.own_database import serve_on_own_database, stop_postgres
from tests.fixtures.server import MakeApp
from tests.memserver.console.conftest import ConsoleServer, csrf_of


def test_console_refusals_are_audit_rows_with_the_sessions_token(
    console_server: ConsoleServer,
) -> None:
    name, secret = console_server.token("people", name="reader")
    since = dt.datetime.now(dt.UTC)
    with console_server.signed_in(secret) as client:
        review = client.get("/ui/review")
        admin_only = client.get("/ui/tokens")
        write = client.post(
            "/ui/review/1/accept", data={"csrf": csrf_of(review.text), "base_version": "1"}
        )
        foreign = client.post(
            "/ui/logout",
            data={"csrf": csrf_of(review.text)},
            headers={"origin": "http://evil.example"},
        )
    assert (admin_only.status_code, write.status_code, foreign.status_code) == (403, 403, 403)
    rows = [
        r for r in console_server.audit.query(since=since, token=name) if r.outcome == "refused:403"
    ]
    assert sorted(r.tool for r in rows) == [
        "http GET /ui/tokens",
        "http POST /ui/logout",
        "http POST /ui/review/1/accept",
    ]
    assert rows and all(secret not in str(r.as_dict()) for r in rows)


def _console(
    limits: SignInLimits | None = None, *, per_token: int = 3, max_sessions: int = 6
) -> MakeApp:
    """The console app with small limits, for a server of this test's own."""

    def make(server: MemoryServer, host: str, port: int) -> Starlette:
        sessions = Sessions(server.tokens, per_token=per_token, max_sessions=max_sessions)
        throttle = SignInThrottle(limits or SignInLimits())
        console = Console(server, sessions=sessions, throttle=throttle)
        return create_app(server, host=host, port=port, console=console)

    return make


def _sign_in(
    clients: ExitStack, base_url: str, secret: str
) -> tuple[httpx2.Response, httpx2.Client]:
    """Sign in with a new client (closed with ``clients``): the answer, and the client."""
    client = clients.enter_context(
        httpx2.Client(base_url=base_url, timeout=30.0, follow_redirects=False)
    )
    form = client.get("/ui/login")
    return client.post("/ui/login", data={"csrf": csrf_of(form.text), "token": secret}), client


def _signed_in(client: httpx2.Client) -> bool:
    return client.get("/ui/").status_code == 200


def test_sign_ins_are_limited_per_address_and_per_token_prefix(pg_scratch: Path) -> None:
    limits = SignInLimits(per_address=6, per_prefix=3, window=600)
    with serve_on_own_database(pg_scratch, _console(limits)) as own, ExitStack() as clients:
        first = own.tokens.create("first", "people").secret
        second = own.tokens.create("second", "people").secret
        prefix = first[: len("ms_") + PREFIX_CHARS]
        since = dt.datetime.now(dt.UTC)
        for n in range(3):  # wrong secrets that start like the first token
            assert _sign_in(clients, own.base_url, f"{prefix}wrong{n}")[0].status_code == 401
        by_prefix = _sign_in(clients, own.base_url, first)[0]
        other_prefix = _sign_in(clients, own.base_url, second)[0]
        for n in range(3):  # three more wrong ones: six from this address
            assert _sign_in(clients, own.base_url, f"ms_other{n}-wrong")[0].status_code == 401
        by_address = _sign_in(clients, own.base_url, second)[0]
        rows = own.server.audit.query(since=since, outcome=None) if own.server.audit else []
    assert by_prefix.status_code == 429 and 0 < int(by_prefix.headers["retry-after"]) <= 600
    assert "too many failed sign-ins" in by_prefix.text
    assert other_prefix.status_code == 303  # another token's prefix is not held back
    assert by_address.status_code == 429 and int(by_address.headers["retry-after"]) > 0
    assert [r.tool for r in rows if r.outcome == "refused:429"] == ["http POST /ui/login"] * 2


def test_sessions_are_capped_per_token_and_the_database_outage_has_its_page(
    pg_scratch: Path,
) -> None:
    small = _console(per_token=3, max_sessions=6)
    with serve_on_own_database(pg_scratch, small) as own, ExitStack() as clients:
        admin = own.tokens.create("admin", "*", write=True).secret
        reader = own.tokens.create("reader", "people").secret
        other = own.tokens.create("other", "people").secret
        late = own.tokens.create("late", "people").secret
        signed = [_sign_in(clients, own.base_url, s) for s in (admin, *[reader] * 5, other, other)]
        assert [r.status_code for r, _ in signed] == [303] * 8
        browsers = [c for _, c in signed]
        full = _sign_in(clients, own.base_url, late)[0]
        alive = [_signed_in(c) for c in browsers]
        stop_postgres(own.db)
        down = browsers[0].get("/ui/")
        login_down = _sign_in(clients, own.base_url, admin)[0]
        assert own.db.server is not None
        own.db.server.restart()
        back = browsers[0].get("/ui/")
    # the reader's first two sessions made room for its later ones; nobody else's went
    assert alive == [True, False, False, True, True, True, True, True]
    assert full.status_code == 503 and "the most it keeps" in full.text
    assert down.status_code == 503 and "database unavailable" in down.text
    assert int(down.headers["retry-after"]) > 0 and 'id="error-message"' in down.text
    assert login_down.status_code == 503 and "database unavailable" in login_down.text
    assert back.status_code == 200


def test_one_client_cannot_lock_everyone_out(pg_scratch: Path) -> None:
    """The issue's case: every local process is one address, and a token's first
    characters may be known. A flood of wrong sign-ins from loopback, some starting like
    the owner's token, holds back new clients; the owner's browser, which signed in with
    that token before, still signs in, and no other browser gains from that."""
    limits = SignInLimits(per_address=6, per_prefix=3, window=600)
    with serve_on_own_database(pg_scratch, _console(limits)) as own, ExitStack() as clients:
        owner = own.tokens.create("owner", "people").secret
        other = own.tokens.create("other", "people").secret
        answered, browser = _sign_in(clients, own.base_url, owner)
        assert answered.status_code == 303 and "ms_console_device" in browser.cookies
        form = browser.get("/ui/")
        browser.post("/ui/logout", data={"csrf": csrf_of(form.text)})
        prefix = owner[: len("ms_") + PREFIX_CHARS]
        for n in range(6):  # the flood: six wrong secrets, three starting like the owner's
            wrong = f"{prefix}wrong{n}" if n < 3 else f"ms_flood{n}-wrong"
            assert _sign_in(clients, own.base_url, wrong)[0].status_code == 401
        new_client = _sign_in(clients, own.base_url, owner)[0]
        login = browser.get("/ui/login")
        again = browser.post("/ui/login", data={"csrf": csrf_of(login.text), "token": owner})
        # the owner's device cookie says nothing for another token: still held back
        login = browser.get("/ui/login")
        guessed = browser.post("/ui/login", data={"csrf": csrf_of(login.text), "token": other})
    assert new_client.status_code == 429 and "not held back" in new_client.text
    assert again.status_code == 303
    assert guessed.status_code == 429
