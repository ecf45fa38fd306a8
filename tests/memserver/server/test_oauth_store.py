"""The OAuth records: a grant's token is an ordinary token, codes and refresh tokens work
once, a second use of either revokes the grant, and a token revoked elsewhere ends it."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from memserver.db.database import Database
from memserver.server.oauth_store import Grant, Issued, OAuthStore
from memserver.server.tokens import TokenStore, hash_secret

REDIRECT = "http://127.0.0.1:9/cb"


@pytest.fixture
def store(database: Database) -> OAuthStore:
    return OAuthStore(TokenStore(database))


def granted(
    store: OAuthStore, folders: tuple[str, ...] = ("people",), write: bool = False
) -> tuple[str, Grant]:
    """A registered client, a request approved on the consent page: (code, grant)."""
    client_id = str(uuid.uuid4())
    store.register(client_id, {"client_name": "Desk App ☕", "redirect_uris": [REDIRECT]})
    params: dict[str, Any] = {"state": "s", "code_challenge": "c" * 43, "redirect_uri": REDIRECT}
    request_id = store.open_request(client_id, params)
    pending = store.request(request_id)
    assert pending is not None and pending.client.name == "Desk App ☕"
    approved = store.approve(request_id, folders, write, approved_by="alice")
    assert approved is not None
    assert store.approve(request_id, folders, write, approved_by="alice") is None  # spent
    code = store.code(approved[1])
    assert code is not None and not code.used
    return approved[1], code.grant


def exchange(store: OAuthStore, code: str, grant: Grant) -> Issued | None:
    return store.exchange_code(hash_secret(code), grant.id)


def refresh(store: OAuthStore, token: str) -> Issued | None:
    found = store.refresh_token(token)
    return store.exchange_refresh(found.sha256, found.grant.id) if found else None


def test_a_grant_issues_an_ordinary_scoped_token_named_for_its_client(store: OAuthStore) -> None:
    code, grant = granted(store, ("meetings", "people"), write=True)
    issued = exchange(store, code, grant)
    assert issued is not None
    token = store.tokens.verify(issued.access.secret)
    assert token is not None and token.name == grant.token_name
    assert (token.folders, token.write, token.client) == (
        ("meetings", "people"),
        True,
        "Desk App ☕",
    )
    assert token.name.startswith("oauth-desk-app-") and token.expires is not None
    assert grant.scopes == ["read", "write"] and grant.approved_by == "alice"
    # only hashes are kept
    with store.db.connection() as conn:
        kept = " ".join(
            str(row)
            for table in ("oauth_codes", "oauth_refresh_tokens", "oauth_requests", "api_tokens")
            for row in conn.execute(f"SELECT * FROM {table}").fetchall()
        )
    assert code not in kept and issued.refresh not in kept and issued.access.secret not in kept


def test_refresh_rotates_both_tokens_and_a_replayed_refresh_token_revokes_the_grant(
    store: OAuthStore,
) -> None:
    code, grant = granted(store)
    first = exchange(store, code, grant)
    assert first is not None
    second = refresh(store, first.refresh)
    assert second is not None and second.access.token.name == first.access.token.name
    assert store.tokens.verify(first.access.secret) is None  # rotated away at once
    assert store.tokens.verify(second.access.secret) is not None
    # the old refresh token again: a stolen copy. The grant ends, the live token with it.
    assert refresh(store, first.refresh) is None
    assert store.tokens.verify(second.access.secret) is None
    assert refresh(store, second.refresh) is None
    assert store.grant(grant.id) is None
    assert store.tokens.get(grant.token_name).status() == "revoked"


def test_a_code_used_twice_revokes_what_it_gave(store: OAuthStore) -> None:
    code, grant = granted(store)
    issued = exchange(store, code, grant)
    assert issued is not None
    assert exchange(store, code, grant) is None
    assert store.tokens.verify(issued.access.secret) is None
    assert refresh(store, issued.refresh) is None


def test_a_token_revoked_in_the_console_cannot_be_refreshed_back(store: OAuthStore) -> None:
    code, grant = granted(store)
    issued = exchange(store, code, grant)
    assert issued is not None
    store.tokens.revoke(grant.token_name)  # the console's or the CLI's revoke
    assert store.tokens.verify(issued.access.secret) is None
    assert refresh(store, issued.refresh) is None
    assert store.grant(grant.id) is None
    # a new token given the revoked name is not the grant's: a refresh never touches it
    other = store.tokens.create(grant.token_name, "people")
    assert store.tokens.verify(other.secret) is not None


def test_two_refreshes_at_once_rotate_once(store: OAuthStore) -> None:
    code, grant = granted(store)
    issued = exchange(store, code, grant)
    assert issued is not None
    found = store.refresh_token(issued.refresh)
    assert found is not None
    barrier = threading.Barrier(4)
    results: list[Issued | None] = []

    def race() -> None:
        barrier.wait(30)
        results.append(store.exchange_refresh(found.sha256, grant.id))

    threads = [threading.Thread(target=race) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    winners = [r for r in results if r is not None]
    assert len(results) == 4 and len(winners) == 1
    assert store.tokens.verify(winners[0].access.secret) is not None


def test_a_denied_or_expired_request_gives_nothing(store: OAuthStore) -> None:
    client_id = str(uuid.uuid4())
    store.register(client_id, {"redirect_uris": [REDIRECT]})
    assert store.client(client_id) is not None and store.client(client_id).name == "127.0.0.1:9"  # type: ignore[union-attr]
    request_id = store.open_request(client_id, {"redirect_uri": REDIRECT})
    assert store.deny(request_id) is not None
    assert store.request(request_id) is None and store.deny(request_id) is None
    late = store.open_request(client_id, {"redirect_uri": REDIRECT})
    with store.db.connection() as conn:
        conn.execute("UPDATE oauth_requests SET expires_at = now() - interval '1 second'")
    assert store.request(late) is None
    assert store.approve(late, ("people",), False, approved_by="alice") is None
