// Uploads as LUKSO's wallet sends them: `POST /api/v0/add` with `Authorization: Bearer <JWT>`, the token signed by
// the wallet's own library (`@tsndr/cloudflare-worker-jwt` 2.5.4, HS256) with the claims the wallet writes
// (`iss: 'extension'`, fractional `iat`/`exp` 120 s apart), one multipart field `file` holding a JSON Blob; the
// wallet reads only `IpfsHash` and takes only status 200 as success. Forged, expired, foreign and other-algorithm
// tokens are refused with 401 INVALID_UPLOAD_TOKEN and store nothing; API keys keep working beside tokens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import jwt from '@tsndr/cloudflare-worker-jwt';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { startStack } from '../../scripts/stack.mjs';
import { postUpload } from './helpers/upload.mjs';
import { tokenBucket } from './helpers/bucket.mjs';

const SECRET = randomBytes(24).toString('hex');
let stack;
before(async () => {
  stack = await startStack({ secrets: { UPLOAD_JWT_SECRET: SECRET }, vars: { UPLOAD_JWT_RATE_LIMIT_PER_MINUTE: '1000' } });
});
after(async () => {
  await stack?.stop();
});

/** The wallet's token: `authenticated-formdata-client.ts`, `now = Date.now()`. */
const walletToken = (secret = SECRET, { iss = 'extension', offsetMs = 0, algorithm } = {}) => {
  const now = Date.now() + offsetMs;
  return jwt.sign({ iss, iat: now / 1000, exp: (now + 120_000) / 1000 }, secret, algorithm ? { algorithm } : undefined);
};

const upload = (token, content, headers = {}) => postUpload(stack.workerUrl, token, content, { type: 'application/json', headers });

test('the wallet token uploads: 200, IpfsHash readable back through /ipfs', async () => {
  const grid = JSON.stringify({ LSP28TheGrid: [{ title: 'my grid', grid: [] }], nonce: randomBytes(8).toString('hex') });
  const res = await upload(await walletToken(), grid);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.match(body.IpfsHash, /^b[a-z2-7]+$/);
  const back = await fetch(`${stack.workerUrl}/ipfs/${body.IpfsHash}`);
  assert.equal(back.status, 200);
  assert.equal(await back.text(), grid);
  // an API key with the upload scope still works beside tokens
  const keyed = await upload(stack.apiKey, '{"via":"key"}');
  assert.equal(keyed.status, 200);
});

test('forged, expired, future, foreign-issuer and other-algorithm tokens: 401 INVALID_UPLOAD_TOKEN', async () => {
  const cases = {
    'wrong secret': await walletToken('not-the-secret'),
    expired: await walletToken(SECRET, { offsetMs: -10 * 60_000 }),
    'issued in the future': await walletToken(SECRET, { offsetMs: 10 * 60_000 }),
    'foreign issuer': await walletToken(SECRET, { iss: 'someone-else' }),
    HS512: await walletToken(SECRET, { algorithm: 'HS512' }),
    'tampered claims': (await walletToken()).replace(/\.[^.]+\./, `.${Buffer.from('{"iss":"extension","exp":9999999999}').toString('base64url')}.`),
    'not a JWT': 'a.b.c',
  };
  for (const [name, token] of Object.entries(cases)) {
    const content = JSON.stringify({ refused: name });
    const res = await upload(token, content);
    const body = await res.json();
    assert.equal(res.status, 401, `${name}: ${JSON.stringify(body)}`);
    assert.equal(body.error.code, 'INVALID_UPLOAD_TOKEN', name);
    assert.ok(!body.error.message.includes(SECRET), 'the secret is never echoed');
  }
  const anonymous = await fetch(`${stack.workerUrl}/api/v0/add`, { method: 'POST', body: new FormData() });
  assert.equal((await anonymous.json()).error.code, 'MISSING_API_KEY');
});

// The secret ships inside the wallet's pages and API keys inside dApps' pages: whoever holds either can upload, and
// uploads are kept for good. What one client address can make the deployment store is bounded in bytes an hour,
// whatever the credential or the number of requests.
test('a client address uploads at most UPLOAD_BYTES_PER_HOUR: the upload that would pass it is refused whole', async () => {
  await stack.restartWorker({ vars: { UPLOAD_JWT_RATE_LIMIT_PER_MINUTE: '1000', UPLOAD_BYTES_PER_HOUR: String(100 * 1024) } });
  const from = (ip) => ({ 'cf-connecting-ip': ip });
  const bytes = (kib) => randomBytes(kib * 1024);
  // each address's budget, in KiB: 100 an hour, refilled continuously (a KiB every 36 s): an upload must pass when
  // what is left covers it, must be refused when not even the most the bucket can have refilled does
  const budgets = new Map();
  const budget = (ip) => budgets.get(ip) ?? budgets.set(ip, tokenBucket({ limit: 100, perSeconds: 3600 })).get(ip);
  /** Uploads `content` with `credential` from `ip`: the answer checked against the budget of `budgetOf`. */
  const send = async (credential, content, ip, budgetOf = ip) => {
    const bucket = budget(budgetOf); // before the address's first upload
    const res = await upload(credential, content, from(ip));
    const body = await res.json();
    const kib = content.length / 1024;
    bucket.check(res.status, { cost: kib, what: `${kib} KiB from ${ip}: ${JSON.stringify(body)}` });
    return { body, res };
  };

  await send(await walletToken(), bytes(60), '198.51.100.7');
  // 40 KiB left: 60 more are refused, with the wait for the 20 missing (100 KiB an hour: 12 minutes), and not stored
  const refused = bytes(60);
  const { body, res } = await send(await walletToken(), refused, '198.51.100.7');
  if (res.status === 429) {
    assert.equal(body.error.code, 'RATE_LIMITED');
    assert.match(body.error.message, /100 KiB an hour per client address/);
    // the wait for the 20 KiB missing, less what came back before the refusal (1 s of rounding either way)
    const wait = Number(res.headers.get('retry-after'));
    const least = Math.ceil((60 - budget('198.51.100.7').most()) * 36) - 1;
    assert.ok(wait <= 721 && wait >= least, `Retry-After ${wait}, at least ${least}`);
    const cid = CID.create(1, raw.code, await sha256.digest(refused)).toString();
    assert.notEqual((await fetch(`${stack.workerUrl}/ipfs/${cid}`)).status, 200, 'the refused upload was not stored');
  }
  // the refusal took nothing: the 40 KiB left are there, for an API key as for a token (the budget is the address's)
  await send(stack.apiKey, bytes(40), '198.51.100.7');
  await send(await walletToken(), bytes(1), '198.51.100.7');
  await send(stack.apiKey, bytes(1), '198.51.100.7');
  // another address has its own budget; an IPv6 client's is its /56's
  await send(await walletToken(), bytes(60), '2001:db8:7:7::1', 'bob');
  await send(await walletToken(), bytes(60), '2001:db8:7:7::2', 'bob');
  await send(await walletToken(), bytes(60), '2001:db8:7:ff::1', 'bob');
  await send(await walletToken(), bytes(60), '2001:db8:7:100::1');
  // a spent budget outlives its object: a new Worker (every Durable Object constructed anew) does not refill it
  await stack.restartWorker({ vars: { UPLOAD_JWT_RATE_LIMIT_PER_MINUTE: '1000', UPLOAD_BYTES_PER_HOUR: String(100 * 1024) } });
  await send(await walletToken(), bytes(30), '198.51.100.7');
  await send(await walletToken(), bytes(30), '198.51.100.8');
});
