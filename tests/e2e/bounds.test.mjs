// Bounded work for unauthenticated requests: what one anonymous request can make the Worker (and the operator's
// node) do. The attacker contracts are Solidity (tests/fixtures/attackers/*.sol), compiled here with solc from
// npm. The Worker talks to anvil through a counting proxy that streams every answer without Content-Length
// (chunked), so the tests see how much of an answer the Worker actually read. Memory is measured as the growth of
// the workerd processes' peak RSS (VmHWM) across one request, early on a fresh Worker (a wasm heap never shrinks:
// once grown, later requests reuse it and the peak hides them).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { base32nopad } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2';
import { encodeDeployData, encodeFunctionData, encodePacked, getAddress, keccak256, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PNG } from 'pngjs';
import { startStack } from '../../scripts/stack.mjs';
import { upload } from './helpers/upload.mjs';
import { waitForReceipt } from '../../scripts/chain.mjs';
import { d1 } from './helpers/d1.mjs';
import { compileAttacker } from './helpers/solc.mjs';
import { tokenBucket } from './helpers/bucket.mjs';

/** Defaults of RPC_MAX_RESPONSE_BYTES and RPC_CALL_GAS_CAP (docs/operations.md): the stack runs with them. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const CALL_GAS_CAP = 10_000_000;
/** LOOKUP_MISS_SECONDS of this stack: long, so that a miss expires only when a test dates it back (in D1). */
const MISS_SECONDS = 3600;
/** IPFS_MISS_RATE_LIMIT_PER_MINUTE of this stack. */
const MISS_LIMIT = 3;

/** The CIDv1 (raw, sha2-256, base32) of `bytes`. */
const rawCid = (bytes) => `b${base32nopad.encode(new Uint8Array([1, 0x55, 0x12, 0x20, ...sha256(bytes)])).toLowerCase()}`;

const stateDir = mkdtempSync(join(tmpdir(), 'bounds-state-'));
let stack;
let proxy;
let gateway;
/** Paths the IPFS gateway was asked for. */
const gatewayAsked = [];
let setUpstream;
const upstream = new Promise((resolve) => (setUpstream = resolve));
/** Every RPC request the Worker made: its body, the answer's bytes handed to the Worker, how it ended. */
const rpcLog = [];
let ipCounter = 0;
const freshIp = () => `198.19.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`;

/** A `side`×`side` PNG of 100-pixel squares (a few KB), grayscale or RGBA. */
function squares(side, colorType) {
  const png = new PNG({ width: side, height: side });
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const i = (y * side + x) * 4;
      const v = ((Math.floor(x / 100) + Math.floor(y / 100)) % 2) * 255;
      png.data[i] = png.data[i + 1] = png.data[i + 2] = v;
      png.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(png, { colorType });
}

/**
 * The 4000×4000 PNGs of the image test, made before any connection is open: encoding one blocks the event loop
 * for seconds (28 s on a loaded 2-core machine), long enough for the server to close an idle keep-alive socket that
 * fetch would then reuse ("fetch failed").
 */
const images = {};

before(async () => {
  images.gray = squares(4000, 0);
  images.rgba = squares(4000, 6);
  proxy = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const entry = { body: body.toString(), sent: 0, finished: false, closedEarly: false };
    rpcLog.push(entry);
    const up = httpRequest(await upstream, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (upRes) => {
      // no Content-Length: the Worker cannot refuse on the header, only while reading
      res.writeHead(upRes.statusCode, { 'content-type': 'application/json' });
      upRes.on('data', (c) => {
        entry.sent += c.length;
        if (!res.write(c)) {
          upRes.pause();
          res.once('drain', () => upRes.resume());
        }
      });
      upRes.on('end', () => {
        entry.finished = true;
        res.end();
      });
    });
    up.on('error', () => res.destroy());
    res.on('close', () => {
      if (!entry.finished) {
        entry.closedEarly = true;
        up.destroy();
      }
    });
    up.end(body);
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  // a gateway that has nothing: every miss reaches it
  gateway = createServer((req, res) => {
    gatewayAsked.push(req.url);
    res.writeHead(404).end();
  });
  await new Promise((r) => gateway.listen(0, '127.0.0.1', r));
  stack = await startStack({
    stateDir,
    vars: {
      LOOKUP_MISS_SECONDS: String(MISS_SECONDS),
      RPC_URL: `http://127.0.0.1:${proxy.address().port}`,
      LOOKUP_CACHE_SECONDS: '0',
      IPFS_GATEWAYS: `http://127.0.0.1:${gateway.address().port}`,
      IPFS_MISS_RATE_LIMIT_PER_MINUTE: String(MISS_LIMIT),
    },
  });
  setUpstream(stack.chain.rpcUrl);
});
after(async () => {
  await stack?.stop();
  for (const server of [proxy, gateway]) {
    server?.closeAllConnections?.();
    server?.close();
  }
  rmSync(stateDir, { recursive: true, force: true });
});

/** anvil's first unlocked dev account deploys the attackers. */
const DEPLOYER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const deploy = async ({ abi, bytecode }, args) => {
  const hash = await stack.chain.rpc('eth_sendTransaction', [{ from: DEPLOYER, gas: '0x989680', data: encodeDeployData({ abi, bytecode, args }) }]);
  const receipt = await waitForReceipt(stack.chain.rpc, hash);
  assert.equal(receipt.status, '0x1');
  return getAddress(receipt.contractAddress);
};
const lookup = async (address) => {
  const started = performance.now();
  const res = await fetch(`${stack.workerUrl}/v1/31337/address/${address}`, { headers: { 'cf-connecting-ip': freshIp() } });
  const body = await res.json();
  return { status: res.status, body, ms: performance.now() - started };
};
/** The RPC requests made since `from` that call `address`. */
const callsTo = (from, address) => rpcLog.slice(from).filter((e) => e.body.toLowerCase().includes(address.slice(2).toLowerCase()));

/**
 * The peak resident memory (VmHWM, bytes) of the stack's workerd processes, summed: wrangler runs two, the one on
 * the stack's port (a proxy) and the one running the Worker; both are in wrangler's process group.
 */
const workerPeak = async () => {
  const port = new URL(stack.workerUrl).port;
  const run = async (cmd, args) => (await promisify(execFile)(cmd, args)).stdout;
  const pid = (await run('ss', ['-ltnpH', `sport = :${port}`])).match(/pid=(\d+)/)?.[1];
  assert.ok(pid, `no process listens on ${port}`);
  const group = (await run('ps', ['-o', 'pgid=', '-p', pid])).trim();
  const pids = (await run('ps', ['-o', 'pid=,comm=', '-g', group]))
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([, comm]) => comm === 'workerd')
    .map(([p]) => p);
  assert.ok(pids.length >= 1);
  return pids.reduce((sum, p) => sum + Number(readFileSync(`/proc/${p}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/)[1]) * 1024, 0);
};

test('a contract answering megabytes: the lookup refuses it quickly, having read at most RPC_MAX_RESPONSE_BYTES', async () => {
  // 2 MB per call costs ≈ 7.8M gas of memory, under the gas cap: every call of the lookup's batch succeeds
  const size = 2_000_000;
  const huge = await deploy(compileAttacker('HugeAnswer'), [BigInt(size)]);
  // the attack is real: the batch the lookup sends makes the node answer tens of MB
  const from = rpcLog.length;
  // the first test on a fresh Worker: its heap has not grown yet; a first lookup sets up what every lookup uses
  await lookup(getAddress(`0x${randomBytes(20).toString('hex')}`));
  const before = await workerPeak();
  const { status, body, ms } = await lookup(huge);
  const grew = (await workerPeak()) - before;
  console.log(`huge answer: lookup ${Math.round(ms)} ms, workerd peak RSS +${(grew / 2 ** 20).toFixed(1)} MiB`);
  // measured: +18 to +26 MiB on a quiet machine, up to +32.5 MiB under load (the peak also holds what workerd
  // buffered from the socket and garbage not yet collected: both vary with the machine's speed); read whole
  // (RPC_MAX_RESPONSE_BYTES lifted), the same lookup grew it by +68 to +73 MiB. The bound lies between the two.
  assert.ok(grew < 48 * 2 ** 20, `the Worker's peak grew by ${grew} bytes`);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.LSPStandard, 'UnknownContract');
  assert.equal(body.unindexable?.code, 'ANSWER_TOO_LARGE', JSON.stringify(body));
  // quickly: the contract's batch asked once, not again, and cut short (below)
  const batches = callsTo(from, huge).filter((e) => e.body.startsWith('['));
  assert.equal(batches.length, 1, 'the lookup read the contract in one batch');
  const [batch] = batches;
  const direct = await fetch(stack.chain.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: batch.body });
  const full = (await direct.arrayBuffer()).byteLength;
  assert.ok(full > 4 * MAX_RESPONSE_BYTES, `the node's whole answer is ${full} bytes`);
  // the Worker stopped reading: the proxy handed it a part (what it read + the sockets' buffers), never the whole
  for (const end = Date.now() + 60_000; !batch.finished && !batch.closedEarly && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
  assert.equal(batch.finished, false, 'the Worker read the whole answer');
  assert.equal(batch.closedEarly, true);
  assert.ok(batch.sent < full, `handed ${batch.sent} of ${full} bytes before the Worker hung up`);
  console.log(`huge answer: node's answer ${full} B, handed to the Worker before it hung up ${batch.sent} B`);
  // remembered as an unknown contract: a second lookup costs no RPC
  const again = rpcLog.length;
  assert.equal((await lookup(huge)).body.LSPStandard, 'UnknownContract');
  assert.equal(callsTo(again, huge).length, 0);
});

test('the indexer meets a contract answering megabytes: recorded unindexable, the chain indexed to the head', async () => {
  const attacker = compileAttacker('HugeAnswer');
  const huge = await deploy(attacker, [2_000_000n]);
  const hash = await stack.chain.rpc('eth_sendTransaction', [
    { from: DEPLOYER, to: huge, data: encodeFunctionData({ abi: attacker.abi, functionName: 'poke' }) },
  ]);
  assert.equal((await waitForReceipt(stack.chain.rpc, hash)).status, '0x1');
  for (let i = 0; ; i++) {
    const res = await stack.admin('POST', '/admin/indexer/run');
    const run = await res.json();
    assert.equal(res.status, 200, JSON.stringify(run));
    if (run.toBlock >= run.headBlock) break;
    assert.ok(i < 10, 'the indexer did not catch up');
  }
  const status = await (await fetch(`${stack.workerUrl}/v1/31337/indexer`, { headers: { 'cf-connecting-ip': freshIp() } })).json();
  assert.equal(status.lag, 0, JSON.stringify(status));
  assert.equal(status.unindexable, 1, JSON.stringify(status));
  // answered from what the indexer recorded: no RPC
  const from = rpcLog.length;
  const { body } = await lookup(huge);
  assert.equal(body.unindexable?.code, 'ANSWER_TOO_LARGE', JSON.stringify(body));
  assert.equal(callsTo(from, huge).length, 0);
});

test('a 4000×4000 grayscale PNG at width 3999: resized within bounded memory; the RGBA one is refused', async () => {
  // early on a fresh Worker: its wasm heap has grown little yet, so the peak moves with what this request takes
  const gray = images.gray;
  assert.ok(gray.length < 200_000, `${gray.length} bytes`);
  const cid = await upload(stack, gray, 'image/png');
  const warm = await fetch(`${stack.workerUrl}/image/${cid}`, { headers: { 'cf-connecting-ip': freshIp() } });
  assert.equal(warm.status, 200);
  await warm.arrayBuffer();
  const before = await workerPeak();
  const started = performance.now();
  const res = await fetch(`${stack.workerUrl}/image/${cid}?width=3999`, { headers: { 'cf-connecting-ip': freshIp() } });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const ms = performance.now() - started;
  assert.equal(res.status, 200, new TextDecoder().decode(bytes));
  assert.equal(res.headers.get('content-type'), 'image/png');
  assert.equal(PNG.sync.read(Buffer.from(bytes)).width, 3999);
  const grew = (await workerPeak()) - before;
  console.log(`4000×4000 gray at width 3999: ${Math.round(ms)} ms, workerd peak RSS +${(grew / 2 ** 20).toFixed(1)} MiB`);
  // the resize's working set is ≈ 16 MB decoded + 16 MB scaled (it grew the Worker by 211 MB before)
  assert.ok(grew < 96 * 2 ** 20, `the Worker's peak grew by ${grew} bytes`);
  // RGBA: 64 MB decoded + 16 M output pixels × 8 bytes passes the 96 MiB working budget: refused before decoding
  const rgba = await upload(stack, images.rgba, 'image/png');
  const refused = await fetch(`${stack.workerUrl}/image/${rgba}?width=3999`, { headers: { 'cf-connecting-ip': freshIp() } });
  const body = await refused.json();
  assert.equal(refused.status, 413, JSON.stringify(body));
  assert.equal(body.error.code, 'IMAGE_TOO_LARGE');
});

test('every eth_call of a lookup carries RPC_CALL_GAS_CAP: a probe loops away any gas above it', async () => {
  // with more than the cap the probe burns all its gas (the call fails: CALL_REVERTED); with at most the cap
  // it answers false: an unknown contract without a refusal
  const probe = await deploy(compileAttacker('GasProbe'), [BigInt(CALL_GAS_CAP)]);
  const uncapped = await stack.chain.rpc('eth_call', [{ to: probe, data: '0x01ffc9a724871b3d' }, 'latest']).then(
    () => 'answered',
    (e) => e.message,
  );
  assert.notEqual(uncapped, 'answered', 'anvil runs an uncapped eth_call with more than the cap: the probe can tell');
  const from = rpcLog.length;
  const { status, body } = await lookup(probe);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.LSPStandard, 'UnknownContract');
  assert.equal(body.unindexable, undefined, JSON.stringify(body));
  const calls = callsTo(from, probe)
    .flatMap((e) => [JSON.parse(e.body)].flat())
    .filter((c) => c.method === 'eth_call');
  assert.ok(calls.length > 0);
  for (const c of calls) assert.equal(BigInt(c.params[0].gas), BigInt(CALL_GAS_CAP));
});

test('a gas-burning contract: the lookup answers quickly, the node runs at most the cap per call', async () => {
  const burner = await deploy(compileAttacker('GasBurner'), []);
  const from = rpcLog.length;
  const { status, body, ms } = await lookup(burner);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.unindexable?.code, 'CALL_REVERTED', JSON.stringify(body));
  // quickly: every call the node ran for it stopped at the cap
  const calls = callsTo(from, burner)
    .flatMap((e) => [JSON.parse(e.body)].flat())
    .filter((c) => c.method === 'eth_call');
  assert.ok(calls.length > 0);
  for (const c of calls) assert.equal(BigInt(c.params[0].gas), BigInt(CALL_GAS_CAP));
  // what one capped call costs the node, against an uncapped one (anvil's own default)
  const time = async (call) => {
    const started = performance.now();
    await stack.chain.rpc('eth_call', [call, 'latest']).catch(() => {});
    return performance.now() - started;
  };
  const capped = await time({ to: burner, data: '0x01ffc9a7', gas: `0x${CALL_GAS_CAP.toString(16)}` });
  const uncapped = await time({ to: burner, data: '0x01ffc9a7' });
  console.log(`gas burner: lookup ${Math.round(ms)} ms; one call at the cap ${Math.round(capped)} ms, uncapped ${Math.round(uncapped)} ms`);
});

test('/ipfs and /image misses are limited per client address; what R2 holds is not', async () => {
  const ip = freshIp();
  const get = (path) => fetch(`${stack.workerUrl}${path}`, { headers: { 'cf-connecting-ip': ip } });
  const stored = await upload(stack, randomBytes(64), 'application/octet-stream');
  const asked = gatewayAsked.length;
  const missing = () => rawCid(randomBytes(32));
  // the address's bucket refills a token every 20 s: what must be refused is what it cannot have refilled
  const bucket = tokenBucket({ limit: MISS_LIMIT });
  for (let i = 0; i < MISS_LIMIT; i++) {
    const res = await get(i % 2 ? `/image/${missing()}` : `/ipfs/${missing()}`);
    assert.equal(res.status, 404, await res.text());
    bucket.take();
  }
  assert.equal(gatewayAsked.length - asked, MISS_LIMIT, 'each miss asked the gateway');
  // each kind refused (asked again while a refill let it pass): a miss of each route, a resize of what R2 holds
  let missed = MISS_LIMIT;
  for (const [path, allowed] of [
    [() => `/ipfs/${missing()}`, 404],
    [() => `/image/${missing()}`, 404],
    [() => `/image/${stored}?width=10`, 200],
  ]) {
    for (let i = 0; ; i++) {
      assert.ok(i < 10 * MISS_LIMIT, 'never refused');
      const asking = path();
      const res = await get(asking);
      const body = await res.json().catch(() => null);
      if (bucket.check(res.status, { allowed, what: `${asking}: ${JSON.stringify(body)}` })) {
        if (allowed === 404) missed++;
        continue;
      }
      assert.equal(body.error.code, 'RATE_LIMITED');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
      break;
    }
  }
  assert.equal(gatewayAsked.length - asked, missed, 'a limited request never reaches a gateway');
  // stored content is served whatever the bucket holds; another address has its own bucket
  for (const path of [`/ipfs/${stored}`, `/image/${stored}`]) assert.equal((await get(path)).status, 200, path);
  const other = await fetch(`${stack.workerUrl}/ipfs/${missing()}`, { headers: { 'cf-connecting-ip': freshIp() } });
  assert.equal(other.status, 404);
});

test('an IPv6 client is one client for its whole /64', async () => {
  const missing = () => rawCid(randomBytes(32));
  const from = (ip) => fetch(`${stack.workerUrl}/ipfs/${missing()}`, { headers: { 'cf-connecting-ip': ip } });
  const bucket = tokenBucket({ limit: MISS_LIMIT });
  // each miss from another address of 2001:db8:64:1::/64
  for (let i = 1; i <= MISS_LIMIT; i++) bucket.check((await from(`2001:db8:64:1:${i.toString(16)}::${i}`)).status, { allowed: 404 });
  // the /64's bucket is spent: refused unless it had the time to refill (a token every 20 s); then asked again
  for (let i = 0, refused = false; !refused; i++) {
    assert.ok(i < 10 * MISS_LIMIT, 'never refused');
    const res = await from('2001:db8:64:1:ffff:ffff:ffff:fffe');
    refused = !bucket.check(res.status, { allowed: 404, what: await res.text() });
  }
  // the next /64 is another client
  assert.equal((await from('2001:db8:64:2::1')).status, 404);
});

test('40 simultaneous wrong admin tokens: at most ADMIN_FAILURES_PER_MINUTE compared, the rest 429', async () => {
  const LIMIT = 10; // ADMIN_FAILURES_PER_MINUTE's default
  const admin = (ip, token) => fetch(`${stack.workerUrl}/admin/api-keys`, { headers: { authorization: `Bearer ${token}`, 'cf-connecting-ip': ip } });
  const ip = freshIp();
  // a token comes back every 6 s: at most LIMIT, plus what the bucket refilled while the 40 were answered
  const bucket = tokenBucket({ limit: LIMIT });
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => admin(ip, `wrong-token-guess-${i}`)));
  const statuses = answers.map((r) => r.status);
  const compared = statuses.filter((s) => s === 401).length;
  bucket.take(compared);
  assert.ok(bucket.most() >= 0, `${compared} wrong tokens compared: ${statuses}`);
  assert.ok(compared >= 1);
  assert.equal(statuses.filter((s) => s === 429).length, 40 - compared, `${statuses}`);
  for (const r of answers.filter((a) => a.status === 429)) assert.ok(Number(r.headers.get('retry-after')) >= 1);
  // the right token from that address is refused too (a guess cannot be confirmed), unless a token came back
  // meanwhile; then a wrong one takes it, and the right one is refused again
  for (let i = 0; ; i++) {
    assert.ok(i < 4 * LIMIT, 'the right token was never refused');
    const status = (await admin(ip, stack.adminToken)).status;
    if (bucket.mustRefuse()) assert.equal(status, 429, 'the right token was compared with the bucket spent');
    if (status === 429) break;
    assert.equal(status, 200);
    bucket.check((await admin(ip, 'wrong-token-again')).status, { allowed: 401 });
  }
  // the right token never uses the budget up: more than LIMIT admin requests from one address all pass
  const operator = freshIp();
  for (let i = 0; i < LIMIT + 5; i++) assert.equal((await admin(operator, stack.adminToken)).status, 200, `request ${i}`);
});

test("an upload's declared type is ignored: the stored type is sniffed from its bytes", async () => {
  const ip = freshIp();
  const served = async (path) => (await fetch(`${stack.workerUrl}${path}`, { headers: { 'cf-connecting-ip': ip } })).headers.get('content-type');
  // the poisoning: the first uploader of a CID declares a type everyone would be served
  const bytes = randomBytes(256);
  bytes[0] = 0; // binary: sniffed as nothing in particular
  const poisoned = await upload(stack, bytes, 'application/x-poison');
  assert.equal(await served(`/ipfs/${poisoned}`), 'application/octet-stream');
  assert.equal(await served(`/image/${poisoned}`), 'application/octet-stream');
  // a PNG declared as HTML is a PNG; JSON declared as an image is JSON
  const png = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4a80000000049454e44ae426082',
    'hex',
  );
  assert.equal(await served(`/ipfs/${await upload(stack, png, 'text/html')}`), 'image/png');
  assert.equal(await served(`/ipfs/${await upload(stack, Buffer.from('{"LSP3Profile":{}}'), 'image/svg+xml')}`), 'application/json');
  // uploading the same bytes again with another declared type changes nothing
  assert.equal(await upload(stack, bytes, 'text/html'), poisoned);
  assert.equal(await served(`/ipfs/${poisoned}`), 'application/octet-stream');
});

const misses = async () => (await d1(stateDir, 'SELECT count(*) AS n FROM lookup_misses'))[0].n;

test('lookup misses expire: every new miss deletes up to 50 expired rows', async () => {
  const emptyAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);
  await d1(stateDir, 'DELETE FROM lookup_misses'); // the earlier tests' misses, expiring at other times
  const before = 0;
  const lookups = Array.from({ length: 55 }, emptyAddress);
  for (let i = 0; i < lookups.length; i += 11) {
    const answers = await Promise.all(lookups.slice(i, i + 11).map(lookup));
    for (const a of answers) assert.equal(a.body.LSPStandard, 'EOA', JSON.stringify(a.body));
  }
  assert.equal(await misses(), before + 55, 'none expired yet');
  // the 55 are dated back past LOOKUP_MISS_SECONDS (an hour): expired, whatever the time the lookups took; the
  // misses written from now on expire only in an hour
  await d1(stateDir, `UPDATE lookup_misses SET checked_at = checked_at - ${2 * MISS_SECONDS}`);
  // the next miss deletes 50 expired rows in its batch, the one after that the rest
  await lookup(emptyAddress());
  assert.equal(await misses(), before + 55 + 1 - 50);
  await lookup(emptyAddress());
  assert.equal(await misses(), 2);
  // an expired address is read from chain again (and remembered anew)
  const from = rpcLog.length;
  assert.equal((await lookup(lookups[0])).body.LSPStandard, 'EOA');
  assert.ok(rpcLog.length > from, 'read from chain again');
  assert.equal(await misses(), 3);
});

test('/api/execute and /api/quota for an unregistered contract: 404 before any of its answers is read', async () => {
  const attacker = compileAttacker('HugeAnswer');
  const huge = await deploy(attacker, [2_000_000n]);
  const account = privateKeyToAccount(generatePrivateKey());
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = await account.signMessage({ message: { raw: keccak256(encodePacked(['address', 'uint256'], [huge, BigInt(timestamp)])) } });
  const relayCall = {
    address: huge,
    transaction: {
      abi: encodeFunctionData({
        abi: parseAbi(['function setData(bytes32 key, bytes value)']),
        functionName: 'setData',
        args: [`0x${'00'.repeat(32)}`, '0x01'],
      }),
      signature: await account.sign({ hash: keccak256('0x01') }),
      nonce: '0x0',
      validityTimestamps: '0x0',
    },
  };
  const from = rpcLog.length;
  for (const [path, body] of [
    ['/api/quota', { address: huge, timestamp, signature }],
    ['/api/execute', relayCall],
  ]) {
    const res = await fetch(`${stack.workerUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cf-connecting-ip': freshIp() },
      body: JSON.stringify(body),
    });
    const answer = await res.json();
    assert.equal(res.status, 404, `${path}: ${JSON.stringify(answer)}`);
    assert.equal(answer.error.code, 'PROFILE_NOT_REGISTERED');
  }
  assert.equal(callsTo(from, huge).length, 0, 'no RPC call named the contract');
});

test('a key gas budget above 2^53 - 1 (what D1 holds) is a 400, never a 500; 2^53 - 1 is kept', async () => {
  const create = (budget) =>
    fetch(`${stack.workerUrl}/admin/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': 'application/json', 'cf-connecting-ip': freshIp() },
      body: `{"name":"big budget","gasBudgetPerMonth":${budget}}`,
    });
  for (const budget of ['9007199254740992', '18446744073709551614', '18446744073709551615', '1e30']) {
    const res = await create(budget);
    const answer = await res.json();
    assert.equal(res.status, 400, `${budget}: ${JSON.stringify(answer)}`);
    assert.equal(answer.error.code, 'INVALID_FIELD_TYPE');
  }
  const res = await create('9007199254740991');
  const created = await res.json();
  assert.equal(res.status, 201, JSON.stringify(created));
  assert.equal(created.gasBudgetPerMonth, 9007199254740991);
});
