// An oversized record cannot halt the indexer. Between two normal profiles: a real profile (deployed through the
// relayer) whose verified LSP3 metadata is ~1.9 MB — a description of megabytes, thousands of tags and links — and
// a profile-like attacker contract (tests/fixtures/attackers/DataUrlProfile.sol, compiled with solc) whose LSP3
// metadata is a 1.5 MB `data:` URL, no server needed. Both normal ones are indexed, the lag reaches 0, and the
// oversized ones are stored within the record caps (far under D1's 2,000,000-byte row limit; the local SQLite
// accepts rows D1 refuses, so the stored sizes are measured). Then D1 refusing a row is simulated (a trigger on the local database aborts the insert of one
// record, as D1 does for a row over its limit): that record is recorded as unindexable, the rest of its chunk and
// the cursor are written.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData } from 'viem';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { indexing } from './helpers/indexing.mjs';
import { d1 } from './helpers/d1.mjs';
import { compileAttacker } from './helpers/solc.mjs';

const stateDir = mkdtempSync(join(tmpdir(), 'indexer-oversized-'));
// D1's limit on a string, BLOB or row (developers.cloudflare.com/d1/platform/limits)
const D1_MAX_ROW_BYTES = 2_000_000;
// the indexer's cap on a record's JSON (worker/src/search/caps.rs MAX_RECORD_BYTES)
const MAX_RECORD_BYTES = 64 * 1024;

const words = 'lorem ipsum dolor sit amet consectetur adipiscing elit ';
const oversizedDoc = {
  LSP3Profile: {
    name: 'Oversized Profile',
    description: words.repeat(Math.ceil(1_300_000 / words.length)),
    tags: Array.from({ length: 2000 }, (_, i) => `tag${i}-${'t'.repeat(120)}`),
    links: Array.from({ length: 1000 }, (_, i) => ({ title: `link ${i} ${'l'.repeat(100)}`, url: `https://example.org/${i}/${'u'.repeat(150)}` })),
  },
};
const oversizedJson = JSON.stringify(oversizedDoc);

let http;
let stack;
before(async () => {
  assert.ok(oversizedJson.length > 1_800_000 && oversizedJson.length < 2 * 1024 * 1024, `${oversizedJson.length}`);
  http = createServer((req, res) => {
    if (req.url === '/oversized.json') return res.writeHead(200, { 'content-type': 'application/json' }).end(oversizedJson);
    res.writeHead(404).end();
  });
  await new Promise((r) => http.listen(0, '127.0.0.1', r));
  stack = await startStack({
    stateDir,
    vars: { LOOKUP_CACHE_SECONDS: '0', INDEXER_RETRY_SECONDS: '3600', METADATA_ALLOW_HTTP: 'true', METADATA_TIMEOUT_SECONDS: '20' },
  });
});
after(async () => {
  await stack?.stop();
  http?.closeAllConnections?.();
  http?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const { get, metadataUri, deploy, send, deployProfile, runIndexerUntilCaughtUp } = indexing(() => stack);
const profile = async (name) => (await deployProfile(await metadataUri({ LSP3Profile: { name, description: 'normal' } }))).universalProfileAddress;

async function assertFound(address, name) {
  const found = await get(`/v1/31337/search?q=${encodeURIComponent(name)}`);
  assert.equal(found.profiles.hits.length, 1, `${name}: ${JSON.stringify(await get(`/v1/31337/address/${address}`))}`);
  assert.equal(found.profiles.hits[0].address, address);
}

let oversized;
let dataUrl;
const DATA_URL_DESCRIPTION = 1_500_000;
test('an oversized record between two normal profiles: both indexed, lag 0, the stored record capped', async () => {
  const before1 = await profile('Normal Before');
  const url = `http://127.0.0.1:${http.address().port}/oversized.json`;
  oversized = (await deployProfile(sdk.encodeVerifiableUri(oversizedJson, url))).universalProfileAddress;
  const attacker = compileAttacker('DataUrlProfile');
  dataUrl = await deploy(attacker, [BigInt(DATA_URL_DESCRIPTION)]);
  await send({ to: dataUrl, data: encodeFunctionData({ abi: attacker.abi, functionName: 'ping' }) });
  const after1 = await profile('Normal After');

  const run = await runIndexerUntilCaughtUp();
  assert.ok(run.indexed >= 4, JSON.stringify(run));
  await assertFound(before1, 'Normal Before');
  await assertFound(after1, 'Normal After');
  const status = await get('/v1/31337/indexer');
  assert.equal(status.lag, 0, JSON.stringify(status));
  assert.equal(status.unindexable, 0, JSON.stringify(status));

  // the oversized one is indexed, verified, and says it was cut
  const record = await get(`/v1/31337/address/${oversized}`);
  assert.equal(record.kind, 'LSP0ERC725Account');
  assert.equal(record.metadataStatus, 'verified');
  assert.equal(record.metadataTruncated, true);
  assert.equal(record.name, 'Oversized Profile');
  assert.ok(oversizedDoc.LSP3Profile.description.startsWith(record.description));
  assert.ok(Buffer.byteLength(record.description) <= 16 * 1024, `${record.description.length}`);
  assert.ok(record.tags.length > 0 && record.tags.length <= 32, `${record.tags.length}`);
  assert.ok(record.links.length > 0 && record.links.length <= 32, `${record.links.length}`);
  assert.ok(Buffer.byteLength(JSON.stringify(record)) <= MAX_RECORD_BYTES, `${JSON.stringify(record).length}`);
  // searchable by its (capped) description
  const found = await get('/v1/31337/search?q=Oversized');
  assert.equal(found.profiles.hits[0].address, oversized);

  // the data: URL one: verified, cut, its URL too
  const giant = await get(`/v1/31337/address/${dataUrl}`);
  assert.equal(giant.kind, 'LSP0ERC725Account', JSON.stringify(giant).slice(0, 500));
  assert.equal(giant.metadataStatus, 'verified');
  assert.equal(giant.metadataTruncated, true);
  assert.equal(giant.name, 'Data URL Giant');
  assert.match(giant.description, /^x+$/);
  assert.ok(giant.description.length > 8 * 1024 && giant.description.length <= 16 * 1024, `${giant.description.length}`);
  assert.ok(giant.metadataUrl.startsWith('data:application/json,') && giant.metadataUrl.length <= 4096, `${giant.metadataUrl.length}`);
  assert.ok(Buffer.byteLength(JSON.stringify(giant)) <= MAX_RECORD_BYTES, `${JSON.stringify(giant).length}`);
});

test("the stored rows of the oversized records are far under D1's row limit", async () => {
  await stack.stopWorker();
  for (const address of [oversized, dataUrl]) {
    const [row] = await d1(
      stateDir,
      `SELECT length(CAST(index_name AS BLOB)) + length(CAST(object_id AS BLOB)) + length(CAST(address AS BLOB))
      + length(CAST(kind AS BLOB)) + length(CAST(record AS BLOB)) + 64 AS n, length(CAST(record AS BLOB)) AS json FROM records WHERE object_id = '${address}'`,
    );
    assert.ok(row, `${address} is stored`);
    assert.ok(row.json <= MAX_RECORD_BYTES, JSON.stringify(row));
    assert.ok(row.n < D1_MAX_ROW_BYTES / 10, JSON.stringify(row));
    const [fts] = await d1(
      stateDir,
      `SELECT length(CAST(name AS BLOB)) + length(CAST(symbol AS BLOB)) + length(CAST(description AS BLOB))
      + length(CAST(tags AS BLOB)) + length(CAST(address AS BLOB)) + 128 AS n FROM records_fts WHERE object_id = '${address}'`,
    );
    assert.ok(fts && fts.n < 32 * 1024, JSON.stringify(fts));
    console.log(`stored ${address}: record row ≈ ${row.n} bytes (JSON ${row.json}), full-text row ≈ ${fts.n} bytes`);
  }
  await stack.restartWorker();
});

test('a record the database refuses is unindexable; the rest of its chunk and the cursor are written', async () => {
  await stack.stopWorker();
  // the local SQLite takes rows D1 refuses: a trigger refuses this one record as D1 refuses a row over its limit
  await d1(
    stateDir,
    `CREATE TRIGGER refuse_marked BEFORE INSERT ON records WHEN NEW.record LIKE '%Refused By The Database%'
    BEGIN SELECT RAISE(ABORT, 'string or blob too big'); END;`,
  );
  await stack.restartWorker();
  const before1 = await profile('Second Before');
  const refused = await profile('Refused By The Database');
  const after1 = await profile('Second After');

  const run = await runIndexerUntilCaughtUp();
  assert.ok(run.errors >= 1, JSON.stringify(run));
  await assertFound(before1, 'Second Before');
  await assertFound(after1, 'Second After');
  const status = await get('/v1/31337/indexer');
  assert.equal(status.lag, 0, JSON.stringify(status));
  assert.equal(status.unindexable, 1, JSON.stringify(status));
  const body = await get(`/v1/31337/address/${refused}`);
  assert.equal(body.indexed, false, JSON.stringify(body));
  assert.equal(body.unindexable.code, 'STORE_REFUSED', JSON.stringify(body));
  assert.match(body.unindexable.message, /too big/);
  // the next run does not stop on it either
  const again = await runIndexerUntilCaughtUp();
  assert.equal(again.toBlock, again.headBlock);
});
