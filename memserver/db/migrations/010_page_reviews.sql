-- Changes flagged for a person's review (the web console's review view).
--
-- A flagged change is a page version that was written (it is the page's content, so
-- nothing waits or is lost) and listed here until someone decides: `accepted` (kept as
-- is), `rejected` (the version before it was written again, `result_version`) or
-- `edited` (a corrected version was written, `result_version`). A writer flags a change
-- with `put_page(..., review=<why>)` (kb_put_page's `review` argument). Decisions are
-- also in the audit log.
CREATE TABLE page_reviews (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    page_id         text NOT NULL,
    folder          text NOT NULL,
    version         integer NOT NULL,                 -- the flagged version
    base_version    integer,                          -- the version it replaced (NULL: created)
    reason          text NOT NULL,
    flagged_by      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'accepted', 'rejected', 'edited')),
    decided_by      text,
    decided_at      timestamptz,
    result_version  integer,
    CONSTRAINT page_reviews_version UNIQUE (page_id, version)
);
CREATE INDEX page_reviews_pending ON page_reviews (folder, created_at) WHERE status = 'pending';
