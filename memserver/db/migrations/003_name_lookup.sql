-- Exact name lookups for the linker and the resolver (memserver/linker.py find_named).
--
-- title_norm / slug_norm = db.normalize_name(title / slug), written by the indexer with
-- every page row (the normalisation is Python's: NFKC, case-folded, punctuation
-- collapsed; SQL cannot reproduce it exactly, so rows written before this migration
-- keep NULL until reindex fills them in, and find_named falls back to the old title
-- pattern search for those rows only, through the partial trigram index below).
ALTER TABLE pages ADD COLUMN title_norm text, ADD COLUMN slug_norm text;
CREATE INDEX pages_title_norm ON pages (title_norm);
CREATE INDEX pages_slug_norm ON pages (slug_norm);
CREATE INDEX pages_unnormalised_title_trgm ON pages USING gin (title gin_trgm_ops)
    WHERE title_norm IS NULL;

-- Every edge that names a page, resolved or not (re-matching after a write).
CREATE INDEX links_to_ref_norm ON links (to_ref_norm);
