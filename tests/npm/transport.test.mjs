// The clients' transport options: an injected `fetch`, `timeout`, `signal`, retries of 429 / 503 after their
// `Retry-After`, and `NETWORK_ERROR` with the engine's error as `cause` — against an injected fetch or a local server.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import * as sdk from 'profile-relayer';
import { settle } from '../helpers/settle.mjs';

const up = '0xBB645D97B0c7D101ca0d73131e521fe89B463BFD';
const STATUS = {
  universalProfileAddress: up,
  deployed: true,
  registered: false,
  pendingTransaction: null,
  deploymentTransaction: null,
  registeredAt: null,
  quota: null,
};
const json = (body, status = 200, headers = {}) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const refusal = (status, code, headers) => json({ error: { code, message: code } }, status, headers);

/** A fetch answering `answers` in turn, recording each call. */
function scripted(...answers) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init, at: performance.now() });
    const next = answers[Math.min(calls.length - 1, answers.length - 1)];
    return next();
  };
  return { fetch, calls };
}

// a server that accepts requests and never answers (the timeout / abort cases)
const hanging = createServer(() => {});
await new Promise((r) => hanging.listen(0, '127.0.0.1', r));
const hangingUrl = `http://127.0.0.1:${hanging.address().port}`;
after(() => {
  hanging.closeAllConnections();
  hanging.close();
});

test('an injected fetch sends the requests: URL, method, headers', async () => {
  const { fetch, calls } = scripted(() => json(STATUS));
  const relayer = new sdk.RelayerClient({ baseUrl: 'http://relayer.test/', apiKey: 'prk_x', fetch });
  assert.deepEqual(await relayer.profileStatus(up), STATUS);
  assert.equal(calls.length, 1);
  assert.equal(calls[0].url, `http://relayer.test/api/universal-profile/${up}`);
  assert.equal(calls[0].init.method, 'GET');
  assert.equal(calls[0].init.headers.authorization, 'Bearer prk_x');
  assert.equal(calls[0].init.signal, undefined, 'no signal without timeout or signal');
  // a fetch that throws is the network failing: NETWORK_ERROR, the thrown error as cause
  const boom = new TypeError('offline');
  const failing = new sdk.LookupClient({
    baseUrl: 'http://x.test',
    fetch: async () => {
      throw boom;
    },
  });
  await assert.rejects(failing.stats(42), (e) => e.code === 'NETWORK_ERROR' && e.cause === boom && /offline/.test(e.message));
});

test('the global fetch failing: NETWORK_ERROR with its TypeError as cause', async () => {
  const offline = new sdk.LookupClient({ baseUrl: 'http://127.0.0.1:9' });
  await assert.rejects(
    offline.stats(42),
    (e) => sdk.isProfileRelayerError(e) && e.code === 'NETWORK_ERROR' && e.cause instanceof TypeError && e.status === undefined,
  );
});

test('429 / 503: retried after Retry-After when retries allow, else the error with retryAfter', async (t) => {
  // no retries by default: the 429 is the answer
  let s = scripted(
    () => refusal(429, 'RATE_LIMITED', { 'retry-after': '1' }),
    () => json(STATUS),
  );
  await assert.rejects(
    new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: s.fetch }).profileStatus(up),
    (e) => e.code === 'RATE_LIMITED' && e.status === 429 && e.retryAfter === 1,
  );
  assert.equal(s.calls.length, 1);

  // retries: 1 → sent again after 1 s
  s = scripted(
    () => refusal(429, 'RATE_LIMITED', { 'retry-after': '1' }),
    () => json(STATUS),
  );
  assert.deepEqual(await new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: s.fetch, retries: 1 }).profileStatus(up), STATUS);
  assert.equal(s.calls.length, 2);
  assert.ok(s.calls[1].at - s.calls[0].at >= 950, `waited ${s.calls[1].at - s.calls[0].at} ms`);

  // 503 without Retry-After: 0.5 s, then 1 s; a third refusal is the answer once retries are spent (the waits on the
  // test's clock: setTimeout mocked, each step of it taken here)
  s = scripted(() => refusal(503, 'RPC_UNAVAILABLE'));
  t.mock.timers.enable({ apis: ['setTimeout'] });
  try {
    let outcome;
    new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: s.fetch, retries: 2 }).profileStatus(up).then(
      () => (outcome = 'answered'),
      (e) => (outcome = e),
    );
    for (const [wait, calls, what] of [
      [0, 1, 'the first'],
      [499, 1, 'not again before 0.5 s'],
      [1, 2, 'again at 0.5 s'],
      [999, 2, 'not again before 1 s more'],
      [1, 3, 'again 1 s later'],
    ]) {
      t.mock.timers.tick(wait);
      await settle();
      assert.equal(s.calls.length, calls, what);
    }
    assert.ok(outcome?.code === 'RPC_UNAVAILABLE' && outcome.status === 503, String(outcome));
  } finally {
    t.mock.timers.reset();
  }

  // a Retry-After beyond maxRetryDelay is not waited for
  s = scripted(
    () => refusal(429, 'RATE_LIMITED', { 'retry-after': '30' }),
    () => json(STATUS),
  );
  await assert.rejects(
    new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: s.fetch, retries: 3, maxRetryDelay: 10 }).profileStatus(up),
    (e) => e.code === 'RATE_LIMITED' && e.retryAfter === 30,
  );
  assert.equal(s.calls.length, 1);

  // an HTTP-date (RFC 9110) is read too: an hour ahead is not waited for, and is the error's retryAfter: the
  // seconds from when the answer was read (between `asked` and the rejection) to the date (whole seconds)
  const asked = Date.now();
  const date = new Date(asked + 3600_000);
  s = scripted(
    () => refusal(503, 'UNAVAILABLE', { 'retry-after': date.toUTCString() }),
    () => json(STATUS),
  );
  const whole = Math.floor(date.getTime() / 1000) * 1000;
  await assert.rejects(
    new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: s.fetch, retries: 3 }).profileStatus(up),
    (e) => e.code === 'UNAVAILABLE' && e.retryAfter <= Math.ceil((whole - asked) / 1000) && e.retryAfter >= Math.ceil((whole - Date.now()) / 1000),
  );
  assert.equal(s.calls.length, 1);

  // other statuses are never retried
  s = scripted(
    () => refusal(500, 'INTERNAL_ERROR'),
    () => json(STATUS),
  );
  await assert.rejects(new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: s.fetch, retries: 3 }).profileStatus(up), (e) => e.code === 'INTERNAL_ERROR');
  assert.equal(s.calls.length, 1);
});

test('timeout: an attempt that takes longer rejects with NETWORK_ERROR, a TimeoutError as cause', async (t) => {
  // the attempt's timer is the engine's AbortSignal.timeout, asked for the client's timeout
  const timeouts = t.mock.method(AbortSignal, 'timeout');
  const started = performance.now();
  const lookup = new sdk.LookupClient({ baseUrl: hangingUrl, timeout: 200 });
  await assert.rejects(lookup.stats(42), (e) => e.code === 'NETWORK_ERROR' && e.cause?.name === 'TimeoutError');
  const took = performance.now() - started;
  // a timer never fires early: the lower bound holds on any machine
  assert.ok(took >= 190, `took ${took} ms`);
  assert.deepEqual(
    timeouts.mock.calls.map((c) => c.arguments),
    [[200]],
  );
});

test('signal: aborting rejects the pending request and a retry wait, the reason as cause', async (t) => {
  const controller = new AbortController();
  const lookup = new sdk.LookupClient({ baseUrl: hangingUrl, signal: controller.signal, timeout: 10_000 });
  const reason = new Error('user left the page');
  setTimeout(() => controller.abort(reason), 100);
  await assert.rejects(lookup.stats(42), (e) => e.code === 'NETWORK_ERROR' && e.cause === reason);
  // already aborted: nothing is sent
  const s = scripted(() => json(STATUS));
  await assert.rejects(
    new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: s.fetch, signal: controller.signal }).profileStatus(up),
    (e) => e.code === 'NETWORK_ERROR' && e.cause === reason,
  );
  // aborted while waiting for a retry: rejected at once, the 30 s wait never run (setTimeout mocked: nothing fires
  // unless the test moves the clock)
  const waiting = new AbortController();
  const r = scripted(
    () => refusal(429, 'RATE_LIMITED', { 'retry-after': '30' }),
    () => json(STATUS),
  );
  t.mock.timers.enable({ apis: ['setTimeout'] });
  try {
    let outcome;
    new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: r.fetch, retries: 1, signal: waiting.signal }).profileStatus(up).then(
      () => (outcome = 'answered'),
      (e) => (outcome = e),
    );
    await settle();
    assert.equal(r.calls.length, 1);
    assert.equal(outcome, undefined, 'waiting for the retry');
    waiting.abort(reason);
    await settle();
    assert.ok(outcome?.code === 'NETWORK_ERROR' && outcome.cause === reason, String(outcome));
  } finally {
    t.mock.timers.reset();
  }
  assert.equal(r.calls.length, 1);
  assert.equal(s.calls.length, 0);
});

test("one call's options: its signal adds to the client's, its timeout / retries / fetch replace the client's", async (t) => {
  const reason = new Error('the view went away');
  // a call's signal aborted already: nothing is sent, and the client goes on
  const s = scripted(() => json(STATUS));
  const relayer = new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: s.fetch });
  await assert.rejects(relayer.profileStatus(up, { signal: AbortSignal.abort(reason) }), (e) => e.code === 'NETWORK_ERROR' && e.cause === reason);
  assert.equal(s.calls.length, 0);
  assert.deepEqual(await relayer.profileStatus(up), STATUS);
  assert.equal(s.calls.length, 1);

  // the client's signal and a call's: either aborts the call; the call's leaves the client as it was
  const client = new AbortController();
  const lookup = new sdk.LookupClient({ baseUrl: hangingUrl, signal: client.signal, timeout: 10_000 });
  const call = new AbortController();
  setTimeout(() => call.abort(reason), 100);
  await assert.rejects(lookup.stats(42, { signal: call.signal }), (e) => e.code === 'NETWORK_ERROR' && e.cause === reason);
  const clientReason = new Error('the page went away');
  setTimeout(() => client.abort(clientReason), 100);
  await assert.rejects(lookup.indexer(42, { signal: new AbortController().signal }), (e) => e.code === 'NETWORK_ERROR' && e.cause === clientReason);

  // a call's timeout on a client without one: the attempt's timer asked for it
  const timeouts = t.mock.method(AbortSignal, 'timeout');
  await assert.rejects(new sdk.LookupClient({ baseUrl: hangingUrl }).stats(42, { timeout: 200 }), (e) => e.cause?.name === 'TimeoutError');
  assert.deepEqual(
    timeouts.mock.calls.map((c) => c.arguments),
    [[200]],
  );
  timeouts.mock.restore();

  // a call's retries on a client without them, and a call's fetch
  const limited = () => refusal(429, 'RATE_LIMITED', { 'retry-after': '0' });
  const r = scripted(limited, limited, () => json(STATUS));
  const strict = new sdk.RelayerClient({ baseUrl: 'http://r.test', fetch: r.fetch });
  await assert.rejects(strict.profileStatus(up), (e) => e.code === 'RATE_LIMITED');
  assert.equal(r.calls.length, 1, 'the client retries nothing');
  assert.deepEqual(await strict.profileStatus(up, { retries: 1 }), STATUS);
  assert.equal(r.calls.length, 3, 'the call retried once');
  const other = scripted(() => json(STATUS));
  assert.deepEqual(await strict.profileStatus(up, { fetch: other.fetch }), STATUS);
  assert.equal(other.calls.length, 1);

  // search: the page options beside the call's, the signal given to fetch
  const found = { hits: [], nbHits: 0, page: 0, nbPages: 0, hitsPerPage: 5, processingTimeMS: 1, query: 'alice', params: '', index: 'i' };
  const q = scripted(() => json({ profiles: found, assets: found }));
  const searching = new sdk.LookupClient({ baseUrl: 'http://l.test', fetch: q.fetch });
  await searching.search(42, 'alice', { hitsPerPage: 5, signal: new AbortController().signal });
  assert.equal(q.calls[0].url, 'http://l.test/v1/42/search?q=alice&hitsPerPage=5');
  assert.ok(q.calls[0].init.signal instanceof AbortSignal);

  // a call's options are checked as the client's, before anything is sent
  for (const bad of [{ timeout: 0 }, { retries: 11 }, { signal: {} }, { fetch: 'fetch' }, { retry: 1 }, { page: 1 }]) {
    await assert.rejects(strict.profileStatus(up, bad), (e) => e.code === 'INVALID_ARGUMENT' || e.code === 'UNKNOWN_FIELD', JSON.stringify(bad));
  }
  assert.equal(r.calls.length, 3);
});

test('transport options are checked when the client is made', () => {
  const bad = [
    { timeout: 0 },
    { timeout: -1 },
    { timeout: '100' },
    { timeout: Infinity },
    { retries: 1.5 },
    { retries: 11 },
    { retries: -1 },
    { maxRetryDelay: -1 },
    { fetch: 'fetch' },
    { signal: {} },
    { signal: { aborted: false } },
    { retry: 1 },
  ];
  for (const extra of bad) {
    for (const Client of [sdk.RelayerClient, sdk.LookupClient]) {
      assert.throws(
        () => new Client({ baseUrl: 'http://x.test', ...extra }),
        (e) => e.code === 'INVALID_ARGUMENT' || e.code === 'UNKNOWN_FIELD',
        JSON.stringify(extra),
      );
    }
  }
  const ok = new sdk.LookupClient({
    baseUrl: 'http://x.test',
    timeout: 1000,
    retries: 0,
    maxRetryDelay: 0,
    signal: new AbortController().signal,
    fetch: async () => json({}),
  });
  assert.ok(ok instanceof sdk.LookupClient);
});
