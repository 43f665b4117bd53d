// Indexer / lookup / IPFS benchmark against the local stack (wrangler dev + anvil + a local gateway), bounded:
// 2,000 empty blocks, 150 profiles + 50 LSP7 assets, 5 s of lookup load (autocannon, second process), 30 blobs.
// Every figure is checked first: the index holds exactly what was deployed, lookups answer 2xx, blobs come back whole.
//
//   source scripts/setup.sh && cd tests && node bench/indexer.bench.mjs
//   source scripts/setup.sh && cd tests && node bench/indexer.bench.mjs --backfill   (1M blocks, 1,000 profiles)
//   add --quick for the test command's smoke run (small counts, same checks; its figures are not comparable)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { encodeDeployData } from 'viem';
import * as sdk from 'profile-relayer';
import { waitForReceipt } from '../../scripts/chain.mjs';
import { startStack } from '../../scripts/stack.mjs';

const QUICK = process.argv.includes('--quick');
if (process.argv.includes('--backfill')) {
  const { backfill } = await import('./indexer-backfill.mjs');
  await backfill({ quick: QUICK });
  process.exit(0);
}
const N = QUICK
  ? { empty: 200, profiles: 10, assets: 5, searchable: 2, loadSeconds: 1, blobs: 5 }
  : { empty: 2000, profiles: 150, assets: 50, searchable: 5, loadSeconds: 5, blobs: 30 };

const require = createRequire(import.meta.url);
const autocannon = require.resolve('autocannon/autocannon.js');
const LSP7 = require('@lukso/lsp7-contracts/artifacts/LSP7Mintable.json');
const OWNER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

const blobs = new Map();
const gateway = createServer((req, res) => {
  const bytes = blobs.get(req.url.replace(/^\/ipfs\//, '').split('?')[0]);
  if (!bytes) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
});
await new Promise((r) => gateway.listen(0, '127.0.0.1', r));
const gatewayUrl = `http://127.0.0.1:${gateway.address().port}`;
const stack = await startStack({ vars: { IPFS_GATEWAYS: gatewayUrl, LOOKUP_CACHE_SECONDS: '60', INDEXER_MAX_BLOCKS: '500' } });

try {
  const admin = (path) => stack.admin('POST', path).then((r) => r.json());
  const runUntilCaughtUp = async () => {
    let runs = 0;
    for (;;) {
      const s = await admin('/admin/indexer/run');
      runs++;
      if (s.toBlock >= s.headBlock) return runs;
    }
  };
  await runUntilCaughtUp();

  // 1. empty blocks
  await stack.chain.rpc('anvil_mine', [`0x${N.empty.toString(16)}`]);
  let t = performance.now();
  const emptyRuns = await runUntilCaughtUp();
  const emptySeconds = (performance.now() - t) / 1000;

  // 2. 150 profiles (with uploaded metadata) + 50 LSP7 assets; the key's monthly gas budget covers every deploy
  const { apiKey } = await (await stack.admin('POST', '/admin/api-keys', { name: 'bench', rateLimitPerMinute: 1_000_000, gasBudgetPerMonth: 1e12 })).json();
  const auth = { authorization: `Bearer ${apiKey}` };
  const upload = async (json) => {
    const form = new FormData();
    form.append('file', new Blob([json]), 'm.json');
    return (await (await fetch(`${stack.workerUrl}/api/v0/add`, { method: 'POST', headers: auth, body: form })).json()).Hash;
  };
  for (let done = 0; done < N.profiles; done += 30) {
    await Promise.all(
      Array.from({ length: Math.min(30, N.profiles - done) }, async (_, i) => {
        const json = JSON.stringify({ LSP3Profile: { name: `Bench Profile ${done + i}`, description: 'bench' } });
        const lsp3Profile = sdk.encodeVerifiableUri(json, `ipfs://${await upload(json)}`);
        const res = await fetch(`${stack.workerUrl}/api/universal-profile`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ lsp6ControllerAddress: [OWNER], lsp3Profile }),
        });
        assert.equal(res.status, 200);
      }),
    );
  }
  for (let i = 0; i < N.assets; i++) {
    const hash = await stack.chain.rpc('eth_sendTransaction', [
      {
        from: OWNER,
        gas: '0x4c4b40',
        data: encodeDeployData({ abi: LSP7.abi, bytecode: LSP7.bytecode, args: [`Bench Token ${i}`, `BT${i}`, OWNER, 0n, false] }),
      },
    ]);
    const receipt = await waitForReceipt(stack.chain.rpc, hash);
    assert.equal(receipt.status, '0x1', `LSP7 deployment ${i}`);
  }
  const indexer = async () => (await fetch(`${stack.workerUrl}/v1/31337/indexer`)).json();
  const fromBlock = (await indexer()).lastIndexedBlock + 1;
  t = performance.now();
  await runUntilCaughtUp();
  const fullSeconds = (performance.now() - t) / 1000;
  const stats = await indexer();
  const entries = stats.indexes.reduce((a, i) => a + i.entries, 0);
  assert.equal(stats.lag, 0, JSON.stringify(stats));
  // `[assets, profiles]`, as /v1/:chainId/stats answers
  assert.deepEqual(
    stats.indexes.map((i) => i.entries),
    [N.assets, N.profiles],
    JSON.stringify(stats),
  );
  assert.deepEqual(await (await fetch(`${stack.workerUrl}/v1/31337/stats`)).json(), stats.indexes);

  // 3. deploy → searchable (indexer run triggered right after the deploy answers)
  const searchable = [];
  for (let i = 0; i < N.searchable; i++) {
    const name = `Findme${randomBytes(4).toString('hex')}`;
    const json = JSON.stringify({ LSP3Profile: { name, description: 'x' } });
    const lsp3Profile = sdk.encodeVerifiableUri(json, `ipfs://${await upload(json)}`);
    const t0 = performance.now();
    await fetch(`${stack.workerUrl}/api/universal-profile`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ lsp6ControllerAddress: [OWNER], lsp3Profile }),
    });
    for (let run = 0; ; run++) {
      assert.ok(run < 50, `${name} not searchable after 50 indexer runs`);
      await admin('/admin/indexer/run');
      const r = await (await fetch(`${stack.workerUrl}/v1/31337/search?q=${name}`)).json();
      if (r.profiles.nbHits === 1) break;
    }
    searchable.push(performance.now() - t0);
  }

  // 4. cached lookup under load (autocannon in a second process)
  const some = (await (await fetch(`${stack.workerUrl}/v1/31337/search?q=bench`)).json()).profiles.hits[0].address;
  const out = JSON.parse(
    execFileSync(process.execPath, [autocannon, '-j', '-c', '10', '-d', String(N.loadSeconds), `${stack.workerUrl}/v1/31337/address/${some}`], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    }),
  );
  assert.equal(out.non2xx, 0);
  assert.ok(out.requests.total > 0);

  // 5. IPFS relay vs the gateway directly (fresh 100 KB blobs, so the relay has to fetch and verify each)
  const direct = [];
  const relayed = [];
  for (let i = 0; i < N.blobs; i++) {
    const bytes = randomBytes(100_000);
    const cid = sdk.computeCid(bytes);
    blobs.set(cid, bytes);
    let t0 = performance.now();
    assert.equal((await (await fetch(`${gatewayUrl}/ipfs/${cid}`)).arrayBuffer()).byteLength, 100_000);
    direct.push(performance.now() - t0);
    t0 = performance.now();
    assert.equal((await (await fetch(`${stack.workerUrl}/ipfs/${cid}`)).arrayBuffer()).byteLength, 100_000);
    relayed.push(performance.now() - t0);
  }

  if (QUICK) console.log('quick run (smoke test: small counts, figures not comparable with BENCHMARKS.md)');
  console.log(
    `catch-up, empty range: ${N.empty} blocks in ${emptySeconds.toFixed(2)} s (${(N.empty / emptySeconds).toFixed(0)} blocks/s, ${emptyRuns} indexer run(s), first eth_getLogs window 500 blocks)`,
  );
  console.log(
    `catch-up with ${N.profiles} profiles + ${N.assets} LSP7 assets from block ${fromBlock}: ${fullSeconds.toFixed(2)} s (${((N.profiles + N.assets) / fullSeconds).toFixed(1)} records/s); index entries now ${entries} (${stats.indexes.map((i) => `${i.name}: ${i.entries}`).join(', ')})`,
  );
  console.log(
    `deploy → searchable (indexer run right after the deploy): p50 ${percentile(searchable, 50).toFixed(0)} ms, max ${Math.max(...searchable).toFixed(0)} ms`,
  );
  console.log(
    `cached lookup /v1/31337/address (autocannon, 10 connections, ${N.loadSeconds} s): ${out.requests.average.toFixed(0)} req/s, p50 ${out.latency.p50} ms, p99 ${out.latency.p99} ms`,
  );
  console.log(
    `IPFS 100 KB raw blocks: gateway directly p50 ${percentile(direct, 50).toFixed(1)} ms; through the relay (fetch + verify + store) p50 ${percentile(relayed, 50).toFixed(1)} ms; overhead p50 ${(percentile(relayed, 50) - percentile(direct, 50)).toFixed(1)} ms`,
  );
} finally {
  await stack.stop();
  gateway.close();
}
