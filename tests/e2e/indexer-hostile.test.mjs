// The indexer against hostile contracts and hostile metadata, deployed between two normal profiles: contracts
// (hand-assembled, see hostile-contracts.mjs) that claim every interface, answer empty, short or garbage data, or
// revert; profiles whose metadata is huge, never arrives, redirects from https to http, or hides `..` in percent
// form, or names an internal address (SSRF). Both normal profiles must be indexed, the lag must reach 0, the
// hostile ones must be recorded with an error, and no public route may answer 5xx. Also: lookups of token ids that
// do not exist write nothing, and lookups are limited per client IP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, getAddress } from 'viem';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { OWNER, indexing } from './helpers/indexing.mjs';
import { HOSTILE } from './hostile-contracts.mjs';
import { tokenBucket } from './helpers/bucket.mjs';

const require = createRequire(import.meta.url);
const LSP8 = require('@lukso/lsp8-contracts/artifacts/LSP8Mintable.json');

// a TLS certificate for 127.0.0.1, trusted by workerd: miniflare adds NODE_EXTRA_CA_CERTS to its trusted CAs
const certDir = mkdtempSync(join(tmpdir(), 'indexer-tls-'));
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    join(certDir, 'key.pem'),
    '-out',
    join(certDir, 'cert.pem'),
  ],
  { stdio: 'ignore' },
);

const seen = { gateway: [], hugeBytesSent: 0 };
let http;
let https;
let gateway;
let stack;
let ipCounter = 0;
// every request comes from its own client address unless a test says otherwise (the per-IP limit is low here)
const freshIp = () => `198.18.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`;

const goodJson = (name) => JSON.stringify({ LSP3Profile: { name, description: 'normal' } });

before(async () => {
  http = createServer((req, res) => {
    if (req.url === '/huge') {
      // an endless body without Content-Length: the Worker must stop reading at METADATA_MAX_BYTES
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(16384, 0x20);
      const pump = () => {
        while (seen.hugeBytesSent < 200_000_000) {
          seen.hugeBytesSent += chunk.length;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => res.removeAllListeners('drain'));
      return pump();
    }
    if (req.url === '/huge-declared') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000000' });
      return res.write('{');
    }
    if (req.url === '/slow') return; // never answers
    if (req.url.startsWith('/profile/')) return res.writeHead(200, { 'content-type': 'application/json' }).end(goodJson(decodeURIComponent(req.url.slice(9))));
    res.writeHead(404).end();
  });
  https = createHttpsServer({ key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) }, (req, res) => {
    if (req.url === '/to-http') return res.writeHead(302, { location: `http://127.0.0.1:${http.address().port}/profile/Downgraded` }).end();
    if (req.url === '/to-internal') return res.writeHead(302, { location: 'https://10.0.0.1/profile.json' }).end();
    if (req.url === '/ok') return res.writeHead(200, { 'content-type': 'application/json' }).end(goodJson('Https Hosted'));
    res.writeHead(404).end();
  });
  gateway = createServer((req, res) => {
    seen.gateway.push(req.url);
    res.writeHead(404).end();
  });
  for (const s of [http, https, gateway]) await new Promise((r) => s.listen(0, '127.0.0.1', r));
  process.env.NODE_EXTRA_CA_CERTS = join(certDir, 'cert.pem'); // read by the wrangler process startStack spawns
  stack = await startStack({
    vars: {
      LOOKUP_CACHE_SECONDS: '0',
      INDEXER_RETRY_SECONDS: '3600',
      METADATA_ALLOW_HTTP: 'true',
      METADATA_MAX_BYTES: '65536',
      METADATA_TIMEOUT_SECONDS: '10',
      LOOKUP_RATE_LIMIT_PER_MINUTE: '5',
      IPFS_GATEWAYS: `http://127.0.0.1:${gateway.address().port}`,
    },
  });
});
after(async () => {
  await stack?.stop();
  for (const s of [http, https, gateway]) {
    s?.closeAllConnections?.();
    s?.close();
  }
  rmSync(certDir, { recursive: true, force: true });
});

const call = (path, init = {}) => fetch(`${stack.workerUrl}${path}`, { ...init, headers: { 'cf-connecting-ip': freshIp(), ...init.headers } });
async function get(path, status = 200) {
  const res = await call(path);
  const body = await res.json();
  assert.equal(res.status, status, `${path}: ${JSON.stringify(body)}`);
  return body;
}

const helpers = indexing(() => stack);
const { send, upload, deploy, runIndexerUntilCaughtUp } = helpers;
const deployProfile = async (lsp3Profile) => (await helpers.deployProfile(lsp3Profile)).universalProfileAddress;

const hostileAddress = (i) => getAddress(`0x${'0bad'.padStart(36, '0')}${i.toString(16).padStart(4, '0')}`);
let normal1;
let normal2;
const hostile = {};
const hostileProfiles = {};

test('hostile contracts and metadata between two normal profiles: both normal ones indexed, lag 0, errors recorded', async () => {
  const cid = await upload(goodJson('Normal Before'));
  normal1 = await deployProfile(sdk.encodeVerifiableUri(goodJson('Normal Before'), `ipfs://${cid}`));

  let i = 0;
  for (const [name, { runtime }] of Object.entries(HOSTILE)) {
    const address = hostileAddress(++i);
    await stack.chain.rpc('anvil_setCode', [address, runtime]);
    await send({ to: address, data: '0x' }); // emits DataChanged: the indexer discovers it
    hostile[name] = address;
  }
  const port = http.address().port;
  const tlsPort = https.address().port;
  const profileUrls = {
    huge: [`http://127.0.0.1:${port}/huge`, 'TOO_LARGE'],
    hugeDeclared: [`http://127.0.0.1:${port}/huge-declared`, 'TOO_LARGE'],
    slow: [`http://127.0.0.1:${port}/slow`, 'FETCH_TIMEOUT'],
    redirectToHttp: [`https://127.0.0.1:${tlsPort}/to-http`, 'INSECURE_REDIRECT'],
    dotDot: [`ipfs://${cid}/%2e%2e/%2e%2e/x`, 'INVALID_CID'],
    // SSRF: chain data naming the cloud's metadata service or the operator's network, in several spellings, and a
    // public-looking URL that redirects there — refused before any request goes out (loopback is allowed here only
    // because METADATA_ALLOW_HTTP is set, as in local development)
    metadataService: ['https://169.254.169.254/latest/meta-data/', 'INTERNAL_ADDRESS'],
    metadataServiceDecimal: ['https://2852039166/latest/meta-data/', 'INTERNAL_ADDRESS'],
    metadataServiceNat64: ['https://[64:ff9b::a9fe:a9fe]/latest/meta-data/', 'INTERNAL_ADDRESS'],
    metadataServiceName: ['https://metadata.google.internal/computeMetadata/v1/', 'INTERNAL_ADDRESS'],
    privateHttp: ['http://10.0.0.1/profile.json', 'INTERNAL_ADDRESS'],
    redirectToInternal: [`https://127.0.0.1:${tlsPort}/to-internal`, 'INTERNAL_ADDRESS'],
  };
  for (const [name, [url, code]] of Object.entries(profileUrls)) {
    hostileProfiles[name] = { address: await deployProfile(sdk.encodeVerifiableUri('{}', url)), code };
  }
  const httpsOk = await deployProfile(sdk.encodeVerifiableUri(goodJson('Https Hosted'), `https://127.0.0.1:${tlsPort}/ok`));
  const cid2 = await upload(goodJson('Normal After'));
  normal2 = await deployProfile(sdk.encodeVerifiableUri(goodJson('Normal After'), `ipfs://${cid2}`));

  const run = await runIndexerUntilCaughtUp();
  assert.ok(run.errors >= Object.keys(HOSTILE).length, JSON.stringify(run));

  for (const [address, name] of [
    [normal1, 'Normal Before'],
    [normal2, 'Normal After'],
    [httpsOk, 'Https Hosted'],
  ]) {
    const record = await get(`/v1/31337/search?q=${encodeURIComponent(name)}`);
    assert.equal(record.profiles.hits.length, 1, `${name}: ${JSON.stringify(await get(`/v1/31337/address/${address}`))}`);
    assert.equal(record.profiles.hits[0].address, address);
    assert.equal(record.profiles.hits[0].metadataStatus, 'verified');
  }
  const stats = await get('/v1/31337/indexer');
  assert.equal(stats.lag, 0, JSON.stringify(stats));
  assert.equal(stats.lastIndexedBlock, stats.headBlock);
  assert.equal(stats.unindexable, Object.keys(HOSTILE).length);

  // hostile contracts: recorded with their error, never in the search index, answered like any unknown contract
  // (200: a wallet written for LUKSO's API throws on an error here) with the reason
  for (const [name, address] of Object.entries(hostile)) {
    const body = await get(`/v1/31337/address/${address}`);
    assert.equal(body.LSPStandard, 'UnknownContract', name);
    assert.equal(body.indexed, false, name);
    assert.equal(body.unindexable.code, HOSTILE[name].code, `${name}: ${JSON.stringify(body)}`);
    const token = await get(`/v1/31337/address/${address}/1`, 404);
    assert.match(token.error.message, new RegExp(HOSTILE[name].code), name);
  }
  // hostile metadata: the profile is indexed with the fetch error
  for (const [name, { address, code }] of Object.entries(hostileProfiles)) {
    const record = await get(`/v1/31337/address/${address}`);
    assert.equal(record.kind, 'LSP0ERC725Account', name);
    assert.equal(record.metadataStatus, 'fetch_failed', name);
    assert.equal(record.metadataError, code, name);
  }
  // the endless body was not read to its end, and `..` never reached the gateway
  assert.ok(seen.hugeBytesSent < 20_000_000, `the server sent ${seen.hugeBytesSent} bytes`);
  assert.ok(!seen.gateway.some((u) => /\.\.|%2e/i.test(u)), JSON.stringify(seen.gateway));
});

test('every public route answers hostile addresses without a 5xx', async () => {
  const token = '0x' + '1'.padStart(64, '0');
  const paths = [];
  for (const address of [...Object.values(hostile), ...Object.values(hostileProfiles).map((p) => p.address)]) {
    paths.push(
      `/v1/31337/address/${address}`,
      `/v1/31337/address/${address}/1`,
      `/v1/31337/address/${address}/${token}`,
      `/v1/31337/address/${address}/${encodeURIComponent('../../x')}`,
    );
  }
  paths.push(
    '/v1/31337/stats',
    '/v1/31337/indexer',
    '/v1/31337/search?q=bad',
    '/v1/31337/search?q=',
    `/ipfs/${(await get('/v1/31337/search?q=Before')).profiles.hits[0].metadataUrl.slice(7)}/%2e%2e/%2e%2e/x`,
  );
  for (const path of paths) {
    const res = await call(path);
    assert.ok(res.status < 500, `${path}: ${res.status} ${await res.text()}`);
  }
  const algolia = await call('/1/indexes/dev_local_universal_profiles/query', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"query":"bad"}',
  });
  assert.equal(algolia.status, 200);
  // a hostile contract the cron has not seen: the read-through refuses it and writes nothing
  const fresh = hostileAddress(0xfff);
  await stack.chain.rpc('anvil_setCode', [fresh, HOSTILE.claimsEverything.runtime]);
  const body = await get(`/v1/31337/address/${fresh}`);
  assert.equal(body.type, 'UnknownContract');
  assert.equal(body.unindexable.code, 'CLAIMS_EVERY_INTERFACE');
  assert.equal((await get('/v1/31337/indexer')).unindexable, Object.keys(HOSTILE).length);
});

test('lookups of token ids that do not exist leave no rows', async () => {
  const collection = await deploy(LSP8, ['Ghost Cards', 'GHST', OWNER, 2n, 0n]);
  const minted = '0x' + '7'.padStart(64, '0');
  await send({ to: collection, data: encodeFunctionData({ abi: LSP8.abi, functionName: 'mint', args: [OWNER, minted, true, '0x'] }) });
  const before = await get('/v1/31337/indexer');
  const assets = (s) => s.indexes.find((i) => i.name === 'dev_local_assets').entries;
  // the collection itself is read through (it exists): one row
  assert.equal((await get(`/v1/31337/address/${collection}`)).kind, 'LSP8IdentifiableDigitalAsset');
  for (const id of ['8', '123456', '0x' + 'ab'.repeat(32)]) {
    const body = await get(`/v1/31337/address/${collection}/${id}`, 404);
    assert.equal(body.error.code, 'TOKEN_NOT_FOUND');
  }
  const after = await get('/v1/31337/indexer');
  assert.equal(assets(after), assets(before) + 1, 'only the collection was written');
  // the minted token exists: the read-through writes it
  assert.equal((await get(`/v1/31337/address/${collection}/7`)).tokenId, minted);
  assert.equal(assets(await get('/v1/31337/indexer')), assets(before) + 2);
  assert.deepEqual(
    (await get(`/v1/31337/address/${collection}`)).tokens.map((t) => t.tokenId),
    [minted],
  );
});

test('lookups are limited per client IP: 429 with Retry-After, other clients unaffected', async () => {
  const ip = '203.0.113.9';
  // LOOKUP_RATE_LIMIT_PER_MINUTE 5: the first 5 pass, then what the bucket cannot have refilled (a token every 12 s)
  // is refused; asked until two in a row are
  const bucket = tokenBucket({ limit: 5 });
  const statuses = [];
  let retryAfter;
  for (let i = 0; statuses.slice(-2).join() !== '429,429'; i++) {
    assert.ok(i < 30, `never refused twice in a row: ${statuses}`);
    const res = await call(`/v1/31337/address/${normal1}`, { headers: { 'cf-connecting-ip': ip } });
    statuses.push(res.status);
    if (res.status === 429) {
      retryAfter = res.headers.get('retry-after');
      assert.equal((await res.json()).error.code, 'RATE_LIMITED');
    } else await res.arrayBuffer();
    bucket.check(res.status, { what: `request ${i}` });
  }
  assert.deepEqual(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
  assert.ok(Number(retryAfter) >= 1, String(retryAfter));
  assert.equal((await call(`/v1/31337/address/${normal1}`, { headers: { 'cf-connecting-ip': '203.0.113.10' } })).status, 200);
});
