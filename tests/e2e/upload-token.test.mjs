// Uploads as LUKSO's wallet sends them: `POST /api/v0/add` with `Authorization: Bearer <JWT>`, the token signed by
// the wallet's own library (`@tsndr/cloudflare-worker-jwt` 2.5.4, HS256) with the claims the wallet writes
// (`iss: 'extension'`, fractional `iat`/`exp` 120 s apart), one multipart field `file` holding a JSON Blob; the
// wallet reads only `IpfsHash` and takes only status 200 as success. Forged, expired, foreign and other-algorithm
// tokens are refused with 401 INVALID_UPLOAD_TOKEN and store nothing; API keys keep working beside tokens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import jwt from '@tsndr/cloudflare-worker-jwt';
import { startStack } from '../../scripts/stack.mjs';

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

async function upload(token, content) {
  const form = new FormData();
  form.append('file', new Blob([content], { type: 'application/json' }));
  return fetch(`${stack.workerUrl}/api/v0/add`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
}

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
