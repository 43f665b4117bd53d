// Workers Analytics Engine data points on the real stack. `wrangler dev` binds ANALYTICS to miniflare's local
// simulator, whose writeDataPoint discards the point, so the Worker runs with ANALYTICS_LOG=true (tests only): every
// point it hands to the dataset is also logged as {"event":"analytics",index,blobs,doubles}. Checked against the
// chain (receipts), the indexer's answer and the requests made: the hooks fire where the schema of docs/operations.md says.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack } from '../../scripts/stack.mjs';
import { indexing } from './helpers/indexing.mjs';

let stack;
before(async () => {
  stack = await startStack({ captureLogs: true, vars: { ANALYTICS_LOG: 'true' } });
});
after(async () => {
  await stack?.stop();
});
const { deployProfile, upload, runIndexerUntilCaughtUp } = indexing(() => stack);

/** The data points logged so far. */
const points = () =>
  stack.logs.flatMap((line) => {
    const start = line.indexOf('{"event":"analytics"');
    if (start < 0) return [];
    try {
      return [JSON.parse(line.slice(start))];
    } catch {
      return [];
    }
  });

/** Waits until a logged point satisfies `match` (logs arrive a little after the answer); that point. */
async function point(match, what) {
  for (let i = 0; i < 100; i++) {
    const found = points().find(match);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${what}: no such data point in\n${JSON.stringify(points().slice(-20), null, 1)}`);
}

test('a deploy: its request, both meters charged its receipt’s gas, its transaction pending then mined', async () => {
  const deployed = await deployProfile();
  const receipt = await stack.chain.rpc('eth_getTransactionReceipt', [deployed.transactionHash]);
  const gasUsed = Number(BigInt(receipt.gasUsed));

  const request = await point((p) => p.blobs[0] === 'request' && p.blobs[2] === '/api/universal-profile' && p.blobs[1] === 'POST', 'the deploy request');
  assert.equal(request.index, '/api/universal-profile');
  assert.equal(request.doubles[0], 200);
  assert.ok(request.doubles[1] >= 0);
  assert.equal(request.blobs[3], '');

  for (const subject of ['relayer:31337', `key:${stack.apiKeyId}`]) {
    const gas = await point((p) => p.blobs[0] === 'gas' && p.index === subject, subject);
    assert.equal(gas.blobs[1], subject.split(':')[0]);
    assert.deepEqual(gas.doubles, [gasUsed], `${subject} charged the receipt's gas`);
  }

  const hash = deployed.transactionHash;
  const pending = await point((p) => p.blobs[0] === 'transaction' && p.blobs[3] === hash && p.blobs[1] === 'pending', 'pending');
  assert.deepEqual(pending.blobs.slice(1, 3), ['pending', 'deploy']);
  const mined = await point((p) => p.blobs[0] === 'transaction' && p.blobs[3] === hash && p.blobs[1] === 'mined', 'mined');
  assert.deepEqual(mined.doubles, [1, gasUsed]);
});

test('an error request carries its code; an unmatched path is "unmatched"', async () => {
  const res = await fetch(`${stack.workerUrl}/admin/relayer`);
  assert.equal(res.status, 401);
  const refused = await point((p) => p.blobs[0] === 'request' && p.blobs[2] === '/admin/relayer' && p.doubles[0] === 401, 'the 401');
  assert.match(refused.blobs[3], /^[A-Z_]+$/);
  assert.equal((await fetch(`${stack.workerUrl}/no/such/0xabc`)).status, 404);
  const unmatched = await point((p) => p.blobs[0] === 'request' && p.index === 'unmatched' && p.doubles[0] === 404, 'the 404');
  assert.ok(!JSON.stringify(unmatched).includes('0xabc'), 'paths are never recorded, only patterns');
});

test('an indexer run reports its lag; /ipfs reports R2 hits', async () => {
  const stats = await runIndexerUntilCaughtUp();
  const run = await point((p) => p.blobs[0] === 'indexer' && p.doubles[2] === stats.toBlock, 'the run');
  assert.equal(run.index, '31337');
  assert.deepEqual(run.doubles.slice(0, 3), [stats.headBlock - stats.toBlock, stats.headBlock, stats.toBlock]);

  const cid = await upload('{"analytics":true}');
  const res = await fetch(`${stack.workerUrl}/ipfs/${cid}`);
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  const hit = await point((p) => p.blobs[0] === 'ipfs_cache', 'the cache hit');
  assert.deepEqual([hit.blobs[1], hit.doubles[0]], ['hit', 1]);
});
