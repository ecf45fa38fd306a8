-- Which ingest agent works on which raw source right now: a lease per source path, so
-- that two agents (against one memory server or several over this database) never
-- ingest the same note at once (memserver.store.leases, the source_claim and
-- source_release tools). A lease past `expires_at` (an agent that died) can be taken
-- by the next agent that asks.
CREATE TABLE source_leases (
    path text PRIMARY KEY,
    holder text NOT NULL,
    expires_at timestamptz NOT NULL
);
