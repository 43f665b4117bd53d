// The graph (issue 42) end to end: real LUKSO contracts on the dev chain — LSP7 and LSP8 from LUKSO's sources (their
// Mintable presets with the Burnable extensions), profiles deployed by the relayer (with LUKSO's URD, which writes
// LSP5 on receipt), the LSP26 registry at its official address — moved by mints, sends, sends back, burns, follows
// and unfollows from EOAs and from profiles (through their KeyManager), LSP12 written through the KeyManager,
// creators with their map entries, a token's metadata changed after its mint, a reorganization across a transfer.
// Every table is compared with what the chain answers, read here with viem and erc725.js — never with our routes.
// The hostile contracts (tests/fixtures/attackers: HostileLSP7, FakeRegistry, HugeListProfile) cost bounded work and are recorded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, encodeFunctionData, getAddress, http, parseAbi, toHex } from 'viem';
import { ERC725 } from '@erc725/erc725.js';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { waitForReceipt } from '../../scripts/chain.mjs';
import { d1 } from './helpers/d1.mjs';
import { compileAttacker, compileLukso } from './helpers/solc.mjs';
import { CONTROLLER, OWNER, indexing } from './helpers/indexing.mjs';

const require = createRequire(import.meta.url);
const LSP5Schema = require('@erc725/erc725.js/schemas/LSP5ReceivedAssets.json');
const LSP12Schema = require('@erc725/erc725.js/schemas/LSP12IssuedAssets.json');
const LSP4Schema = require('@erc725/erc725.js/schemas/LSP4DigitalAsset.json');

const REGISTRY = '0xf01103E5a9909Fc0DBe8166dA7085e0285daDDcA';
const CHAIN = 31337;
const registryAbi = parseAbi([
  'function follow(address addr)',
  'function unfollow(address addr)',
  'function isFollowing(address follower, address addr) view returns (bool)',
  'function followerCount(address addr) view returns (uint256)',
]);
const upAbi = parseAbi([
  'function execute(uint256 operationType, address target, uint256 value, bytes data) payable returns (bytes)',
  'function setDataBatch(bytes32[] keys, bytes[] values)',
  'function owner() view returns (address)',
]);
const kmAbi = parseAbi(['function execute(bytes payload) payable returns (bytes)']);
const assetAbi = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function totalSupply() view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function owner() view returns (address)',
  'function tokenOwnerOf(bytes32) view returns (address)',
  'function tokenIdsOf(address) view returns (bytes32[])',
]);

const stateDir = mkdtempSync(join(tmpdir(), 'graph-state-'));
let stack;
let LSP7;
let LSP8;
before(async () => {
  LSP7 = compileLukso('MintableBurnableLSP7');
  LSP8 = compileLukso('MintableBurnableLSP8');
  stack = await startStack({ stateDir, vars: { LOOKUP_CACHE_SECONDS: '0', INDEXER_RETRY_SECONDS: '0', RPC_MAX_RESPONSE_BYTES: '1048576' } });
});
after(async () => {
  await stack?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

const { metadataUri, send, deploy, deployProfile, runIndexerUntilCaughtUp } = indexing(() => stack);
const chain = () => createPublicClient({ transport: http(stack.chain.rpcUrl) });
const read = (address, functionName, args = []) => chain().readContract({ address, abi: assetAbi, functionName, args });
const rows = (sql) => d1(stateDir, sql);
const low = (a) => a.toLowerCase();
const rpc = (method, params = []) => stack.chain.rpc(method, params);

/** A transaction from an unlocked anvil account, asserted successful. */
async function sendFrom(from, tx) {
  const hash = await rpc('eth_sendTransaction', [{ from, gas: '0x1c9c380', ...tx }]);
  const receipt = await waitForReceipt(rpc, hash);
  assert.equal(receipt.status, '0x1', JSON.stringify(tx).slice(0, 200));
  return receipt;
}

/** A profile the relayer deployed for CONTROLLER (with LUKSO's URD): `{ up, km }`. */
async function profile() {
  const up = getAddress((await deployProfile()).universalProfileAddress);
  const km = await chain().readContract({ address: up, abi: upAbi, functionName: 'owner' });
  return { up, km };
}

/** CONTROLLER calls its profile `p` with `payload`, through the profile's KeyManager. */
const asController = (p, payload) => sendFrom(CONTROLLER, { to: p.km, data: encodeFunctionData({ abi: kmAbi, functionName: 'execute', args: [payload] }) });
/** The profile calls `target` with `data` (its `execute`, sent by CONTROLLER through the KeyManager). */
const asProfile = (p, target, data) => asController(p, encodeFunctionData({ abi: upAbi, functionName: 'execute', args: [0n, target, 0n, data] }));

const call = (artifact, to, functionName, args) => send({ to, data: encodeFunctionData({ abi: artifact.abi, functionName, args }) });
const follow = (from, functionName, addr) => sendFrom(from, { to: REGISTRY, data: encodeFunctionData({ abi: registryAbi, functionName, args: [addr] }) });

/** The holds of `asset`: `{ holder: balance }` (LSP7) or `{ tokenId: { holder: balance } }` (LSP8). */
async function holdsOf(asset) {
  return rows(`SELECT holder, token_id, balance FROM graph_holds WHERE chain_id = ${CHAIN} AND asset = '${low(asset)}' ORDER BY holder, token_id`);
}

let a; // profiles
let b;
let coin;
let cards;

test('LSP7 mint, send, send back, burn: every hold is the balance the chain answers', async () => {
  a = await profile();
  b = await profile();
  coin = await deploy(LSP7, ['Wombat Coin', 'WMB', OWNER, 0n, false]);
  await call(LSP7, coin, 'mint', [OWNER, 1000n, true, '0x']);
  await call(LSP7, coin, 'mint', [a.up, 300n, false, '0x']); // a profile: its URD writes LSP5
  await call(LSP7, coin, 'transfer', [OWNER, b.up, 120n, false, '0x']);
  await asProfile(a, coin, encodeFunctionData({ abi: LSP7.abi, functionName: 'transfer', args: [a.up, OWNER, 50n, true, '0x'] })); // back
  await call(LSP7, coin, 'burn', [OWNER, 30n, '0x']);
  await asProfile(b, coin, encodeFunctionData({ abi: LSP7.abi, functionName: 'transfer', args: [b.up, OWNER, 120n, true, '0x'] })); // b: all of it
  await runIndexerUntilCaughtUp();

  const held = await holdsOf(coin);
  assert.deepEqual(held.map((r) => r.holder).sort(), [OWNER, a.up, b.up].map(low).sort());
  for (const r of held) {
    assert.equal(r.token_id, '');
    assert.equal(r.balance, String(await read(coin, 'balanceOf', [r.holder])), r.holder);
  }
  // a position that went to zero stays, with balance '0'
  assert.equal(held.find((r) => r.holder === low(b.up)).balance, '0');
  const [asset] = await rows(`SELECT * FROM graph_assets WHERE chain_id = ${CHAIN} AND id = '${low(coin)}'`);
  assert.equal(asset.standard, 'LSP7DigitalAsset');
  assert.equal(asset.total_supply, String(await read(coin, 'totalSupply')));
  assert.equal(asset.total_supply, '1270');
  assert.equal(asset.decimals, await read(coin, 'decimals'));
  assert.equal(asset.owner, low(await read(coin, 'owner')));
  assert.equal(asset.lsp4_token_name, 'Wombat Coin');
  assert.equal(asset.lsp4_token_type, 0);

  // a's received assets are what LUKSO's URD wrote, read with erc725.js
  const erc725 = new ERC725(LSP5Schema, a.up, stack.chain.rpcUrl);
  const [list] = await erc725.getData(['LSP5ReceivedAssets[]']);
  const [map] = await erc725.getData([{ keyName: 'LSP5ReceivedAssetsMap:<address>', dynamicKeyParts: coin }]);
  const received = await rows(`SELECT asset, interface_id, position FROM graph_received WHERE chain_id = ${CHAIN} AND profile = '${low(a.up)}'`);
  assert.deepEqual(
    received.map((r) => r.asset),
    list.value.map(low),
  );
  assert.equal(received[0].interface_id, map.value[0]);
  assert.equal(received[0].position, Number(map.value[1]));
});

test('LSP8 mint, send, burn; a token whose metadata changes after its mint is read again', async () => {
  cards = await deploy(LSP8, ['Numbat Cards', 'NMB', OWNER, 2n, 0n]);
  const id = (n) => toHex(n, { size: 32 });
  for (const [n, to] of [
    [1, OWNER],
    [2, OWNER],
    [3, a.up],
  ])
    await call(LSP8, cards, 'mint', [to, id(n), true, '0x']);
  await runIndexerUntilCaughtUp();
  await call(LSP8, cards, 'transfer', [OWNER, b.up, id(1), false, '0x']);
  await call(LSP8, cards, 'burn', [id(2), '0x']);
  await runIndexerUntilCaughtUp();
  // the metadata of token 3, set after its mint (TokenIdDataChanged, no transfer)
  const uri = await metadataUri({ LSP4Metadata: { name: 'Numbat #3', description: 'set after the mint', links: [], images: [], assets: [] } });
  await call(LSP8, cards, 'setDataForTokenId', [id(3), sdk.encodeKeyName('LSP4Metadata'), uri]);
  await runIndexerUntilCaughtUp();

  const held = await holdsOf(cards);
  for (const r of held) {
    let owner = null;
    try {
      owner = low(await read(cards, 'tokenOwnerOf', [r.token_id]));
    } catch {}
    assert.equal(r.balance, owner === r.holder ? '1' : '0', `${r.token_id} ${r.holder}`);
  }
  // every holder's tokens are its tokenIdsOf
  for (const holder of [OWNER, a.up, b.up]) {
    const mine = held.filter((r) => r.holder === low(holder) && r.balance === '1').map((r) => r.token_id);
    assert.deepEqual(mine.sort(), [...(await read(cards, 'tokenIdsOf', [holder]))].sort(), holder);
  }
  // the burned token is gone, its last owner's position 0
  const tokens = await rows(`SELECT token_id, formatted_token_id FROM graph_tokens WHERE chain_id = ${CHAIN} AND asset = '${low(cards)}' ORDER BY token_id`);
  assert.deepEqual(
    tokens.map((t) => [t.token_id, t.formatted_token_id]),
    [
      [id(1), '1'],
      [id(3), '3'],
    ],
  );
  await assert.rejects(read(cards, 'tokenOwnerOf', [id(2)]));
  assert.equal(held.find((r) => r.token_id === id(2)).balance, '0');
  const [asset] = await rows(`SELECT * FROM graph_assets WHERE chain_id = ${CHAIN} AND id = '${low(cards)}'`);
  assert.equal(asset.standard, 'LSP8IdentifiableDigitalAsset');
  assert.equal(asset.total_supply, String(await read(cards, 'totalSupply')));
  assert.equal(asset.lsp4_token_type, 2);
  assert.equal(asset.lsp8_token_id_format, 0);
  // the token's record has the metadata set after the mint
  const [record] = await rows(`SELECT record FROM records WHERE object_id = '${cards}:${id(3)}'`);
  assert.equal(JSON.parse(record.record).name, 'Numbat #3');
});

test('LSP12 through the KeyManager and creators with their map entries, as erc725.js reads them', async () => {
  const issued = new ERC725(LSP12Schema, a.up, stack.chain.rpcUrl);
  const { keys, values } = issued.encodeData([
    { keyName: 'LSP12IssuedAssets[]', value: [coin, cards] },
    { keyName: 'LSP12IssuedAssetsMap:<address>', dynamicKeyParts: coin, value: ['0xc52d6008', 0] },
    { keyName: 'LSP12IssuedAssetsMap:<address>', dynamicKeyParts: cards, value: ['0x3a271706', 1] },
  ]);
  await asController(a, encodeFunctionData({ abi: upAbi, functionName: 'setDataBatch', args: [keys, values] }));
  const creators = new ERC725(LSP4Schema, coin, stack.chain.rpcUrl);
  const written = creators.encodeData([
    { keyName: 'LSP4Creators[]', value: [a.up, CONTROLLER] },
    { keyName: 'LSP4CreatorsMap:<address>', dynamicKeyParts: a.up, value: ['0x24871b3d', 0] }, // CONTROLLER: no map entry
  ]);
  await call(LSP7, coin, 'setDataBatch', [written.keys, written.values]);
  await runIndexerUntilCaughtUp();

  const [list] = await issued.getData(['LSP12IssuedAssets[]']);
  const got = await rows(`SELECT asset, interface_id, position FROM graph_issued WHERE chain_id = ${CHAIN} AND profile = '${low(a.up)}' ORDER BY position`);
  assert.deepEqual(
    got.map((r) => r.asset),
    list.value.map(low),
  );
  for (const r of got) {
    const [map] = await issued.getData([{ keyName: 'LSP12IssuedAssetsMap:<address>', dynamicKeyParts: r.asset }]);
    assert.deepEqual([r.interface_id, r.position], [map.value[0], Number(map.value[1])]);
  }
  const [creatorList] = await creators.getData(['LSP4Creators[]']);
  const stored = await rows(
    `SELECT creator, interface_id, position FROM graph_creators WHERE chain_id = ${CHAIN} AND asset = '${low(coin)}' ORDER BY position`,
  );
  assert.deepEqual(
    stored.map((r) => r.creator),
    creatorList.value.map(low),
  );
  const [aMap] = await creators.getData([{ keyName: 'LSP4CreatorsMap:<address>', dynamicKeyParts: a.up }]);
  assert.equal(stored[0].interface_id, aMap.value[0]);
  assert.equal(stored[1].interface_id, null, 'no map entry, no interface id');
});

test('LSP26 follows and unfollows from EOAs and profiles; a registry impostor is ignored', async () => {
  await follow(OWNER, 'follow', a.up);
  await follow(OWNER, 'follow', b.up);
  await follow(CONTROLLER, 'follow', a.up);
  await asProfile(a, REGISTRY, encodeFunctionData({ abi: registryAbi, functionName: 'follow', args: [b.up] }));
  await follow(OWNER, 'unfollow', b.up);
  const impostor = compileAttacker('FakeRegistry');
  const fake = await deploy(impostor, []);
  await send({ to: fake, data: encodeFunctionData({ abi: impostor.abi, functionName: 'fake', args: [CONTROLLER, b.up] }) });
  await runIndexerUntilCaughtUp();

  const stored = await rows(`SELECT follower, followee FROM graph_follows WHERE chain_id = ${CHAIN} ORDER BY follower, followee`);
  const candidates = [OWNER, CONTROLLER, a.up, b.up].flatMap((x) => [a.up, b.up].map((y) => [x, y]));
  const following = [];
  for (const [x, y] of candidates)
    if (await chain().readContract({ address: REGISTRY, abi: registryAbi, functionName: 'isFollowing', args: [x, y] })) following.push([low(x), low(y)]);
  assert.deepEqual(
    stored.map((r) => [r.follower, r.followee]),
    following.sort(),
  );
  assert.ok(!stored.some((r) => r.follower === low(CONTROLLER) && r.followee === low(b.up)), 'the impostor’s follow is not one');
  for (const p of [a.up, b.up]) {
    const [{ n }] = await rows(`SELECT count(*) AS n FROM graph_follows WHERE chain_id = ${CHAIN} AND followee = '${low(p)}'`);
    assert.equal(BigInt(n), await chain().readContract({ address: REGISTRY, abi: registryAbi, functionName: 'followerCount', args: [p] }));
  }
  const [unfollowed] = await rows(`SELECT follower FROM graph_unfollows WHERE chain_id = ${CHAIN} AND followee = '${low(b.up)}'`);
  assert.equal(unfollowed.follower, low(OWNER));
});

test('a reorganization across a transfer and a follow: the rows are the new chain’s', async () => {
  await rpc('anvil_mine', ['0x3']);
  await runIndexerUntilCaughtUp();
  const snapshot = await rpc('evm_snapshot');
  await call(LSP7, coin, 'transfer', [OWNER, b.up, 200n, false, '0x']);
  await follow(CONTROLLER, 'follow', b.up);
  await rpc('anvil_mine', ['0x2']);
  await runIndexerUntilCaughtUp();
  assert.equal((await holdsOf(coin)).find((r) => r.holder === low(b.up)).balance, '200');
  assert.equal((await rows(`SELECT * FROM graph_follows WHERE follower = '${low(CONTROLLER)}' AND followee = '${low(b.up)}'`)).length, 1);

  assert.equal(await rpc('evm_revert', [snapshot]), true);
  await call(LSP7, coin, 'transfer', [OWNER, a.up, 5n, true, '0x']); // the new chain: another transfer
  await rpc('anvil_mine', ['0x5']);
  await runIndexerUntilCaughtUp();
  for (const r of await holdsOf(coin)) assert.equal(r.balance, String(await read(coin, 'balanceOf', [r.holder])), r.holder);
  assert.equal((await holdsOf(coin)).find((r) => r.holder === low(b.up)).balance, '0');
  assert.equal((await rows(`SELECT * FROM graph_follows WHERE follower = '${low(CONTROLLER)}' AND followee = '${low(b.up)}'`)).length, 0);
  assert.deepEqual(await rows(`SELECT * FROM graph_rechecks WHERE chain_id = ${CHAIN}`), []);
});

test('hostile contracts: a transfer flood, balanceOf that reverts, answers megabytes or garbage, a lying supply, a huge LSP5', async () => {
  const hostile = compileAttacker('HostileLSP7');
  const token = await deploy(hostile, [2n * 1024n * 1024n]);
  const setMode = (m) => send({ to: token, data: encodeFunctionData({ abi: hostile.abi, functionName: 'setMode', args: [m] }) });
  const flood = (n, first) => send({ to: token, data: encodeFunctionData({ abi: hostile.abi, functionName: 'flood', args: [n, first] }) });
  const errorOf = async (what) => (await rows(`SELECT code, message FROM unindexable WHERE chain_id = ${CHAIN} AND object_id = '${token}:${what}'`))[0];

  // 1,200 transfers in one transaction: the first 500 holders are read, the rest reported; the run completes
  await flood(1200n, 0x10000n);
  const honest = await profile();
  await call(LSP7, coin, 'transfer', [OWNER, honest.up, 1n, false, '0x']); // an honest transfer right after
  const stats = await runIndexerUntilCaughtUp();
  assert.ok(stats.subrequests < 100, JSON.stringify(stats));
  const [{ n }] = await rows(`SELECT count(*) AS n FROM graph_holds WHERE asset = '${low(token)}' AND balance = '7'`);
  assert.equal(n, 500);
  assert.equal((await errorOf('candidates')).code, 'CANDIDATES_CAPPED');
  assert.match((await errorOf('candidates')).message, /700 more/);
  assert.equal((await holdsOf(coin)).find((r) => r.holder === low(honest.up)).balance, '1');
  // the lie is stored as the contract's claim, exact; no balance comes from it
  const [asset] = await rows(`SELECT total_supply FROM graph_assets WHERE id = '${low(token)}'`);
  assert.equal(asset.total_supply, (1n << 255n).toString());

  // balanceOf reverts, answers megabytes, answers garbage: each recorded, the rows as they were
  for (const [mode, code] of [
    [1, 'BALANCE_REVERTED'],
    [2, 'ANSWER_TOO_LARGE'],
    [3, 'MALFORMED_ANSWER'],
  ]) {
    await setMode(mode);
    await flood(3n, 0x10000n);
    await runIndexerUntilCaughtUp();
    assert.equal((await errorOf('balanceOf'))?.code, code, `mode ${mode}`);
    const [{ n: kept }] = await rows(`SELECT count(*) AS n FROM graph_holds WHERE asset = '${low(token)}' AND balance = '7'`);
    assert.equal(kept, 500);
  }
  // answering again clears the note
  await setMode(0);
  await flood(1n, 0x10000n);
  await runIndexerUntilCaughtUp();
  assert.equal(await errorOf('balanceOf'), undefined);

  // a profile whose LSP5ReceivedAssets[] announces 100,000 entries: the first 512 are kept, the rest reported
  const huge = compileAttacker('HugeListProfile');
  const fat = await deploy(huge, [100_000n]);
  await send({ to: fat, data: encodeFunctionData({ abi: huge.abi, functionName: 'poke' }) });
  await runIndexerUntilCaughtUp();
  const [{ n: received }] = await rows(`SELECT count(*) AS n FROM graph_received WHERE profile = '${low(fat)}'`);
  assert.equal(received, 512);
  const [truncated] = await rows(`SELECT code, message FROM unindexable WHERE object_id = '${fat}:LSP5ReceivedAssets[]'`);
  assert.equal(truncated.code, 'LIST_TRUNCATED');
  assert.match(truncated.message, /100000 entries/);
});

test('ids: nothing stored holds the text -0x', async () => {
  for (const [table, columns] of [
    ['graph_holds', 'asset || holder || token_id'],
    ['graph_follows', 'follower || followee'],
    ['graph_tokens', 'asset || token_id'],
    ['unindexable', 'object_id'],
  ]) {
    const [{ n }] = await rows(`SELECT count(*) AS n FROM ${table} WHERE ${columns} LIKE '%-0x%'`);
    assert.equal(n, 0, table);
  }
});
