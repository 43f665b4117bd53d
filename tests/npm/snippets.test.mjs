// The JS files the wasm imports (src/wasm/js/*.js, wasm-bindgen `module` snippets), tested as plain ES modules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodedUri, keyValue, knownIndex, predicted, presentFields, smallUint, unknownKey, utf8In } from '../../src/wasm/js/io.js';
import { prFetch, retryAfterSeconds } from '../../src/wasm/js/http.js';
import { ProfileRelayerError, isProfileRelayerError, newError } from '../../src/wasm/js/errors.js';
import { settle } from '../helpers/settle.mjs';

test('io.js: result objects sliced from one string', () => {
  const all = '0x6f357c6a' + '0x' + 'ab'.repeat(32) + 'ipfs://x';
  assert.deepEqual(decodedUri('verifiableUri', all, 10, 76, 'keccak256(utf8)', undefined), {
    format: 'verifiableUri',
    method: '0x6f357c6a',
    methodName: 'keccak256(utf8)',
    hash: '0x' + 'ab'.repeat(32),
    url: 'ipfs://x',
  });
  const noName = decodedUri('legacy', all.slice(0, 76), 10, 76, undefined, 'ipfs://é');
  assert.deepEqual(noName, { format: 'legacy', method: '0x6f357c6a', hash: '0x' + 'ab'.repeat(32), url: 'ipfs://é' });
  assert.ok(!('methodName' in noName));
  assert.deepEqual(keyValue('0x' + '11'.repeat(32) + '2233'), { key: '0x' + '11'.repeat(32), value: '0x2233' });
  const up = '0x' + 'A'.repeat(40),
    km = '0x' + 'b'.repeat(40),
    salt = '0x' + 'c'.repeat(64);
  assert.deepEqual(predicted(up + km + salt), { universalProfile: up, keyManager: km, generatedSalt: salt });
});

test('io.js: input objects answered in one call', () => {
  assert.equal(unknownKey({ a: 1, b: 2 }, ['a', 'b']), undefined);
  assert.equal(unknownKey({ a: 1, typo: 2 }, ['a', 'b']), 'typo');
  assert.equal(presentFields({ a: 1, b: null, c: undefined, d: 0 }, ['a', 'b', 'c', 'd']), 0b1001);
  assert.equal(presentFields({}, ['a']), 0);
  assert.equal(presentFields({ a: 1, extra: 1 }, ['a']), -1);
});

test('io.js: small integers and key-name look-ups', () => {
  assert.equal(smallUint(7), 7);
  assert.equal(smallUint(7n), 7);
  assert.equal(smallUint(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
  for (const bad of [-1, 1.5, NaN, Infinity, 2 ** 53, -1n, 2n ** 53n, '7', null, undefined, {}]) {
    assert.equal(smallUint(bad), -1, String(bad));
  }
  const map = new Map([['LSP3Profile', 3]]);
  assert.equal(knownIndex(map, 'LSP3Profile', undefined), 3);
  assert.equal(knownIndex(map, 'LSP3Profile', null), 3);
  assert.equal(knownIndex(map, 'Other', undefined), -2);
  assert.equal(knownIndex(map, 'LSP3Profile', ['x']), -1, 'dynamic parts: never the precomputed key');
});

test('io.js: utf8In writes a string into a buffer when its worst case fits', () => {
  const buf = Buffer.alloc(16);
  assert.equal(utf8In(buf, 'héllo', 2, 15), 6);
  assert.equal(buf.subarray(2, 8).toString('utf8'), 'héllo');
  assert.equal(utf8In(buf, 'abcdef', 0, 17), -2, '6 units may need 18 bytes');
  assert.equal(utf8In(buf, 42, 0, 16), -1);
  assert.equal(utf8In(buf, new String('x'), 0, 16), -1, 'a String object is no string');
});

test('errors.js: the error class, its guard and its factory agree', () => {
  const e = newError('bad', 'INVALID_ARGUMENT', 429, 3, new TypeError('why'));
  assert.ok(e instanceof ProfileRelayerError && e instanceof Error);
  assert.equal(isProfileRelayerError(e), true);
  assert.deepEqual([e.name, e.message, e.code, e.status, e.retryAfter], ['ProfileRelayerError', 'bad', 'INVALID_ARGUMENT', 429, 3]);
  assert.ok(e.cause instanceof TypeError);
  const plain = newError('bad', 'X');
  assert.ok(!('status' in plain) && !('retryAfter' in plain) && !('cause' in plain), 'absent fields are left out');
  // recognised by shape, like the guard: an error of another copy of the class
  const foreign = Object.assign(new Error('x'), { name: 'ProfileRelayerError', code: 'X' });
  assert.ok(foreign instanceof ProfileRelayerError);
  assert.ok(!(Object.assign(new Error('x'), { name: 'ProfileRelayerError' }) instanceof ProfileRelayerError), 'no code');
  assert.ok(!({ name: 'ProfileRelayerError', code: 'X', message: '' } instanceof ProfileRelayerError), 'no Error');
});

/** A `fetch` answering `answers` in turn (each `[status, body, headers?]`), recording the requests. */
function fakeFetch(answers) {
  const requests = [];
  const f = async (url, init) => {
    requests.push({ url, ...init });
    const [status, body, headers = {}] = answers[Math.min(requests.length - 1, answers.length - 1)];
    return new Response(body, { status, headers });
  };
  return Object.assign(f, { requests });
}

test('http.js: one request, JSON body and bearer token, the answer as [status, retryAfter, text]', async () => {
  const f = fakeFetch([[200, '{"ok":true}']]);
  const out = await prFetch('POST', 'http://x/a', 'key', { a: 1 }, true, false, { fetch: f });
  assert.deepEqual(out, [200, null, '{"ok":true}']);
  assert.equal(f.requests[0].headers.authorization, 'Bearer key');
  assert.equal(f.requests[0].headers['content-type'], 'application/json');
  assert.equal(f.requests[0].body, '{"a":1}');
  const bin = await prFetch('GET', 'http://x/b', undefined, undefined, false, true, { fetch: fakeFetch([[200, 'ab']]) });
  assert.deepEqual(bin[2], new Uint8Array([97, 98]));
  const failed = await prFetch('GET', 'http://x/b', undefined, undefined, false, true, { fetch: fakeFetch([[404, 'nope']]) });
  assert.deepEqual(failed, [404, null, 'nope'], 'an error body is text even for a binary request');
});

test('http.js: 429 / 503 retried after Retry-After, up to `retries`, within `maxRetryDelay`', async () => {
  const f = fakeFetch([
    [429, '', { 'retry-after': '0' }],
    [503, '', { 'retry-after': '0' }],
    [200, 'done'],
  ]);
  assert.deepEqual(await prFetch('GET', 'http://x', undefined, undefined, false, false, { fetch: f, retries: 2 }), [200, null, 'done']);
  assert.equal(f.requests.length, 3);
  const once = fakeFetch([[429, 'slow', { 'retry-after': '0' }]]);
  assert.deepEqual(await prFetch('GET', 'http://x', undefined, undefined, false, false, { fetch: once, retries: 0 }), [429, 0, 'slow']);
  assert.equal(once.requests.length, 1, 'no retry by default');
  const far = fakeFetch([
    [503, '', { 'retry-after': '120' }],
    [200, 'x'],
  ]);
  assert.deepEqual(await prFetch('GET', 'http://x', undefined, undefined, false, false, { fetch: far, retries: 3, maxRetryDelay: 60 }), [503, 120, '']);
  assert.equal(far.requests.length, 1, 'a wait beyond maxRetryDelay is answered, not waited');
  const other = fakeFetch([[500, 'x', { 'retry-after': '0' }]]);
  await prFetch('GET', 'http://x', undefined, undefined, false, false, { fetch: other, retries: 3 });
  assert.equal(other.requests.length, 1, '500 is not retried');
});

test('http.js: Retry-After as delay-seconds or an HTTP-date (RFC 9110), else the backoff', () => {
  const now = Date.UTC(2026, 10, 27, 12, 0, 0);
  const cases = [
    [null, null],
    ['0', 0],
    [' 7 ', 7],
    ['120', 120],
    ['99999999999', 86400], // at most a day
    ['Fri, 27 Nov 2026 12:00:30 GMT', 30], // IMF-fixdate
    ['Friday, 27-Nov-26 12:01:00 GMT', 60], // RFC 850
    ['Fri Nov 27 12:00:05 2026', 5], // asctime
    ['Fri, 27 Nov 2026 11:00:00 GMT', 0], // past
    ['Sat, 27 Nov 2027 12:00:00 GMT', 86400],
    ['-1', null],
    ['+5', null],
    ['1.5', null],
    ['abc', null],
    ['2026-11-27T12:00:30Z', null], // not an HTTP-date
    ['', null],
  ];
  for (const [value, seconds] of cases) assert.equal(retryAfterSeconds(value, now), seconds, String(value));
});

test('http.js: an HTTP-date Retry-After is waited for; one beyond maxRetryDelay is answered with its seconds', async (t) => {
  // the test's clock (Date and setTimeout mocked, on a whole second): the wait is the date's, to the millisecond
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.UTC(2026, 10, 27, 12, 0, 0) });
  const soon = new Date(Date.now() + 1500).toUTCString(); // 12:00:01: HTTP-dates have whole seconds
  const f = fakeFetch([
    [429, '', { 'retry-after': soon }],
    [200, 'done'],
  ]);
  let answer;
  prFetch('GET', 'http://x', undefined, undefined, false, false, { fetch: f, retries: 1 }).then((a) => (answer = a));
  await settle();
  t.mock.timers.tick(999);
  await settle();
  assert.equal(f.requests.length, 1, 'not retried before the date');
  t.mock.timers.tick(1);
  await settle();
  assert.equal(f.requests.length, 2, 'retried at the date');
  assert.deepEqual(answer, [200, null, 'done']);
  const late = fakeFetch([[503, '', { 'retry-after': new Date(Date.now() + 3600_000).toUTCString() }]]);
  const [status, after] = await prFetch('GET', 'http://x', undefined, undefined, false, false, { fetch: late, retries: 2 });
  assert.equal(status, 503);
  assert.equal(after, 3600);
  assert.equal(late.requests.length, 1, 'an hour is beyond maxRetryDelay: answered, not retried within the second');
});

test('http.js: an aborted signal stops requests even through a fetch that ignores it', async (t) => {
  const reason = new Error('gone');
  const aborted = AbortSignal.abort(reason);
  const deaf = fakeFetch([[200, 'x']]);
  await assert.rejects(prFetch('GET', 'http://x', undefined, undefined, false, false, { fetch: deaf, signals: [aborted] }), (e) => e === reason);
  assert.equal(deaf.requests.length, 0, 'already aborted: nothing is sent');
  // aborted while the first answer (a 429) is being read: no wait (setTimeout mocked: the 30 s would never end
  // unless the test moved the clock), no second request
  const controller = new AbortController();
  const slow = fakeFetch([[429, '', { 'retry-after': '30' }]]);
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let outcome;
  prFetch('GET', 'http://x', undefined, undefined, false, false, {
    fetch: async (url) => {
      const r = await slow(url, {});
      controller.abort(reason);
      return r;
    },
    retries: 1,
    signals: [controller.signal],
  }).then(
    () => (outcome = 'answered'),
    (e) => (outcome = e),
  );
  await settle();
  assert.equal(outcome, reason, 'rejected at once');
  assert.equal(slow.requests.length, 1);
});

test('http.js: the signals abort a retry wait, and the timeout reaches fetch', async () => {
  const controller = new AbortController();
  const f = fakeFetch([[503, '', { 'retry-after': '30' }]]);
  // two signals (the client's, a call's): the second one aborting ends the wait
  const pending = prFetch('GET', 'http://x', undefined, undefined, false, false, {
    fetch: f,
    retries: 1,
    signals: [new AbortController().signal, controller.signal],
  });
  setTimeout(() => controller.abort(new Error('stop')), 20);
  await assert.rejects(pending, /stop/);
  assert.equal(f.requests.length, 1);
  let seen;
  await prFetch('GET', 'http://x', undefined, undefined, false, false, {
    timeout: 50,
    signals: [new AbortController().signal, new AbortController().signal],
    fetch: async (_url, init) => {
      seen = init.signal;
      return new Response('x');
    },
  });
  assert.ok(seen instanceof AbortSignal && !seen.aborted, "one signal combining the caller's and the timeout");
  // (AbortSignal.timeout's timer does not keep Node's event loop alive: this one does, while the request hangs)
  const alive = setTimeout(() => {}, 5000);
  await assert.rejects(
    prFetch('GET', 'http://x', undefined, undefined, false, false, {
      timeout: 10,
      fetch: (_url, init) => new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(init.signal.reason))),
    }),
    (e) => e.name === 'TimeoutError',
  );
  clearTimeout(alive);
});
