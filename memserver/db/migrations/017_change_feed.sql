-- What changed, for kb_wakeup (memserver.store.changes): one row per page version
-- written, conflict recorded or closed, change flagged for review or decided. Triggers
-- write the rows, so every writer (the server, the console, the CLI, reindex, another
-- process on this database) lands here in the same transaction as its change.
--
-- `xid` is the writing transaction (pg_current_xact_id()). A reader's cursor is the
-- snapshot it read under (pg_current_snapshot()); the next read takes the rows whose
-- transaction that snapshot did not see (NOT pg_visible_in_snapshot(xid, cursor)) and the
-- current one does. A transaction that was still running when the cursor was taken is in
-- the snapshot's in-progress list, so its rows come with the next read, whatever order
-- the transactions committed in: no sequence number that commits out of order, no lock.
-- `id` only orders rows for display. Nothing here is a system of record: `at` is the time
-- of the write; the page, conflict and review rows hold the rest.
CREATE TABLE changes (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    xid      xid8 NOT NULL DEFAULT pg_current_xact_id(),
    at       timestamptz NOT NULL DEFAULT now(),
    kind     text NOT NULL CHECK (kind IN (
                 'page',                                   -- a page version was written
                 'conflict_unresolved', 'conflict_superseded', 'conflict_resolved',
                 'review_pending', 'review_accepted', 'review_rejected', 'review_edited')),
    page_id  text NOT NULL,
    folder   text NOT NULL,
    version  integer,                                      -- the page version ('page', reviews)
    ref      bigint                                        -- conflicts.id or page_reviews.id
);
CREATE INDEX changes_xid ON changes (xid);
CREATE INDEX changes_at ON changes (at);
CREATE INDEX changes_page ON changes (page_id, id);

CREATE FUNCTION changes_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'page_versions' THEN
        INSERT INTO changes (kind, page_id, folder, version)
        VALUES ('page', NEW.page_id, split_part(NEW.page_id, '/', 1), NEW.version);
        -- delivered at commit to the servers that LISTEN (memserver.server.notifications)
        PERFORM pg_notify('memserver_pages', NEW.page_id);
    ELSIF TG_TABLE_NAME = 'conflicts' THEN
        IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status THEN
            INSERT INTO changes (kind, page_id, folder, ref)
            VALUES ('conflict_' || NEW.status, NEW.page_id, NEW.folder, NEW.id);
        END IF;
    ELSIF TG_TABLE_NAME = 'page_reviews' THEN
        IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status THEN
            INSERT INTO changes (kind, page_id, folder, version, ref)
            VALUES ('review_' || NEW.status, NEW.page_id, NEW.folder, NEW.version, NEW.id);
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER page_versions_changes AFTER INSERT ON page_versions
    FOR EACH ROW EXECUTE FUNCTION changes_record();
CREATE TRIGGER conflicts_changes AFTER INSERT OR UPDATE OF status ON conflicts
    FOR EACH ROW EXECUTE FUNCTION changes_record();
CREATE TRIGGER page_reviews_changes AFTER INSERT OR UPDATE OF status ON page_reviews
    FOR EACH ROW EXECUTE FUNCTION changes_record();

-- What happened before this migration, dated as it happened (one transaction: the
-- first cursor taken after it sees all of it).
INSERT INTO changes (at, kind, page_id, folder, version)
    SELECT created_at, 'page', page_id, split_part(page_id, '/', 1), version
    FROM page_versions ORDER BY created_at, page_id, version;
INSERT INTO changes (at, kind, page_id, folder, ref)
    SELECT created_at, CASE status WHEN 'resolved' THEN 'conflict_unresolved'
                                   ELSE 'conflict_' || status END, page_id, folder, id
    FROM conflicts ORDER BY created_at, id;
INSERT INTO changes (at, kind, page_id, folder, ref)
    SELECT coalesce(resolved_at, created_at), 'conflict_resolved', page_id, folder, id
    FROM conflicts WHERE status = 'resolved' ORDER BY resolved_at, id;
INSERT INTO changes (at, kind, page_id, folder, version, ref)
    SELECT created_at, 'review_pending', page_id, folder, version, id
    FROM page_reviews ORDER BY created_at, id;
INSERT INTO changes (at, kind, page_id, folder, version, ref)
    SELECT coalesce(decided_at, created_at), 'review_' || status, page_id, folder, version, id
    FROM page_reviews WHERE status <> 'pending' ORDER BY decided_at, id;
