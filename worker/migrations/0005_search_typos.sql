-- Typo-tolerant search: the term list of the full-text index (every index's terms, in order), read by equality
-- and by range for typo candidates (worker/src/algolia/ranked.rs).
CREATE VIRTUAL TABLE IF NOT EXISTS records_vocab USING fts5vocab(records_fts, row);
