// D1 migrations (worker/migrations, applied by `wrangler d1 migrations apply`): a database written by an earlier
// release is migrated in place and read by the Worker, and a Worker on a database missing a migration says which
// one instead of creating tables. The earlier database is made here with the statements those releases ran: 0.1.0's
// tables (checkpoints without the cursor within a block, records without `type`), plus the `index_errors` table and
// `errors` retry queue of the single-chain builds after it. Then the stack starts as every stack does: migrations
// applied, then `wrangler dev` on that state.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack } from '../../scripts/stack.mjs';
import { d1 } from './helpers/d1.mjs';

const stateDir = mkdtempSync(join(tmpdir(), 'migrations-'));

const PROFILE = '0x1111111111111111111111111111111111111111'; // a record 0.1.0 wrote (no `type`)
const HOSTILE = '0x000000000000000000000000000000000000dEaD'; // a contract the single-chain builds refused
const PROFILES = 'dev_local_universal_profiles';

// 0.1.0's schema, as its Worker created it at request time (git: worker/src/search.rs before index_errors)
const RELEASE_0_1_0 = `
CREATE TABLE records (index_name TEXT NOT NULL, object_id TEXT NOT NULL, address TEXT NOT NULL,
  token_id TEXT, kind TEXT NOT NULL, record TEXT NOT NULL, indexed_block INTEGER, updated_at INTEGER,
  PRIMARY KEY (index_name, object_id));
CREATE VIRTUAL TABLE records_fts USING fts5(index_name UNINDEXED, object_id UNINDEXED, name, symbol,
  description, tags, address, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE checkpoints (chain_id INTEGER PRIMARY KEY, next_block INTEGER NOT NULL, updated_at INTEGER);
CREATE TABLE retries (index_name TEXT NOT NULL, object_id TEXT NOT NULL, address TEXT NOT NULL,
  token_id TEXT, attempts INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, reason TEXT,
  PRIMARY KEY (index_name, object_id));
CREATE TABLE index_errors (object_id TEXT PRIMARY KEY, address TEXT NOT NULL, token_id TEXT,
  code TEXT NOT NULL, message TEXT, block INTEGER, attempts INTEGER NOT NULL, updated_at INTEGER);`;

let stack;
before(async () => {
  const record = JSON.stringify({ objectID: PROFILE, address: PROFILE, name: 'Ancient Profile', description: 'from 0.1.0' });
  await d1(
    stateDir,
    `${RELEASE_0_1_0}
    INSERT INTO records VALUES ('${PROFILES}', '${PROFILE}', '${PROFILE}', NULL, 'profile', '${record}', 3, 1700000000);
    INSERT INTO records_fts VALUES ('${PROFILES}', '${PROFILE}', 'Ancient Profile', NULL, 'from 0.1.0', NULL, '${PROFILE}');
    INSERT INTO checkpoints VALUES (31337, 5, 1700000000);
    INSERT INTO index_errors VALUES ('${HOSTILE}', '${HOSTILE}', NULL, 'CALL_REVERTED', 'recorded by the old release', 2, 1, 0);
    INSERT INTO retries VALUES ('errors', '${HOSTILE}', '${HOSTILE}', NULL, 1, 99999999999, 'CALL_REVERTED');`,
  );
  stack = await startStack({ stateDir, vars: { LOOKUP_CACHE_SECONDS: '0', READY_RATE_LIMIT_PER_MINUTE: '1000' } });
});
after(async () => {
  await stack?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

const get = async (path, status = 200) => {
  const res = await fetch(`${stack.workerUrl}${path}`);
  const body = await res.json();
  assert.equal(res.status, status, `${path}: ${JSON.stringify(body)}`);
  return body;
};

test('a database written by an earlier release is migrated and read', async () => {
  const applied = await d1(stateDir, 'SELECT name FROM d1_migrations ORDER BY id');
  assert.deepEqual(
    applied.map((r) => r.name),
    [
      '0001_initial.sql',
      '0002_checkpoint_cursor.sql',
      '0003_unindexable_per_chain.sql',
      '0004_requeue_old_records.sql',
      '0005_search_typos.sql',
      '0006_checkpoint_hashes.sql',
      '0007_algolia_deletes.sql',
      '0008_graph.sql',
    ],
  );
  // its record and full-text row, as stored
  const old = await get(`/v1/31337/address/${PROFILE}`);
  assert.equal(old.name, 'Ancient Profile');
  assert.equal(old.type, undefined, 'served as stored until re-indexed');
  const found = await get('/v1/31337/search?q=ancient');
  assert.match(JSON.stringify(found), /Ancient Profile/);
  // its checkpoint, with the columns added
  const status = await get('/v1/31337/indexer');
  assert.equal(status.lastIndexedBlock, 4);
  const cursor = await d1(stateDir, 'SELECT chain_id, next_block, next_item, window FROM checkpoints');
  assert.deepEqual(cursor, [{ chain_id: 31337, next_block: 5, next_item: 0, window: null }]);
  // the single-chain builds' refusal, now the chain's
  const refused = await get(`/v1/31337/address/${HOSTILE}`);
  assert.match(refused.unindexable.message, /recorded by the old release/);
  assert.equal(status.unindexable, 1);
  const tables = await d1(stateDir, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'index_errors'");
  assert.deepEqual(tables, []);
  // retries: the refusal's under the chain's queue, the record without `type` queued for the retry pass
  const retries = await d1(stateDir, 'SELECT index_name, object_id, reason FROM retries ORDER BY index_name');
  assert.deepEqual(retries, [
    { index_name: 'dev_local_errors', object_id: HOSTILE, reason: 'CALL_REVERTED' },
    { index_name: PROFILES, object_id: PROFILE, reason: 'RECORD_SHAPE' },
  ]);
  // (the other checks of /ready depend on the chain; this one on the database only)
  const ready = await (await fetch(`${stack.workerUrl}/ready`)).json();
  assert.deepEqual(
    ready.checks.find((c) => c.name === 'd1:migrations'),
    { name: 'd1:migrations', ok: true, detail: '8 applied' },
  );
});

test('a Worker on a database missing a migration names it and creates nothing', async () => {
  await stack.stopWorker();
  await d1(stateDir, "DELETE FROM d1_migrations WHERE name = '0004_requeue_old_records.sql'");
  await stack.restartWorker({ migrate: false });
  const refused = await get('/v1/31337/stats', 500);
  assert.equal(refused.error.code, 'CONFIGURATION_ERROR');
  assert.match(refused.error.message, /lacks migration 0004_requeue_old_records\.sql/);
  const ready = await get('/ready', 503);
  assert.deepEqual(
    ready.checks.find((c) => c.name === 'd1:migrations'),
    { name: 'd1:migrations', ok: false, detail: '0004_requeue_old_records.sql is not applied' },
  );
  // applied again (the data migration sees its marker and queues nothing twice), the Worker answers
  await stack.restartWorker();
  const stats = await get('/v1/31337/stats');
  assert.ok(Array.isArray(stats));
  const retries = await d1(stateDir, "SELECT count(*) AS n FROM retries WHERE reason = 'RECORD_SHAPE'");
  assert.deepEqual(retries, [{ n: 1 }]);
});
