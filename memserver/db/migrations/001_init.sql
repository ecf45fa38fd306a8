-- 001_init: the whole index of a knowledge base.
--
-- The markdown files under knowledge/ are the system of record; these tables are an index
-- that `memserver reindex` can rebuild (except page_versions, conflicts, api_tokens and
-- audit_log, which are history). Conventions:
--   * a page id is "folder/slug"; every row a retrieval arm reads carries its `folder`,
--     so a token's scope is a plain `folder = ANY(%s)` in each arm;
--   * text search uses the language-neutral `simple` configuration (works for Mongolian);
--   * vector columns have no dimension here: Database.ensure_embedding() types them
--     (vector(dims)) and creates their HNSW cosine indexes once the model is known;
--   * `stale` = the row's embedding is missing or out of date (embed on next reindex).
-- Extensions `vector` and `pg_trgm` are created by Database before migrations run.

CREATE TABLE index_meta (
    key         text PRIMARY KEY,
    value       text NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE pages (
    id              text PRIMARY KEY,                 -- "folder/slug"
    folder          text NOT NULL,
    slug            text NOT NULL,
    title           text NOT NULL,
    type            text NOT NULL,
    fields          jsonb NOT NULL DEFAULT '{}'::jsonb,  -- frontmatter fields (dates as ISO strings)
    effective_date  date,                             -- when the page is about
    version         integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    content_hash    text NOT NULL,                    -- sha256 of the rendered markdown
    body            text NOT NULL,                    -- the rendered markdown
    title_tsv       tsvector GENERATED ALWAYS AS (to_tsvector('simple', title)) STORED,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pages_folder_slug UNIQUE (folder, slug),
    CONSTRAINT pages_id_is_folder_slug CHECK (id = folder || '/' || slug)
);
CREATE INDEX pages_folder_date ON pages (folder, effective_date);
CREATE INDEX pages_folder_updated ON pages (folder, updated_at);
CREATE INDEX pages_slug ON pages (slug);
CREATE INDEX pages_lower_title ON pages (lower(title));
CREATE INDEX pages_title_trgm ON pages USING gin (title gin_trgm_ops);
CREATE INDEX pages_title_tsv ON pages USING gin (title_tsv);
CREATE INDEX pages_fields ON pages USING gin (fields jsonb_path_ops);

-- Every version ever written (restore writes an old one again as a new version).
-- No foreign key: history outlives a page's index row (reindex --force, deletion).
CREATE TABLE page_versions (
    page_id       text NOT NULL,
    version       integer NOT NULL CHECK (version >= 1),
    markdown      text NOT NULL,
    content_hash  text NOT NULL,
    written_by    text,                               -- token name, "reindex", "cli", ...
    note          text,                               -- e.g. the source that caused it
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, version)
);

-- Aliases (and any other name a page answers to). alias_norm = db.normalize_name(alias).
CREATE TABLE page_aliases (
    page_id     text NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    folder      text NOT NULL,
    alias       text NOT NULL,
    alias_norm  text NOT NULL,
    PRIMARY KEY (page_id, alias_norm)
);
CREATE INDEX page_aliases_norm ON page_aliases (alias_norm, folder);
CREATE INDEX page_aliases_trgm ON page_aliases USING gin (alias_norm gin_trgm_ops);

-- Retrieval chunks of a page (page.chunk_page); `effective_date` is the chunk's own date
-- (a timeline chunk) or else the page's effective date.
CREATE TABLE chunks (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    page_id         text NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    folder          text NOT NULL,
    ordinal         integer NOT NULL,
    section         text NOT NULL,
    text            text NOT NULL,
    tsv             tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
    embedding       vector,
    stale           boolean NOT NULL DEFAULT true,
    effective_date  date,
    CONSTRAINT chunks_page_ordinal UNIQUE (page_id, ordinal)
);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_folder_date ON chunks (folder, effective_date);
CREATE INDEX chunks_stale ON chunks (page_id) WHERE stale;

-- Typed edges. to_id is NULL until the target exists; to_ref keeps the name as written
-- (to_ref_norm = db.normalize_name(to_ref)) so the edge wires itself when it appears.
CREATE TABLE links (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    from_id      text NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    from_folder  text NOT NULL,
    verb         text NOT NULL,
    to_id        text REFERENCES pages (id) ON DELETE SET NULL,
    to_ref       text NOT NULL,
    to_ref_norm  text NOT NULL,
    to_folder    text,                                -- the target's folder, when known
    origin       text NOT NULL CHECK (origin IN ('field', 'prose', 'wikilink', 'mdlink')),
    CONSTRAINT links_unique UNIQUE (from_id, verb, to_ref_norm, origin)
);
CREATE INDEX links_from ON links (from_id, verb);
CREATE INDEX links_to ON links (to_id, verb);
CREATE INDEX links_unresolved ON links (to_ref_norm) WHERE to_id IS NULL;
CREATE INDEX links_folders ON links (from_folder, to_folder);

-- One row per timeline bullet of a page, with its own date.
CREATE TABLE timeline_entries (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    page_id    text NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    folder     text NOT NULL,
    ordinal    integer NOT NULL,                      -- position on the page (0 = newest)
    date       date NOT NULL,
    text       text NOT NULL,
    source     text,
    tsv        tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
    embedding  vector,
    stale      boolean NOT NULL DEFAULT true,
    CONSTRAINT timeline_page_ordinal UNIQUE (page_id, ordinal)
);
CREATE INDEX timeline_folder_date ON timeline_entries (folder, date);
CREATE INDEX timeline_page_date ON timeline_entries (page_id, date);
CREATE INDEX timeline_tsv ON timeline_entries USING gin (tsv);
CREATE INDEX timeline_stale ON timeline_entries (page_id) WHERE stale;

-- Raw sources (paths relative to source/), mirrored from manifest.json by reindex.
CREATE TABLE source_docs (
    path        text PRIMARY KEY,
    folder      text NOT NULL DEFAULT 'source' CHECK (folder = 'source'),
    hash        text NOT NULL,
    doc_date    date,
    status      text NOT NULL DEFAULT 'pending',      -- manifest.Status value
    size        bigint,
    title       text,
    indexed_at  timestamptz,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX source_docs_date ON source_docs (doc_date);

CREATE TABLE source_chunks (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    path       text NOT NULL REFERENCES source_docs (path) ON DELETE CASCADE,
    folder     text NOT NULL DEFAULT 'source' CHECK (folder = 'source'),
    ordinal    integer NOT NULL,
    text       text NOT NULL,
    tsv        tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
    embedding  vector,
    stale      boolean NOT NULL DEFAULT true,
    doc_date   date,
    CONSTRAINT source_chunks_path_ordinal UNIQUE (path, ordinal)
);
CREATE INDEX source_chunks_tsv ON source_chunks USING gin (tsv);
CREATE INDEX source_chunks_date ON source_chunks (doc_date);
CREATE INDEX source_chunks_stale ON source_chunks (path) WHERE stale;

-- Facts that changed or contradict (ingest merge). Values are JSON (any field type).
CREATE TABLE conflicts (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    page_id      text NOT NULL,
    folder       text NOT NULL,
    field        text NOT NULL,
    old_value    jsonb,
    new_value    jsonb,
    old_source   text,
    new_source   text,
    status       text NOT NULL CHECK (status IN ('superseded', 'unresolved', 'resolved')),
    note         text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    resolved_at  timestamptz
);
CREATE INDEX conflicts_page ON conflicts (page_id, created_at);
CREATE INDEX conflicts_open ON conflicts (folder) WHERE status = 'unresolved';

CREATE TABLE api_tokens (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    sha256      text NOT NULL UNIQUE,                 -- hex digest of the secret
    folders     text[] NOT NULL,                      -- schema folders, 'source' or '*'
    write       boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz,
    revoked_at  timestamptz
);

CREATE TABLE audit_log (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at   timestamptz NOT NULL DEFAULT now(),
    token_name   text,
    tool         text NOT NULL,
    args_digest  text NOT NULL,
    outcome      text NOT NULL,                       -- "ok" or "error:<kind>"
    duration_ms  double precision NOT NULL
);
CREATE INDEX audit_log_time ON audit_log (created_at);
CREATE INDEX audit_log_token ON audit_log (token_name, created_at);
