-- OAuth 2.1 for remote MCP clients (memserver.server.oauth, memserver.server.oauth_store).
--
-- A client registers itself (dynamic client registration) as a public client: PKCE, no
-- client secret. It sends a person to the console's consent page; the person approves it
-- for some folders, read or write: that is a *grant*. A grant's access token is an
-- ordinary row of api_tokens (same scope checks, expiry, revocation, audit rows), marked
-- with the grant and the client's name; a refresh rotates that row's secret in place, so
-- one grant is one row in the tokens list. Every secret here (authorization codes,
-- refresh tokens, consent request ids) is stored as its SHA-256, as token secrets are.
-- A refresh token used twice (a stolen copy) revokes its grant.
CREATE TABLE oauth_clients (
    client_id   text PRIMARY KEY,
    name        text NOT NULL,                       -- client_name, else its redirect host
    metadata    jsonb NOT NULL,                      -- the registered metadata (no secret)
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- An authorization request waiting for a person on the consent page.
CREATE TABLE oauth_requests (
    id_sha256   text PRIMARY KEY,
    client_id   text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    params      jsonb NOT NULL,                      -- state, PKCE challenge, redirect URI, scopes
    expires_at  timestamptz NOT NULL
);
CREATE INDEX oauth_requests_expiry ON oauth_requests (expires_at);

CREATE TABLE oauth_grants (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id    text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    token_name   text NOT NULL,                      -- its api_tokens row
    folders      text[] NOT NULL,
    write        boolean NOT NULL,
    approved_by  text NOT NULL,                      -- the console user (token name)
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);

CREATE TABLE oauth_codes (
    code_sha256  text PRIMARY KEY,
    grant_id     bigint NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    params       jsonb NOT NULL,                     -- PKCE challenge, redirect URI, resource
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz
);

CREATE TABLE oauth_refresh_tokens (
    token_sha256  text PRIMARY KEY,
    grant_id      bigint NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz                        -- rotated away
);
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id);

ALTER TABLE api_tokens ADD COLUMN oauth_grant bigint REFERENCES oauth_grants (id);
ALTER TABLE api_tokens ADD COLUMN client text;       -- the OAuth client's name, shown in lists
CREATE UNIQUE INDEX api_tokens_oauth_grant ON api_tokens (oauth_grant);

-- A revoked token's open MCP listen streams end at once on every server that LISTENs
-- (memserver.server.notifications); its requests are refused by the row itself.
CREATE FUNCTION api_tokens_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.revoked_at IS NOT NULL AND OLD.revoked_at IS NULL THEN
        PERFORM pg_notify('memserver_tokens', NEW.name);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER api_tokens_revoked AFTER UPDATE OF revoked_at ON api_tokens
    FOR EACH ROW EXECUTE FUNCTION api_tokens_revoked();
