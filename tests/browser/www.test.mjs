// The demo dApp end to end in headless Chromium (playwright-core + Debian's /usr/bin/chromium) against the real
// stack: create a profile with an avatar, see its page, find it by search, look up an LSP8 token, rename it
// gaslessly (LSP25 signed by the page's demo key, relayed by LSP15 /api/execute); error paths
// (a file that is not an image, the chain down). Screenshots of the main screens go to tests/output/screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { deflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import {
  concat,
  decodeFunctionData,
  decodeFunctionResult,
  encodeDeployData,
  encodeFunctionData,
  encodePacked,
  getAddress,
  keccak256,
  parseAbi,
  recoverAddress,
} from 'viem';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { serveWww } from '../../scripts/serve-www.mjs';
import { waitForReceipt } from '../../scripts/chain.mjs';
import { launchChromium } from '../helpers/chromium.mjs';

const require = createRequire(import.meta.url);
const LSP8 = require('@lukso/lsp8-contracts/artifacts/LSP8Mintable.json');
const KM_ABI = require('@lukso/lsp6-contracts/artifacts/LSP6KeyManagerInit.json').abi;
const upAbi = parseAbi(['function getData(bytes32 key) view returns (bytes)', 'function owner() view returns (address)']);
const shots = new URL('../output/screenshots/', import.meta.url);
mkdirSync(shots, { recursive: true });

// a real 4×4 PNG (zlib from node:zlib, CRCs from a table computed here)
function png() {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(4, 0);
  ihdr.writeUInt32BE(4, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const raw = Buffer.concat(
    Array.from({ length: 4 }, () =>
      Buffer.from([
        0,
        ...Array(12)
          .fill(0)
          .map((_, i) => (i % 3 === 0 ? 254 : 40)),
      ]),
    ),
  );
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

let stack;
let www;
let browser;
let page;
before(async () => {
  stack = await startStack({ vars: { LOOKUP_CACHE_SECONDS: '0' } });
  www = await serveWww({ config: { workerUrl: stack.workerUrl, apiKey: stack.apiKey, chainId: stack.chain.chainId, rpcUrl: stack.chain.rpcUrl } });
  browser = await launchChromium(chromium);
  page = await browser.newPage({ viewport: { width: 390, height: 844 } }); // phone-sized
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(www.url);
  await page.waitForFunction(() => document.getElementById('chain-id').textContent !== '');
});
after(async () => {
  await browser?.close();
  await www?.close();
  await stack?.stop();
});

const status = () => page.locator('#status').textContent();

test('create a profile: upload, VerifiableURI and predicted address first, then deploy; the page shows it', async () => {
  await page.getByLabel('Name', { exact: true }).fill('Wombat Wanderer');
  await page.getByLabel('Description').fill('made in the demo dApp');
  await page.getByLabel('Tags').fill('demo, e2e');
  await page.getByLabel('Links').fill('Home | https://example.org');
  await page.getByLabel('Profile image').setInputFiles({ name: 'avatar.png', mimeType: 'image/png', buffer: png() });
  await page.getByRole('button', { name: 'Prepare' }).click();
  await page.locator('#prepared').waitFor({ state: 'visible' });
  const predicted = await page.locator('#predicted').textContent();
  assert.match(predicted, /^0x[0-9a-fA-F]{40}$/);
  const vuri = await page.locator('#verifiable-uri').textContent();
  assert.equal(sdk.decodeVerifiableUri(vuri).method, '0x6f357c6a');
  await page.screenshot({ path: new URL('1-prepared.png', shots).pathname, fullPage: true });

  await page.getByRole('button', { name: 'Deploy through the relayer' }).click();
  await page.locator('#profile-card [data-testid=record-name]').waitFor();
  assert.equal(await page.locator('#profile-card [data-testid=record-name]').textContent(), 'Wombat Wanderer');
  assert.equal(await page.locator('#profile-card [data-testid=record-address]').textContent(), predicted);
  assert.match(await page.locator('#profile-card [data-testid=quota]').textContent(), /20,000,000 of 20,000,000/);
  // the avatar is served through /ipfs and really is an image
  const img = page.locator('#profile-card img');
  await img.evaluate((el) => el.decode());
  assert.equal(await img.evaluate((el) => el.naturalWidth), 4);
  assert.match(await status(), /deployed/);
  await page.screenshot({ path: new URL('2-profile.png', shots).pathname, fullPage: true });
  const code = await stack.chain.rpc('eth_getCode', [predicted, 'latest']);
  assert.notEqual(code, '0x');
});

test('search finds the new profile as you type; opening a hit looks it up', async () => {
  await page.getByLabel('Profiles and assets').fill('wombat');
  const hit = page.locator('#search-results li', { hasText: 'Wombat Wanderer' });
  await hit.waitFor();
  await hit.getByRole('button', { name: 'Open' }).click();
  await page.locator('[data-testid=lookup-card] [data-testid=record-name]', { hasText: 'Wombat Wanderer' }).waitFor();
  await page.screenshot({ path: new URL('3-search.png', shots).pathname, fullPage: true });
});

test('look up an LSP8 collection and open one of its tokens', async () => {
  const owner = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
  const send = async (tx) => waitForReceipt(stack.chain.rpc, await stack.chain.rpc('eth_sendTransaction', [{ from: owner, gas: '0x989680', ...tx }]));
  const receipt = await send({ data: encodeDeployData({ abi: LSP8.abi, bytecode: LSP8.bytecode, args: ['Platypus Pals', 'PLT', owner, 2n, 0n] }) });
  const collection = getAddress(receipt.contractAddress);
  const tokenId = '0x' + '7'.padStart(64, '0');
  await send({ to: collection, data: encodeFunctionData({ abi: LSP8.abi, functionName: 'mint', args: [owner, tokenId, true, '0x'] }) });
  const lookup = new sdk.LookupClient({ baseUrl: stack.workerUrl, apiKey: stack.apiKey });
  const json = JSON.stringify({ LSP4Metadata: { name: 'Platypus #7', description: 'a card', links: [], images: [], assets: [] } });
  const { url } = await lookup.upload(json);
  await send({
    to: collection,
    data: encodeFunctionData({
      abi: LSP8.abi,
      functionName: 'setDataForTokenId',
      args: [tokenId, sdk.encodeKeyName('LSP4Metadata'), sdk.encodeVerifiableUri(json, url)],
    }),
  });
  await stack.admin('POST', '/admin/indexer/run');

  await page.getByLabel('Address', { exact: true }).fill(collection);
  await page.getByRole('button', { name: 'Look up' }).click();
  await page.locator('[data-testid=lookup-card] [data-testid=record-name]', { hasText: 'Platypus Pals' }).waitFor();
  await page.locator('.tokens li').getByRole('button', { name: 'Open' }).click();
  await page.locator('[data-testid=token-card] [data-testid=record-name]', { hasText: 'Platypus #7' }).waitFor();
  await page.screenshot({ path: new URL('4-token.png', shots).pathname, fullPage: true });
});

test('rename gaslessly: the demo key signs setData(LSP3Profile) in the page; name on chain, quota down by the charge', async () => {
  const card = page.locator('#profile-card');
  const up = await card.locator('[data-testid=record-address]').textContent();
  const quotaLeft = async () => Number((await card.locator('[data-testid=quota]').textContent()).match(/Gas quota: ([\d,]+) of/)[1].replaceAll(',', ''));
  const before = await quotaLeft();
  const demo = await page.locator('#demo-address').textContent();
  assert.match(demo, /^0x[0-9a-f]{40}$/);
  await page.getByLabel('New name').fill('Wombat Renamed');
  await page.getByRole('button', { name: 'Save name gaslessly' }).click();
  await page.waitForFunction(
    () => {
      const el = document.getElementById('status');
      return el.className === 'error' || /Renamed to/.test(el.textContent);
    },
    null,
    { timeout: 60_000 },
  );
  assert.match(await status(), /Renamed to "Wombat Renamed" without gas/);
  assert.equal(await card.locator('[data-testid=record-name]').textContent(), 'Wombat Renamed');
  assert.match(await page.locator('[data-testid=gasless-status]').textContent(), /^mined in block \d+/);
  await page.screenshot({ path: new URL('2b-gasless-rename.png', shots).pathname, fullPage: true });

  // the relayer's record and the chain agree on the charge, and the page's quota fell by exactly that
  const hash = await page.locator('[data-testid=gasless-tx]').textContent();
  const record = await (await fetch(`${stack.workerUrl}/api/transaction/${hash}`)).json();
  const receipt = await stack.chain.rpc('eth_getTransactionReceipt', [hash]);
  assert.equal(record.status, 'mined');
  assert.equal(record.kind, 'execute');
  assert.equal(record.charged, Number(BigInt(receipt.gasUsed)));
  assert.equal(before - (await quotaLeft()), record.charged);
  assert.match(await page.locator('[data-testid=gasless-quota]').textContent(), new RegExp(`−${record.charged.toLocaleString('en')}\\)$`));

  // on chain: LSP3Profile now points at verified metadata with the new name
  const read = async (functionName, args) =>
    decodeFunctionResult({
      abi: upAbi,
      functionName,
      data: await stack.chain.rpc('eth_call', [{ to: up, data: encodeFunctionData({ abi: upAbi, functionName, args }) }, 'latest']),
    });
  const value = await read('getData', [sdk.encodeKeyName('LSP3Profile')]);
  const lookup = new sdk.LookupClient({ baseUrl: stack.workerUrl });
  const bytes = await lookup.ipfs(sdk.decodeVerifiableUri(value).url.slice('ipfs://'.length));
  assert.equal(sdk.verifyVerifiableUri(value, bytes), true);
  assert.equal(JSON.parse(new TextDecoder().decode(bytes)).LSP3Profile.name, 'Wombat Renamed');

  // the relayed call was signed by the page's demo key (recovered by viem from the transaction's calldata)
  const tx = await stack.chain.rpc('eth_getTransactionByHash', [hash]);
  const {
    functionName,
    args: [signature, nonce, validity, payload],
  } = decodeFunctionData({ abi: KM_ABI, data: tx.input });
  assert.equal(functionName, 'executeRelayCall');
  const km = await read('owner', []);
  assert.equal(getAddress(tx.to), getAddress(km));
  const message = encodePacked(
    ['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'],
    [25n, BigInt(stack.chain.chainId), nonce, validity, 0n, payload],
  );
  assert.equal(await recoverAddress({ hash: keccak256(concat(['0x19', '0x00', km, message])), signature }), getAddress(demo));
});

test('errors: a file that is not an image, an invalid address, the chain down', async () => {
  await page.getByLabel('Name', { exact: true }).fill('Broken Avatar');
  await page.getByLabel('Profile image').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an image') });
  await page.getByRole('button', { name: 'Prepare' }).click();
  await page.locator('#status.error').waitFor();
  assert.match(await status(), /not an image/);
  await page.screenshot({ path: new URL('5-bad-avatar.png', shots).pathname, fullPage: true });

  await page.getByLabel('Address', { exact: true }).fill('0x1234');
  await page.getByRole('button', { name: 'Look up' }).click();
  await page.waitForFunction(() => /not a valid address/.test(document.getElementById('status').textContent));

  await page.getByLabel('Profile image').setInputFiles([]);
  await page.getByLabel('Name', { exact: true }).fill('While The Chain Sleeps');
  await page.getByRole('button', { name: 'Prepare' }).click();
  await page.locator('#prepared').waitFor({ state: 'visible' });
  await stack.chain.stop();
  await page.getByRole('button', { name: 'Deploy through the relayer' }).click();
  await page.waitForFunction(() => /blockchain node is unavailable/.test(document.getElementById('status').textContent));
  assert.match(await status(), /Try again in \d+ s/);
  await page.screenshot({ path: new URL('6-chain-down.png', shots).pathname, fullPage: true });
  // keyboard: the form is reachable and submittable without a mouse
  await page.getByLabel('Name', { exact: true }).focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'description');
});
