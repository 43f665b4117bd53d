// The indexer end to end: metadata uploaded through /api/v0/add, a profile deployed through the relayer, real
// LSP7 and LSP8 contracts (LUKSO's npm artifacts) with metadata and token ids; the cron fired through wrangler's
// /__scheduled; lookup, token route, stats and both search routes checked; a setData followed. The Algolia adapter
// pushes to a local server that checks Algolia's documented REST shapes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { encodeFunctionData } from 'viem';
import * as sdk from 'profile-relayer';
import { startStack, fund } from '../../scripts/stack.mjs';
import { CONTROLLER, OWNER, indexing } from './helpers/indexing.mjs';

const require = createRequire(import.meta.url);
const LSP7 = require('@lukso/lsp7-contracts/artifacts/LSP7Mintable.json');
const LSP8 = require('@lukso/lsp8-contracts/artifacts/LSP8Mintable.json');
const LSP4_METADATA = sdk.encodeKeyName('LSP4Metadata');

const algolia = { requests: [], server: null };
let stack;
before(async () => {
  algolia.server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      algolia.requests.push({ method: req.method, url: req.url, headers: req.headers, body: JSON.parse(body || 'null') });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ taskID: 1, objectIDs: [] }));
    });
  });
  await new Promise((r) => algolia.server.listen(0, '127.0.0.1', r));
  stack = await startStack({
    vars: {
      LOOKUP_CACHE_SECONDS: '0',
      INDEXER_RETRY_SECONDS: '0',
      METADATA_ALLOW_HTTP: 'true',
      ALGOLIA_APP_ID: 'TESTAPPID',
      ALGOLIA_HOST: `http://127.0.0.1:${algolia.server.address().port}`,
      PUBLIC_BASE_URL: 'https://relayer.example.org',
    },
    secrets: { ALGOLIA_ADMIN_KEY: 'algolia-admin-key-for-tests' },
  });
});
after(async () => {
  await stack?.stop();
  algolia.server?.close();
});

const { get, upload, metadataUri, send, deploy, deployProfile, runCron } = indexing(() => stack);

let profile;
let lsp7;
let lsp8;

test('a profile with uploaded LSP3 metadata is indexed by the cron and found by search', async () => {
  const lsp3Profile = await metadataUri({ LSP3Profile: { name: 'Zephyrine Indexed', description: 'found by the indexer', tags: ['e2e'], links: [] } });
  profile = (await deployProfile(lsp3Profile)).universalProfileAddress;
  await runCron();
  const record = await get(`/v1/31337/address/${profile}`);
  assert.equal(record.kind, 'LSP0ERC725Account');
  assert.equal(record.name, 'Zephyrine Indexed');
  assert.equal(record.metadataStatus, 'verified');
  assert.deepEqual(record.tags, ['e2e']);
  const algoliaShaped = await (
    await fetch(`${stack.workerUrl}/1/indexes/dev_local_universal_profiles/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'zephyr', hitsPerPage: 5 }),
    })
  ).json();
  assert.equal(algoliaShaped.nbHits, 1);
  assert.equal(algoliaShaped.hits[0].objectID, profile);
  for (const k of ['hits', 'nbHits', 'page', 'nbPages', 'hitsPerPage', 'processingTimeMS']) assert.ok(k in algoliaShaped, k);
  // InstantSearch sends its parameters as one url-encoded string
  const params = await (
    await fetch(`${stack.workerUrl}/1/indexes/dev_local_universal_profiles/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ params: 'query=indexed&hitsPerPage=2&page=0' }),
    })
  ).json();
  assert.equal(params.hits[0].objectID, profile);
  const simple = await get('/v1/31337/search?q=Zephyrine');
  assert.equal(simple.profiles.hits[0].address, profile);
  // an index this deployment does not have: 404 INDEX_NOT_FOUND, as Algolia answers it (the route takes POST)
  const unknown = await fetch(`${stack.workerUrl}/1/indexes/unknown_index/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'x' }),
  });
  const missing = await unknown.json();
  assert.equal(unknown.status, 404, JSON.stringify(missing));
  assert.equal(missing.error.code, 'INDEX_NOT_FOUND');
});

test('real LSP7 and LSP8 contracts: lookup, token route, token list', async () => {
  const assetUri = await metadataUri({ LSP4Metadata: { name: 'Quokka Coin', description: 'an LSP7 token', links: [], icon: [], images: [], assets: [] } });
  lsp7 = await deploy(LSP7, ['Quokka Coin', 'QKK', OWNER, 0n, false]);
  await send({ to: lsp7, data: encodeFunctionData({ abi: LSP7.abi, functionName: 'setData', args: [LSP4_METADATA, assetUri] }) });
  await send({ to: lsp7, data: encodeFunctionData({ abi: LSP7.abi, functionName: 'mint', args: [OWNER, 1000n, true, '0x'] }) });

  lsp8 = await deploy(LSP8, ['Numbat Cards', 'NMB', OWNER, 2n, 0n]);
  const tokenId = '0x' + '1'.padStart(64, '0');
  await send({ to: lsp8, data: encodeFunctionData({ abi: LSP8.abi, functionName: 'mint', args: [OWNER, tokenId, true, '0x'] }) });
  const tokenUri = await metadataUri({
    LSP4Metadata: {
      name: 'Numbat #1',
      description: 'the first card',
      links: [],
      images: [],
      assets: [],
      attributes: [{ key: 'rarity', value: 'rare', type: 'string' }],
    },
  });
  await send({ to: lsp8, data: encodeFunctionData({ abi: LSP8.abi, functionName: 'setDataForTokenId', args: [tokenId, LSP4_METADATA, tokenUri] }) });

  await runCron();
  const coin = await get(`/v1/31337/address/${lsp7}`);
  assert.equal(coin.kind, 'LSP7DigitalAsset');
  assert.equal(coin.name, 'Quokka Coin');
  assert.equal(coin.symbol, 'QKK');
  assert.equal(coin.tokenType, 'TOKEN');
  assert.equal(coin.metadataStatus, 'verified');
  const cards = await get(`/v1/31337/address/${lsp8}`);
  assert.equal(cards.kind, 'LSP8IdentifiableDigitalAsset');
  assert.equal(cards.tokenType, 'COLLECTION');
  assert.equal(cards.tokenIdFormat, 'NUMBER');
  assert.deepEqual(
    cards.tokens.map((t) => t.tokenId),
    [tokenId],
  );
  assert.deepEqual(Object.keys(cards.tokens[0]).sort(), ['imageUrl', 'name', 'tokenId']);
  assert.equal(cards.tokens[0].name, 'Numbat #1');
  // the token id in the collection's format (a number) and as bytes32
  for (const id of ['1', tokenId]) {
    const token = await get(`/v1/31337/address/${lsp8}/${id}`);
    assert.equal(token.name, 'Numbat #1');
    assert.equal(token.metadataStatus, 'verified');
    assert.equal(token.LSP4Metadata.attributes[0].value, 'rare');
  }
  const found = await get('/v1/31337/search?q=quokka');
  assert.equal(found.assets.hits[0].address, lsp7);
});

test('setData on a metadata key re-indexes the record', async () => {
  const newUri = await metadataUri({ LSP4Metadata: { name: 'Quokka Coin v2', description: 'renamed', links: [], icon: [], images: [], assets: [] } });
  await send({ to: lsp7, data: encodeFunctionData({ abi: LSP7.abi, functionName: 'setData', args: [LSP4_METADATA, newUri] }) });
  await runCron();
  const coin = await get(`/v1/31337/address/${lsp7}`);
  assert.equal(coin.LSP4Metadata.name, 'Quokka Coin v2');
  assert.equal(coin.description, 'renamed');
});

test('stats, read-through, errors', async () => {
  const stats = await get('/v1/31337/indexer');
  const entries = Object.fromEntries(stats.indexes.map((i) => [i.name, i.entries]));
  assert.ok(entries.dev_local_universal_profiles >= 1);
  assert.ok(entries.dev_local_assets >= 3, JSON.stringify(entries));
  assert.equal(stats.lastIndexedBlock, stats.headBlock);
  assert.equal(stats.lag, 0);
  // a profile the cron has not seen yet is read from chain on demand
  const { postDeploymentCallData } = sdk.profileDataFromControllers([CONTROLLER]);
  const res = await fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ salt: sdk.generateSalt(), postDeploymentCallData }),
  });
  const fresh = (await res.json()).universalProfileAddress;
  const record = await get(`/v1/31337/address/${fresh}`);
  assert.equal(record.kind, 'LSP0ERC725Account');
  assert.equal(record.metadataStatus, 'none');
  // errors
  assert.equal((await get('/v1/31337/address/0x000000000000000000000000000000000000dEaD')).LSPStandard, 'EOA');
  assert.equal((await get('/v1/42/address/0x000000000000000000000000000000000000dEaD', 400)).error.code, 'UNKNOWN_CHAIN');
  assert.equal((await get('/v1/31337/address/0x1234', 400)).error.code, 'INVALID_ADDRESS');
  assert.equal((await get(`/v1/31337/address/${lsp7}/1`, 404)).error.code, 'NOT_FOUND');
  await fund(stack.chain, OWNER);
});

test('a failed metadata fetch is recorded, retried, and completed once the content exists', async () => {
  const json = JSON.stringify({ LSP3Profile: { name: 'Late Metadata', description: 'arrives after the deploy' } });
  const cid = sdk.computeCid(new TextEncoder().encode(json));
  const lsp3Profile = sdk.encodeVerifiableUri(json, `ipfs://${cid}`); // not uploaded yet: no store, no gateway has it
  const up = (await deployProfile(lsp3Profile)).universalProfileAddress;
  await runCron();
  const failed = await get(`/v1/31337/address/${up}`);
  assert.equal(failed.metadataStatus, 'fetch_failed');
  assert.equal(failed.metadataUrl, `ipfs://${cid}`);
  assert.equal(await upload(json), cid);
  await runCron(); // the due retry runs before the next block range
  const done = await get(`/v1/31337/address/${up}`);
  assert.equal(done.metadataStatus, 'verified');
  assert.equal(done.name, 'Late Metadata');
  // lookups carry an ETag and answer 304 to If-None-Match
  const first = await fetch(`${stack.workerUrl}/v1/31337/address/${up}`);
  const etag = first.headers.get('etag');
  assert.ok(etag);
  assert.match(first.headers.get('cache-control'), /^public/);
  const again = await fetch(`${stack.workerUrl}/v1/31337/address/${up}`, { headers: { 'if-none-match': etag } });
  assert.equal(again.status, 304);
});

test('metadata behind data: and http(s) URLs is fetched and verified too', async () => {
  const { createServer: serve } = await import('node:http');
  const json = JSON.stringify({ LSP3Profile: { name: 'Data Url Dingo', description: 'inline' } });
  const dataUrl = `data:application/json;base64,${Buffer.from(json).toString('base64')}`;
  const httpJson = JSON.stringify({ LSP3Profile: { name: 'Http Hosted Heron', description: 'from a web server' } });
  const server = serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(httpJson));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const deploy = async (lsp3Profile) => (await deployProfile(lsp3Profile)).universalProfileAddress;
    const a = await deploy(sdk.encodeVerifiableUri(json, dataUrl));
    const b = await deploy(sdk.encodeVerifiableUri(httpJson, `http://127.0.0.1:${server.address().port}/profile.json`));
    await runCron();
    const ra = await get(`/v1/31337/address/${a}`);
    assert.equal(ra.name, 'Data Url Dingo');
    assert.equal(ra.metadataStatus, 'verified');
    const rb = await get(`/v1/31337/address/${b}`);
    assert.equal(rb.name, 'Http Hosted Heron');
    assert.equal(rb.metadataStatus, 'verified');
  } finally {
    server.close();
  }
});

test("the Algolia adapter sent batches in Algolia's documented shape", () => {
  assert.ok(algolia.requests.length >= 5, String(algolia.requests.length));
  for (const r of algolia.requests) {
    assert.equal(r.method, 'POST');
    assert.match(r.url, /^\/1\/indexes\/dev_local_(universal_profiles|assets)\/batch$/);
    assert.equal(r.headers['x-algolia-application-id'], 'TESTAPPID');
    assert.equal(r.headers['x-algolia-api-key'], 'algolia-admin-key-for-tests');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.ok(Array.isArray(r.body.requests) && r.body.requests.length > 0);
    for (const op of r.body.requests) {
      assert.equal(op.action, 'updateObject');
      assert.match(op.body.objectID, /^0x[0-9a-fA-F]{40}(:0x[0-9a-f]{64})?$/);
    }
  }
  const ids = algolia.requests.flatMap((r) => r.body.requests.map((op) => op.body.objectID));
  assert.ok(ids.includes(profile));
  assert.ok(
    ids.some((id) => id.startsWith(`${lsp8}:0x`)),
    'objectID = address:tokenId for tokens',
  );
});
