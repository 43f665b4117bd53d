// Freshness benchmark on the local stack (anvil + the Worker in wrangler dev), nobody running the indexer:
//   1. deploy → search: from sending POST /api/universal-profile (with an LSP3 name) until /v1/:chainId/search finds
//      the profile, and until the lookup route answers its name;
//   2. gasless rename → search: from sending POST /api/execute (setData LSP3Profile, signed with viem) until search
//      finds the new name.
// The stack runs with the dev stack's INDEXER_INTERVAL_SECONDS (the alarm also follows the chain). Target: p50 ≤ 3 s.
//
//   source scripts/setup.sh && cd tests && node bench/freshness.bench.mjs [--quick]
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startStack } from '../../scripts/stack.mjs';
import { freshness, unique } from '../e2e/helpers/freshness.mjs';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 20;
const stack = await startStack({ followChain: true, vars: { LOOKUP_CACHE_SECONDS: '0', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' } });
const { searchUntil, deployNamed, renameBody, execute } = freshness(() => stack);
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

try {
  const deploySearch = [];
  const deployLookup = [];
  const rename = [];
  for (let i = 0; i < ROUNDS; i++) {
    const controller = privateKeyToAccount(generatePrivateKey());
    const name = unique();
    const since = Date.now();
    const up = await deployNamed(controller, name);
    deploySearch.push(await searchUntil(name, (hits) => hits.some((h) => h.address === up), { since }));
    for (;;) {
      const record = await (await fetch(`${stack.workerUrl}/v1/${stack.chain.chainId}/address/${up}`)).json();
      if (record.name === name) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    deployLookup.push(Date.now() - since);
    const renamed = unique();
    const body = await renameBody(controller, up, renamed);
    const start = Date.now();
    await execute(body);
    rename.push(await searchUntil(renamed, (hits) => hits.some((h) => h.address === up), { since: start }));
  }
  const row = (label, xs) => `| ${label} | ${ROUNDS} | ${percentile(xs, 50)} | ${percentile(xs, 90)} | ${Math.max(...xs)} |`;
  console.log('| from → until | rounds | p50 ms | p90 ms | max ms |\n| --- | --- | --- | --- | --- |');
  console.log(row('deploy sent → found by search', deploySearch));
  console.log(row('deploy sent → lookup answers the name', deployLookup));
  console.log(row('gasless rename sent → new name found by search', rename));
  assert.equal(deploySearch.length, ROUNDS);
} finally {
  await stack.stop();
}
