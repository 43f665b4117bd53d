// The IPFS relay and upload against local gateway servers: one slow, one failing, one serving wrong bytes, one
// good. Only the configured gateways are contacted; verified content wins; all down → 504.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';

const store = new Map();
const hits = { slow: 0, failing: 0, wrong: 0, good: 0 };
const servers = [];
function gateway(name, handler) {
  const server = createServer((req, res) => {
    hits[name]++;
    handler(req, res);
  });
  servers.push(server);
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${server.address().port}`)));
}

let stack;
before(async () => {
  const urls = await Promise.all([
    gateway('slow', (req, res) => { const t = setTimeout(() => res.end('late'), 30_000); req.on('close', () => clearTimeout(t)); }),
    gateway('failing', (_req, res) => res.writeHead(500).end('boom')),
    gateway('wrong', (_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('evil bytes')),
    gateway('good', (req, res) => {
      const cid = req.url.replace(/^\/ipfs\//, '').split('?')[0];
      const bytes = store.get(cid);
      if (!bytes) return res.writeHead(404).end('not found');
      res.writeHead(200, { 'content-type': 'application/vnd.ipld.raw' }).end(bytes);
    }),
  ]);
  stack = await startStack({ vars: { IPFS_GATEWAYS: urls.join(','), IPFS_TIMEOUT_SECONDS: '2', UPLOAD_MAX_BYTES: '100000' } });
});
after(async () => {
  await stack?.stop();
  for (const s of servers) s.closeAllConnections?.(), s.close();
});

const relay = (path, headers = {}) => fetch(`${stack.workerUrl}/ipfs/${path}`, { headers });

test('the relay answers the verified bytes even though three gateways misbehave', async () => {
  const bytes = new TextEncoder().encode(JSON.stringify({ LSP3Profile: { name: 'from a gateway' } }));
  const cid = sdk.computeCid(bytes);
  store.set(cid, bytes);
  const res = await relay(cid);
  assert.equal(res.status, 200);
  assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
  assert.equal(res.headers.get('content-type'), 'application/json');
  assert.equal(res.headers.get('cache-control'), 'public, max-age=29030400, immutable');
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(res.headers.get('x-content-verified'), 'true');
  assert.ok(hits.wrong >= 1 && hits.good >= 1, JSON.stringify(hits));
  // range request
  const part = await relay(cid, { range: 'bytes=2-14' });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get('content-range'), `bytes 2-14/${bytes.length}`);
  assert.deepEqual(new Uint8Array(await part.arrayBuffer()), bytes.slice(2, 15));
  // now kept in the project's store: served without any gateway
  store.delete(cid);
  const again = await relay(cid);
  assert.equal(again.status, 200);
  assert.deepEqual(new Uint8Array(await again.arrayBuffer()), bytes);
});

test('when no gateway serves valid content in time: 504 with Retry-After', async () => {
  const cid = sdk.computeCid(new TextEncoder().encode('nobody has this'));
  const t0 = Date.now();
  const res = await relay(cid);
  assert.equal(res.status, 504);
  assert.ok(Number(res.headers.get('retry-after')) > 0);
  assert.equal((await res.json()).error.code, 'GATEWAY_TIMEOUT');
  assert.ok(Date.now() - t0 < 10_000);
});

test('upload through /api/v0/add, then read it back through the relay', async () => {
  const json = JSON.stringify({ LSP3Profile: { name: 'uploaded' } });
  const form = new FormData();
  form.append('file', new Blob([json], { type: 'application/json' }), 'profile.json');
  const res = await fetch(`${stack.workerUrl}/api/v0/add`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}` }, body: form });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.Hash, sdk.computeCid(new TextEncoder().encode(json)));
  assert.equal(body.Size, String(json.length));
  const back = await relay(body.Hash);
  assert.equal(back.status, 200);
  assert.equal(await back.text(), json);
  assert.equal(sdk.verifyCid(body.Hash, new TextEncoder().encode(json)), true);
});

test('bad CIDs, path traversal, oversize and unauthenticated uploads are 4xx JSON errors', async () => {
  for (const [path, status, code] of [
    ['not-a-cid', 400, 'INVALID_CID'],
    ['Qm123', 400, 'INVALID_CID'],
    [`${sdk.computeCid(new Uint8Array([1]))}/a\\b`, 400, 'INVALID_CID'],
    // `%2F` (how OpenAPI clients send a `/` inside the {cid} parameter) separates segments: no `..` through it
    ['QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG%2F..%2Fx', 400, 'INVALID_CID'],
  ]) {
    const res = await relay(path);
    assert.equal(res.status, status, path);
    assert.equal((await res.json()).error.code, code, path);
  }
  const slash = await (await relay(`${sdk.computeCid(new Uint8Array([1]))}%2Fa`)).json();
  assert.match(slash.error.message, /raw block has no paths/);
  // traversal sent byte for byte (fetch would normalise the dots away): never escapes /ipfs/, always a JSON 4xx
  for (const raw of [`/ipfs/${sdk.computeCid(new Uint8Array([1]))}/../../etc/passwd`, '/ipfs/%2e%2e/%2e%2e/admin/api-keys', '/ipfs/../admin/api-keys']) {
    const { status, body } = await new Promise((resolve, reject) => {
      const req = request(`${stack.workerUrl}${raw}`, { method: 'GET', path: raw }, (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode, body: data }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.ok(status >= 400 && status < 500, `${raw}: ${status}`);
    assert.ok(JSON.parse(body).error.code, raw);
  }
  const big = new FormData();
  big.append('file', new Blob([new Uint8Array(200_000)]), 'big.bin');
  const res = await fetch(`${stack.workerUrl}/api/v0/add`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}` }, body: big });
  assert.equal(res.status, 413);
  assert.equal((await res.json()).error.code, 'BODY_TOO_LARGE');
  const anon = await fetch(`${stack.workerUrl}/api/v0/add`, { method: 'POST', body: new FormData() });
  assert.equal(anon.status, 401);
  const notMultipart = await fetch(`${stack.workerUrl}/api/v0/add`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' }, body: '{}' });
  assert.equal(notMultipart.status, 400);
  assert.equal((await notMultipart.json()).error.code, 'UNSUPPORTED_CONTENT_TYPE');
});
