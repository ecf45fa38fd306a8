-- Other readings of an edge's target name (normalised), tried in order after to_ref_norm.
--
-- A name written before its verb ("Бат Ганбаатарт тайлагнадаг", link-verb patterns that
-- start with {name}) carries a case ending and may begin with a word that is not part of
-- it; the linker stores the most likely reading in to_ref / to_ref_norm and the others
-- here, and points the edge at the first reading that names a page, whether that page
-- exists when the edge is written or appears later (so write order never matters).
ALTER TABLE links ADD COLUMN to_ref_forms text[] NOT NULL DEFAULT '{}';
CREATE INDEX links_to_ref_forms ON links USING gin (to_ref_forms) WHERE to_ref_forms <> '{}';
