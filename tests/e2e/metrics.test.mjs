// GET /admin/metrics: the operator's figures in the OpenMetrics text format, parsed by a Prometheus text parser we did
// not write (parse-prometheus-text-format), checked against the chain (anvil) and the Worker's own JSON routes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import parsePrometheus from 'parse-prometheus-text-format';
import { startStack } from '../../scripts/stack.mjs';
import { indexing } from './helpers/indexing.mjs';

let stack;
before(async () => {
  stack = await startStack({ vars: { LOOKUP_CACHE_SECONDS: '0' } });
});
after(async () => {
  await stack?.stop();
});
const { deployProfile, runIndexerUntilCaughtUp } = indexing(() => stack);

async function scrape() {
  const res = await stack.admin('GET', '/admin/metrics');
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type'), /^application\/openmetrics-text; version=1\.0\.0/);
  assert.match(text, /# EOF\n$/);
  const families = parsePrometheus(text);
  const value = (name, labels = { chain_id: '31337' }) => {
    const family = families.find((f) => f.name === `profile_relayer_${name}`);
    assert.ok(family, `${name} missing:\n${text}`);
    assert.equal(family.type, 'GAUGE');
    const metric = family.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    assert.ok(metric, `${name}${JSON.stringify(labels)} missing:\n${text}`);
    return Number(metric.value);
  };
  return { value, text };
}

test('only the admin token reads the metrics', async () => {
  assert.equal((await fetch(`${stack.workerUrl}/admin/metrics`)).status, 401);
  const wrong = await fetch(`${stack.workerUrl}/admin/metrics`, { headers: { authorization: 'Bearer not-the-admin-token-at-all' } });
  assert.equal(wrong.status, 401);
});

test('relayer and indexer figures equal the chain and the JSON routes', async () => {
  const deployed = await deployProfile();
  const receipt = await stack.chain.rpc('eth_getTransactionReceipt', [deployed.transactionHash]);
  await runIndexerUntilCaughtUp();
  const { value, text } = await scrape();
  assert.ok(!text.includes(stack.adminToken), 'the admin token in the answer');

  const balance = BigInt(await stack.chain.rpc('eth_getBalance', [stack.relayerAddress, 'latest']));
  assert.ok(Math.abs(value('relayer_balance_wei') - Number(balance)) <= Number(balance) * 1e-12, 'balance');
  const used = Number(BigInt(receipt.gasUsed));
  const relayer = await (await stack.admin('GET', '/admin/relayer')).json();
  assert.equal(value('relayer_gas_used_today'), relayer.today.gasUsed);
  assert.ok(relayer.today.gasUsed >= used, 'the deploy is on the daily meter');
  assert.equal(value('relayer_gas_ceiling_daily'), relayer.today.ceiling);
  assert.equal(value('relayer_gas_remaining_today'), relayer.today.remaining);
  assert.equal(value('relayer_gas_used_month'), relayer.month.gasUsed);
  assert.equal(value('relayer_pending_transactions'), 0);

  const indexer = await (await fetch(`${stack.workerUrl}/v1/31337/indexer`)).json();
  assert.equal(value('indexer_last_block'), indexer.lastIndexedBlock);
  assert.equal(value('indexer_lag_blocks'), value('indexer_head_block') - value('indexer_last_block'));
  for (const index of indexer.indexes) {
    assert.equal(value('index_entries', { chain_id: '31337', index: index.name }), index.entries);
  }
  assert.ok(value('index_entries', { chain_id: '31337', index: 'dev_local_universal_profiles' }) >= 1);
  assert.equal(value('indexer_unindexable'), indexer.unindexable);
});
