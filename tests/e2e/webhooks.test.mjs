// Webhooks: a key's transaction events and the operator's low-balance alerts, POSTed to a local receiver (a Node
// http server on 127.0.0.1; WEBHOOK_ALLOW_HTTP is the dev flag) that verifies every delivery with the official
// `standardwebhooks` package — a library we did not write. A deploy delivers pending then mined; a receiver that
// fails (500, no answer) gets retries with the same webhook-id; a tampered or replayed delivery fails the library's
// check; the delivery log shows the attempts; the secret is answered once and never logged or answered again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { startStack } from '../../scripts/stack.mjs';
import { until } from './helpers/poll.mjs';

const CONTROLLER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
// the relayer is funded with 100 ETH by the stack; below 50 the operator is alerted
const THRESHOLD = 50n * 10n ** 18n;
const TIMEOUT_SECONDS = 5;

let stack;
let receiver;
/** Every request the receiver got: { path, headers, body, at }. */
const received = [];
/**
 * How the receiver answers a request: (request, nth attempt of its webhook-id) → status, 'hang' (never), or 'hold'
 * (200 once the test calls `held.get(webhook-id)`).
 */
let answer = () => 204;
const held = new Map();
const secrets = new Set();

before(async () => {
  receiver = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const entry = { path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(entry);
      const nth = received.filter((r) => r.headers['webhook-id'] === entry.headers['webhook-id']).length;
      const status = answer(entry, nth);
      if (status === 'hang') return; // never answered: the Worker's attempt times out
      const reply = (code) => {
        res.writeHead(code, { 'content-type': 'text/plain' });
        res.end('x'.repeat(100_000)); // a large body, never read by the Worker
      };
      const id = entry.headers['webhook-id'];
      if (status === 'hold') return held.set(id, () => held.delete(id) && reply(200));
      reply(status);
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  stack = await startStack({
    captureLogs: true,
    // a timeout that every answered delivery meets on a loaded machine, and that a receiver never answering reaches
    vars: { WEBHOOK_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS), LOW_BALANCE_ALERT_WEI: String(THRESHOLD) },
  });
});
after(async () => {
  await stack?.stop();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});
/** Fires the cron once (wrangler's /__scheduled): the indexer runs and the balance is checked. */
async function runCron() {
  const res = await fetch(`${stack.workerUrl}/__scheduled?cron=${encodeURIComponent('* * * * *')}`);
  assert.equal(res.status, 200, await res.text());
}
const hookUrl = (path) => `http://127.0.0.1:${receiver.address().port}${path}`;

/** A fresh API key with its id and secret. */
async function newKey(name) {
  const res = await stack.admin('POST', '/admin/api-keys', { name });
  assert.equal(res.status, 201);
  return res.json();
}

/** Sets the webhook of key `id` (or the operator's, without an id) to `url`; the answer. */
async function setHook(id, url) {
  const res = await stack.admin('POST', id ? `/admin/api-keys/${id}/webhook` : '/admin/webhook', { url });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  assert.equal(body.url, url);
  assert.match(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  secrets.add(body.secret);
  return body;
}

/** Deploys a profile through the relayer with `apiKey`; the answer. */
async function deploy(apiKey) {
  const res = await fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lsp6ControllerAddress: [CONTROLLER] }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

/** Waits until `find()` answers something truthy (at most `ms`). */
const eventually = (find, what, ms = 30_000) =>
  until(what, find, { timeoutMs: ms, intervalMs: 100, detail: () => `received ${JSON.stringify(received.map((r) => [r.path, r.body.slice(0, 80)]))}` });

/** The deliveries the receiver got on `path`, verified with `secret` by the library: [{ id, event, entry }]. */
function verified(path, secret) {
  return received
    .filter((r) => r.path === path)
    .map((entry) => ({ id: entry.headers['webhook-id'], event: new Webhook(secret).verify(entry.body, entry.headers), entry }));
}

async function deliveries(path) {
  const res = await stack.admin('GET', path);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

test('setting a webhook: URLs checked, the secret answered once, the listing shows the URL only', async () => {
  const key = await newKey('hooks-setup');
  const refused = async (body, code) => {
    const res = await stack.admin('POST', `/admin/api-keys/${key.id}/webhook`, body);
    const answer = await res.json();
    assert.equal(res.status, 400, JSON.stringify(answer));
    assert.equal(answer.error.code, code, JSON.stringify(answer));
  };
  for (const url of [
    'ftp://hooks.example.com/',
    'http://hooks.example.com/', // plain http only to this machine, even with the dev flag
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data/',
    // internal addresses in the spellings once accepted: compatible, NAT64, 6to4, site-local, local names
    'https://[::169.254.169.254]/',
    'https://[64:ff9b::a9fe:a9fe]/',
    'https://[2002:a9fe:a9fe::1]/',
    'https://[fec0::1]/',
    'https://localhost./hook',
    'https://hooks.localhost/hook',
    'https://metadata.google.internal/',
    'https://[::1]/hook',
    'https://user:pw@hooks.example.com/',
    `https://hooks.example.com/${'a'.repeat(400)}`,
    'not a url',
  ]) {
    await refused({ url }, 'INVALID_WEBHOOK_URL');
  }
  await refused({}, 'MISSING_FIELD');
  await refused({ url: 5 }, 'INVALID_FIELD_TYPE');
  await refused({ url: hookUrl('/x'), secret: 'mine' }, 'UNKNOWN_FIELD');
  // no such key; no admin token
  const missing = await stack.admin('POST', '/admin/api-keys/0123456789abcdef/webhook', { url: hookUrl('/x') });
  assert.equal(missing.status, 404);
  const anonymous = await fetch(`${stack.workerUrl}/admin/api-keys/${key.id}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: hookUrl('/x') }),
  });
  assert.equal(anonymous.status, 401);

  const first = await setHook(key.id, hookUrl('/setup'));
  // replacing makes a new secret
  const second = await setHook(key.id, hookUrl('/setup2'));
  assert.notEqual(second.secret, first.secret);
  const listing = await (await stack.admin('GET', '/admin/api-keys')).text();
  const listed = JSON.parse(listing).apiKeys.find((k) => k.id === key.id);
  assert.equal(listed.webhookUrl, hookUrl('/setup2'));
  assert.ok(!listing.includes('whsec_'), 'a secret in the listing');
  const log = await deliveries(`/admin/api-keys/${key.id}/webhook/deliveries`);
  assert.deepEqual(log, { url: hookUrl('/setup2'), deliveries: [], nextCursor: null });
});

let signed; // a key whose deploys the receiver verified: { key, hook, deployed }
test('a deploy delivers pending then mined, each signed as Standard Webhooks', async () => {
  const key = await newKey('hooks-deploy');
  const hook = await setHook(key.id, hookUrl('/deploy'));
  const started = Date.now();
  const deployed = await deploy(key.apiKey);
  const events = await eventually(() => {
    const got = verified('/deploy', hook.secret);
    return got.length >= 2 && got;
  }, 'pending and mined');
  assert.deepEqual(
    events.map((e) => e.event.type),
    ['transaction.pending', 'transaction.mined'],
  );
  for (const { id, event, entry } of events) {
    assert.match(id, /^msg_[0-9a-f]{32}$/);
    assert.equal(event.data.hash, deployed.transactionHash);
    assert.equal(event.data.kind, 'deploy');
    assert.equal(event.data.profile, deployed.universalProfileAddress);
    assert.equal(event.data.chainId, 31337);
    assert.match(event.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(entry.headers['content-type'], 'application/json');
    // the time of the attempt: after the deploy was asked for, before the receiver had it
    const signedAt = Number(entry.headers['webhook-timestamp']);
    assert.ok(signedAt >= Math.floor(started / 1000) && signedAt <= Math.ceil(entry.at / 1000), 'timestamp of the attempt');
  }
  assert.equal(events[0].event.data.status, 'pending');
  const mined = events[1].event.data;
  assert.equal(mined.status, 'mined');
  assert.equal(typeof mined.blockNumber, 'number');
  assert.ok(mined.gasUsed > 21_000, JSON.stringify(mined));
  assert.notEqual(events[0].id, events[1].id);
  // the same record the transaction route answers
  const record = await (await fetch(`${stack.workerUrl}/api/transaction/${deployed.transactionHash}`)).json();
  assert.equal(record.gasUsed, mined.gasUsed);
  assert.equal(record.blockNumber, mined.blockNumber);

  // a deploy with another key (no webhook) is not delivered to this one
  const other = await deploy(stack.apiKey);
  await new Promise((r) => setTimeout(r, 1500));
  assert.ok(!received.some((r) => r.body.includes(other.transactionHash)), "another key's transaction delivered");
  assert.equal(verified('/deploy', hook.secret).length, 2, 'delivered more than once');

  // each delivery is logged once its answer is in (moments after the receiver had it)
  const log = await eventually(async () => {
    const got = await deliveries(`/admin/api-keys/${key.id}/webhook/deliveries`);
    return got.deliveries.every((d) => d.state !== 'pending') && got;
  }, 'the deliveries logged');
  assert.equal(log.deliveries.length, 2);
  for (const d of log.deliveries) {
    assert.equal(d.state, 'delivered');
    assert.equal(d.attempts, 1);
    assert.equal(d.lastStatus, 204);
    assert.equal(d.lastError, null);
    assert.equal(d.nextAttemptAt, null);
  }
  // newest first
  assert.deepEqual(
    log.deliveries.map((d) => d.id),
    [events[1].id, events[0].id],
  );
  signed = { key, hook, deployed, events };
});

test("a tampered or replayed delivery fails the library's check", () => {
  assert.ok(signed, 'needs the deploy test');
  const { entry } = signed.events[1];
  const webhook = new Webhook(signed.hook.secret);
  assert.doesNotThrow(() => webhook.verify(entry.body, entry.headers));
  // the body changed (another gas figure)
  const tampered = entry.body.replace(/"gasUsed":(\d)/, (_, d) => `"gasUsed":${(Number(d) + 1) % 10}`);
  assert.notEqual(tampered, entry.body);
  assert.throws(() => webhook.verify(tampered, entry.headers), /signature/i);
  // another event's id or another timestamp with this signature
  assert.throws(() => webhook.verify(entry.body, { ...entry.headers, 'webhook-id': signed.events[0].id }), /signature/i);
  assert.throws(
    () => webhook.verify(entry.body, { ...entry.headers, 'webhook-timestamp': String(Number(entry.headers['webhook-timestamp']) + 1) }),
    /signature/i,
  );
  // another key's secret
  const other = [...secrets].find((s) => s !== signed.hook.secret);
  assert.throws(() => new Webhook(other).verify(entry.body, entry.headers), /signature/i);
  // replayed later than the library's window (5 minutes): refused although the signature is right
  const realNow = Date.now;
  Date.now = () => realNow() + 6 * 60 * 1000;
  try {
    assert.throws(() => webhook.verify(entry.body, entry.headers), /timestamp/i);
  } finally {
    Date.now = realNow;
  }
});

test('a receiver that fails (500, no answer) gets retries with the same webhook-id; the log shows them', async () => {
  const key = await newKey('hooks-retry');
  const hook = await setHook(key.id, hookUrl('/retry'));
  // first attempts: the pending event answered 500, the mined event never answered (times out after TIMEOUT_SECONDS);
  // a retry is answered 200 once the test has read its delivery's first attempt in the log, held until then (the
  // log shows an attempt when it has ended: a held retry leaves the first one there to read)
  const seen = new Map();
  answer = (entry, nth) => {
    if (entry.path !== '/retry') return 200;
    if (nth > 1) return seen.has(entry.headers['webhook-id']) ? 200 : 'hold';
    return entry.body.includes('"transaction.pending"') ? 500 : 'hang';
  };
  try {
    const started = Date.now();
    const deployed = await deploy(key.apiKey);
    // the log while each retry waits: attempt 1 failed, the next one scheduled seconds later (each delivery read
    // while it is there: the first event's retry may be done before the second event's first attempt has ended)
    await eventually(async () => {
      const log = await deliveries(`/admin/api-keys/${key.id}/webhook/deliveries`);
      for (const d of log.deliveries.filter((x) => x.attempts === 1 && !seen.has(x.id))) {
        seen.set(d.id, { ...d, readAt: Date.now() / 1000 });
        held.get(d.id)?.();
      }
      return seen.size === 2;
    }, 'each first attempt logged');
    const byType = Object.fromEntries([...seen.values()].map((d) => [d.type, d]));
    assert.equal(byType['transaction.pending'].state, 'pending');
    assert.equal(byType['transaction.pending'].lastStatus, 500);
    assert.match(byType['transaction.pending'].lastError, /500/);
    assert.equal(byType['transaction.mined'].state, 'pending');
    assert.equal(byType['transaction.mined'].lastStatus, null);
    assert.match(byType['transaction.mined'].lastError, new RegExp(`no answer within ${TIMEOUT_SECONDS} s`));
    for (const d of seen.values()) {
      // 5 s ± 20% after the attempt
      assert.ok(d.nextAttemptAt >= d.lastAttemptAt + 3 && d.nextAttemptAt <= d.lastAttemptAt + 7, JSON.stringify(d));
      // the attempt of this test (its time read back, whatever the time the machine took)
      assert.ok(d.lastAttemptAt >= Math.floor(started / 1000) && d.lastAttemptAt <= d.readAt, JSON.stringify(d));
    }

    const done = await eventually(async () => {
      const log = await deliveries(`/admin/api-keys/${key.id}/webhook/deliveries`);
      return log.deliveries.every((d) => d.state === 'delivered') && log;
    }, 'the retries delivered');
    for (const d of done.deliveries) {
      assert.equal(d.attempts, 2);
      assert.equal(d.lastStatus, 200);
      assert.equal(d.lastError, null);
    }
    // every attempt verifies, and each event's attempts share its webhook-id
    const attempts = verified('/retry', hook.secret);
    assert.equal(attempts.length, 4);
    for (const type of ['transaction.pending', 'transaction.mined']) {
      const of = attempts.filter((a) => a.event.type === type);
      assert.equal(of.length, 2, type);
      assert.equal(of[0].id, of[1].id, `${type}: a retry with another webhook-id`);
      assert.equal(of[0].entry.body, of[1].entry.body, `${type}: the same event`);
      assert.equal(of[0].event.data.hash, deployed.transactionHash);
      assert.ok(of[1].entry.at - of[0].entry.at >= 3_000, `${type}: retried too soon`);
    }
  } finally {
    answer = () => 204;
    for (const release of [...held.values()]) release();
  }
});

test('the delivery log pages with a cursor; malformed parameters are 400', async () => {
  assert.ok(signed, 'needs the deploy test');
  const path = `/admin/api-keys/${signed.key.id}/webhook/deliveries`;
  const first = await deliveries(`${path}?limit=1`);
  assert.equal(first.deliveries.length, 1);
  assert.match(first.nextCursor, /^\d+_msg_[0-9a-f]{32}$/);
  const second = await deliveries(`${path}?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`);
  assert.equal(second.deliveries.length, 1);
  assert.notEqual(second.deliveries[0].id, first.deliveries[0].id);
  assert.equal(second.nextCursor, null);
  for (const [query, code] of [
    ['limit=0', 'INVALID_PARAMETER'],
    ['limit=101', 'INVALID_PARAMETER'],
    ['limit=x', 'INVALID_PARAMETER'],
    // one spelling (plumbing::query_integer): decimal digits, given once
    ['limit=5.0', 'INVALID_PARAMETER'],
    ['limit=05', 'INVALID_PARAMETER'],
    ['limit=%2B5', 'INVALID_PARAMETER'],
    ['limit=1&limit=2', 'INVALID_PARAMETER'],
    ['cursor=abc', 'INVALID_CURSOR'],
    [`cursor=1_msg_${'z'.repeat(32)}`, 'INVALID_CURSOR'],
  ]) {
    const res = await stack.admin('GET', `${path}?${query}`);
    const body = await res.json();
    assert.equal(res.status, 400, query);
    assert.equal(body.error.code, code, query);
  }
  assert.equal((await stack.admin('GET', '/admin/api-keys/0123456789abcdef/webhook/deliveries')).status, 404);
});

test('removing a webhook stops the deliveries', async () => {
  const key = await newKey('hooks-remove');
  await setHook(key.id, hookUrl('/removed'));
  const removed = await stack.admin('DELETE', `/admin/api-keys/${key.id}/webhook`);
  assert.equal(removed.status, 200);
  assert.deepEqual(await removed.json(), { removed: true });
  const listed = (await (await stack.admin('GET', '/admin/api-keys')).json()).apiKeys.find((k) => k.id === key.id);
  assert.equal(listed.webhookUrl, undefined);
  const deployed = await deploy(key.apiKey);
  await new Promise((r) => setTimeout(r, 1500));
  assert.ok(!received.some((r) => r.path === '/removed' || r.body.includes(deployed.transactionHash)));
  assert.deepEqual(await deliveries(`/admin/api-keys/${key.id}/webhook/deliveries`), {
    url: null,
    deliveries: [],
    nextCursor: null,
  });
  const again = await stack.admin('DELETE', `/admin/api-keys/${key.id}/webhook`);
  assert.deepEqual(await again.json(), { removed: false });
});

test('a revoked key: its delivery log stays readable, no new webhook is set for it', async () => {
  const key = await newKey('hooks-revoked');
  await setHook(key.id, hookUrl('/revoked'));
  const deployed = await deploy(key.apiKey);
  const path = `/admin/api-keys/${key.id}/webhook/deliveries`;
  const before = await eventually(async () => {
    const log = await deliveries(path);
    return log.deliveries.length === 2 && log.deliveries.every((d) => d.state === 'delivered') && log;
  }, 'pending and mined delivered');
  assert.equal((await stack.admin('DELETE', `/admin/api-keys/${key.id}`)).status, 200);
  // the log of what was delivered for it (its deploy's events) is the operator's to read
  const after = await deliveries(path);
  assert.deepEqual(
    after.deliveries.map((d) => d.id),
    before.deliveries.map((d) => d.id),
  );
  assert.ok(received.some((r) => r.path === '/revoked' && r.body.includes(deployed.transactionHash)));
  const res = await stack.admin('POST', `/admin/api-keys/${key.id}/webhook`, { url: hookUrl('/revoked2') });
  const body = await res.json();
  assert.equal(res.status, 403, JSON.stringify(body));
  assert.equal(body.error.code, 'API_KEY_REVOKED');
  assert.equal((await deliveries(path)).url, hookUrl('/revoked'), 'unchanged');
});

test('low balance: the operator is alerted once per crossing, and when it recovers', async () => {
  const relayer = await (await stack.admin('GET', '/admin/relayer')).json();
  const hook = await setHook(null, hookUrl('/ops'));
  const setBalance = (wei) => stack.chain.rpc('anvil_setBalance', [relayer.signer, `0x${wei.toString(16)}`]);
  const alerts = () => verified('/ops', hook.secret).map((v) => v.event);
  try {
    await runCron();
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(alerts(), [], 'alerted while the balance is above the threshold');
    await setBalance(THRESHOLD / 2n);
    await runCron();
    await eventually(() => alerts().length === 1, 'the low-balance alert');
    // the next runs do not alert again
    await runCron();
    await runCron();
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(alerts().length, 1, JSON.stringify(alerts()));
    const [low] = alerts();
    assert.equal(low.type, 'relayer.balance_low');
    assert.deepEqual(low.data, {
      chainId: 31337,
      signer: relayer.signer,
      balanceWei: String(THRESHOLD / 2n),
      thresholdWei: String(THRESHOLD),
    });
  } finally {
    await setBalance(100n * 10n ** 18n);
  }
  await runCron();
  await eventually(() => alerts().length === 2, 'the recovery');
  assert.equal(alerts()[1].type, 'relayer.balance_recovered');
  const log = await eventually(async () => {
    const got = await deliveries('/admin/webhook/deliveries');
    return got.deliveries.every((d) => d.state !== 'pending') && got;
  }, 'the alerts logged');
  assert.deepEqual(
    log.deliveries.map((d) => [d.type, d.state]),
    [
      ['relayer.balance_recovered', 'delivered'],
      ['relayer.balance_low', 'delivered'],
    ],
  );
});

test('secrets: never logged, never answered after creation', async () => {
  assert.ok(secrets.size >= 4);
  const logs = stack.logs.join('\n');
  assert.ok(logs.includes('"event":"webhook"'), 'no delivery lines logged');
  const answers = [
    await (await stack.admin('GET', '/admin/api-keys')).text(),
    await (await stack.admin('GET', '/admin/webhook/deliveries')).text(),
    await (await stack.admin('GET', `/admin/api-keys/${signed.key.id}/webhook/deliveries`)).text(),
    await (await stack.admin('GET', '/admin/relayer')).text(),
  ];
  for (const secret of secrets) {
    const key = secret.slice('whsec_'.length);
    assert.ok(!logs.includes(key) && !logs.includes(key.slice(0, 20)), 'a webhook secret is in the logs');
    for (const body of answers) assert.ok(!body.includes(key.slice(0, 20)), 'a webhook secret in an answer');
  }
  // the deliveries carry no secret either
  for (const r of received) {
    for (const secret of secrets) assert.ok(!r.body.includes(secret.slice(6, 26)), 'a secret in a delivery');
  }
});
