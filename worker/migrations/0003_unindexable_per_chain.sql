-- Builds of the single-chain era kept unindexable candidates without a chain (index_errors) and queued their
-- retries under `errors`. They belong to the chain that database indexed: its one checkpoint (the first by id if
-- several), and the retries to that chain's queue, `<prefix>_errors`, when the database's index names show one
-- prefix (`<prefix>_universal_profiles`, `<prefix>_assets`). A database without index_errors is unchanged.
CREATE TABLE IF NOT EXISTS index_errors (object_id TEXT PRIMARY KEY, address TEXT NOT NULL, token_id TEXT,
  code TEXT NOT NULL, message TEXT, block INTEGER, attempts INTEGER NOT NULL, updated_at INTEGER);
INSERT OR IGNORE INTO unindexable (chain_id, object_id, address, token_id, code, message, block, attempts, updated_at)
  SELECT c.chain_id, e.object_id, e.address, e.token_id, e.code, e.message, e.block, e.attempts, e.updated_at
  FROM index_errors e, (SELECT chain_id FROM checkpoints ORDER BY chain_id LIMIT 1) c;
WITH names(n) AS (SELECT index_name FROM records UNION SELECT index_name FROM retries WHERE index_name <> 'errors'),
  prefixes(p) AS (
    SELECT substr(n, 1, length(n) - length('_assets')) FROM names WHERE n LIKE '%\_assets' ESCAPE '\'
    UNION SELECT substr(n, 1, length(n) - length('_universal_profiles')) FROM names
      WHERE n LIKE '%\_universal\_profiles' ESCAPE '\')
UPDATE OR IGNORE retries SET index_name = (SELECT p || '_errors' FROM prefixes)
  WHERE index_name = 'errors' AND (SELECT count(*) FROM prefixes) = 1;
DROP TABLE index_errors;
