-- What held when: every value a page's field (status included) has had, with the dates
-- it held in the world (`valid_from`, `valid_to`; NULL = still holds) and the date the
-- memory learned it (`recorded_at`: the date of the source note that brought it), with
-- that source. A changed value closes the previous row (`valid_to` = the new value's
-- `valid_from`, `ended_version`/`ended_source` = the write that replaced it) and opens a
-- new one; nothing is ever deleted by a page write (memserver.store.validity).
--
-- The rows are derived from page_versions, so `memserver reindex` rebuilds them for any
-- page whose replayed version (`field_history_pages.version`) lags its newest version,
-- and reindex --force rebuilds them all: the same versions and source dates give the
-- same history. No foreign key to pages: history outlives a page's index row.
CREATE TABLE field_values (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    page_id        text NOT NULL,
    folder         text NOT NULL,
    field          text NOT NULL,
    value          jsonb NOT NULL,
    valid_from     date NOT NULL,
    valid_to       date,                              -- NULL: still holds
    recorded_at    date NOT NULL,
    source         text,                              -- the note that brought it
    version        integer NOT NULL,                  -- the page version that set it
    ended_version  integer,                           -- the version that replaced it
    ended_source   text
);
CREATE INDEX field_values_page ON field_values (page_id, field, valid_from);
CREATE INDEX field_values_open ON field_values (page_id) WHERE ended_version IS NULL;
CREATE INDEX field_values_folder ON field_values (folder, recorded_at);

CREATE TABLE field_history_pages (
    page_id  text PRIMARY KEY,
    version  integer NOT NULL                         -- the newest version replayed
);
