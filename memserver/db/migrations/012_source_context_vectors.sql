-- A raw source sentence gets a second vector: that of its context, the sentence with its
-- neighbours (memserver.kb.chunks.source_context). The source vector arm scores a
-- sentence by the better of its own cosine and its context's, so a turn of a conversation
-- that leans on the turns around it is found through them, while a lone fact among
-- unrelated sentences still scores by itself (memserver.search.source_arms).
--
-- `context` is the text embedded, `context_hash` its SHA-256 (a context is embedded once,
-- like every text: memserver.index.embedding), `context_stale` whether its vector is still
-- to be written. Rows indexed before have no context (NULL, not stale): the arm scores
-- them by their own vector until the next reindex re-cuts every source (the source chunk
-- format changed with this column) and embeds their contexts.
ALTER TABLE source_chunks ADD COLUMN context text;
ALTER TABLE source_chunks ADD COLUMN context_hash bytea;
ALTER TABLE source_chunks ADD COLUMN context_embedding vector;
ALTER TABLE source_chunks ADD COLUMN context_stale boolean NOT NULL DEFAULT false;
CREATE INDEX source_chunks_context_hash ON source_chunks (context_hash);
CREATE INDEX source_chunks_context_stale ON source_chunks (path) WHERE context_stale;

-- An index whose model is already recorded had its vector columns typed and indexed when
-- that happened (memserver.db.vectors.retype_vectors); the new column gets the same now.
DO $$
DECLARE
    dims integer;
BEGIN
    SELECT value::integer INTO dims FROM index_meta WHERE key = 'embedding_dims';
    IF dims IS NULL THEN
        RETURN;
    END IF;
    EXECUTE format('ALTER TABLE source_chunks ALTER COLUMN context_embedding TYPE vector(%s)', dims);
    IF dims <= 2000 THEN
        CREATE INDEX source_chunks_context_embedding_hnsw ON source_chunks
            USING hnsw (context_embedding vector_cosine_ops);
    ELSE
        EXECUTE format('CREATE INDEX source_chunks_context_embedding_hnsw ON source_chunks'
            ' USING hnsw ((context_embedding::halfvec(%s)) halfvec_cosine_ops)', dims);
    END IF;
END $$;
