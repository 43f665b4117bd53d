// Backfill benchmark: 1,000,000 mostly empty blocks with 1,000 profiles spread across them, indexed from block 0
// by indexer runs as the cron makes them (each run bounded by INDEXER_MAX_SECONDS / _SUBREQUESTS / _ROWS).
//
//   source scripts/setup.sh && cd tests && node bench/indexer.bench.mjs --backfill
//   ... --backfill --quick: the test command's smoke run (40 profiles across ≈ 400,000 blocks, same checks)
//
// anvil cannot mine a million blocks on the project machine (anvil_mine slows down with the height: 500 blocks
// took 4 s at height 3,000), so the chain is stretched: a JSON-RPC proxy in front of anvil shows anvil block b as
// block b × 1000 (eth_blockNumber and eth_getLogs ranges and results are mapped, the other calls pass through).
// Every profile is a real LUKSO Universal Profile deployed by the relayer in its own block, with metadata uploaded
// to the Worker's IPFS store. The proxy also behaves like public providers: it refuses `eth_getLogs` over more than
// 100,000 blocks (`-32005 block range too large`), so the window adaptation is exercised.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';

const PROVIDER_MAX_RANGE = 100_000;
const OWNER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const hex = (n) => '0x' + n.toString(16);

export async function backfill({ quick = false } = {}) {
  // quick: ≈ 400,000 blocks, so the window still grows past the provider's range limit and is refused once
  const STRETCH = quick ? 10_000 : 1000;
  const PROFILES = quick ? 40 : 1000;
  let target;
  const counts = { getLogs: 0, refused: 0 };
  const forward = async (call) => {
    const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
    return res.json();
  };
  const handle = async (call) => {
    if (call.method === 'eth_blockNumber') {
      const answer = await forward(call);
      return { ...answer, result: hex(Number(answer.result) * STRETCH) };
    }
    if (call.method === 'eth_getLogs') {
      counts.getLogs++;
      const { fromBlock, toBlock, ...rest } = call.params[0];
      const from = Number(fromBlock);
      const to = Number(toBlock);
      if (to - from + 1 > PROVIDER_MAX_RANGE) {
        counts.refused++;
        return { jsonrpc: '2.0', id: call.id, error: { code: -32005, message: `block range too large (max ${PROVIDER_MAX_RANGE})` } };
      }
      const lo = Math.ceil(from / STRETCH);
      const hi = Math.floor(to / STRETCH);
      if (lo > hi) return { jsonrpc: '2.0', id: call.id, result: [] };
      const answer = await forward({ ...call, params: [{ ...rest, fromBlock: hex(lo), toBlock: hex(hi) }] });
      return { ...answer, result: answer.result?.map((l) => ({ ...l, blockNumber: hex(Number(l.blockNumber) * STRETCH) })) };
    }
    return forward(call);
  };
  const proxy = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', async () => {
      const parsed = JSON.parse(body);
      const answer = Array.isArray(parsed) ? await Promise.all(parsed.map(handle)) : await handle(parsed);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  // the relayer's daily gas ceiling (MAX_GAS_PER_DAY) is raised past the 1,000 deploys, like the key's monthly budget
  const vars = {
    RPC_URL: `http://127.0.0.1:${proxy.address().port}`,
    LOOKUP_CACHE_SECONDS: '0',
    LOOKUP_RATE_LIMIT_PER_MINUTE: '0',
    MAX_GAS_PER_DAY: String(1e12),
  };
  // quick: a small subrequest budget, so that the backfill takes several runs, each resuming from the cursor
  if (quick) vars.INDEXER_MAX_SUBREQUESTS = '40';
  const stack = await startStack({ vars });
  target = stack.chain.rpcUrl;
  try {
    const { apiKey } = await (await stack.admin('POST', '/admin/api-keys', { name: 'bench', rateLimitPerMinute: 1_000_000, gasBudgetPerMonth: 1e12 })).json();
    const auth = { authorization: `Bearer ${apiKey}` };
    let t = performance.now();
    for (let batch = 0; batch < PROFILES / 20; batch++) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const json = JSON.stringify({ LSP3Profile: { name: `Backfill Profile ${batch * 20 + i}`, description: 'backfill' } });
          const form = new FormData();
          form.append('file', new Blob([json]), 'm.json');
          const cid = (await (await fetch(`${stack.workerUrl}/api/v0/add`, { method: 'POST', headers: auth, body: form })).json()).Hash;
          const res = await fetch(`${stack.workerUrl}/api/universal-profile`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ lsp6ControllerAddress: [OWNER], lsp3Profile: sdk.encodeVerifiableUri(json, `ipfs://${cid}`) }),
          });
          assert.equal(res.status, 200, await res.text());
        }),
      );
    }
    const height = Number(await stack.chain.rpc('eth_blockNumber'));
    if (height < PROFILES) await stack.chain.rpc('anvil_mine', [hex(PROFILES - height)]);
    const head = Number(await stack.chain.rpc('eth_blockNumber')) * STRETCH;
    const setupSeconds = (performance.now() - t) / 1000;

    // the cron's work, run after run, until the index has caught up
    t = performance.now();
    const runs = [];
    for (;;) {
      const t0 = performance.now();
      const res = await stack.admin('POST', '/admin/indexer/run');
      const s = await res.json();
      assert.equal(res.status, 200, JSON.stringify(s));
      runs.push({ ...s, seconds: (performance.now() - t0) / 1000 });
      if (s.toBlock >= s.headBlock) break;
      assert.ok(runs.length < 20, 'no catch-up in 20 runs');
    }
    const seconds = (performance.now() - t) / 1000;
    if (quick) {
      assert.ok(runs.length > 1, 'the quick backfill resumes from the cursor at least once');
      assert.ok(counts.refused > 0, "the quick backfill meets the provider's range limit");
    }
    const stats = await (await fetch(`${stack.workerUrl}/v1/31337/indexer`)).json();
    // `[assets, profiles]`
    assert.deepEqual(
      stats.indexes.map((i) => i.entries),
      [0, PROFILES],
      JSON.stringify(stats),
    );
    assert.equal(stats.lag, 0, JSON.stringify(stats));
    assert.equal(stats.lastIndexedBlock, head, JSON.stringify(stats));
    const last = `Backfill Profile ${PROFILES - 1}`;
    const found = await (await fetch(`${stack.workerUrl}/v1/31337/search?q=${encodeURIComponent(last)}`)).json();
    assert.equal(found.profiles.hits[0].name, last);

    if (quick) console.log('quick run (smoke test: small counts, figures not comparable with BENCHMARKS.md)');
    console.log(`backfill: ${head.toLocaleString('en')} blocks (head), ${PROFILES} profiles spread across them (setup ${setupSeconds.toFixed(0)} s)`);
    console.log(
      `caught up in ${runs.length} runs, ${seconds.toFixed(1)} s of indexer work; longest run ${Math.max(...runs.map((r) => r.seconds)).toFixed(1)} s`,
    );
    console.log(
      `eth_getLogs windows: ${runs.reduce((a, r) => a + r.windows, 0)} read, ${counts.refused} refused by the provider (range > ${PROVIDER_MAX_RANGE.toLocaleString('en')}); ${counts.getLogs} requests`,
    );
    for (const [i, r] of runs.entries()) {
      console.log(
        `  run ${i + 1}: blocks ${r.fromBlock}–${r.toBlock}, ${r.indexed} records, ${r.windows} windows (next window ${r.window}), ${r.subrequests} subrequests, ${r.seconds.toFixed(1)} s${r.stopped ? `, stopped: ${r.stopped}` : ''}`,
      );
    }
  } finally {
    await stack.stop();
    proxy.close();
  }
}
