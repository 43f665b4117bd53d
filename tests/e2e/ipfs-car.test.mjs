// dag-pb (UnixFS) content and paths through the relay, verified from trustless-gateway CARs: local gateways answer
// CARs written by @ipld/car for DAGs built by ipfs-unixfs-importer. An honest gateway (multi-block files, a
// directory path, a `Qm…` CIDv0, HAMT shards fetched alone, a directory's index.html); lying gateways (a wrong block,
// a wrong path, a truncated CAR, malformed CARs) that answer first and must be rejected in favour of the honest one
// before anything is answered; content of IPFS_STREAM_MIN_BYTES (256 KiB) or more streamed while it is verified,
// and a lie found after the answer started (a wrong later leaf, a CAR that ends early, a raw block with a wrong
// tail) aborts the body: the client never gets a complete-looking answer, nothing is kept, an honest retry works; a
// gateway that serves only plain bytes, refused unless IPFS_ALLOW_UNVERIFIED=true, and then never `immutable` nor
// kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { startStack } from '../../scripts/stack.mjs';
import * as dagPb from '@ipld/dag-pb';
import { addUnixfs, block, blocks, carOf, entityBlocks, parseIpfsUrl, subtree } from './ipfs-unixfs.mjs';

const dagPbLinks = (cid) => dagPb.decode(block(cid)).Links.map((l) => l.Hash);

const IMMUTABLE = 'public, max-age=29030400, immutable';
const CAR_TYPE = 'application/vnd.ipld.car; version=1; order=dfs; dups=y';
const hits = { liar: [], honest: [], plain: [] };
// what the liar answers for a root CID: a function of the request giving [status, headers, body]
const lies = new Map();
// roots the honest gateway does not have; the plain gateway's files by URL path
const honestMissing = new Set();
// roots whose whole DAG the honest gateway sends (every shard of a HAMT-sharded directory)
const wholeDag = new Set();
const plainFiles = new Map();
// roots whose CAR the honest gateway answers with a Content-Length (else chunked): read whole by the relay
const declareLength = new Set();
let honestDelayMs = 0;
const servers = [];

function serve(name, handler) {
  const server = createServer(async (req, res) => {
    hits[name].push(req.url);
    try {
      await handler(req, res);
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
  servers.push(server);
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${server.address().port}`)));
}

const wantsRaw = (req) =>
  new URL(req.url, 'http://x').searchParams.get('format') === 'raw' || (req.headers.accept ?? '').startsWith('application/vnd.ipld.raw');
const wantsCar = (req) => new URL(req.url, 'http://x').searchParams.get('format') === 'car' || (req.headers.accept ?? '').includes('application/vnd.ipld.car');

/** The honest trustless gateway: the path's blocks and the whole file, as a CAR. */
async function honest(req, res) {
  const { root, path, query } = parseIpfsUrl(req.url);
  if (honestMissing.has(root.toString()) || !block(root)) return res.writeHead(404).end('not found');
  if (wantsRaw(req) && !path.length) {
    const bytes = block(root);
    return res.writeHead(200, { 'content-type': 'application/vnd.ipld.raw', 'content-length': bytes.length }).end(bytes);
  }
  if (!wantsCar(req)) return res.writeHead(406).end('CARs and blocks only');
  assert.equal(query.get('dag-scope'), 'entity');
  const cids = wholeDag.has(root.toString()) ? subtree(root) : entityBlocks(root, path);
  if (!cids) return res.writeHead(404).end('no such path');
  if (honestDelayMs) await new Promise((r) => setTimeout(r, honestDelayMs));
  const car = await carOf(root, cids);
  res.writeHead(200, { 'content-type': CAR_TYPE, ...(declareLength.has(root.toString()) && { 'content-length': car.length }) }).end(car);
}

// blocks the liar serves alone (`?format=raw`), honestly
const liarBlocks = new Set();
async function liar(req, res) {
  const { root, path } = parseIpfsUrl(req.url);
  if (wantsRaw(req) && liarBlocks.has(root.toString())) return res.writeHead(200, { 'content-type': 'application/vnd.ipld.raw' }).end(block(root));
  const lie = lies.get(root.toString());
  if (!lie) return res.writeHead(404).end('not found');
  const [status, headers, body] = await lie(root, path);
  res.writeHead(status, headers);
  // a body written over time: a function of the response
  if (typeof body === 'function') await body(res);
  else res.end(body);
}

/** A gateway without CARs: the file's bytes whatever is asked (as a plain path gateway does). */
function plain(req, res) {
  const bytes = plainFiles.get(req.url.split('?')[0]);
  if (!bytes) return res.writeHead(404).end('not found');
  res.writeHead(200, { 'content-type': 'application/json' }).end(bytes);
}

let stack;
let urls;
before(async () => {
  urls = { liar: await serve('liar', liar), honest: await serve('honest', honest), plain: await serve('plain', plain) };
  stack = await startStack({ vars: { IPFS_GATEWAYS: [urls.liar, urls.honest, urls.plain].join(','), IPFS_TIMEOUT_SECONDS: '15' } });
});
after(async () => {
  await stack?.stop();
  for (const s of servers) {
    s.closeAllConnections?.();
    s.close();
  }
});

const relay = (base, path, headers = {}) => fetch(`${base}/ipfs/${path}`, { headers });
const bytesOf = async (res) => new Uint8Array(await res.arrayBuffer());

/** Fetches `path` and checks that `content` was served, verified, whole and immutable; gives its content type. */
async function servedVerified(path, content) {
  const res = await relay(stack.workerUrl, path);
  const body = await bytesOf(res);
  assert.equal(res.status, 200, new TextDecoder().decode(body.slice(0, 300)));
  assert.deepEqual(body, new Uint8Array(content));
  assert.equal(res.headers.get('content-length'), String(content.length));
  assert.equal(res.headers.get('x-content-verified'), 'true');
  assert.equal(res.headers.get('cache-control'), IMMUTABLE);
  return res.headers.get('content-type');
}

test('an honest gateway: a multi-block file (1.5 MB, 6 leaves), verified and kept', async () => {
  const content = randomBytes(1_500_000);
  // binary that starts like JSON (one random file in 128 did) is no JSON: served as bytes, whole, with its length
  content[0] = '{'.charCodeAt(0);
  const { root } = await addUnixfs([{ content }]);
  assert.ok(subtree(root).length >= 7, 'several leaves');
  const type = await servedVerified(root.toString(), content);
  assert.equal(type, 'application/octet-stream');
  assert.ok(
    hits.honest.some((u) => u.startsWith(`/ipfs/${root}?format=car&dag-scope=entity`)),
    hits.honest.join(),
  );
  // a range of it
  const part = await relay(stack.workerUrl, root.toString(), { range: 'bytes=1000000-1000009' });
  assert.equal(part.status, 206);
  assert.deepEqual(await bytesOf(part), new Uint8Array(content.subarray(1_000_000, 1_000_010)));
  // kept in R2 once verified: asked again with no gateway able to answer, it is still served
  const end = Date.now() + 60_000;
  honestMissing.add(root.toString());
  for (;;) {
    const again = await relay(stack.workerUrl, root.toString());
    const bytes = await bytesOf(again);
    if (again.status === 200) {
      assert.deepEqual(bytes, new Uint8Array(content));
      assert.equal(again.headers.get('cache-control'), IMMUTABLE);
      break;
    }
    assert.ok(Date.now() < end, 'never served from R2');
    await new Promise((r) => setTimeout(r, 200));
  }
});

test('an honest gateway: a path below a directory CID, and a Qm… CIDv0 with dag-pb leaves', async () => {
  const json = JSON.stringify({ LSP3Profile: { name: 'in a directory', description: 'x'.repeat(300_000) } });
  const { root, cids } = await addUnixfs(
    [
      { path: 'a/b.json', content: new TextEncoder().encode(json) },
      { path: 'a/c.txt', content: new TextEncoder().encode('another file') },
    ],
    { chunkSize: 100_000 },
  );
  const res = await relay(stack.workerUrl, `${root}/a/b.json`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), json);
  assert.equal(res.headers.get('content-type'), 'application/json');
  assert.equal(res.headers.get('x-content-verified'), 'true');
  assert.equal(res.headers.get('cache-control'), IMMUTABLE);
  assert.equal(res.headers.get('x-ipfs-path'), `/ipfs/${root}/a/b.json`);
  assert.ok(cids['a/b.json']);
  // proven absent: 404; a directory is no file
  const missing = await relay(stack.workerUrl, `${root}/a/nope.json`);
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).error.code, 'CONTENT_NOT_FOUND');

  const v0json = JSON.stringify({ LSP3Profile: { name: 'CIDv0' }, pad: 'y'.repeat(600_000) });
  const v0 = await addUnixfs([{ content: new TextEncoder().encode(v0json) }], { cidVersion: 0 });
  assert.match(v0.root.toString(), /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/);
  assert.ok(
    subtree(v0.root).every((c) => c.code === 0x70),
    'dag-pb leaves',
  );
  const res0 = await relay(stack.workerUrl, v0.root.toString());
  assert.equal(res0.status, 200);
  assert.equal(await res0.text(), v0json);
  assert.equal(res0.headers.get('x-content-verified'), 'true');
});

test('a HAMT-sharded directory: resolved from the CAR, a shard the CAR lacks fetched alone (bounded)', async () => {
  const files = Array.from({ length: 40 }, (_, i) => ({ path: `f${i}.json`, content: new TextEncoder().encode(`{"file":${i}}`) }));
  const { root } = await addUnixfs(files, { shardSplitThresholdBytes: 1 });
  assert.ok(subtree(root).length > files.length + 1, 'sharded: more blocks than entries');
  wholeDag.add(root.toString());
  for (const i of [0, 17, 39]) {
    const res = await relay(stack.workerUrl, `${root}/f${i}.json`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), `{"file":${i}}`);
    assert.equal(res.headers.get('x-content-verified'), 'true');
  }
  const none = await relay(stack.workerUrl, `${root}/absent.json`);
  assert.equal(none.status, 404);
  // a CAR with the top shard only: the shards below it (and the file) are asked for alone, each verified
  const other = await addUnixfs(
    files.map((f) => ({ ...f, path: `x/${f.path}` })),
    { shardSplitThresholdBytes: 1 },
  );
  // the root holds one entry, `x` (a HAMT shard of its own: its one link's name starts with its bucket)
  const x = dagPbLinks(other.root)[0];
  lies.set(other.root.toString(), async (r) => [200, { 'content-type': CAR_TYPE }, await carOf(r, [r, x])]);
  honestMissing.add(other.root.toString());
  // first without the liar serving blocks: the shard cannot be had, nothing is served
  const partial = await relay(stack.workerUrl, `${other.root}/x/f3.json`);
  const body = await partial.json();
  assert.equal(partial.status, 502, JSON.stringify(body));
  assert.equal(body.error.code, 'CONTENT_UNVERIFIED');
  for (const c of subtree(x)) liarBlocks.add(c.toString());
  const before = hits.liar.length;
  const res = await relay(stack.workerUrl, `${other.root}/x/f3.json`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '{"file":3}');
  assert.equal(res.headers.get('x-content-verified'), 'true');
  const alone = hits.liar.slice(before).filter((u) => u.includes('format=raw'));
  assert.ok(alone.length >= 1 && alone.length <= 6, `shards and file fetched alone: ${alone.join()}`);
  // forged blocks served alone (every block below `y` is another's bytes) are rejected
  const other2 = await addUnixfs(
    files.map((f, i) => ({ path: `y/${f.path}`, content: new TextEncoder().encode(`{"file":${i},"in":"y"}`) })),
    { shardSplitThresholdBytes: 1 },
  );
  const y = dagPbLinks(other2.root)[0];
  lies.set(other2.root.toString(), async (r) => [200, { 'content-type': CAR_TYPE }, await carOf(r, [r, y])]);
  honestMissing.add(other2.root.toString());
  const decoy = block(dagPbLinks(x)[0]);
  for (const c of subtree(y).slice(1)) {
    blocks.set(c.toString(), decoy);
    liarBlocks.add(c.toString());
  }
  const fromLiar = hits.liar.length;
  const forged = await relay(stack.workerUrl, `${other2.root}/y/f3.json`);
  assert.equal(forged.status, 502);
  assert.equal((await forged.json()).error.code, 'CONTENT_UNVERIFIED');
  assert.ok(
    hits.liar.slice(fromLiar).some((u) => u.includes('format=raw')),
    'a block was asked for alone',
  );
});

test('a path ending at a directory: its index.html (text/html, sandboxed), else a clear 404', async () => {
  const page = new TextEncoder().encode('<!doctype html><title>site</title><p>hello</p>');
  const { root } = await addUnixfs([
    { path: 'site/index.html', content: page },
    { path: 'site/a.json', content: new TextEncoder().encode('{}') },
    { path: 'bare/b.json', content: new TextEncoder().encode('{"b":1}') },
  ]);
  // the gateway's CAR for a directory holds the directory, not the page: the page is fetched alone
  const res = await relay(stack.workerUrl, `${root}/site`);
  assert.equal(res.status, 200);
  assert.deepEqual(await bytesOf(res), page);
  assert.equal(res.headers.get('content-type'), 'text/html');
  assert.match(res.headers.get('content-security-policy'), /sandbox/);
  assert.equal(res.headers.get('x-content-verified'), 'true');
  const bare = await relay(stack.workerUrl, `${root}/bare`);
  const body = await bare.json();
  assert.equal(bare.status, 404);
  assert.equal(body.error.code, 'CONTENT_NOT_FOUND');
  assert.match(body.error.message, /directory without an index\.html/);
});

/** A lie is rejected: alone, the relay answers 502 CONTENT_UNVERIFIED; with the honest gateway (slower than the
 * liar), the verified bytes. */
async function rejected(root, path, expected, lie) {
  const target = [root.toString(), ...path].join('/');
  lies.set(root.toString(), lie);
  honestMissing.add(root.toString());
  const before = hits.liar.length;
  const alone = await relay(stack.workerUrl, target);
  const body = await alone.json();
  assert.equal(alone.status, 502, JSON.stringify(body));
  assert.equal(body.error.code, 'CONTENT_UNVERIFIED');
  assert.ok(hits.liar.length > before, 'the liar was asked');
  honestMissing.delete(root.toString());
  honestDelayMs = 300;
  try {
    const from = hits.liar.length;
    const res = await relay(stack.workerUrl, target);
    const got = await bytesOf(res);
    assert.equal(res.status, 200, new TextDecoder().decode(got.slice(0, 300)));
    assert.deepEqual(got, new Uint8Array(expected));
    assert.equal(res.headers.get('x-content-verified'), 'true');
    assert.ok(hits.liar.length > from, 'the liar answered (first) again');
  } finally {
    honestDelayMs = 0;
  }
}

/** A lie found after the answer started (content of 256 KiB or more streams once its first bytes verify): the
 * body is cut with an error, so the client cannot take it as whole; nothing is kept in R2 (with no gateway able to
 * answer, it is not served); once the liar stops lying, the honest gateway's answer is served whole. */
async function aborted(root, path, expected, lie) {
  const target = [root.toString(), ...path].join('/');
  lies.set(root.toString(), lie);
  honestMissing.add(root.toString());
  const res = await relay(stack.workerUrl, target);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-length'), String(expected.length));
  let got = 0;
  await assert.rejects(async () => {
    for await (const chunk of res.body) got += chunk.length;
  }, 'the body errors');
  assert.ok(got < expected.length, `${got} of ${expected.length} bytes`);
  lies.delete(root.toString());
  await new Promise((r) => setTimeout(r, 700));
  const gone = await relay(stack.workerUrl, target);
  await gone.arrayBuffer();
  assert.equal(gone.status, 404, 'nothing was kept in R2');
  honestMissing.delete(root.toString());
  const retry = await relay(stack.workerUrl, target);
  const bytes = await bytesOf(retry);
  assert.equal(retry.status, 200);
  assert.deepEqual(bytes, new Uint8Array(expected));
  assert.equal(retry.headers.get('x-content-verified'), 'true');
}

test('a lying gateway: a wrong block (bytes that are not what its CID names) is rejected', async () => {
  const content = randomBytes(700_000);
  const { root } = await addUnixfs([{ content }], { chunkSize: 200_000 });
  // the first leaf: found before anything is answered, the honest gateway's answer is served
  const leaf = subtree(root)[1];
  await rejected(root, [], content, async (r, path) => {
    const forged = Buffer.from(block(leaf));
    forged[10] ^= 0xff;
    return [200, { 'content-type': CAR_TYPE }, await carOf(r, entityBlocks(r, path), { replace: new Map([[leaf.toString(), forged]]) })];
  });
});

test('a lying gateway: a wrong LATER leaf aborts the streamed answer; nothing kept; an honest retry works', async () => {
  const content = randomBytes(700_000);
  const { root } = await addUnixfs([{ content }], { chunkSize: 200_000 });
  const leaf = subtree(root)[3];
  await aborted(root, [], content, async (r, path) => {
    const forged = Buffer.from(block(leaf));
    forged[10] ^= 0xff;
    return [200, { 'content-type': CAR_TYPE }, await carOf(r, entityBlocks(r, path), { replace: new Map([[leaf.toString(), forged]]) })];
  });
});

test('a large file streams while it is verified: bytes reach the client before the gateway has sent it all', async () => {
  const content = randomBytes(1_000_000);
  const { root } = await addUnixfs([{ content }], { chunkSize: 100_000 });
  const car = await carOf(root, entityBlocks(root, []));
  let release;
  const released = new Promise((r) => {
    release = r;
  });
  const half = Math.floor(car.length / 2);
  lies.set(root.toString(), async () => [
    200,
    { 'content-type': CAR_TYPE },
    async (res) => {
      res.write(car.subarray(0, half));
      await released;
      res.end(car.subarray(half));
    },
  ]);
  honestMissing.add(root.toString());
  const within = (promise, ms, what) => {
    let timer;
    const late = new Promise((_, no) => (timer = setTimeout(() => no(new Error(`${what}: not within ${ms} ms`)), ms)));
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  };
  try {
    const res = await within(relay(stack.workerUrl, root.toString()), 60_000, 'the answer');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), String(content.length));
    const reader = res.body.getReader();
    const chunks = [];
    let got = 0;
    while (got < 300_000) {
      const { value, done } = await within(reader.read(), 60_000, 'the first verified leaves');
      assert.ok(!done, 'the body ended early');
      chunks.push(value);
      got += value.length;
    }
    // the gateway has sent half of the CAR: the relay answers from what it has verified, never more
    assert.ok(got < half, `${got} bytes out with ${half} bytes of the CAR in`);
    release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    assert.deepEqual(Buffer.concat(chunks), content);
  } finally {
    release();
  }
});

test('a raw block of 4 MiB or more streams while it is hashed; a wrong tail aborts the answer', async () => {
  const content = randomBytes(4_500_000);
  const { root } = await addUnixfs([{ content }], { chunkSize: 5_000_000 });
  assert.equal(root.code, 0x55, 'a raw block');
  const res = await relay(stack.workerUrl, root.toString());
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-length'), String(content.length));
  assert.deepEqual(await bytesOf(res), new Uint8Array(content));
  assert.equal(res.headers.get('cache-control'), IMMUTABLE);
  const other = randomBytes(4_500_000);
  const { root: r2 } = await addUnixfs([{ content: other }], { chunkSize: 5_000_000 });
  await aborted(r2, [], other, async () => {
    const forged = Buffer.from(other);
    forged[forged.length - 1] ^= 1;
    return [200, { 'content-type': 'application/vnd.ipld.raw', 'content-length': forged.length }, forged];
  });
});

test('a lying gateway: a wrong path (the blocks of another file) is rejected', async () => {
  const wanted = new TextEncoder().encode('{"the":"real b.json"}');
  const other = new TextEncoder().encode('{"the":"other file"}');
  const { root } = await addUnixfs([
    { path: 'a/b.json', content: wanted },
    { path: 'a/c.json', content: other },
  ]);
  await rejected(root, ['a', 'b.json'], wanted, async (r) => [200, { 'content-type': CAR_TYPE }, await carOf(r, entityBlocks(r, ['a', 'c.json']))]);
  // a forged directory naming the other file b.json: not the directory the CID names
  const forged = await addUnixfs([{ path: 'a/b.json', content: other }]);
  const r2 = (
    await addUnixfs([
      { path: 'a/b.json', content: wanted },
      { path: 'z', content: other },
    ])
  ).root;
  await rejected(r2, ['a', 'b.json'], wanted, async () => [200, { 'content-type': CAR_TYPE }, await carOf(r2, entityBlocks(forged.root, ['a', 'b.json']))]);
});

test('a lying gateway: a truncated CAR is rejected, or aborts the answer once it streams', async () => {
  // cut inside the root: rejected before anything is answered
  const small = randomBytes(600_000);
  const { root: r0 } = await addUnixfs([{ content: small }], { chunkSize: 100_000 });
  await rejected(r0, [], small, async (r, path) => {
    const car = await carOf(r, entityBlocks(r, path));
    return [200, { 'content-type': CAR_TYPE }, car.subarray(0, 100)];
  });
  const content = randomBytes(600_000);
  const { root } = await addUnixfs([{ content }], { chunkSize: 100_000 });
  await aborted(root, [], content, async (r, path) => {
    const car = await carOf(r, entityBlocks(r, path));
    return [200, { 'content-type': CAR_TYPE }, car.subarray(0, Math.floor(car.length * 0.6))];
  });
  // whole sections left out (a CAR that ends cleanly without the last leaves, which the liar will not serve alone)
  const { root: r2 } = await addUnixfs([{ content: randomBytes(500_000) }], { chunkSize: 100_000 });
  const expected = Buffer.concat(
    subtree(r2)
      .slice(1)
      .map((c) => block(c)),
  );
  await aborted(r2, [], expected, async (r, path) => [200, { 'content-type': CAR_TYPE }, await carOf(r, entityBlocks(r, path).slice(0, -2))]);
});

test('a lying gateway: malformed CARs are rejected and never crash the Worker', async () => {
  const { root } = await addUnixfs([{ content: randomBytes(300_000) }], { chunkSize: 100_000 });
  const good = await carOf(root, entityBlocks(root, []));
  const varint = (n) => {
    const out = [];
    while (n >= 0x80) {
      out.push((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    out.push(n);
    return Buffer.from(out);
  };
  const header = good.subarray(0, 1 + good[0]);
  const malformed = [
    randomBytes(5000),
    Buffer.alloc(0),
    // a section claiming 2^62 bytes
    Buffer.concat([header, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f]), randomBytes(100)]),
    // a CID of version 2, a multihash digest of 200 bytes (the inputs that panic rs-car)
    Buffer.concat([header, varint(210), Buffer.from([0x02, 0x70, 0x12, 0x20]), randomBytes(206)]),
    Buffer.concat([header, varint(210), Buffer.from([0x01, 0x70, 0x12, 0xc8, 0x01]), randomBytes(205)]),
    // a CARv2 pragma with its data outside the file
    Buffer.concat([Buffer.from('0aa16776657273696f6e02', 'hex'), Buffer.alloc(16), Buffer.from('ffffffffffffff7f', 'hex'), Buffer.alloc(16)]),
    // a CARv2 whose data is itself (offset 0, its own 51 bytes): once unwrapped without end, overflowing the stack
    Buffer.concat([Buffer.from('0aa16776657273696f6e02', 'hex'), Buffer.alloc(16), Buffer.alloc(8), Buffer.from('3300000000000000', 'hex'), Buffer.alloc(8)]),
    // an unterminated varint
    Buffer.alloc(20, 0xff),
  ];
  for (const [i, body] of malformed.entries()) {
    // a fresh file each time (once verified, a file is served from R2 without asking any gateway)
    const fresh = randomBytes(300_000);
    const { root: r } = await addUnixfs([{ content: fresh }], { chunkSize: 100_000 });
    await rejected(r, [], fresh, async () => [200, { 'content-type': CAR_TYPE }, body]).catch((e) => {
      throw new Error(`malformed CAR #${i}: ${e.message}`);
    });
  }
  // the Worker is still the same one, serving
  assert.equal((await fetch(`${stack.workerUrl}/health`)).status < 500, true);
});

test('a CAR of a declared length is read whole and verified at once: served, and every lie rejected before answering', async () => {
  const withLength = (car) => ({ 'content-type': CAR_TYPE, 'content-length': car.length });
  // honest: a 1 MB file of 5 leaves
  const content = randomBytes(1_000_000);
  const { root } = await addUnixfs([{ content }], { chunkSize: 200_000 });
  declareLength.add(root.toString());
  await servedVerified(root.toString(), content);
  // a wrong LATER leaf: read whole, it is found before anything is answered (no aborted stream)
  const later = randomBytes(700_000);
  const { root: r1 } = await addUnixfs([{ content: later }], { chunkSize: 200_000 });
  declareLength.add(r1.toString());
  const leaf = subtree(r1)[3];
  await rejected(r1, [], later, async (r, path) => {
    const forged = Buffer.from(block(leaf));
    forged[10] ^= 0xff;
    const car = await carOf(r, entityBlocks(r, path), { replace: new Map([[leaf.toString(), forged]]) });
    return [200, withLength(car), car];
  });
  // a wrong path: the blocks of another file
  const wanted = new TextEncoder().encode('{"the":"real b.json, whole"}');
  const { root: r2 } = await addUnixfs([
    { path: 'a/b.json', content: wanted },
    { path: 'a/c.json', content: new TextEncoder().encode('{"the":"other file, whole"}') },
  ]);
  declareLength.add(r2.toString());
  await rejected(r2, ['a', 'b.json'], wanted, async (r) => {
    const car = await carOf(r, entityBlocks(r, ['a', 'c.json']));
    return [200, withLength(car), car];
  });
  // a CAR cut short (declared as cut: HTTP framing cannot tell), and malformed ones
  const cut = randomBytes(600_000);
  const { root: r3 } = await addUnixfs([{ content: cut }], { chunkSize: 100_000 });
  declareLength.add(r3.toString());
  await rejected(r3, [], cut, async (r, path) => {
    const car = (await carOf(r, entityBlocks(r, path))).subarray(0, 400_000);
    return [200, withLength(car), car];
  });
  for (const [i, bad] of [randomBytes(5000), Buffer.alloc(0), Buffer.alloc(20, 0xff)].entries()) {
    const fresh = randomBytes(300_000);
    const { root: r } = await addUnixfs([{ content: fresh }], { chunkSize: 100_000 });
    declareLength.add(r.toString());
    await rejected(r, [], fresh, async () => [200, withLength(bad), bad]).catch((e) => {
      throw new Error(`malformed CAR #${i}: ${e.message}`);
    });
  }
  assert.equal((await fetch(`${stack.workerUrl}/health`)).status < 500, true);
});

test('a gateway that serves no CAR: refused by default (CONTENT_UNVERIFIED), nothing cached', async () => {
  const json = new TextEncoder().encode('{"LSP3Profile":{"name":"plain only"}}');
  const { root } = await addUnixfs([{ path: 'p.json', content: json }]);
  honestMissing.add(root.toString());
  plainFiles.set(`/ipfs/${root}/p.json`, json);
  const res = await relay(stack.workerUrl, `${root}/p.json`);
  const body = await res.json();
  assert.equal(res.status, 502, JSON.stringify(body));
  assert.equal(body.error.code, 'CONTENT_UNVERIFIED');
  assert.ok(hits.plain.some((u) => u.startsWith(`/ipfs/${root}/p.json`)));
});

test('IPFS_ALLOW_UNVERIFIED=true: plain bytes served, never immutable nor kept; a verified answer still wins', async () => {
  const loose = await startStack({ vars: { IPFS_GATEWAYS: [urls.plain, urls.honest].join(','), IPFS_TIMEOUT_SECONDS: '15', IPFS_ALLOW_UNVERIFIED: 'true' } });
  try {
    const json = new TextEncoder().encode('{"LSP3Profile":{"name":"served unverified"}}');
    const { root } = await addUnixfs([{ path: 'u.json', content: json }]);
    honestMissing.add(root.toString());
    plainFiles.set(`/ipfs/${root}/u.json`, json);
    for (let i = 0; i < 2; i++) {
      const before = hits.plain.length;
      const res = await relay(loose.workerUrl, `${root}/u.json`);
      assert.equal(res.status, 200);
      assert.deepEqual(await bytesOf(res), json);
      assert.equal(res.headers.get('x-content-verified'), 'false');
      assert.notEqual(res.headers.get('cache-control'), IMMUTABLE);
      assert.doesNotMatch(res.headers.get('cache-control'), /immutable/);
      // not kept: the gateway is asked every time
      assert.ok(hits.plain.length > before, `request ${i} reached the gateway`);
      await new Promise((r) => setTimeout(r, 500));
    }
    // the same content from an honest CAR gateway too: the verified answer is served, though the plain one is first
    const { root: both } = await addUnixfs([{ path: 'v.json', content: json }]);
    plainFiles.set(`/ipfs/${both}/v.json`, new TextEncoder().encode('{"LSP3Profile":{"name":"forged"}}'));
    const res = await relay(loose.workerUrl, `${both}/v.json`);
    assert.equal(res.status, 200);
    assert.deepEqual(await bytesOf(res), json);
    assert.equal(res.headers.get('x-content-verified'), 'true');
    assert.equal(res.headers.get('cache-control'), IMMUTABLE);
  } finally {
    await loose.stop();
  }
});
