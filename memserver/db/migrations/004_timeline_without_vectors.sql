-- Timeline entries keep no vector of their own.
--
-- Every timeline entry is also a chunk of its page (section "Timeline", with the entry's
-- date as the chunk's effective date), embedded with the same text, and the vector arm
-- searches chunks; the entry's own vector was an identical copy that no query read. It
-- cost a second HNSW index over a third of all vectors (a quarter of a bulk reindex's
-- index build). The timeline arm finds entries through their tsvector and dates.
DROP INDEX IF EXISTS timeline_entries_embedding_hnsw;
DROP INDEX IF EXISTS timeline_stale;
DELETE FROM index_meta WHERE key = 'suspended_index:timeline_entries_embedding_hnsw';
ALTER TABLE timeline_entries DROP COLUMN IF EXISTS embedding, DROP COLUMN IF EXISTS stale;
