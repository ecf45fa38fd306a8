"""The console refuses clearly and keeps a record: 403s are audit rows with the
session's token, sign-ins are rate limited, sessions are capped per token."""

from __future__ import annotations

import datetime as dt

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
