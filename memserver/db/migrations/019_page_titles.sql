-- Every title a page has had: its title now and the ones it was renamed from. Redaction
-- (memserver.server.prose_scope) hides a hidden page's references by each of them, so a
-- renamed page's old title, still written in other pages ("[[Old title]]") and in their
-- history, is hidden as well. Written with every indexed version
-- (memserver.index.indexer.write_pages); never deleted, like page_versions.
CREATE TABLE page_titles (
    page_id     text NOT NULL,
    folder      text NOT NULL,
    title       text NOT NULL,
    title_norm  text NOT NULL,                          -- lower(title)
    PRIMARY KEY (page_id, title_norm)
);
CREATE INDEX page_titles_norm ON page_titles (title_norm, folder);

INSERT INTO page_titles (page_id, folder, title, title_norm)
SELECT id, folder, title, lower(title) FROM pages
ON CONFLICT DO NOTHING;

-- The titles of older versions, as the page renderer writes them (a plain or quoted
-- "title:" first in the frontmatter's block); the rest come with the next write.
INSERT INTO page_titles (page_id, folder, title, title_norm)
SELECT page_id, split_part(page_id, '/', 1), t, lower(t)
FROM (
    SELECT DISTINCT page_id,
        CASE
            WHEN raw LIKE '''%''' THEN replace(substr(raw, 2, length(raw) - 2), '''''', '''')
            WHEN raw LIKE '"%"' THEN substr(raw, 2, length(raw) - 2)
            ELSE raw
        END AS t
    FROM (
        SELECT page_id, btrim(substring(markdown from '^---\ntitle: ([^\n]+)\n')) AS raw
        FROM page_versions
    ) found
    WHERE raw IS NOT NULL AND raw <> ''
) titled
ON CONFLICT DO NOTHING;
