-- Raw sources as whole notes, beside their sentences (source_chunks):
--
-- * source_terms: the words of each note (its text, with its date written out and its
--   speakers' names), for the note-level keyword arm (BM25 over whole notes);
--   source_docs.words is the note's length in words, source_docs.note_key what the rows
--   were computed from (format and date: a note whose date changes is read again).
-- * source_mentions: the dates a note's sentences mention ("yesterday", "in 2021",
--   "on Sunday"), resolved against the note's own date, as [start_date, end_date).
ALTER TABLE source_docs ADD COLUMN words integer;
ALTER TABLE source_docs ADD COLUMN note_key text;

CREATE TABLE source_terms (
    term  text COLLATE "C" NOT NULL,
    path  text NOT NULL REFERENCES source_docs (path) ON DELETE CASCADE,
    tf    integer NOT NULL,
    PRIMARY KEY (term, path)
);
CREATE INDEX source_terms_path ON source_terms (path);

CREATE TABLE source_mentions (
    path        text NOT NULL REFERENCES source_docs (path) ON DELETE CASCADE,
    ordinal     integer NOT NULL,
    start_date  date NOT NULL,
    end_date    date NOT NULL
);
CREATE INDEX source_mentions_path ON source_mentions (path);
CREATE INDEX source_mentions_span ON source_mentions (start_date, end_date);
