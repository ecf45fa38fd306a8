-- Every chunk and source chunk carries the SHA-256 of its text, so a text is embedded once.
--
-- A vector depends only on the embedding model and the text, and the index holds vectors
-- of one model (index_meta.embedding_model; a model switch clears them all). A write looks
-- its texts up by hash first and embeds only those no row holds yet: a page put again
-- keeps the vectors of its unchanged chunks, and a sentence shared by a page and a source,
-- or by two sources, is embedded once. The background embedder fills every stale row of a
-- text with one vector (memserver/index/embedding.py). Writers compute the hash of the
-- UTF-8 text (memserver.index.indexer.text_hash); rows written before are hashed here.
ALTER TABLE chunks ADD COLUMN text_hash bytea;
ALTER TABLE source_chunks ADD COLUMN text_hash bytea;
UPDATE chunks SET text_hash = sha256(convert_to(text, 'UTF8'));
UPDATE source_chunks SET text_hash = sha256(convert_to(text, 'UTF8'));
ALTER TABLE chunks ALTER COLUMN text_hash SET NOT NULL;
ALTER TABLE source_chunks ALTER COLUMN text_hash SET NOT NULL;
CREATE INDEX chunks_text_hash ON chunks (text_hash);
CREATE INDEX source_chunks_text_hash ON source_chunks (text_hash);
