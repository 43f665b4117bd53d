// Hardening through HTTP: inputs that once crashed the Worker, bounded body reads, uploads and the relay's
// headers, the relay's R2 bound, keys (revocation, scopes, admin guesses) and the panic guard.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { postUpload } from './helpers/upload.mjs';
import { tokenBucket } from './helpers/bucket.mjs';

const store = new Map();
let gatewayUp = true;
const gateway = createServer((req, res) => {
  const cid = req.url.replace(/^\/ipfs\//, '').split('?')[0];
  const bytes = gatewayUp && store.get(cid);
  if (!bytes) return res.writeHead(404).end('not found');
  res.writeHead(200, { 'content-type': 'application/vnd.ipld.raw' }).end(bytes);
});

let stack;
before(async () => {
  const gatewayUrl = await new Promise((r) => gateway.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${gateway.address().port}`)));
  stack = await startStack({
    vars: {
      IPFS_GATEWAYS: gatewayUrl,
      IPFS_CACHE_MAX_BYTES: '1000',
      MAX_BODY_BYTES: '4096',
      UPLOAD_MAX_BYTES: '20000',
      PANIC_TEST_ROUTE: 'true',
      LOOKUP_CACHE_SECONDS: '0',
      ADMIN_FAILURES_PER_MINUTE: '5',
    },
  });
});
after(async () => {
  await stack?.stop();
  gateway.closeAllConnections?.();
  gateway.close();
});

const url = (path) => `${stack.workerUrl}${path}`;
const asJson = async (res) => ({ status: res.status, headers: res.headers, body: await res.json() });
const health = async () => assert.equal((await fetch(url('/health'))).status, 200);

test('a doubled 0x in an address or a token id is a 400, and the Worker keeps serving', async () => {
  const chain = stack.chain.chainId;
  const doubled = `0x0x${'ab'.repeat(19)}`;
  let res = await asJson(await fetch(url(`/v1/${chain}/address/${doubled}`)));
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'INVALID_ADDRESS');
  const collection = '0x' + 'cd'.repeat(20);
  res = await asJson(await fetch(url(`/v1/${chain}/address/${collection}/0x0x${'ab'.repeat(31)}`)));
  assert.ok(res.status === 400 || res.status === 404, JSON.stringify(res.body));
  assert.notEqual(res.status, 500);
  res = await asJson(await fetch(url(`/api/universal-profile/${doubled}`), { headers: { authorization: `Bearer ${stack.apiKey}` } }));
  assert.equal(res.status, 400);
  await health();
});

const upload = (bytes, type = 'application/octet-stream', key = stack.apiKey) => postUpload(stack.workerUrl, key, bytes, { type, name: 'file' });

test('Range: bytes=0- on empty content is a 416, not a crash', async () => {
  const res = await upload(new Uint8Array(0));
  assert.equal(res.status, 200);
  const { Hash } = await res.json();
  const ranged = await fetch(url(`/ipfs/${Hash}`), { headers: { range: 'bytes=0-' } });
  assert.equal(ranged.status, 416);
  assert.equal((await ranged.json()).error.code, 'RANGE_NOT_SATISFIABLE');
  const whole = await fetch(url(`/ipfs/${Hash}`));
  assert.equal(whole.status, 200);
  assert.equal((await whole.arrayBuffer()).byteLength, 0);
  await health();
});

// a chunked body (no Content-Length) larger than the limit, sent with node:http
function chunked(path, chunks, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url(path), { method: 'POST', headers: { 'transfer-encoding': 'chunked', ...headers } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

test('bodies are limited while they are read: chunked bodies without Content-Length get 413', async () => {
  const big = Array.from({ length: 10 }, () => 'x'.repeat(1000));
  const deploy = await chunked('/api/universal-profile', big, {
    authorization: `Bearer ${stack.apiKey}`,
    'content-type': 'application/json',
  });
  assert.equal(deploy.status, 413, deploy.body);
  assert.equal(JSON.parse(deploy.body).error.code, 'BODY_TOO_LARGE');
  const algolia = await chunked('/1/indexes/dev_local_assets/query', big, { 'content-type': 'text/plain' });
  assert.equal(algolia.status, 413, algolia.body);
  const admin = await chunked('/admin/api-keys', big, {
    authorization: `Bearer ${stack.adminToken}`,
    'content-type': 'application/json',
  });
  assert.equal(admin.status, 413, admin.body);
  const declared = await fetch(url('/api/universal-profile/register'), {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ universalProfileAddress: '0x' + '11'.repeat(20), pad: 'y'.repeat(5000) }),
  });
  assert.equal(declared.status, 413);
  const uploadTooBig = await upload(new Uint8Array(30_000));
  assert.equal(uploadTooBig.status, 413);
  await health();
});

test('re-uploading bytes keeps the stored Content-Type; relayed answers are sandboxed', async () => {
  const bytes = new TextEncoder().encode('<html><script>alert(1)</script></html>');
  const first = await (await upload(bytes, 'text/html')).json();
  const again = await (await upload(bytes, 'image/png')).json();
  assert.equal(again.Hash, first.Hash);
  const res = await fetch(url(`/ipfs/${first.Hash}`));
  assert.equal(res.headers.get('content-type'), 'text/html');
  assert.match(res.headers.get('content-security-policy'), /sandbox/);
  assert.equal(res.headers.get('content-disposition'), 'attachment');
  const json = await (await upload(new TextEncoder().encode('{"a":1}'), 'application/json')).json();
  const passive = await fetch(url(`/ipfs/${json.Hash}`));
  assert.match(passive.headers.get('content-security-policy'), /sandbox/);
  assert.equal(passive.headers.get('content-disposition'), null);
});

/** A block of 600 bytes `n`, and its CID, served by the fake gateway. */
function gatewayBlock(n) {
  const bytes = new Uint8Array(600).fill(n);
  const cid = sdk.computeCid(bytes);
  store.set(cid, bytes);
  return [bytes, cid];
}

/** Whether `/ipfs/<cid>` is served with the gateway down, from R2. */
async function servedWithoutGateway(cid) {
  gatewayUp = false;
  try {
    const res = await fetch(url(`/ipfs/${cid}`));
    await res.arrayBuffer();
    return res.status === 200;
  } finally {
    gatewayUp = true;
  }
}

/** Relays `cid` from the gateway, then waits until it is served without it: the relay writes a block to R2 shortly
 * after its answer has gone out. */
async function relayedAndKept(cid) {
  const res = await fetch(url(`/ipfs/${cid}`));
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    if (await servedWithoutGateway(cid)) return;
  }
  assert.fail(`${cid} was not kept in R2`);
}

test("the relay's share of R2 is bounded: older relayed blocks are evicted, uploads stay", async () => {
  const [, cidA] = gatewayBlock(1);
  const [, cidB] = gatewayBlock(2);
  await relayedAndKept(cidA);
  await relayedAndKept(cidB);
  // A was evicted to keep the relay under 1000 bytes; B is served from R2
  assert.equal(await servedWithoutGateway(cidB), true);
  assert.equal(await servedWithoutGateway(cidA), false);
});

test("bytes the relay cached and then uploaded are an upload: never evicted with the relay's blocks", async () => {
  const [d, cidD] = gatewayBlock(4);
  const [, cidE] = gatewayBlock(5);
  // D relayed (the relay keeps it in R2, in its ledger), then uploaded: the upload answers its CID
  await relayedAndKept(cidD);
  const up = await upload(d);
  assert.equal(up.status, 200);
  assert.equal((await up.json()).Hash, cidD);
  // E relayed: the relay's share (1000 bytes) has no room for D's ledger entry too, which goes — D's bytes stay
  await relayedAndKept(cidE);
  assert.equal(await servedWithoutGateway(cidD), true, 'the upload is still served');
});

test('a revoked key fails on the very next request; routes check their scopes', async () => {
  const created = await (await stack.admin('POST', '/admin/api-keys', { name: 'to revoke' })).json();
  const register = (key) =>
    fetch(url('/api/universal-profile/register'), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ universalProfileAddress: '0x' + '11'.repeat(20) }),
    });
  assert.equal((await register(created.apiKey)).status, 404); // authenticated: no contract there
  assert.equal((await stack.admin('DELETE', `/admin/api-keys/${created.id}`)).status, 200);
  const after = await asJson(await register(created.apiKey));
  assert.equal(after.status, 403);
  assert.equal(after.body.error.code, 'API_KEY_REVOKED');

  const deployOnly = await (await stack.admin('POST', '/admin/api-keys', { name: 'deploy only', scopes: ['deploy'] })).json();
  const status = await asJson(await fetch(url(`/api/universal-profile/0x${'11'.repeat(20)}`), { headers: { authorization: `Bearer ${deployOnly.apiKey}` } }));
  assert.equal(status.status, 403);
  assert.equal(status.body.error.code, 'INSUFFICIENT_SCOPE');
  const up = await upload(new Uint8Array([1, 2, 3]), 'application/octet-stream', deployOnly.apiKey);
  assert.equal(up.status, 403);
});

test('admin-token guesses are rate-limited per client, the right token included once blocked', async () => {
  const guess = (token) => fetch(url('/admin/api-keys'), { headers: { authorization: `Bearer ${token}`, 'cf-connecting-ip': '203.0.113.7' } });
  // ADMIN_FAILURES_PER_MINUTE 5: a token back every 12 s; what must be refused is what the bucket cannot have refilled
  const bucket = tokenBucket({ limit: 5 });
  for (let i = 0; i < 5; i++) bucket.check((await guess(`wrong-token-${i}-xxxxxxxx`)).status, { allowed: 401 });
  // guessed on until refused; then the right token is refused too, unless a token came back meanwhile (then again)
  for (let i = 0; ; i++) {
    assert.ok(i < 20, 'the right token was never refused');
    let blocked;
    for (let j = 0; !blocked; j++) {
      assert.ok(j < 20, 'the guesses were never refused');
      const res = await guess(`wrong-token-again-${j}-xxxxxxxx`);
      if (!bucket.check(res.status, { allowed: 401 })) blocked = res;
    }
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    const right = (await guess(stack.adminToken)).status;
    if (bucket.mustRefuse()) assert.equal(right, 429, 'the right token was compared with the bucket spent');
    if (right === 429) break;
    assert.equal(right, 200);
  }
  // another client is not affected
  assert.equal((await stack.admin('GET', '/admin/api-keys')).status, 200);
});

test('a panic answers 500 INTERNAL_ERROR JSON for that request, and the next request is served', async () => {
  const res = await stack.admin('POST', '/admin/panic');
  assert.equal(res.status, 500);
  assert.equal((await res.json()).error.code, 'INTERNAL_ERROR');
  await health();
  assert.equal((await stack.admin('GET', '/admin/api-keys')).status, 200);
});

test('a body the Worker does not read never corrupts the connection (keep-alive)', async () => {
  const { Agent, request: send } = await import('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const one = (method, path, body) =>
    new Promise((resolve, reject) => {
      const req = send(url(path), { method, agent, headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      });
      req.on('error', reject);
      if (body) req.write(body);
      req.end();
    });
  try {
    // refusals that answer before reading the body: the next request on the connection is still parsed
    assert.equal((await one('QUERY', '/api/quota', '{"timestamp":0}')).status, 405);
    const after = await one('GET', '/health');
    assert.equal(after.status, 200, after.text);
    assert.equal((await one('PATCH', '/api/execute', '{"address":"0x00"}')).status, 405);
    assert.equal((await one('POST', '/api/quota', '{"timestamp":0}')).status, 400);
  } finally {
    agent.destroy();
  }
});
