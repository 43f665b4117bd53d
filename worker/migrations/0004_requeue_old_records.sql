-- Records written before records took the incumbent's shape have no `type`: each is queued for the indexer's retry
-- pass, which reads it from chain and writes it anew (bounded per run like any retry). A database where the
-- request-time code did this already carries its marker and is left as it is.
INSERT OR IGNORE INTO retries (index_name, object_id, address, token_id, attempts, next_attempt_at, reason)
  SELECT index_name, object_id, address, token_id, 0, 0, 'RECORD_SHAPE' FROM records
  WHERE json_extract(record, '$.type') IS NULL
    AND NOT EXISTS (SELECT 1 FROM schema_marks WHERE name = 'records_v2_requeued');
INSERT OR IGNORE INTO schema_marks (name) VALUES ('records_v2_requeued');
