-- Algolia deletions (worker/src/search.rs `flush_deletes`): a record that leaves the D1 index (its contract gone,
-- reorganized away, no longer a profile or asset) is queued here in the same batch, when Algolia is configured, and
-- deleted from the Algolia index by the next indexer run (deleteObject batch actions, a bounded number per run). A
-- failed deletion stays queued with a backoff (`attempts`, `next_attempt_at` in seconds, Algolia's answer in
-- `message`); a record written again before its deletion leaves the queue.
CREATE TABLE IF NOT EXISTS algolia_deletes (index_name TEXT NOT NULL, object_id TEXT NOT NULL,
  attempts INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, message TEXT, PRIMARY KEY (index_name, object_id));
