-- The cursor within a block (next_item) and the eth_getLogs window, which 0.1.0's checkpoints lack (the request-time
-- code added them with ALTER TABLE). A column cannot be added "if missing", so the table is rebuilt in today's
-- shape from the columns every release has. A database that had them starts its cursor's block again from its
-- first candidate with the default window: those candidates are written again (records are replaced, not added).
CREATE TABLE checkpoints_new (chain_id INTEGER PRIMARY KEY, next_block INTEGER NOT NULL, updated_at INTEGER,
  next_item INTEGER NOT NULL DEFAULT 0, window INTEGER);
INSERT INTO checkpoints_new (chain_id, next_block, updated_at) SELECT chain_id, next_block, updated_at FROM checkpoints;
DROP TABLE checkpoints;
ALTER TABLE checkpoints_new RENAME TO checkpoints;
