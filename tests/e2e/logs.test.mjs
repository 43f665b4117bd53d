// Structured logs: one JSON line per request (request id — also the `x-request-id` answer header —, route pattern,
// status, duration, the API key's id, the error code) and one per transaction state change, read from the Worker's
// console output in wrangler dev; never a secret: no API key, admin token or relayer key in any line.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack } from '../../scripts/stack.mjs';
import { until } from './helpers/poll.mjs';
import { indexing } from './helpers/indexing.mjs';

let stack;
before(async () => {
  stack = await startStack({ captureLogs: true });
});
after(async () => {
  await stack?.stop();
});
const { deployProfile } = indexing(() => stack);

/** The JSON lines logged so far with `event`. */
const events = (event) =>
  stack.logs.flatMap((line) => {
    const start = line.indexOf('{"event"');
    if (start < 0) return [];
    try {
      const json = JSON.parse(line.slice(start));
      return json.event === event ? [json] : [];
    } catch {
      return [];
    }
  });

/** Waits until `find()` answers something (logs arrive a little after the answer). */
const eventually = (find, what) => until(`${what} logged`, find, { timeoutMs: 60_000, intervalMs: 100, detail: () => stack.logs.slice(-30).join('\n') });

test('each request: one line with its id, route, status, duration, key id and error code', async () => {
  const deployed = await fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lsp6ControllerAddress: ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8'] }),
  });
  assert.equal(deployed.status, 200);
  const id = deployed.headers.get('x-request-id');
  assert.match(id, /^[0-9a-f]{32}$/);
  const line = await eventually(() => events('request').find((l) => l.requestId === id), 'the deploy');
  const keys = await (await stack.admin('GET', '/admin/api-keys')).json();
  assert.equal(line.method, 'POST');
  assert.equal(line.route, '/api/universal-profile');
  assert.equal(line.status, 200);
  assert.equal(typeof line.durationMs, 'number');
  assert.ok(
    keys.apiKeys.some((k) => k.id === line.keyId),
    `keyId ${line.keyId} is no key's id`,
  );
  assert.equal(line.code, undefined);

  const refused = await fetch(`${stack.workerUrl}/v1/31337/address/0xnot-an-address`);
  const refusedId = refused.headers.get('x-request-id');
  const body = await refused.json();
  const refusal = await eventually(() => events('request').find((l) => l.requestId === refusedId), 'the refusal');
  assert.equal(refusal.status, refused.status);
  assert.equal(refusal.code, body.error.code);
  assert.equal(refusal.route, '/v1/{chainId}/address/{address}', 'the route is the pattern, not the path');

  const unknown = await fetch(`${stack.workerUrl}/no/such/route`);
  const unknownLine = await eventually(() => events('request').find((l) => l.requestId === unknown.headers.get('x-request-id')), 'the 404');
  assert.equal(unknownLine.status, 404);
  assert.equal(unknownLine.route, null, 'no route matched');

  const preflight = await fetch(`${stack.workerUrl}/api/execute`, { method: 'OPTIONS' });
  assert.match(preflight.headers.get('x-request-id'), /^[0-9a-f]{32}$/);
  assert.notEqual(preflight.headers.get('x-request-id'), id, 'ids differ per request');
});

test('each transaction state change: one line; no secret in any line', async () => {
  const { transactionHash } = await deployProfile();
  const line = await eventually(() => events('transaction').find((l) => l.hash === transactionHash && l.status === 'mined'), 'the mined deploy');
  assert.equal(line.kind, 'deploy');
  assert.equal(typeof line.gasUsed, 'number');
  assert.ok(events('transaction').filter((l) => l.hash === transactionHash && l.status === 'mined').length === 1, 'logged once');
  // a wrong admin token and a wrong API key are refused; neither they nor the real ones are logged
  await fetch(`${stack.workerUrl}/admin/api-keys`, { headers: { authorization: 'Bearer wrong-admin-token-0123456789' } });
  const all = stack.logs.join('\n');
  for (const secret of [stack.apiKey, stack.adminToken, 'wrong-admin-token-0123456789', stack.relayerKey].filter(Boolean)) {
    assert.ok(!all.includes(secret), 'a secret is in the logs');
  }
  assert.ok(!all.includes(stack.apiKey.slice(4, 36)), 'part of the API key is in the logs');
});
