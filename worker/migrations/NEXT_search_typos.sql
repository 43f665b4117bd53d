-- Typo-tolerant search: the term list of the full-text index (every index's terms, in order), read by equality
-- and by range for typo candidates (worker/src/algolia/ranked.rs). Also created at request time by
-- worker/src/d1.rs (`algolia::ranked::SCHEMA`) until the schema moves to migration files.
CREATE VIRTUAL TABLE IF NOT EXISTS records_vocab USING fts5vocab(records_fts, row);
