-- Tokens and the audit log live in PostgreSQL (memserver/tokens.py, memserver/audit.py).
--
-- api_tokens: a revoked token keeps its row (history for `token list` and the audit
-- trail), and its name may then be given to a new token. So a name is unique only among
-- tokens that are not revoked. Verification looks tokens up by sha256 (unique index
-- from 001).
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_name_key;
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (name) WHERE revoked_at IS NULL;
CREATE INDEX api_tokens_name ON api_tokens (name, created_at);

-- audit_log is append-only: the code has no UPDATE or DELETE path, and the database
-- refuses one too. (An owner who must prune it can ALTER TABLE ... DISABLE TRIGGER.)
-- `last used` per token is max(created_at) over audit_log_token (token_name, created_at).
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_log_no_update_delete BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
