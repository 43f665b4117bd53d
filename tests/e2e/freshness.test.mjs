// A seconds-fresh index, with nobody running the indexer (wrangler dev fires no cron; no /admin/indexer/run here).
// A profile deployed through the relayer and a name changed through /api/execute are reported by the relayer when
// their receipts are in and indexed at once — proven with INDEXER_INTERVAL_SECONDS=0, where nothing else would index
// them; then, with the interval of the dev stack and production, a contract the relayer never saw is found by the
// indexer object's alarm, which follows the chain. Bounds are generous (a loaded CI machine);
// tests/bench/freshness.bench.mjs measures the real figures.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { encodeFunctionData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { OWNER, indexing } from './helpers/indexing.mjs';
import { freshness, unique } from './helpers/freshness.mjs';

const require = createRequire(import.meta.url);
const LSP7 = require('@lukso/lsp7-contracts/artifacts/LSP7Mintable.json');

let stack;
before(async () => {
  stack = await startStack({ followChain: false, vars: { LOOKUP_CACHE_SECONDS: '0', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' } });
});
after(async () => {
  await stack?.stop();
});
const { metadataUri, deploy, send } = indexing(() => stack);
const { searchUntil, deployNamed, renameBody, execute } = freshness(() => stack);

test('a profile deployed through the relayer is found by search without an indexer run', async () => {
  const name = unique();
  const up = await deployNamed(privateKeyToAccount(generatePrivateKey()), name);
  await searchUntil(name, (hits) => hits.some((h) => h.address === up));
  const record = await (await fetch(`${stack.workerUrl}/v1/31337/address/${up}`)).json();
  assert.equal(record.name, name);
});

test('a name changed through /api/execute (signed with viem) is the name search finds', async () => {
  const controller = privateKeyToAccount(generatePrivateKey());
  const before = unique();
  const up = await deployNamed(controller, before);
  await searchUntil(before, (hits) => hits.some((h) => h.address === up));
  const after = unique();
  await execute(await renameBody(controller, up, after));
  await searchUntil(after, (hits) => hits.some((h) => h.address === up));
  await searchUntil(before, (hits) => !hits.some((h) => h.address === up));
});

test('a contract the relayer never saw is found by the alarm that follows the chain', async () => {
  await stack.restartWorker({ vars: { INDEXER_INTERVAL_SECONDS: '5' } });
  const name = unique();
  const uri = await metadataUri({ LSP4Metadata: { name, description: 'deployed by someone else', links: [], icon: [], images: [], assets: [] } });
  const token = await deploy(LSP7, [name, 'FRSH', OWNER, 0n, false]);
  await send({ to: token, data: encodeFunctionData({ abi: LSP7.abi, functionName: 'setData', args: [sdk.encodeKeyName('LSP4Metadata'), uri] }) });
  await searchUntil(name, (hits) => hits.some((h) => h.address === token));
});
