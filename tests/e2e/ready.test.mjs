// `/ready` tells the truth where `/health` only says the Worker runs: every check with its result, 503 when the
// relayer could not do its work — a node on another chain, no node at all, a balance under MIN_RELAYER_BALANCE, an
// indexer too far behind. Anvil and the Worker in `wrangler dev`, restarted with the broken setting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack } from '../../scripts/stack.mjs';

let stack;
before(async () => {
  stack = await startStack({ vars: { READY_RATE_LIMIT_PER_MINUTE: '1000' } });
});
after(async () => {
  await stack?.stop();
});

async function ready() {
  const res = await fetch(`${stack.workerUrl}/ready`);
  const body = await res.json();
  return { status: res.status, body, check: (name) => body.checks.find((c) => c.name === name) };
}

test('a complete, funded, caught-up deployment is ready, check by check', async () => {
  const { status, body, check } = await ready();
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.status, 'ready');
  for (const name of [
    'config',
    'secret:RELAYER_PRIVATE_KEY',
    'secret:ADMIN_TOKEN',
    'd1:migrations',
    'chain:31337:rpc',
    'relayer:balance',
    'chain:31337:indexer',
  ]) {
    assert.equal(check(name)?.ok, true, `${name}: ${JSON.stringify(body)}`);
  }
  // no secret's value in the answer
  assert.ok(!JSON.stringify(body).includes(stack.adminToken));
});

test('not ready: balance under the minimum, node on another chain, no node, indexer behind; /health stays 200', async () => {
  await stack.restartWorker({ vars: { ALGOLIA_APP_ID: 'TESTAPPID' } });
  const algolia = await ready();
  assert.equal(algolia.status, 503, JSON.stringify(algolia.body));
  assert.equal(algolia.check('config').ok, false);
  assert.match(algolia.check('config').detail, /ALGOLIA_APP_ID is set but PUBLIC_BASE_URL is not/);
  await stack.restartWorker({ vars: { MIN_RELAYER_BALANCE: String(10n ** 30n) } });
  let r = await ready();
  assert.equal(r.status, 503, JSON.stringify(r.body));
  assert.equal(r.body.status, 'not ready');
  assert.equal(r.check('relayer:balance').ok, false);
  assert.equal(r.check('chain:31337:rpc').ok, true);

  await stack.restartWorker({ vars: { CHAIN_ID: '42' } });
  r = await ready();
  assert.equal(r.status, 503);
  assert.equal(r.check('chain:42:rpc').ok, false);
  assert.match(r.check('chain:42:rpc').detail, /31337/);

  await stack.restartWorker({ vars: { RPC_URL: 'http://127.0.0.1:9', RPC_TIMEOUT_SECONDS: '2' } });
  r = await ready();
  assert.equal(r.status, 503);
  assert.equal(r.check('chain:31337:rpc').ok, false);
  assert.equal((await fetch(`${stack.workerUrl}/health`)).status, 200, 'liveness is not readiness');

  // blocks the indexer has not read: more than READY_MAX_INDEXER_LAG
  await stack.chain.rpc('anvil_mine', ['0x10']);
  await stack.restartWorker({ vars: { READY_MAX_INDEXER_LAG: '3' } });
  r = await ready();
  assert.equal(r.status, 503);
  assert.equal(r.check('chain:31337:indexer').ok, false);
  await stack.admin('POST', '/admin/indexer/run');
  r = await ready();
  assert.equal(r.check('chain:31337:indexer').ok, true, JSON.stringify(r.body));
  assert.equal(r.status, 200, JSON.stringify(r.body));
});
