-- The schema the Worker created at request time until migrations became files (IF NOT EXISTS: a database written
-- by that release already has these tables and keeps them as they are).

-- search (search.rs): records and their full-text rows, per index; the records Algolia refused
CREATE TABLE IF NOT EXISTS records (index_name TEXT NOT NULL, object_id TEXT NOT NULL, address TEXT NOT NULL,
  token_id TEXT, kind TEXT NOT NULL, record TEXT NOT NULL, indexed_block INTEGER, updated_at INTEGER,
  PRIMARY KEY (index_name, object_id));
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(index_name UNINDEXED, object_id UNINDEXED, name, symbol,
  description, tags, address, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS push_rejections (index_name TEXT NOT NULL, object_id TEXT NOT NULL, message TEXT,
  attempts INTEGER NOT NULL, updated_at INTEGER, PRIMARY KEY (index_name, object_id));

-- the indexer (indexer/writer.rs): the cursor per chain, unindexable candidates, retries
CREATE TABLE IF NOT EXISTS checkpoints (chain_id INTEGER PRIMARY KEY, next_block INTEGER NOT NULL, updated_at INTEGER,
  next_item INTEGER NOT NULL DEFAULT 0, window INTEGER);
CREATE TABLE IF NOT EXISTS unindexable (chain_id INTEGER NOT NULL, object_id TEXT NOT NULL, address TEXT NOT NULL,
  token_id TEXT, code TEXT NOT NULL, message TEXT, block INTEGER, attempts INTEGER NOT NULL, updated_at INTEGER,
  PRIMARY KEY (chain_id, object_id));
CREATE TABLE IF NOT EXISTS retries (index_name TEXT NOT NULL, object_id TEXT NOT NULL, address TEXT NOT NULL,
  token_id TEXT, attempts INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, reason TEXT,
  PRIMARY KEY (index_name, object_id));

-- lookups (lookup/misses.rs): addresses found to hold no profile or asset
CREATE TABLE IF NOT EXISTS lookup_misses (chain_id INTEGER NOT NULL, address TEXT NOT NULL, standard TEXT NOT NULL,
  checked_at INTEGER NOT NULL, PRIMARY KEY (chain_id, address));
CREATE INDEX IF NOT EXISTS lookup_misses_checked_at ON lookup_misses (checked_at);

-- the bounded R2 caches (r2_cache.rs): what the IPFS relay and /image stored
CREATE TABLE IF NOT EXISTS relay_cache (cid TEXT PRIMARY KEY, size INTEGER NOT NULL, stored_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS image_cache (key TEXT PRIMARY KEY, size INTEGER NOT NULL, stored_at INTEGER NOT NULL);

-- one-time data migrations already run (the request-time code's markers)
CREATE TABLE IF NOT EXISTS schema_marks (name TEXT PRIMARY KEY);
