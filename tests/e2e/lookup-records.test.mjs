// Lookup records as the clients of LUKSO's api.universalprofile.cloud read them: a profile deployed through the
// relayer and real LSP7 / LSP8 contracts (LUKSO's npm artifacts) with metadata, LSP4TokenType and LSP4Creators[] on
// anvil; every field the wallet's IndexedProfile / IndexedAsset types name is checked, read the way the wallet reads
// it (GET {base}/v1/{chainId}/address/{address}, `LSPStandard || type`, `[, profiles] = stats`). Also: addresses
// holding no profile or asset (EOA, other contracts) answer 200 and are remembered without another RPC read;
// malformed metadata keeps its good parts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { encodeDeployData, encodeFunctionData, getAddress, keccak256, toHex } from 'viem';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { CONTROLLER, OWNER, indexing } from './helpers/indexing.mjs';

const require = createRequire(import.meta.url);
const LSP7 = require('@lukso/lsp7-contracts/artifacts/LSP7Mintable.json');
const LSP8 = require('@lukso/lsp8-contracts/artifacts/LSP8Mintable.json');
const BASE = 'https://lookup.example';
const LSP4_METADATA = sdk.encodeKeyName('LSP4Metadata');
const CREATORS = keccak256(toHex('LSP4Creators[]'));
const creatorKey = (i) => `${CREATORS.slice(0, 34)}${i.toString(16).padStart(32, '0')}`;

let stack;
before(async () => {
  stack = await startStack({ vars: { LOOKUP_CACHE_SECONDS: '0', METADATA_ALLOW_HTTP: 'true', PUBLIC_BASE_URL: `${BASE}/` } });
});
after(async () => {
  await stack?.stop();
});

// the wallet's fetcher: throws on anything but 2xx, answers the parsed body
async function fetchIndexedData(address, chainId = 31337) {
  const res = await fetch(`${stack.workerUrl}/v1/${chainId}/address/${address}`, { headers: { accept: 'application/json' } });
  const body = await res.json();
  assert.ok(res.ok, `${address}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

const { get, upload, metadataUri, send, deploy, deployProfile } = indexing(() => stack);

const isoDate = (s) => typeof s === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(s) && !Number.isNaN(Date.parse(s));

let imageCid;
let fullProfile;

test('profiles: LSPStandard, the hasProfile* flags, absolute image URLs, block and date, kept-good metadata', async () => {
  imageCid = await upload(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]));
  const doc = {
    LSP3Profile: {
      name: 'Wombat Records',
      description: 'all the fields',
      tags: ['one', 7, 'two'],
      links: [{ title: 'site', url: 'https://wombat.example' }, { title: 'broken' }],
      profileImage: [{ width: 'wide' }, { width: 64, height: 64, url: `ipfs://${imageCid}`, verification: { method: 'keccak256(bytes)', data: '0x00' } }],
      backgroundImage: [],
    },
  };
  fullProfile = (await deployProfile(await metadataUri(doc))).universalProfileAddress;
  const bare = (await deployProfile(await metadataUri({ LSP3Profile: { name: '' } }))).universalProfileAddress;

  // the wallet (2024): `standard = LSPStandard || type`, a profile when it is 'LSP3Profile'
  const p = await fetchIndexedData(fullProfile);
  assert.equal(p.LSPStandard || p.type, 'LSP3Profile');
  assert.equal(p.type, 'LSP3Profile');
  assert.equal(p.kind, 'LSP0ERC725Account');
  assert.equal(p.address, fullProfile);
  assert.equal(p.chainId, 31337);
  assert.equal(p.LSP3Profile.name, 'Wombat Records');
  assert.equal(p.profileImageUrl, `${BASE}/image/${imageCid}`);
  assert.equal(p.backgroundImageUrl, '');
  assert.deepEqual(
    [p.hasProfileName, p.hasProfileDescription, p.hasProfileLinks, p.hasProfileTags, p.hasProfileImage, p.hasBackgroundImage],
    [true, true, true, true, true, false],
  );
  assert.equal(typeof p.updatedAtBlock, 'number');
  assert.ok(p.updatedAtBlock > 0 && p.updatedAtBlock <= Number(await stack.chain.rpc('eth_blockNumber', [])));
  assert.ok(isoDate(p.lastUpdatedAt), p.lastUpdatedAt);
  // one bad link, tag or image never drops the profile: the good ones stay, the bad ones are named, the raw JSON kept
  assert.deepEqual(p.links, [{ title: 'site', url: 'https://wombat.example' }]);
  assert.deepEqual(p.tags, ['one', 'two']);
  assert.equal(p.LSP3Profile.profileImage.length, 1);
  assert.deepEqual(p.metadataDropped, ['links[1]', 'tags[1]', 'profileImage[0]']);
  assert.deepEqual(JSON.parse(p.metadataRaw), doc);
  assert.equal(p.metadataStatus, 'verified');

  const b = await fetchIndexedData(bare);
  assert.deepEqual(
    [b.hasProfileName, b.hasProfileDescription, b.hasProfileLinks, b.hasProfileTags, b.hasProfileImage, b.hasBackgroundImage],
    [false, false, false, false, false, false],
  );
  assert.equal(b.profileImageUrl, '');
  assert.equal(b.metadataDropped, undefined, 'a clean document drops nothing');
  assert.equal(b.metadataRaw, undefined, 'a clean document keeps no raw copy');
});

let lsp7;
let lsp8;
let plain;

test('assets: LSP4TokenType, LSP4Creators, type, the hasToken* / image flags on real LSP7 and LSP8 contracts', async () => {
  const icon = 'https://cdn.example/icon.png';
  const assetDoc = {
    LSP4Metadata: {
      name: 'Platypus Pass',
      description: 'an NFT-typed LSP7',
      links: [],
      icon: [{ width: 32, height: 32, url: icon }],
      images: [[{ width: 10, height: 10, url: `ipfs://${imageCid}` }, 'junk'], 'not a list'],
      assets: [],
      attributes: [
        { key: 'tier', value: 'gold', type: 'string' },
        { key: 'bad', value: { nested: true } },
      ],
    },
  };
  lsp7 = await deploy(LSP7, ['Platypus Pass', 'PLAT', OWNER, 1n, true]);
  const creators = [OWNER, CONTROLLER];
  await send({
    to: lsp7,
    data: encodeFunctionData({
      abi: LSP7.abi,
      functionName: 'setDataBatch',
      args: [
        [LSP4_METADATA, CREATORS, creatorKey(0), creatorKey(1)],
        [await metadataUri(assetDoc), `0x${'2'.padStart(32, '0')}`, creators[0], creators[1]],
      ],
    }),
  });
  lsp8 = await deploy(LSP8, ['Echidna Set', 'ECH', OWNER, 2n, 0n]);
  const tokenId = `0x${'5'.padStart(64, '0')}`;
  await send({ to: lsp8, data: encodeFunctionData({ abi: LSP8.abi, functionName: 'mint', args: [OWNER, tokenId, true, '0x'] }) });
  await send({
    to: lsp8,
    data: encodeFunctionData({
      abi: LSP8.abi,
      functionName: 'setDataForTokenId',
      args: [
        tokenId,
        LSP4_METADATA,
        await metadataUri({
          LSP4Metadata: { name: 'Echidna #5', images: [[{ width: 1, height: 1, url: `ipfs://${imageCid}` }]], attributes: [7, { key: 'k', value: 1 }] },
        }),
      ],
    }),
  });
  // no symbol, no metadata
  const receipt = await send({ data: encodeDeployData({ abi: LSP7.abi, bytecode: LSP7.bytecode, args: ['Plain', '', OWNER, 0n, false] }) });
  plain = getAddress(receipt.contractAddress);

  const a = await fetchIndexedData(lsp7);
  assert.equal(a.LSPStandard, 'LSP7DigitalAsset');
  assert.equal(a.type, 'LSP7DigitalAsset');
  assert.equal(a.LSP4TokenName, 'Platypus Pass');
  assert.equal(a.LSP4TokenSymbol, 'PLAT');
  assert.equal(a.LSP4TokenType, 'NFT', 'the wallet compares tokenType to NFT / TOKEN / COLLECTION');
  assert.deepEqual(a.LSP4Creators.filter(Boolean), creators);
  assert.deepEqual([a.hasTokenName, a.hasTokenSymbol, a.hasTokenType, a.hasAssetImage, a.hasIconImage], [true, true, true, true, true]);
  assert.equal(a.iconUrl, icon);
  assert.equal(a.imageUrl, `${BASE}/image/${imageCid}`);
  assert.ok(isoDate(a.lastUpdatedAt));
  assert.ok(a.updatedAtBlock >= Number(receipt.blockNumber) - 3);
  // malformed metadata keeps its good parts
  assert.equal(a.LSP4Metadata.name, 'Platypus Pass');
  assert.deepEqual(a.LSP4Metadata.attributes, [{ key: 'tier', value: 'gold', type: 'string' }]);
  assert.equal(a.LSP4Metadata.images.length, 1);
  assert.deepEqual(a.metadataDropped, ['images[0][1]', 'images[1]', 'attributes[1]']);
  assert.deepEqual(JSON.parse(a.metadataRaw), assetDoc);

  const c = await fetchIndexedData(lsp8);
  assert.equal(c.LSPStandard, 'LSP8IdentifiableDigitalAsset');
  assert.equal(c.type, 'LSP8DigitalAsset', "the incumbent's legacy type of collections");
  assert.equal(c.LSP4TokenType, 'COLLECTION');
  assert.deepEqual(c.LSP4Creators, []);
  assert.deepEqual([c.hasTokenType, c.hasAssetImage, c.hasIconImage], [true, false, false]);
  assert.equal(c.imageUrl, '');
  assert.equal(c.tokenIdFormat, 'NUMBER');
  const t = await get(`/v1/31337/address/${lsp8}/5`);
  assert.equal(t.name, 'Echidna #5');
  assert.equal(t.imageUrl, `${BASE}/image/${imageCid}`);
  assert.equal(t.hasAssetImage, true);
  assert.deepEqual(t.LSP4Metadata.attributes, [{ key: 'k', value: 1 }]);
  assert.deepEqual(t.metadataDropped, ['attributes[0]']);
  assert.ok(isoDate(t.lastUpdatedAt));

  const pl = await fetchIndexedData(plain);
  assert.equal(pl.LSP4TokenType, 'TOKEN');
  assert.deepEqual([pl.hasTokenName, pl.hasTokenSymbol, pl.hasAssetImage, pl.hasIconImage], [true, false, false, false]);
  assert.equal(pl.LSP4TokenSymbol, null);
  assert.equal(pl.metadataStatus, 'none');
});

test('addresses holding no profile or asset answer 200 (EOA / UnknownContract), remembered without RPC', async () => {
  const eoa = getAddress(`0x${'ab'.repeat(19)}01`);
  const first = await fetchIndexedData(eoa);
  assert.deepEqual(
    { LSPStandard: first.LSPStandard, type: first.type, address: first.address, indexed: first.indexed, chainId: first.chainId },
    { LSPStandard: 'EOA', type: 'EOA', address: eoa, indexed: false, chainId: 31337 },
  );
  // code appears at the address: the remembered answer still says EOA, so no RPC read happened
  await stack.chain.rpc('anvil_setCode', [eoa, '0x00']);
  assert.equal((await fetchIndexedData(eoa)).LSPStandard, 'EOA');
  // a contract that is neither a profile nor an asset (the profile's KeyManager)
  const { keyManagerAddress } = await deployProfile();
  const km = await fetchIndexedData(keyManagerAddress);
  assert.equal(km.LSPStandard, 'UnknownContract');
  assert.equal(km.type, 'UnknownContract');
  // the wallet's asset path: 'EOA' means "not indexed yet", it renders nothing and does not throw
  const walletAsset = (r) => (r.LSPStandard === 'EOA' ? [] : [r]);
  assert.deepEqual(walletAsset(first), []);
  // records still win: a real profile is never answered as EOA
  assert.equal((await fetchIndexedData(fullProfile)).LSPStandard, 'LSP3Profile');
});

test('stats answer [assets, profiles] as the wallet destructures them; the indexer figures moved', async () => {
  const stats = await get('/v1/31337/stats');
  assert.ok(Array.isArray(stats) && stats.length === 2, JSON.stringify(stats));
  const [assets, profiles] = stats;
  assert.deepEqual(Object.keys(assets).sort(), ['entries', 'name']);
  assert.equal(assets.name, 'dev_local_assets');
  assert.equal(profiles.name, 'dev_local_universal_profiles');
  assert.ok(profiles.entries >= 2, JSON.stringify(stats));
  assert.ok(assets.entries >= 4, JSON.stringify(stats)); // LSP7 ×2, LSP8, its token
  const indexer = await get('/v1/31337/indexer');
  assert.equal(indexer.chainId, 31337);
  assert.deepEqual(indexer.indexes, stats);
  for (const k of ['unindexable', 'lastIndexedBlock', 'headBlock', 'lag']) assert.ok(k in indexer, k);
  assert.equal(typeof indexer.headBlock, 'number');
});

test('search hits carry the same fields (Algolia-shaped route)', async () => {
  const res = await fetch(`${stack.workerUrl}/1/indexes/dev_local_assets/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'platypus' }),
  });
  const body = await res.json();
  assert.equal(res.status, 200);
  const hit = body.hits.find((h) => h.address === lsp7);
  assert.ok(hit, JSON.stringify(body));
  assert.equal(hit.LSP4TokenType, 'NFT');
  assert.equal(hit.hasAssetImage, true);
  assert.equal(hit.imageUrl, `${BASE}/image/${imageCid}`);
  // the attributes clients filter by
  const filtered = await fetch(`${stack.workerUrl}/1/indexes/dev_local_assets/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '', filters: 'LSP4TokenType:NFT AND type:LSP7DigitalAsset', hitsPerPage: 50 }),
  });
  const narrowed = await filtered.json();
  assert.equal(filtered.status, 200, JSON.stringify(narrowed));
  assert.deepEqual(
    narrowed.hits.map((h) => h.address),
    [lsp7],
  );
  const profiles = await (
    await fetch(`${stack.workerUrl}/1/indexes/dev_local_universal_profiles/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '', facetFilters: ['hasProfileImage:true'], hitsPerPage: 50 }),
    })
  ).json();
  assert.deepEqual(
    profiles.hits.map((h) => h.address),
    [fullProfile],
  );
});
