// The IPFS relay and upload against local gateway servers: one slow, one failing, one serving wrong bytes, one
// good. Only the configured gateways are contacted; verified content wins; all down → 504.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { postUpload } from './helpers/upload.mjs';

const store = new Map();
// the content type the good gateway answers for a CID (default application/vnd.ipld.raw)
const types = new Map();
// CIDs every gateway answers 404 for; CIDs every gateway but the failing one (500) answers 404 for
const missingEverywhere = new Set();
const missingButOneFails = new Set();
const hits = { slow: 0, failing: 0, wrong: 0, good: 0 };
// the slow gateway's requests by CID: `closed` once the relay let go of it
const slowAsked = new Map();
const totalHits = () => Object.values(hits).reduce((a, b) => a + b, 0);
const servers = [];
function gateway(name, handler) {
  const server = createServer((req, res) => {
    hits[name]++;
    const cid = req.url.replace(/^\/ipfs\//, '').split('?')[0];
    if (missingEverywhere.has(cid)) return res.writeHead(404).end('not found');
    if (missingButOneFails.has(cid)) return res.writeHead(name === 'failing' ? 500 : 404).end('no');
    handler(req, res);
  });
  servers.push(server);
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${server.address().port}`)));
}

let stack;
before(async () => {
  const urls = await Promise.all([
    gateway('slow', (req, res) => {
      const asked = { closed: false };
      slowAsked.set(req.url.replace(/^\/ipfs\//, '').split('?')[0], asked);
      res.on('close', () => (asked.closed = true));
      const t = setTimeout(() => res.end('late'), 30_000);
      req.on('close', () => clearTimeout(t));
    }),
    gateway('failing', (_req, res) => res.writeHead(500).end('boom')),
    gateway('wrong', (_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('evil bytes')),
    gateway('good', (req, res) => {
      const cid = req.url.replace(/^\/ipfs\//, '').split('?')[0];
      const bytes = store.get(cid);
      if (!bytes) return res.writeHead(404).end('not found');
      res.writeHead(200, { 'content-type': types.get(cid) ?? 'application/vnd.ipld.raw' }).end(bytes);
    }),
  ]);
  stack = await startStack({ vars: { IPFS_GATEWAYS: urls.join(','), IPFS_TIMEOUT_SECONDS: '10', UPLOAD_MAX_BYTES: '100000' } });
});
after(async () => {
  await stack?.stop();
  for (const s of servers) {
    s.closeAllConnections?.();
    s.close();
  }
});

const relay = (path, headers = {}, method = 'GET') => fetch(`${stack.workerUrl}/ipfs/${path}`, { headers, method });

// The relay answers a block fetched from a gateway before storing it (the R2 write runs under waitUntil): wait until
// a fetch is answered without contacting any gateway, then check that it still is once the gateway forgot the block.
async function servedFromStore(cid) {
  const end = Date.now() + 60_000;
  for (;;) {
    const before = totalHits();
    const res = await relay(cid);
    await res.arrayBuffer();
    if (res.status === 200 && totalHits() === before) break;
    assert.ok(Date.now() < end, `${cid} never served from the store`);
    await new Promise((r) => setTimeout(r, 100));
  }
  store.delete(cid);
  const before = totalHits();
  const res = await relay(cid);
  assert.equal(res.status, 200);
  assert.equal(totalHits(), before, 'no gateway contacted');
  return res;
}

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
  // now kept in the project's store (written after the first answer): served without any gateway
  const again = await servedFromStore(cid);
  assert.deepEqual(new Uint8Array(await again.arrayBuffer()), bytes);
  assert.equal(again.headers.get('content-type'), 'application/json');
  assert.equal(again.headers.get('x-content-verified'), 'true');
});

test('HEAD answers the headers of GET without a body', async () => {
  const bytes = new TextEncoder().encode('{"head":true}');
  const cid = sdk.computeCid(bytes);
  store.set(cid, bytes);
  const raw = (method, headers = {}) =>
    new Promise((resolve, reject) => {
      const req = request(`${stack.workerUrl}/ipfs/${cid}`, { method, headers }, (res) => {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
  const head = await raw('HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  assert.equal(head.headers['content-length'], String(bytes.length));
  assert.equal(head.headers['content-type'], 'application/json');
  assert.equal(head.headers['x-content-verified'], 'true');
  assert.equal(head.headers['cache-control'], 'public, max-age=29030400, immutable');
  const get = await raw('GET');
  for (const name of ['content-type', 'content-length', 'etag', 'x-ipfs-path', 'content-security-policy', 'x-content-verified']) {
    assert.equal(head.headers[name], get.headers[name], name);
  }
  assert.deepEqual(new Uint8Array(get.body), bytes);
  const part = await raw('HEAD', { range: 'bytes=1-3' });
  assert.equal(part.status, 206);
  assert.equal(part.headers['content-range'], `bytes 1-3/${bytes.length}`);
  assert.equal(part.body.length, 0);
  // errors too: status and headers, no body
  const missing = sdk.computeCid(new TextEncoder().encode('HEAD of nothing'));
  missingEverywhere.add(missing);
  const none = await relay(missing, {}, 'HEAD');
  assert.equal(none.status, 404);
  assert.equal((await none.arrayBuffer()).byteLength, 0);
  const allow = await fetch(`${stack.workerUrl}/ipfs/${cid}`, { method: 'PUT' });
  assert.equal(allow.status, 405);
  assert.equal(allow.headers.get('allow'), 'GET, HEAD, OPTIONS');
});

test('every gateway answers 404: 404 CONTENT_NOT_FOUND; mixed failures stay 502', async () => {
  const cid = sdk.computeCid(new TextEncoder().encode('nobody has this, and everybody says so'));
  missingEverywhere.add(cid);
  const res = await relay(cid);
  assert.equal(res.status, 404);
  const body = await res.json();
  assert.equal(body.error.code, 'CONTENT_NOT_FOUND');
  assert.match(body.error.message, /404|has this content/);
  const mixed = sdk.computeCid(new TextEncoder().encode('three say 404, one fails'));
  missingButOneFails.add(mixed);
  const bad = await relay(mixed);
  assert.equal(bad.status, 502);
  assert.equal((await bad.json()).error.code, 'GATEWAY_ERROR');
});

test('the type a gateway answered is stored with the block and answered again from the store', async () => {
  for (const [text, type, disposition] of [
    // bytes that no sniffing recognises: only the gateway's Content-Type says what they are
    ['<p>a page without a doctype</p>', 'text/html; charset=utf-8', 'attachment'],
    ['pretend this is a PDF', 'application/pdf', 'attachment'],
    ['pretend this is a video', 'video/mp4', 'attachment'],
    ['pretend this is a picture', 'image/avif', null],
  ]) {
    const bytes = new TextEncoder().encode(text);
    const cid = sdk.computeCid(bytes);
    store.set(cid, bytes);
    types.set(cid, type);
    const expected = type.split(';')[0];
    const first = await relay(cid);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('content-type'), expected, text);
    assert.equal(first.headers.get('content-disposition'), disposition, text);
    assert.match(first.headers.get('content-security-policy'), /^sandbox/);
    assert.equal(await first.text(), text);
    const second = await servedFromStore(cid);
    assert.equal(second.headers.get('content-type'), expected, `${text} (from the store)`);
    assert.equal(second.headers.get('content-disposition'), disposition, text);
    assert.match(second.headers.get('content-security-policy'), /^sandbox/);
    assert.equal(await second.text(), text);
  }
  // a malformed or hostile Content-Type is never passed on: the bytes are sniffed instead
  const bytes = new TextEncoder().encode('{"sniffed":true}');
  const cid = sdk.computeCid(bytes);
  store.set(cid, bytes);
  types.set(cid, 'text/html, text/javascript');
  const res = await relay(cid);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/json');
});

test('when no gateway serves valid content in time: 504 with Retry-After', async () => {
  const cid = sdk.computeCid(new TextEncoder().encode('nobody has this'));
  const res = await relay(cid);
  // the slow gateway never answers in time (30 s): an answer at all is the timeout's (IPFS_TIMEOUT_SECONDS)
  assert.equal(res.status, 504);
  assert.ok(Number(res.headers.get('retry-after')) > 0);
  assert.equal((await res.json()).error.code, 'GATEWAY_TIMEOUT');
  // and the relay let go of the slow gateway's request
  const asked = slowAsked.get(cid);
  assert.ok(asked, 'the slow gateway was asked');
  for (const end = Date.now() + 60_000; !asked.closed && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
  assert.ok(asked.closed, 'the slow request was let go');
});

test('upload through /api/v0/add, then read it back through the relay', async () => {
  const json = JSON.stringify({ LSP3Profile: { name: 'uploaded' } });
  const sent = Date.now();
  const res = await postUpload(stack.workerUrl, stack.apiKey, json, { type: 'application/json', name: 'profile.json' });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.Hash, sdk.computeCid(new TextEncoder().encode(json)));
  assert.equal(body.Size, String(json.length));
  // Pinata's fields next to Kubo's
  assert.equal(body.IpfsHash, body.Hash);
  assert.equal(body.PinSize, json.length);
  assert.match(body.Timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  // the time of the upload: after it was sent (the second it was sent in), before its answer
  assert.ok(Date.parse(body.Timestamp) >= Math.floor(sent / 1000) * 1000 && Date.parse(body.Timestamp) <= Date.now(), body.Timestamp);
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
  const notMultipart = await fetch(`${stack.workerUrl}/api/v0/add`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(notMultipart.status, 400);
  assert.equal((await notMultipart.json()).error.code, 'UNSUPPORTED_CONTENT_TYPE');
});
