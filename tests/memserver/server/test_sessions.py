"""SessionLimit on its own: requests in flight per token, and sessionless requests.

The app behind the limit here answers only when the test lets it, so that requests
stay in flight exactly as long as the test needs (the served case, with the SDK behind
it, is ``test_hostile_input``'s session flood)."""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.types import Message, Receive, Scope, Send

from memserver.server.sessions import (
    MAX_IN_FLIGHT_PER_TOKEN,
    SessionLimit,
    _sessions_message,
    token_credential,
)


class HeldApp:
    """An ASGI app that answers 200 once its request is released."""

    def __init__(self) -> None:
        self.entered = 0
        self.release = anyio.Event()
        self.arrived = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.entered += 1
        self.arrived.set()
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def post(token: str, version: str | None = "2026-07-28", scheme: str = "Bearer") -> Scope:
    headers = [(b"authorization", f"{scheme} {token}".encode())]
    if version is not None:
        headers.append((b"mcp-protocol-version", version.encode()))
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}


async def answer(limit: SessionLimit, scope: Scope) -> tuple[int, dict[str, Any]]:
    """The status and JSON body ``limit`` answers ``scope`` with."""
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await limit(scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body)


def test_one_token_cannot_have_more_than_its_share_of_requests_in_flight() -> None:
    async def body() -> None:
        app = HeldApp()
        limit = SessionLimit(app, live_sessions=set)
        statuses: list[int] = []

        async def held(token: str) -> None:
            statuses.append((await answer(limit, post(token)))[0])

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for _ in range(MAX_IN_FLIGHT_PER_TOKEN):
                    tg.start_soon(held, "flooder")
                while app.entered < MAX_IN_FLIGHT_PER_TOKEN:
                    app.arrived = anyio.Event()
                    await app.arrived.wait()
                # one more from the same token is refused at once, and says why
                status, refused = await answer(limit, post("flooder"))
                assert status == 429
                message = refused["error"]["message"]
                assert f"{MAX_IN_FLIGHT_PER_TOKEN} MCP requests being answered" in message
                # another token is not affected
                tg.start_soon(held, "other")
                app.arrived = anyio.Event()
                await app.arrived.wait()
                assert app.entered == MAX_IN_FLIGHT_PER_TOKEN + 1
                app.release.set()
            assert statuses == [200] * (MAX_IN_FLIGHT_PER_TOKEN + 1)
            # once answered, nothing counts any more: the token may send again
            assert limit.requests_in_flight(_credential("flooder")) == 0
            assert (await answer(limit, post("flooder")))[0] == 200

    anyio.run(body)


def test_one_token_written_in_other_letter_cases_is_still_one_token() -> None:
    assert token_credential("bearer  abc ") == token_credential("Bearer abc")
    assert token_credential("BEARER abc") != token_credential("Bearer abd")

    async def body() -> None:
        app = HeldApp()
        limit = SessionLimit(app, live_sessions=set)
        schemes = ["Bearer", "bearer", "BEARER", "bEaReR", "BeArEr", "bearer ", "BEArer"]

        async def held(scheme: str) -> None:
            await answer(limit, post("flooder", scheme=scheme))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for i in range(MAX_IN_FLIGHT_PER_TOKEN):
                    tg.start_soon(held, schemes[i % len(schemes)])
                while app.entered < MAX_IN_FLIGHT_PER_TOKEN:
                    app.arrived = anyio.Event()
                    await app.arrived.wait()
                status, _ = await answer(limit, post("flooder", scheme="bEARER"))
                assert status == 429
                app.release.set()

    anyio.run(body)


def test_sessionless_requests_open_no_session_and_handshake_ones_do() -> None:
    async def body() -> None:
        app = HeldApp()
        limit = SessionLimit(app, live_sessions=set, per_token=2)
        statuses: list[int] = []

        async def held(version: str | None) -> None:
            statuses.append((await answer(limit, post("token", version)))[0])

        async def entered(count: int) -> None:
            while app.entered < count:
                app.arrived = anyio.Event()
                await app.arrived.wait()

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                # handshake-era initializes (no version header, or a 2025 one) open sessions
                tg.start_soon(held, None)
                tg.start_soon(held, "2025-11-25")
                await entered(2)
                assert limit.open_sessions(_credential("token")) == 2
                status, refused = await answer(limit, post("token", version=None))
                assert status == 429 and "2 open MCP sessions" in refused["error"]["message"]
                # a 2026-07-28 request of the same token is no session: it still passes
                for n in range(3, 6):
                    tg.start_soon(held, "2026-07-28")
                    await entered(n)
                assert limit.open_sessions(_credential("token")) == 2
                app.release.set()
            assert statuses == [200] * 5
            assert limit.open_sessions(_credential("token")) == 0  # none was kept

    anyio.run(body)


def _credential(token: str) -> str:
    return token_credential(f"Bearer {token}")


class SessionApp:
    """An ASGI app that opens a session for every request (the SDK's initialize)."""

    def __init__(self) -> None:
        self.live: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session = f"s{len(self.live)}"
        self.live.add(session)
        headers = [(b"mcp-session-id", session.encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})


def test_no_group_of_tokens_can_take_every_session() -> None:
    """The issue's flood, scaled down: tokens open sessions until refused. Every other
    token can still open its own reserved few, and an admin token its sessions, after
    the shared room and then the whole room for tokens that are not admin are taken."""

    async def body() -> None:
        app = SessionApp()
        admin = {"now": False}
        limit = SessionLimit(
            app,
            live_sessions=lambda: app.live,
            per_token=8,
            is_admin=lambda: admin["now"],
            reserved=2,
            shared=10,
            total=20,
        )

        async def open_until_refused(token: str) -> tuple[int, str]:
            opened = 0
            while True:
                status, answered = await answer(limit, post(token, version=None))
                if status != 200:
                    return opened, answered["error"]["message"]
                opened += 1

        with anyio.fail_after(30):
            # flooders take their own 2 and the shared 10 (8 each at most)
            assert await open_until_refused("flood-1") == (8, limit_message(8))
            opened, message = await open_until_refused("flood-2")
            assert opened == 6 and "sessions all tokens share are taken" in message
            # a newcomer still opens its own two, not a third
            opened, message = await open_until_refused("late")
            assert opened == 2 and "holds its own 2 already" in message
            # tokens' own sessions fill what is left of the 20
            for n in range(3):
                await open_until_refused(f"own-{n}")
            assert sum(limit.open_sessions(_credential(t)) for t in _tokens()) == 20
            opened, message = await open_until_refused("one-too-many")
            assert opened == 0 and "holds 20 MCP sessions" in message
            # an admin token is never locked out by them
            admin["now"] = True
            assert await open_until_refused("admin") == (8, limit_message(8))

    anyio.run(body)


def limit_message(per_token: int) -> str:
    return _sessions_message(per_token)


def _tokens() -> list[str]:
    return ["flood-1", "flood-2", "late", "own-0", "own-1", "own-2", "one-too-many"]


def test_the_served_limit_knows_an_admin_token_from_its_verified_record() -> None:
    """``_admin_request`` reads the record ``_TokenFirst`` verified for the request."""
    import contextvars
    import datetime as dt

    from memserver.server.http_app import _admin_request
    from memserver.server.tokens import Token
    from memserver.server.verifier import VerifiedToken, _checked

    def verdict(folders: tuple[str, ...], write: bool) -> bool:
        record = Token("t", "h", folders, write, dt.datetime.now(dt.UTC))
        access = VerifiedToken(token="h", client_id="t", scopes=[], record=record)

        def inside() -> bool:
            _checked.set(("h", access))
            return _admin_request()

        return contextvars.copy_context().run(inside)

    assert verdict(("*",), True)
    assert not verdict(("*",), False) and not verdict(("people",), True)
    assert not contextvars.copy_context().run(_admin_request)  # nothing verified: not admin
