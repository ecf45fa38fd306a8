"""OAuth 2.1 for remote MCP clients, on the ``mcp`` SDK's authorization server.

The SDK serves the protocol: authorization server metadata (RFC 8414), dynamic client
registration (RFC 7591), ``/authorize`` (PKCE S256 required), ``/token`` (the code and
refresh grants, PKCE checked), ``/revoke`` (RFC 7009), and the protected resource
metadata of ``/mcp`` (RFC 9728) that tells a client where all that is. :class:`MemoryOAuth`
is the SDK's ``OAuthAuthorizationServerProvider`` over :mod:`memserver.server.oauth_store`:

- a client registers as a *public* client (PKCE, no client secret: the server replaces a
  secret-based method with ``none``, as RFC 7591 section 3.2.1 lets it), so no client
  secret is ever kept;
- ``/authorize`` keeps the request and sends the browser to the console's consent page,
  where a signed-in person approves the client for some of their own folders, read or
  write (:mod:`memserver.console.consent`), and the browser goes back to the client with
  a code;
- the code buys an ordinary scoped token of ours (``TokenStore.issue``: the same scope
  checks, audit rows, expiry and revocation as any token, listed in the console with the
  client's name) and a refresh token; each refresh rotates both;
- revoking (``/revoke``, the console, ``memserver token revoke``) writes the token's
  row, which every request on every server sharing the database checks.

No secret is logged or audited: audit rows name the client and the grant's token.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlencode

import anyio
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import (
    build_resource_metadata_url,
    create_auth_routes,
    create_protected_resource_routes,
    validate_issuer_url,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter, ValidationError
from starlette.routing import Route

from memserver.server.oauth_store import Code, Issued, OAuthStore, Refresh, Request

if TYPE_CHECKING:
    from memserver.server.audit import AuditLog
    from memserver.server.tokens import TokenStore

logger = logging.getLogger(__name__)

SCOPES = ["read", "write"]  # OAuth scopes; the folders are chosen on the consent page
MCP_PATH = "/mcp"
# URLs as written: an issuer without a path stays without one (RFC 8414 compares issuers
# as strings), as the SDK's own settings keep them.
_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))


class StoredCode(AuthorizationCode):
    """The SDK's authorization code, carrying our record (``code`` is its SHA-256)."""

    grant_id: int


class StoredRefresh(RefreshToken):
    """The SDK's refresh token, carrying our record (``token`` is its SHA-256)."""

    grant_id: int


class MemoryOAuth(OAuthAuthorizationServerProvider[StoredCode, StoredRefresh, AccessToken]):
    """The authorization server of one memory server (see the module docstring)."""

    def __init__(
        self, store: OAuthStore, issuer: str, consent_path: str, audit: AuditLog | None = None
    ) -> None:
        self.store = store
        self.issuer = issuer.rstrip("/")
        self.consent_url = self.issuer + consent_path
        self.audit = audit

    @property
    def resource(self) -> str:
        """The protected resource: the MCP endpoint."""
        return self.issuer + MCP_PATH

    @property
    def resource_metadata_url(self) -> str:
        return str(build_resource_metadata_url(_URL.validate_python(self.resource)))

    # -- clients -------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        client = await anyio.to_thread.run_sync(self.store.client, client_id)
        if client is None:
            return None
        return OAuthClientInformationFull.model_validate(client.metadata)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        # A public client: the response the SDK sends is this object, so the client learns
        # it has no secret and authenticates with PKCE alone.
        client_info.token_endpoint_auth_method = "none"
        client_info.client_secret = None
        client_info.client_secret_expires_at = None
        metadata = client_info.model_dump(mode="json", exclude_none=True)
        client = await anyio.to_thread.run_sync(
            self.store.register, client_info.client_id or "", metadata
        )
        await self._audit(client.name, "oauth.register", client.client_id, "ok")

    # -- authorization -------------------------------------------------------------

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        """Keep the request; the browser goes to the consent page."""
        kept = params.model_dump(mode="json")
        request_id = await anyio.to_thread.run_sync(
            self.store.open_request, client.client_id or "", kept
        )
        return f"{self.consent_url}?{urlencode({'request': request_id})}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> StoredCode | None:
        code = await anyio.to_thread.run_sync(self.store.code, authorization_code)
        if code is None or code.grant.client_id != client.client_id:
            return None
        return _stored_code(code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: StoredCode
    ) -> OAuthToken:
        issued = await anyio.to_thread.run_sync(
            self.store.exchange_code, authorization_code.code, authorization_code.grant_id
        )
        if issued is None:
            await self._audit(client.client_id, "oauth.token", client.client_id, "error:replay")
            raise TokenError("invalid_grant", "this authorization code was already used")
        await self._audit(issued.grant.token_name, "oauth.token", client.client_id, "ok")
        return _token(issued)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> StoredRefresh | None:
        refresh = await anyio.to_thread.run_sync(self.store.refresh_token, refresh_token)
        if refresh is None or refresh.grant.client_id != client.client_id:
            return None
        return _stored_refresh(refresh)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: StoredRefresh, scopes: list[str]
    ) -> OAuthToken:
        issued = await anyio.to_thread.run_sync(
            self.store.exchange_refresh, refresh_token.token, refresh_token.grant_id
        )
        if issued is None:
            await self._audit(client.client_id, "oauth.refresh", client.client_id, "error:revoked")
            raise TokenError("invalid_grant", "this grant was revoked; authorize again")
        await self._audit(issued.grant.token_name, "oauth.refresh", client.client_id, "ok")
        return _token(issued)

    # -- access tokens and revocation ----------------------------------------------

    async def load_access_token(self, token: str) -> AccessToken | None:
        """An access token of a live grant (the revocation endpoint asks)."""
        grant = await anyio.to_thread.run_sync(self.store.grant_of_access, token)
        if grant is None:
            return None
        return _GrantAccess(
            token=f"grant:{grant.id}",
            client_id=grant.client_id,
            scopes=grant.scopes,
            grant_id=grant.id,
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        grant_id = getattr(token, "grant_id", None)
        if grant_id is None:
            return
        await anyio.to_thread.run_sync(self.store.revoke, int(grant_id))
        await self._audit(f"grant:{grant_id}", "oauth.revoke", token.client_id, "ok")

    # -- consent (the console) -----------------------------------------------------

    def pending(self, request_id: str) -> Request | None:
        """The request a consent page shows (blocking: call it in a worker thread)."""
        return self.store.request(request_id)

    def approve(
        self, request_id: str, folders: Sequence[str], write: bool, approved_by: str
    ) -> str | None:
        """The URL that takes the browser back to the client with a code (None: the request
        was already answered or expired). Blocking."""
        approved = self.store.approve(request_id, folders, write, approved_by)
        if approved is None:
            return None
        request, code = approved
        return construct_redirect_uri(
            str(request.params["redirect_uri"]), code=code, state=request.params.get("state")
        )

    def deny(self, request_id: str) -> str | None:
        """The URL that tells the client the person said no (None: already answered)."""
        request = self.store.deny(request_id)
        if request is None:
            return None
        return construct_redirect_uri(
            str(request.params["redirect_uri"]),
            error="access_denied",
            error_description="the person declined",
            state=request.params.get("state"),
        )

    def routes(self) -> list[Route]:
        """The SDK's routes: metadata, registration, authorize, token, revoke, and the MCP
        endpoint's protected resource metadata."""
        issuer = _URL.validate_python(self.issuer)
        return [
            *create_auth_routes(
                provider=self,
                issuer_url=issuer,
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES
                ),
                revocation_options=RevocationOptions(enabled=True),
            ),
            *create_protected_resource_routes(
                resource_url=_URL.validate_python(self.resource),
                authorization_servers=[issuer],
                scopes_supported=SCOPES,
                resource_name="Memory System",
            ),
        ]

    async def _audit(
        self, who: str | None, action: str, client_id: str | None, outcome: str
    ) -> None:
        """An audit row naming the grant's token (or the client), never a secret."""
        if self.audit is not None:
            arguments = {"client_id": client_id or ""}
            await anyio.to_thread.run_sync(
                self.audit.record, who or "-", action, arguments, outcome, 0.0
            )


class _GrantAccess(AccessToken):
    """An access token as the revocation endpoint sees it: which grant it is."""

    grant_id: int


def oauth_for(
    tokens: TokenStore | None, audit: AuditLog | None, public_url: str | None, consent_path: str
) -> MemoryOAuth | None:
    """The authorization server of a memory server reached at ``public_url``, or None when
    OAuth cannot run there: no token store (stdio), or a URL that is neither HTTPS nor
    HTTP on a loopback address (OAuth sends codes and tokens; RFC 8414 wants HTTPS)."""
    if tokens is None or not public_url:
        return None
    try:
        validate_issuer_url(_URL.validate_python(public_url))
    except (ValueError, ValidationError) as exc:
        logger.warning(
            "OAuth is off at %s (%s): set a public https URL to turn it on", public_url, exc
        )
        return None
    return MemoryOAuth(OAuthStore(tokens), public_url, consent_path, audit)


def _stored_code(code: Code) -> StoredCode:
    params = code.params
    return StoredCode(
        code=code.sha256,
        scopes=code.grant.scopes,
        expires_at=code.expires_at.timestamp(),
        client_id=code.grant.client_id,
        code_challenge=params["code_challenge"],
        redirect_uri=params["redirect_uri"],
        redirect_uri_provided_explicitly=params["redirect_uri_provided_explicitly"],
        resource=params.get("resource"),
        grant_id=code.grant.id,
    )


def _stored_refresh(refresh: Refresh) -> StoredRefresh:
    return StoredRefresh(
        token=refresh.sha256,
        client_id=refresh.grant.client_id,
        scopes=refresh.grant.scopes,
        expires_at=int(refresh.expires_at.timestamp()),
        grant_id=refresh.grant.id,
    )


def _token(issued: Issued) -> OAuthToken:
    expires = issued.access.token.expires
    return OAuthToken(
        access_token=issued.access.secret,
        token_type="Bearer",
        expires_in=int(expires.timestamp() - time.time()) if expires else None,
        scope=" ".join(issued.grant.scopes),
        refresh_token=issued.refresh,
    )
