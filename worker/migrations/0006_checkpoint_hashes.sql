-- Reorganization safety (worker/src/indexer/reorg.rs): the hash of each block the indexer completed a window at, the
-- newest ones per chain (a window of them, older rows deleted as new ones come). Each run compares the newest with
-- the chain's block of that number; when they differ, the newest row the chain still has is the common ancestor the
-- checkpoint rewinds to.
CREATE TABLE IF NOT EXISTS checkpoint_hashes (chain_id INTEGER NOT NULL, block INTEGER NOT NULL, hash TEXT NOT NULL,
  PRIMARY KEY (chain_id, block));
