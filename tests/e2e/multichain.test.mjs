// One Worker, two chains: two anvil chains (ids 42 and 4201, both with the real LUKSO contracts) behind one
// `wrangler dev` configured with `CHAINS`. On each chain a real LSP7 contract is deployed from the same account at
// the same nonce (so both live at the same address, with different names) and a Universal Profile that exists on
// that chain only; the indexer runs for both chains. Checked: lookups under decimal and hex chain ids, that a record
// of one chain is never answered under the other, per-chain stats and search, per-chain runs, an unknown chain's
// 400, and that one chain's node going down does not stop the other chain's indexing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeDeployData, getAddress } from 'viem';
import { startStack } from '../../scripts/stack.mjs';
import { waitForReceipt } from '../../scripts/chain.mjs';
import { HOSTILE } from './hostile-contracts.mjs';
import { d1 } from './helpers/d1.mjs';

const require = createRequire(import.meta.url);
const LSP7 = require('@lukso/lsp7-contracts/artifacts/LSP7Mintable.json');
const UP = require('@lukso/universalprofile-contracts/artifacts/UniversalProfile.json');
const OWNER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'; // anvil's unlocked dev accounts
const OTHER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

const stateDir = mkdtempSync(join(tmpdir(), 'multichain-'));
let stack;
let A; // chain 42, the relayer's
let B; // chain 4201
before(async () => {
  stack = await startStack({
    stateDir,
    chainId: 42,
    extraChains: [{ chainId: 4201, indexPrefix: 'dev_testnet' }],
    vars: { LOOKUP_CACHE_SECONDS: '0', INDEXER_RETRY_SECONDS: '0' },
  });
  [A, B] = stack.chains;
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

async function send(chain, tx, from = OWNER) {
  const hash = await chain.rpc('eth_sendTransaction', [{ from, gas: '0x1c9c380', ...tx }]);
  const receipt = await waitForReceipt(chain.rpc, hash);
  assert.equal(receipt.status, '0x1');
  return receipt;
}

const deployLsp7 = async (chain, name, symbol) =>
  getAddress(
    (await send(chain, { data: encodeDeployData({ abi: LSP7.abi, bytecode: LSP7.bytecode, args: [name, symbol, OWNER, 0n, false] }) })).contractAddress,
  );

const deployProfile = async (chain, from) =>
  getAddress((await send(chain, { data: encodeDeployData({ abi: UP.abi, bytecode: UP.bytecode, args: [from] }) }, from)).contractAddress);

async function runIndexer(query = '') {
  const res = await stack.admin('POST', `/admin/indexer/run${query}`);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

/** Entries of an index in a stats answer (`{indexes: [{name, entries}]}` or an array of `{name, entries}`). */
const entries = (stats, name) => {
  const list = Array.isArray(stats) ? stats : stats.indexes;
  const found = list.find((i) => i.name === name);
  assert.ok(found, `${name} in ${JSON.stringify(stats)}`);
  return found.entries;
};

let token; // the same address on both chains
let relayed; // a profile on chain A only
let profileA; // chain A only
let profileB; // chain B only

test('one Worker serves both chains: health, OpenAPI, per-chain runs', async () => {
  const health = await get('/health');
  assert.equal(health.chainId, 42);
  assert.deepEqual(health.chains, [42, 4201]);
  const doc = await get('/openapi.json');
  assert.deepEqual(doc.components.schemas.ChainId.enum, [42, 4201, '0x2a', '0x1069']);
  assert.deepEqual(doc.components.schemas.IndexName.enum, [
    'dev_local_universal_profiles',
    'dev_local_assets',
    'dev_testnet_universal_profiles',
    'dev_testnet_assets',
  ]);

  // the same account, the same nonce: one address, two different contracts
  token = await deployLsp7(A, 'Alpha Token', 'ALP');
  assert.equal(await deployLsp7(B, 'Beta Token', 'BET'), token);
  profileA = await deployProfile(A, OWNER);
  profileB = await deployProfile(B, OTHER);
  assert.notEqual(profileA, profileB);
  // the relayer deploys on its own chain (42) only
  const res = await fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lsp6ControllerAddress: [OTHER] }),
  });
  const deployed = await res.json();
  assert.equal(res.status, 200, JSON.stringify(deployed));
  relayed = deployed.universalProfileAddress;
  assert.notEqual(await A.rpc('eth_getCode', [relayed, 'latest']), '0x');
  assert.equal(await B.rpc('eth_getCode', [relayed, 'latest']), '0x');

  // without a chain: every chain runs; the top level is the first chain's run
  const run = await runIndexer();
  assert.equal(run.chainId, 42);
  assert.deepEqual(
    run.chains.map((c) => c.chainId),
    [42, 4201],
  );
  for (const [i, chain] of [A, B].entries()) {
    const r = run.chains[i];
    assert.equal(r.error, undefined, JSON.stringify(r));
    assert.equal(r.headBlock, Number(await chain.rpc('eth_blockNumber')));
    assert.equal(r.toBlock, r.headBlock);
    assert.ok(r.indexed >= 2, JSON.stringify(r));
  }
  // one chain, named in hex; an unknown chain is refused
  const only = await runIndexer('?chainId=0x1069');
  assert.equal(only.chainId, 4201);
  assert.equal(only.chains, undefined);
  for (const bad of ['5', '0x', '042', '%2B42']) {
    const r = await stack.admin('POST', `/admin/indexer/run?chainId=${bad}`);
    assert.equal(r.status, 400, bad);
    assert.equal((await r.json()).error.code, 'UNKNOWN_CHAIN');
  }
});

test('lookups answer each chain its own record, under decimal and hex ids', async () => {
  for (const id of ['42', '0x2a', '0x2A', '0X2a', '0x002a']) {
    const record = await get(`/v1/${id}/address/${token}`);
    assert.equal(record.name, 'Alpha Token', id);
    assert.equal(record.chainId, 42);
    assert.equal((await get(`/v1/${id}/address/${profileA}`)).kind, 'LSP0ERC725Account');
    assert.equal((await get(`/v1/${id}/address/${relayed}`)).kind, 'LSP0ERC725Account');
  }
  for (const id of ['4201', '0x1069']) {
    const record = await get(`/v1/${id}/address/${token}`);
    assert.equal(record.name, 'Beta Token', id);
    assert.equal(record.chainId, 4201);
    assert.equal((await get(`/v1/${id}/address/${profileB}`)).kind, 'LSP0ERC725Account');
  }
  // a record of one chain is not answered under the other (read-through reads the other chain, finds no code)
  for (const [id, address] of [
    ['4201', relayed],
    ['0x1069', profileA],
    ['42', profileB],
    ['0x2a', profileB],
  ]) {
    const answer = await get(`/v1/${id}/address/${address}`);
    assert.equal(answer.LSPStandard, 'EOA', `${id} ${address}`);
    assert.equal(answer.chainId, id === '42' || id === '0x2a' ? 42 : 4201);
  }
});

test('stats and search are per chain', async () => {
  for (const id of ['42', '0x2a']) {
    const stats = await get(`/v1/${id}/stats`);
    assert.equal(entries(stats, 'dev_local_universal_profiles'), 2);
    assert.equal(entries(stats, 'dev_local_assets'), 1);
  }
  const stats = await get('/v1/0x1069/stats');
  assert.deepEqual(
    stats.map((i) => i.name),
    ['dev_testnet_assets', 'dev_testnet_universal_profiles'],
  );
  assert.equal(entries(stats, 'dev_testnet_universal_profiles'), 1);
  assert.equal(entries(stats, 'dev_testnet_assets'), 1);

  assert.equal((await get('/v1/42/search?q=alpha')).assets.hits[0].address, token);
  assert.equal((await get('/v1/0x2a/search?q=beta')).assets.nbHits, 0);
  assert.equal((await get('/v1/4201/search?q=beta')).assets.hits[0].name, 'Beta Token');
  assert.equal((await get('/v1/4201/search?q=alpha')).assets.nbHits, 0);
  // the Algolia-compatible route knows every chain's indexes
  const res = await fetch(`${stack.workerUrl}/1/indexes/dev_testnet_assets/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'beta' }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(
    body.hits.map((h) => h.name),
    ['Beta Token'],
  );
});

test('an unknown or malformed chain id is a 400 UNKNOWN_CHAIN on every route', async () => {
  for (const id of ['1', '31337', '0x1', '0x', '0x0x2a', '042', '%2B42', '-42', '%2042', '42a', '18446744073709551616']) {
    for (const path of [`/v1/${id}/address/${token}`, `/v1/${id}/stats`, `/v1/${id}/indexer`, `/v1/${id}/search?q=a`, `/v1/${id}/address/${token}/1`]) {
      assert.equal((await get(path, 400)).error.code, 'UNKNOWN_CHAIN', path);
    }
  }
});

test('a contract unindexable on one chain is recorded for that chain only', async () => {
  const hostile = getAddress('0x00000000000000000000000000000000000b0bad');
  await A.rpc('anvil_setCode', [hostile, HOSTILE.reverts.runtime]);
  await send(A, { to: hostile, data: '0x' }); // DataChanged: the indexer discovers it
  await runIndexer('?chainId=42');
  const refused = await get(`/v1/0x2a/address/${hostile}`);
  assert.equal(refused.LSPStandard, 'UnknownContract');
  assert.equal(refused.unindexable.code, 'CALL_REVERTED');
  assert.equal((await get('/v1/42/indexer')).unindexable, 1);
  // the same address on the other chain: no contract, no recorded error
  assert.equal((await get(`/v1/4201/address/${hostile}`)).LSPStandard, 'EOA');
  assert.equal((await get('/v1/4201/indexer')).unindexable, 0);
});

test('the cron indexes both chains, and one chain whose node is down does not stop the other', async () => {
  const gamma = await deployLsp7(A, 'Gamma Token', 'GAM');
  const delta = await deployLsp7(B, 'Delta Token', 'DEL');
  const cron = await fetch(`${stack.workerUrl}/__scheduled?cron=${encodeURIComponent('* * * * *')}`);
  assert.equal(cron.status, 200, await cron.text());
  // read from the index (no read-through): the search answers only what the cron wrote
  assert.equal((await get('/v1/42/search?q=gamma')).assets.hits[0].address, gamma);
  assert.equal((await get('/v1/4201/search?q=delta')).assets.hits[0].address, delta);
  assert.equal((await get('/v1/42/search?q=delta')).assets.nbHits, 0);

  await B.stop();
  const last = await deployLsp7(A, 'Epsilon Token', 'EPS');
  const run = await runIndexer();
  assert.equal(run.chains[0].chainId, 42);
  assert.equal(run.chains[0].error, undefined);
  assert.equal(run.chains[1].chainId, 4201);
  assert.equal(run.chains[1].error.code, 'RPC_UNAVAILABLE', JSON.stringify(run.chains[1]));
  assert.equal((await get('/v1/42/search?q=epsilon')).assets.hits[0].address, last);
  // the stopped chain's records are still served from its index
  assert.equal((await get(`/v1/4201/address/${token}`)).name, 'Beta Token');
});

test('records written before the incumbent record shape are re-indexed once, by the retry pass', async () => {
  const found = await d1(stateDir, `SELECT index_name, object_id FROM records WHERE lower(address) = lower('${profileA}') AND token_id IS NULL`);
  const { index_name: index, object_id: id } = found[0];
  await stack.stopWorker();
  // what the release before the incumbent's shape wrote: no `type` / `LSPStandard`; its migration not applied yet
  await d1(
    stateDir,
    `UPDATE records SET record = json_remove(record, '$.type', '$.LSPStandard') WHERE index_name = '${index}' AND object_id = '${id}';
    DELETE FROM schema_marks; DELETE FROM d1_migrations WHERE name = '0004_requeue_old_records.sql';`,
  );
  await stack.restartWorker(); // applies worker/migrations/0004_requeue_old_records.sql
  const old = await get(`/v1/42/address/${profileA}`);
  assert.equal(old.type, undefined, 'served as stored until re-indexed');
  const queued = await d1(stateDir, `SELECT index_name, reason FROM retries WHERE index_name = '${index}' AND object_id = '${id}'`);
  assert.deepEqual(queued, [{ index_name: index, reason: 'RECORD_SHAPE' }]);
  await runIndexer('?chainId=42');
  const fresh = await get(`/v1/42/address/${profileA}`);
  assert.equal(fresh.type, 'LSP3Profile');
  assert.equal(fresh.LSPStandard, 'LSP3Profile');
  const left = await d1(stateDir, `SELECT reason FROM retries WHERE index_name = '${index}' AND object_id = '${id}'`);
  assert.deepEqual(left, []);
  // once per database: the migration is recorded as applied, a new start queues nothing again
  await stack.stopWorker();
  await d1(stateDir, `UPDATE records SET record = json_remove(record, '$.type') WHERE index_name = '${index}' AND object_id = '${id}'`);
  await stack.restartWorker();
  await get('/v1/42/indexer');
  const again = await d1(stateDir, `SELECT reason FROM retries WHERE index_name = '${index}' AND object_id = '${id}'`);
  assert.deepEqual(again, []);
});
