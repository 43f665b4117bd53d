// The gateway race, hedged (IPFS_HEDGE_MS): the first configured gateway is asked at once, the next only when the
// first has failed or has gone the hedge without serving the content. Two local gateways: `first`, told per CID to
// serve, hang or fail, and `second`, which serves every block it holds. The hedge is longer than the gateway timeout
// (IPFS_TIMEOUT_SECONDS) here, so that "at once" cannot be mistaken for "after the hedge" on a loaded machine: an
// answer that needs the second gateway proves it was asked without waiting; the hedge itself is seen last, at 1.5 s,
// by its lower bound (a timer never fires early). Also the miss limit in front of the race
// (IPFS_MISS_RATE_LIMIT_PER_MINUTE), whose tokens a busy client takes a lease at a time: never more misses than the
// limit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';

/** The hedge of the first tests: never reached (a gateway fetch times out after IPFS_TIMEOUT_SECONDS, 20 s). */
const NEVER_MS = 600_000;
/** The hedge of the last test, which waits for it. */
const HEDGE_MS = 1500;
// leases of up to 4 tokens (a sixteenth of the limit)
const MISS_LIMIT = 64;
const store = new Map();
// what `first` does for a CID: 'serve' (default), 'hang' (never answers), 'fail' (500)
const firstDoes = new Map();
// per gateway: [{ cid, at, closed }] in arrival order (`closed`: the relay let go of the request)
const hits = { first: [], second: [] };
const servers = [];

function gateway(name, handler) {
  const server = createServer((req, res) => {
    const cid = req.url.replace(/^\/ipfs\//, '').split('?')[0];
    const hit = { cid, at: performance.now(), closed: false };
    hits[name].push(hit);
    res.on('close', () => (hit.closed = true));
    handler(cid, req, res);
  });
  servers.push(server);
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${server.address().port}`)));
}

const serve = (cid, res) => {
  const bytes = store.get(cid);
  if (!bytes) return res.writeHead(404).end('not found');
  res.writeHead(200, { 'content-type': 'application/vnd.ipld.raw', 'content-length': bytes.length }).end(bytes);
};

let stack;
before(async () => {
  const urls = await Promise.all([
    gateway('first', (cid, req, res) => {
      const does = firstDoes.get(cid) ?? 'serve';
      if (does === 'fail') return res.writeHead(500).end('boom');
      if (does === 'hang') {
        const t = setTimeout(() => res.end('late'), 60_000);
        return req.on('close', () => clearTimeout(t));
      }
      serve(cid, res);
    }),
    gateway('second', (cid, _req, res) => serve(cid, res)),
  ]);
  stack = await startStack({
    vars: {
      IPFS_GATEWAYS: urls.join(','),
      IPFS_HEDGE_MS: String(NEVER_MS),
      IPFS_TIMEOUT_SECONDS: '20',
      IPFS_MISS_RATE_LIMIT_PER_MINUTE: String(MISS_LIMIT),
    },
  });
});
after(async () => {
  await stack?.stop();
  for (const s of servers) {
    s.closeAllConnections?.();
    s.close();
  }
});

const fresh = (label) => {
  const bytes = new TextEncoder().encode(`${label} ${Math.random()}`);
  const cid = sdk.computeCid(bytes);
  store.set(cid, bytes);
  return { cid, bytes };
};
const of = (name, cid) => hits[name].filter((h) => h.cid === cid);
const relay = async (cid) => {
  const res = await fetch(`${stack.workerUrl}/ipfs/${cid}`);
  return { res, body: new Uint8Array(await res.arrayBuffer()) };
};

/** A fresh block the first gateway does not serve (`does`): served from the second; both gateways' hits. */
async function servedBySecond(does) {
  const { cid, bytes } = fresh(`first ${does}s`);
  firstDoes.set(cid, does);
  const sent = performance.now();
  const { res, body } = await relay(cid);
  assert.equal(res.status, 200);
  assert.deepEqual(body, bytes);
  const [first] = of('first', cid);
  const [second] = of('second', cid);
  assert.ok(first && second, JSON.stringify(hits));
  return { first, second, sent };
}

test('a first gateway that serves is the only one asked', async () => {
  const { cid, bytes } = fresh('first serves');
  const { res, body } = await relay(cid);
  assert.equal(res.status, 200);
  assert.deepEqual(body, bytes);
  assert.equal(of('first', cid).length, 1);
  // the hedge is never reached: a second gateway asked now (even after the answer) is asked for nothing; a moment
  // for such a request to arrive
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(of('second', cid).length, 0, JSON.stringify(hits.second));
});

test('a first gateway that fails: the second is asked at once, not after the hedge', async () => {
  // served by the second: asked without waiting for the hedge, which no request lives to see
  const { first, second } = await servedBySecond('fail');
  assert.ok(second.at - first.at < NEVER_MS, `second asked ${second.at - first.at} ms after the first`);
});

test('every gateway without the content: 404, each asked once', async () => {
  const { cid } = fresh('nowhere');
  store.delete(cid);
  const { res, body } = await relay(cid);
  assert.equal(res.status, 404);
  assert.equal(JSON.parse(new TextDecoder().decode(body)).error.code, 'CONTENT_NOT_FOUND');
  assert.equal(of('first', cid).length, 1);
  assert.equal(of('second', cid).length, 1);
});

test('a busy client leases its miss tokens, and still gets no more misses than its bucket holds', async () => {
  const ip = '198.51.100.7';
  const asked = () => hits.first.length + hits.second.length;
  const miss = async (label) => {
    const { cid } = fresh(label);
    store.delete(cid);
    const res = await fetch(`${stack.workerUrl}/ipfs/${cid}`, { headers: { 'cf-connecting-ip': ip } });
    return { res, body: await res.json() };
  };
  const before = asked();
  const t0 = performance.now();
  let served = 0;
  let refused;
  for (let i = 0; i < 3 * MISS_LIMIT && !refused; i++) {
    const { res, body } = await miss(`lease ${i}`);
    if (res.status === 429) refused = { res, body };
    else {
      assert.equal(res.status, 404, JSON.stringify(body));
      served++;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  assert.ok(refused, 'the limit was reached');
  assert.equal(refused.body.error.code, 'RATE_LIMITED');
  assert.ok(Number(refused.res.headers.get('retry-after')) >= 1);
  // the full bucket, plus what it refilled meanwhile (MISS_LIMIT a minute): never a miss more
  assert.ok(served >= MISS_LIMIT, `${served} misses served`);
  assert.ok(served <= MISS_LIMIT + Math.ceil((seconds * MISS_LIMIT) / 60), `${served} misses served in ${seconds} s`);
  // each served miss asked both gateways (both 404); the refused one none
  assert.equal(asked() - before, 2 * served, 'a limited request never reaches a gateway');
  // another client is not limited
  const { cid } = fresh('another client');
  const other = await fetch(`${stack.workerUrl}/ipfs/${cid}`, { headers: { 'cf-connecting-ip': '198.51.100.8' } });
  await other.arrayBuffer();
  assert.equal(other.status, 200);
});

test('a first gateway that hangs: the second is asked after the hedge, and the first let go', async () => {
  await stack.restartWorker({ vars: { IPFS_HEDGE_MS: String(HEDGE_MS) } });
  const { first, second, sent } = await servedBySecond('hang');
  // a timer never fires early, and the Worker starts the hedge's timer after the request was sent: the lower bound
  // holds on any machine (1 ms for timer and clock rounding). Not from the first gateway's arrival: that one reaches
  // its server some time after the timer started.
  assert.ok(second.at - sent >= HEDGE_MS - 1, `second asked ${second.at - sent} ms after the request was sent`);
  // the loser's fetch is aborted once the second has served
  const end = Date.now() + 60_000;
  while (!first.closed && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  assert.ok(first.closed, 'the hanging request was let go');
});
