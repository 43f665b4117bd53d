// The Algolia-compatible API driven by the official clients, which we did not write: algoliasearch v5 (Node;
// searchSingleIndex, search over several indexes, browse / browseObjects, facets, filters) and InstantSearch.js
// with algoliasearch/lite in headless Chromium (searchBox + hits + refinementList), against the real stack: real
// LSP7 / LSP8 contracts on anvil, indexed by the cron. The Algolia push side (records trimmed below
// ALGOLIA_MAX_RECORD_BYTES, one rejected record never blocking the others) pushes to a local server that answers
// as Algolia does for records it refuses; an asset reorganized away is deleted there (deleteObject), a failed
// deletion retried by the next run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { algoliasearch } from 'algoliasearch';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { encodeFunctionData } from 'viem';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { OWNER, indexing } from './helpers/indexing.mjs';
import { tokenBucket } from './helpers/bucket.mjs';
import { launchChromium } from '../helpers/chromium.mjs';

const require = createRequire(import.meta.url);
const LSP7 = require('@lukso/lsp7-contracts/artifacts/LSP7Mintable.json');
const LSP8 = require('@lukso/lsp8-contracts/artifacts/LSP8Mintable.json');
const PROFILES = 'dev_local_universal_profiles';
const ASSETS = 'dev_local_assets';
const PUBLIC_BASE = 'https://relayer.example.org';
const MAX_RECORD = 2000;

// a stand-in for Algolia's write API: 400 for a batch holding a record over the size limit or the poison record;
// `indexes` holds what an accepted batch leaves in each index (updateObject sets, deleteObject removes), `deleted`
// every deleteObject request ({ index, objectID }); while `failDeletes` > 0, a deleteObject batch answers 503
const pushed = { requests: [], deleted: [], indexes: new Map(), failDeletes: 0, failedDeletes: 0, server: null };
let stack;
let client;
before(async () => {
  pushed.server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const json = JSON.parse(body || 'null');
      pushed.requests.push({ url: req.url, body: json });
      const records = (json?.requests ?? []).map((r) => r.body);
      const refused = records.find((r) => JSON.stringify(r).length > MAX_RECORD || r.name === 'Poison Pill');
      if (refused) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `Record ${refused.objectID} is too big`, status: 400 }));
        return;
      }
      if (pushed.failDeletes > 0 && json?.requests?.some((op) => op.action === 'deleteObject')) {
        pushed.failDeletes -= 1;
        pushed.failedDeletes += 1;
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'unavailable', status: 503 }));
        return;
      }
      const index = decodeURIComponent(req.url.match(/^\/1\/indexes\/([^/]+)\/batch$/)?.[1] ?? '');
      if (!pushed.indexes.has(index)) pushed.indexes.set(index, new Map());
      for (const op of json?.requests ?? []) {
        if (op.action === 'deleteObject') {
          pushed.deleted.push({ index, objectID: op.body.objectID });
          pushed.indexes.get(index).delete(op.body.objectID);
        } else if (op.action === 'updateObject') pushed.indexes.get(index).set(op.body.objectID, op.body);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ taskID: 1, objectIDs: records.map((r) => r.objectID) }));
    });
  });
  await new Promise((r) => pushed.server.listen(0, '127.0.0.1', r));
  stack = await startStack({
    vars: {
      LOOKUP_CACHE_SECONDS: '0',
      INDEXER_RETRY_SECONDS: '0',
      METADATA_ALLOW_HTTP: 'true',
      LOOKUP_RATE_LIMIT_PER_MINUTE: '100000',
      ALGOLIA_APP_ID: 'TESTAPPID',
      ALGOLIA_HOST: `http://127.0.0.1:${pushed.server.address().port}`,
      ALGOLIA_MAX_RECORD_BYTES: String(MAX_RECORD),
      PUBLIC_BASE_URL: PUBLIC_BASE,
    },
    secrets: { ALGOLIA_ADMIN_KEY: 'algolia-admin-key-for-tests' },
  });
  const { host } = new URL(stack.workerUrl);
  client = algoliasearch('TESTAPPID', 'any-search-key', { hosts: [{ url: host, protocol: 'http', accept: 'readWrite' }] });
});
after(async () => {
  await stack?.stop();
  pushed.server?.close();
});

const { send, deploy, metadataUri, runCron, upload, deployProfile } = indexing(() => stack);

const ids = {};
test('real contracts are indexed by the cron; the Algolia push trims and isolates refused records', async () => {
  ids.coin = await deploy(LSP7, ['Quokka & <Coin>', 'QKK', OWNER, 0n, false]);
  ids.points = await deploy(LSP7, ['Quokka Points', 'QPT', OWNER, 0n, true]);
  const big = await metadataUri({ LSP4Metadata: { name: 'Quokka Points', description: 'long '.repeat(700), links: [], icon: [], images: [], assets: [] } });
  await send({ to: ids.points, data: encodeFunctionData({ abi: LSP7.abi, functionName: 'setData', args: [sdk.encodeKeyName('LSP4Metadata'), big] }) });
  ids.cards = await deploy(LSP8, ['Quokka Cards', 'QCD', OWNER, 1n, 0n]);
  ids.poison = await deploy(LSP7, ['Poison Pill', 'PSN', OWNER, 0n, false]);
  await runCron();

  // every contract is in the D1 index, the poison one included
  for (const address of Object.values(ids)) {
    const r = await fetch(`${stack.workerUrl}/v1/31337/address/${address}`);
    assert.equal(r.status, 200, address);
  }
  // Algolia got every record but the poison one, the large one trimmed below the limit
  const accepted = new Map();
  for (const r of pushed.requests) {
    const records = r.body.requests.map((op) => op.body);
    if (records.some((rec) => JSON.stringify(rec).length > MAX_RECORD || rec.name === 'Poison Pill')) continue;
    for (const rec of records) accepted.set(rec.objectID, rec);
  }
  for (const [name, address] of Object.entries(ids)) assert.equal(accepted.has(address), name !== 'poison', name);
  const points = accepted.get(ids.points);
  assert.ok(JSON.stringify(points).length <= MAX_RECORD);
  assert.equal(points.name, 'Quokka Points');
  assert.equal(points.description, undefined);
  // the poison record was retried alone, then set aside
  assert.ok(pushed.requests.some((r) => r.body.requests.length === 1 && r.body.requests[0].body.objectID === ids.poison));
});

test('a long profile keeps its name and its absolute image URLs in Algolia', async () => {
  const cid = await upload(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
  const image = (width) => ({ url: `ipfs://${cid}`, width, height: width, verification: { method: 'keccak256(bytes)', data: `0x${'ab'.repeat(32)}` } });
  const bio = 'a very long biography '.repeat(280); // ≈ 6,000 characters
  const links = Array.from({ length: 12 }, (_, i) => ({ title: `link ${i}`, url: `https://example.com/${i}` }));
  const lsp3 = await metadataUri({
    LSP3Profile: {
      name: 'Longbio Wombat',
      description: bio,
      links,
      tags: ['wombat', 'long'],
      profileImage: [image(640), image(320), image(64)],
      backgroundImage: [image(1024)],
    },
  });
  const up = (await deployProfile(lsp3)).universalProfileAddress;
  await runCron();
  const records = pushed.requests.flatMap((r) => r.body.requests.map((op) => op.body)).filter((rec) => rec.objectID === up);
  assert.ok(records.length >= 1, 'the profile was pushed');
  const rec = records.at(-1);
  assert.ok(JSON.stringify(rec).length <= MAX_RECORD, 'trimmed below the limit');
  assert.equal(rec.LSP3Profile.name, 'Longbio Wombat', 'the name the wallet shows');
  assert.equal(rec.name, 'Longbio Wombat');
  assert.equal(rec.LSP3Profile.description, undefined, 'the bio goes first');
  assert.equal(rec.LSP3Profile.profileImage[0].url, `ipfs://${cid}`);
  assert.ok(rec.profileImageUrl.startsWith(PUBLIC_BASE), `absolute: ${rec.profileImageUrl}`);
  assert.ok(rec.backgroundImageUrl.startsWith(PUBLIC_BASE), `absolute: ${rec.backgroundImageUrl}`);
  // the D1 index keeps the whole record
  const whole = await (await fetch(`${stack.workerUrl}/v1/31337/address/${up}`)).json();
  assert.equal(whole.description.length, bio.length);
});

test('algoliasearch v5 searchSingleIndex: hits, paging, facets, highlights (HTML-escaped)', async () => {
  const r = await client.searchSingleIndex({
    indexName: ASSETS,
    searchParams: { query: 'quokka', hitsPerPage: 2, facets: ['kind', 'symbol'], attributesToHighlight: ['name', 'symbol'] },
  });
  assert.equal(r.nbHits, 3);
  assert.equal(r.nbPages, 2);
  assert.equal(r.hits.length, 2);
  assert.equal(r.hitsPerPage, 2);
  assert.equal(r.index, ASSETS);
  assert.equal(r.query, 'quokka');
  assert.equal(r.exhaustiveNbHits, true);
  assert.equal(typeof r.processingTimeMS, 'number');
  assert.deepEqual(r.facets.kind, { LSP7DigitalAsset: 2, LSP8IdentifiableDigitalAsset: 1 });
  assert.deepEqual(r.facets.symbol, { QKK: 1, QPT: 1, QCD: 1 });
  const page2 = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: 'quokka', hitsPerPage: 2, page: 1 } });
  assert.equal(page2.hits.length, 1);
  const all = [...r.hits, ...page2.hits].map((h) => h.objectID).sort();
  assert.deepEqual(all, [ids.coin, ids.points, ids.cards].sort());

  const coin = await client.searchSingleIndex({
    indexName: ASSETS,
    searchParams: { query: 'quokka coin', highlightPreTag: '<mark>', highlightPostTag: '</mark>' },
  });
  assert.equal(coin.hits[0].objectID, ids.coin);
  assert.deepEqual(coin.hits[0]._highlightResult.name, {
    value: '<mark>Quokka</mark> &amp; &lt;<mark>Coin</mark>&gt;',
    matchLevel: 'full',
    matchedWords: ['quokka', 'coin'],
    fullyHighlighted: true,
  });
  assert.equal(coin.hits[0]._highlightResult.symbol.matchLevel, 'none');

  // hitsPerPage 0: counts and facets only (what InstantSearch asks for disjunctive facets)
  const counts = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { hitsPerPage: 0, facets: ['*'] } });
  assert.deepEqual(counts.hits, []);
  assert.equal(counts.nbHits, 4); // the four contracts (no LSP8 token is minted)
  assert.equal(counts.facets.kind.LSP7DigitalAsset, 3);
});

test('algoliasearch v5 offset and length: the same hits as pages, page ignored, offset and length answered', async () => {
  const ordered = (await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: 'quokka', hitsPerPage: 3 } })).hits.map((h) => h.objectID);
  assert.equal(ordered.length, 3);
  // offset 1, length 2: the second and third hits, whatever page says
  const r = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: 'quokka', offset: 1, length: 2, page: 5 } });
  assert.deepEqual(
    r.hits.map((h) => h.objectID),
    ordered.slice(1, 3),
  );
  assert.deepEqual([r.offset, r.length, r.nbHits], [1, 2, 3]);
  // length defaults to hitsPerPage; without offset, length is ignored (and not answered)
  const byPer = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: 'quokka', offset: 2, hitsPerPage: 5 } });
  assert.deepEqual([byPer.hits.map((h) => h.objectID), byPer.length], [ordered.slice(2), 5]);
  const paged = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: 'quokka', length: 1, hitsPerPage: 2, page: 1 } });
  assert.deepEqual([paged.hits.map((h) => h.objectID), paged.offset, paged.length], [ordered.slice(2), undefined, undefined]);
  // the legacy params string, the empty query (most recent first), and past paginationLimitedTo
  const legacy = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { params: 'query=quokka&offset=0&length=1' } });
  assert.deepEqual(
    legacy.hits.map((h) => h.objectID),
    ordered.slice(0, 1),
  );
  const recent = (await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: '', hitsPerPage: 4 } })).hits.map((h) => h.objectID);
  const window = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: '', offset: 1, length: 2 } });
  assert.deepEqual(
    window.hits.map((h) => h.objectID),
    recent.slice(1, 3),
  );
  const beyond = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: '', offset: 1000, length: 10 } });
  assert.deepEqual([beyond.hits.length, beyond.offset], [0, 1000]);
  await assert.rejects(
    client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: '', offset: 0, length: 1001 } }),
    (e) => e.status === 400 && /length/.test(e.message),
  );
});

test('algoliasearch v5: typos find the indexed contracts, fewest typos first, with _rankingInfo', async () => {
  // "qoukka" (a swap) and "quoka" (a deletion) are one typo from "quokka"
  for (const query of ['qoukka', 'quoka ', 'quokka cion']) {
    const r = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query, getRankingInfo: true } });
    const expected = query === 'quokka cion' ? [ids.coin] : [ids.coin, ids.points, ids.cards].sort();
    assert.deepEqual(r.hits.map((h) => h.objectID).sort(), expected, query);
    assert.ok(
      r.hits.every((h) => h._rankingInfo.nbTypos === 1),
      query,
    );
  }
  // the typo'd word is highlighted whole, reported as the query word
  const r = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: 'quokka cion' } });
  assert.deepEqual(r.hits[0]._highlightResult.name.matchedWords, ['quokka', 'cion']);
  assert.equal(r.hits[0]._highlightResult.name.value, '<em>Quokka</em> &amp; &lt;<em>Coin</em>&gt;');
});

test('filters, facetFilters and numericFilters narrow the hits; bad filters are clear 400s', async () => {
  const find = async (searchParams) => (await client.searchSingleIndex({ indexName: ASSETS, searchParams })).hits.map((h) => h.objectID).sort();
  assert.deepEqual(await find({ filters: 'kind:LSP7DigitalAsset AND NOT symbol:qpt' }), [ids.coin, ids.poison].sort());
  assert.deepEqual(await find({ filters: '(symbol:QKK OR symbol:"QCD") AND kind:LSP8IdentifiableDigitalAsset' }), [ids.cards]);
  assert.deepEqual(await find({ query: 'quokka', facetFilters: [['symbol:QKK', 'symbol:QCD']] }), [ids.coin, ids.cards].sort());
  assert.deepEqual(await find({ query: 'quokka', facetFilters: ['kind:-LSP7DigitalAsset'] }), [ids.cards]);
  const all = await find({});
  assert.deepEqual(await find({ numericFilters: ['indexedBlock >= 0'] }), all);
  assert.deepEqual(await find({ numericFilters: ['indexedBlock < 0'] }), []);
  for (const filters of ['kind:', 'kind:a AND', '(kind:a', 'a = b', `${'('.repeat(20)}a:b${')'.repeat(20)}`]) {
    await assert.rejects(
      client.searchSingleIndex({ indexName: ASSETS, searchParams: { filters } }),
      (e) => e.status === 400 && /filters/.test(e.message),
      filters,
    );
  }
  await assert.rejects(client.searchSingleIndex({ indexName: 'nope', searchParams: {} }), (e) => e.status === 404);
});

test('algoliasearch v5 search over several indexes, new and legacy request shapes', async () => {
  const { results } = await client.search({
    requests: [
      { indexName: ASSETS, query: 'quokka', hitsPerPage: 1, filters: 'kind:LSP8IdentifiableDigitalAsset' },
      { indexName: PROFILES, query: 'quokka' },
      { indexName: ASSETS, params: 'query=poison&hitsPerPage=5' },
    ],
  });
  assert.equal(results.length, 3);
  assert.deepEqual(
    results.map((r) => r.index),
    [ASSETS, PROFILES, ASSETS],
  );
  assert.equal(results[0].hits[0].objectID, ids.cards);
  assert.equal(results[1].nbHits, 0);
  assert.equal(results[2].hits[0].objectID, ids.poison);
  const legacy = await client.search([{ indexName: ASSETS, params: { query: 'points', hitsPerPage: 3 } }]);
  assert.equal(legacy.results[0].hits[0].objectID, ids.points);
  await assert.rejects(client.search({ requests: [{ indexName: ASSETS, type: 'facet', facet: 'kind' }] }), (e) => e.status === 400);
});

test('browse and browseObjects walk every record once, with a cursor', async () => {
  const first = await client.browse({ indexName: ASSETS, browseParams: { hitsPerPage: 2 } });
  assert.equal(first.hits.length, 2);
  assert.equal(typeof first.cursor, 'string');
  const seen = [];
  await client.browseObjects({ indexName: ASSETS, browseParams: { hitsPerPage: 2 }, aggregator: (r) => seen.push(...r.hits.map((h) => h.objectID)) });
  assert.equal(seen.length, first.nbHits);
  assert.equal(new Set(seen).size, seen.length);
  assert.deepEqual([...seen].sort(), seen); // objectID order
  // the cursor alone carries the parameters of the first call
  const filtered = await client.browse({ indexName: ASSETS, browseParams: { filters: 'kind:LSP7DigitalAsset', hitsPerPage: 1 } });
  const next = await client.browse({ indexName: ASSETS, browseParams: { cursor: filtered.cursor } });
  assert.equal(next.hits.length, 1);
  assert.equal(next.hits[0].kind, 'LSP7DigitalAsset');
  assert.ok(next.hits[0].objectID > filtered.hits[0].objectID);
  await assert.rejects(client.browse({ indexName: ASSETS, browseParams: { cursor: 'not-a-cursor' } }), (e) => e.status === 400);
});

test('GET /1/indexes/:index with the parameters and x-algolia-* credentials in the URL', async () => {
  const url = `${stack.workerUrl}/1/indexes/${ASSETS}?query=quokka&hitsPerPage=1&x-algolia-agent=test&x-algolia-api-key=k&x-algolia-application-id=TESTAPPID`;
  const res = await fetch(url);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.nbHits, 3);
  assert.equal(body.hits.length, 1);
  assert.equal(body.params, 'query=quokka&hitsPerPage=1');
  assert.equal((await fetch(`${stack.workerUrl}/1/indexes/${ASSETS}?filters=kind%3A`)).status, 400);
});

test('InstantSearch.js renders hits, highlights and a refinement list in Chromium', { timeout: 120_000 }, async () => {
  const entry = fileURLToPath(new URL('./algolia-instantsearch.entry.mjs', import.meta.url));
  const bundle = await build({ entryPoints: [entry], bundle: true, write: false, format: 'iife', platform: 'browser', logLevel: 'silent' });
  const html = `<!doctype html><meta charset="utf-8"><div id="searchbox"></div><div id="kinds"></div><div id="hits"></div>
<script>window.ALGOLIA_TEST = ${JSON.stringify({ host: new URL(stack.workerUrl).host, index: ASSETS })};</script><script src="/bundle.js"></script>`;
  const page = createServer((req, res) => {
    if (req.url === '/bundle.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle.outputFiles[0].text);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(html);
  });
  await new Promise((r) => page.listen(0, '127.0.0.1', r));
  const browser = await launchChromium(chromium);
  try {
    const tab = await browser.newPage();
    const errors = [];
    tab.on('pageerror', (e) => errors.push(String(e)));
    tab.setDefaultTimeout(20_000);
    await tab.goto(`http://127.0.0.1:${page.address().port}/`);
    const names = () => tab.locator('.ais-Hits-item .name').allTextContents();
    await tab.locator('.ais-Hits-item').first().waitFor();
    await tab.locator('.ais-SearchBox-input').fill('quokka');
    await tab.waitForFunction(() => document.querySelectorAll('.ais-Hits-item').length === 3);
    assert.deepEqual((await names()).sort(), ['Quokka & <Coin>', 'Quokka Cards', 'Quokka Points']);
    // InstantSearch asked for its own highlight tags and turned them into <mark>; the record text stayed text
    assert.equal(await tab.locator('.ais-Hits-item mark').first().textContent(), 'Quokka');
    assert.equal(await tab.locator('.ais-Hits-item b, .ais-Hits-item Coin').count(), 0);
    // the refinement list shows the facet counts of the query, and refining narrows the hits
    const lsp8 = tab.locator('.ais-RefinementList-item', { hasText: 'LSP8IdentifiableDigitalAsset' });
    assert.equal(await lsp8.locator('.ais-RefinementList-count').textContent(), '1');
    await lsp8.locator('input').check();
    await tab.waitForFunction(() => document.querySelectorAll('.ais-Hits-item').length === 1);
    assert.deepEqual(await names(), ['Quokka Cards']);
    // disjunctive faceting: the LSP7 value keeps its count while LSP8 is refined
    const lsp7 = tab.locator('.ais-RefinementList-item', { hasText: 'LSP7DigitalAsset' });
    assert.equal(await lsp7.locator('.ais-RefinementList-count').textContent(), '2');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    page.close();
  }
});

test('an asset reorganized away is deleted from Algolia; the new chain’s asset is pushed', async () => {
  const rpc = (method, params = []) => stack.chain.rpc(method, params);
  const run = async () => {
    const res = await stack.admin('POST', '/admin/indexer/run');
    const stats = await res.json();
    assert.equal(res.status, 200, JSON.stringify(stats));
    return stats;
  };
  const asset = async (name) => {
    const uri = await metadataUri({ LSP4Metadata: { name, description: 'reorg test', links: [], icon: [], images: [], assets: [] } });
    const token = await deploy(LSP7, [name, 'RORG', OWNER, 0n, false]);
    await send({ to: token, data: encodeFunctionData({ abi: LSP7.abi, functionName: 'setData', args: [sdk.encodeKeyName('LSP4Metadata'), uri] }) });
    return token;
  };
  const assets = () => pushed.indexes.get(ASSETS) ?? new Map();
  await rpc('anvil_mine', ['0x3']);
  await run();
  const fork = Number(await rpc('eth_blockNumber'));
  const snapshot = await rpc('evm_snapshot');
  const doomed = await asset('Doomed Wallaby');
  await rpc('anvil_mine', ['0x2']);
  await run();
  assert.equal(assets().get(doomed)?.name, 'Doomed Wallaby', 'pushed from the block about to be dropped');
  assert.equal(pushed.deleted.length, 0);

  // the reorganization: back to the snapshot, another asset at another address, the chain past the old head
  assert.equal(await rpc('evm_revert', [snapshot]), true);
  await send({ to: OWNER, value: '0x0' }); // the owner's nonce moves on: another address
  const replacement = await asset('Replacement Wallaby');
  assert.notEqual(replacement, doomed);
  await rpc('anvil_mine', ['0x4']);
  assert.equal(await rpc('eth_getCode', [doomed, 'latest']), '0x');
  // Algolia fails the first deletion: the run still completes, D1 and the checkpoint move on
  pushed.failDeletes = 1;
  const second = await run();
  assert.equal(second.fromBlock, fork + 1, `rewound: ${JSON.stringify(second)}`);
  assert.ok(second.toBlock >= second.headBlock, JSON.stringify(second));
  assert.equal(pushed.failedDeletes, 1, 'the deletion was tried in the rewinding run');
  assert.equal(assets().has(doomed), true, 'still in Algolia after the failed deletion');
  assert.equal((await (await fetch(`${stack.workerUrl}/v1/31337/address/${doomed}`)).json()).name, undefined);
  assert.equal(assets().get(replacement)?.name, 'Replacement Wallaby');

  // the next run sends the queued deletion again: D1 and Algolia both lost the dropped asset, both have the new one
  await run();
  assert.deepEqual(pushed.deleted, [{ index: ASSETS, objectID: doomed }], 'one deleteObject, in the assets index');
  assert.equal(assets().has(doomed), false);
  assert.equal(assets().get(replacement)?.name, 'Replacement Wallaby');
  // the queue is empty: the next run deletes nothing more
  await run();
  assert.equal(pushed.failedDeletes, 1);
  assert.equal(pushed.deleted.length, 1);
});

// Algolia's multi-query limits — up to 50 queries, each up to 1,000 hits — with the work charged to the client's
// lookup budget (a token per query, one more per 100 hits past the first 100 and per facet: Params::cost): a call
// is answered while its client has a token left, and the client then waits out what it cost. The bound before
// (1,000 hits per call) refused what Algolia answers; the charge keeps one token from buying 50 heavy queries.
test('a multi-query answers 50 queries of 1000 hits as single queries; the 51st is refused as by Algolia', async () => {
  const heavy = (query) => ({ indexName: ASSETS, query, hitsPerPage: 1000, facets: ['*'] });
  const words = ['', 'quokka', 'poison', 'points', 'zzzz'];
  const shape = (r) => ({
    hits: r.hits.map((h) => h.objectID),
    nbHits: r.nbHits,
    nbPages: r.nbPages,
    page: r.page,
    hitsPerPage: r.hitsPerPage,
    facets: r.facets,
    query: r.query,
  });
  const { results } = await client.search({ requests: words.map(heavy) });
  assert.equal(results.length, words.length);
  for (const [i, query] of words.entries()) {
    const single = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query, hitsPerPage: 1000, facets: ['*'] } });
    assert.deepEqual(shape(results[i]), shape(single), `query ${JSON.stringify(query)}`);
  }
  // the empty query: every asset, on one page
  assert.ok(results[0].nbHits >= 4 && results[0].hits.length === results[0].nbHits, JSON.stringify(shape(results[0])));
  const fifty = await client.search({ requests: Array.from({ length: 50 }, (_, i) => heavy(words[i % words.length])) });
  assert.equal(fifty.results.length, 50);
  assert.deepEqual(shape(fifty.results[49]), shape(results[4]));
  await assert.rejects(
    client.search({ requests: Array.from({ length: 51 }, () => heavy('quokka')) }),
    (e) => e.status === 400 && /Too many queries in multi query request/.test(e.message),
  );
  // as Algolia's paginationLimitedTo: past the first 1,000 hits a page is empty
  const deep = await client.searchSingleIndex({ indexName: ASSETS, searchParams: { query: '', hitsPerPage: 1000, page: 1 } });
  assert.deepEqual([deep.hits.length, deep.nbPages, deep.nbHits], [0, 1, results[0].nbHits]);
});

test('the work of a call is charged to its client: a flood of heavy calls ends in 429s, another client is served', async () => {
  await stack.restartWorker({ vars: { LOOKUP_RATE_LIMIT_PER_MINUTE: '20' } });
  const call = (ip, requests) =>
    fetch(`${stack.workerUrl}/1/indexes/*/queries`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cf-connecting-ip': ip },
      body: JSON.stringify({ requests }),
    });
  const light = (n) => Array.from({ length: n }, () => ({ indexName: ASSETS, params: 'query=quokka&hitsPerPage=5' }));
  // this client's bucket (20, a token back every 3 s), bounded by the time the calls take
  const bucket = tokenBucket({ limit: 20 });
  // two queries of 600 hits, refused before: answered, and charged 2 × 6
  const big = await call(
    '203.0.113.9',
    light(2).map((r) => ({ ...r, params: 'query=quokka&hitsPerPage=600' })),
  );
  assert.equal(big.status, 200, await big.clone().text());
  assert.equal((await big.json()).results.length, 2);
  bucket.take(12);
  // 16 light queries with 8 tokens left: answered, the bucket 8 tokens in debt
  const second = await call('203.0.113.9', light(16));
  assert.equal(second.status, 200, await second.clone().text());
  assert.equal((await second.json()).results.length, 16);
  bucket.take(16);
  // the next call waits out the debt (27 s of refill): refused unless the machine took that long
  const third = await call('203.0.113.9', light(1));
  await third.body?.cancel();
  if (bucket.check(third.status, { what: 'the call after the debt' }) === false) {
    assert.ok(Number(third.headers.get('retry-after')) >= Math.floor((1 - bucket.most()) * 3));
  }
  // what InstantSearch sends when a user types "[" first is a query, not JSON (a client of the restarted Worker,
  // no address)
  const restarted = algoliasearch('TESTAPPID', 'any-search-key', { hosts: [{ url: new URL(stack.workerUrl).host, protocol: 'http', accept: 'readWrite' }] });
  const bracket = await restarted.searchSingleIndex({ indexName: ASSETS, searchParams: { query: '[quokka' } });
  assert.equal(bracket.query, '[quokka');

  // a bounded flood of the heaviest calls (50 queries × 1,000 hits × 10 facets: 1,000 tokens each) from one
  // address: the first is answered and leaves the deepest debt (ten minutes of tokens: −200), the rest are 429s
  const flood = tokenBucket({ limit: 20 });
  const heaviest = Array.from({ length: 50 }, () => ({ indexName: ASSETS, query: 'quokka', hitsPerPage: 1000, facets: ['*'] }));
  const other = tokenBucket({ limit: 20 });
  for (let i = 0; i < 6; i++) {
    const res = await call('198.51.100.20', heaviest);
    const body = await res.json();
    if (i === 0) {
      assert.equal(res.status, 200, JSON.stringify(body).slice(0, 300));
      assert.equal(body.results.length, 50);
      flood.take(220);
    } else {
      flood.check(res.status, { what: `heavy call ${i}`, spent: 220 });
      if (res.status === 429) {
        assert.equal(body.error.code, 'RATE_LIMITED');
        assert.ok(Number(res.headers.get('retry-after')) >= Math.floor((1 - flood.most()) * 3), res.headers.get('retry-after'));
      }
    }
    // meanwhile another address is served as usual
    const served = await call('198.51.100.21', light(1));
    await served.body?.cancel();
    other.check(served.status, { what: `the other client's call ${i}` });
  }
});
