// The `--target web` build of the npm package in real headless Chromium (Debian's), loaded by a plain
// <script type="module"> from a page served on 127.0.0.1, as a dApp without a bundler would: its entry `web/index.js`
// (what `profile-relayer/web` resolves to: wasm-bindgen's module with the JS facade in front of some exports).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { keccak256, pad, stringToHex, toHex } from 'viem';
import { launchChromium } from '../helpers/chromium.mjs';

const root = fileURLToPath(new URL('../../pkg/', import.meta.url));
const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const PAGE = `<!doctype html><meta charset="utf-8"><script type="module">
  import init, * as sdk from '/web/index.js';
  await init();
  const out = {};
  out.value = sdk.encodeVerifiableUri('{"LSP3Profile":{"name":"browser"}}', 'ipfs://QmBrowser');
  out.decoded = sdk.decodeVerifiableUri(out.value);
  out.bytes = sdk.encodeVerifiableUri(new TextEncoder().encode('raw'), 'ipfs://raw');
  out.key = sdk.encodeKeyName('LSP5ReceivedAssetsMap:<address>', ['0xcafecafecafecafecafecafecafecafecafecafe']);
  out.big = sdk.encodeArrayElementKey('AddressPermissions[]', 2n ** 64n);
  const cd = sdk.encodePostDeploymentCallData([], []);
  out.predicted = sdk.predictProfileAddress({ salt: '0x' + '00'.repeat(32), postDeploymentCallData: cd, network: 'mainnet' });
  out.salts = [sdk.generateSalt(), sdk.generateSalt()];
  // strings through TextEncoder.encodeInto (the browser path): non-ASCII, lone surrogates, and past the scratch area
  out.data = sdk.encodeVerifiableUriData('LSP3Profile', '\uD800h\u00e9llo \u2713 \u{1F600}', 'ipfs://h\u00e9\uDC00');
  out.long = sdk.encodeVerifiableUriData('LSP3Profile', '\u00e9'.repeat(9000), 'ipfs://x');
  try { sdk.decodeVerifiableUri('0x00'); } catch (e) { out.error = { isError: e instanceof Error, name: e.name, code: e.code }; }
  // token ids: the facade's decimals (a JS number, a BigInt), the wasm's hex, and a refusal from the wasm
  out.tokenIds = ['255', (2n ** 200n + 7n).toString(), '0x1f'].map((id) => sdk.encodeTokenId(0, id));
  try { sdk.encodeTokenId(0, '1e3'); } catch (e) { out.tokenError = e.code; }
  window.__result = out;
</script>`;

let server;
let browser;
let origin;
before(async () => {
  server = createServer(async (req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      return;
    }
    const path = normalize(join(root, new URL(req.url, 'http://x').pathname));
    if (!path.startsWith(root)) return res.writeHead(403).end();
    try {
      const body = await readFile(path);
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium(chromium);
});
after(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r) ?? r());
});

test('pkg/web runs in Chromium: encode, decode, keys, prediction, salts, typed errors', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(origin);
  await page.waitForFunction(() => window.__result, null, { timeout: 60_000 });
  const r = await page.evaluate(() => window.__result);
  assert.deepEqual(errors, []);
  assert.match(r.value, /^0x00006f357c6a0020[0-9a-f]{64}/);
  assert.equal(r.decoded.url, 'ipfs://QmBrowser');
  assert.match(r.bytes, /^0x00008019f9b10020/);
  assert.equal(r.key, '0x812c4334633eb816c80d0000cafecafecafecafecafecafecafecafecafecafe');
  assert.equal(r.big, '0xdf30dba06db6a30e65354d9a64c6098600000000000000010000000000000000');
  assert.deepEqual(r.predicted, {
    universalProfile: '0xB87acAfB8E52B79010A844792843A9D0EB61345d',
    keyManager: '0x0Ff1cC6c7186333480ec8Ef69EAcA47DD3605806',
    generatedSalt: '0x2f730af35b5a6e5bc11737a273fadf3ab6e667b1899ebfe4b04070d7fdb699b6',
  });
  assert.notEqual(r.salts[0], r.salts[1]);
  // expected values from viem (keccak256 of the UTF-8 bytes, lone surrogates as U+FFFD, as TextEncoder writes them)
  const LSP3 = '0x5ef83ad9559033e6e941db7d7c495acdce616347d28e90c7ce47cbfcfcad3bc5';
  const uri = (doc, url) => `0x00006f357c6a0020${keccak256(stringToHex(doc)).slice(2)}${stringToHex(url).slice(2)}`;
  assert.deepEqual(r.data, { key: LSP3, value: uri('\uFFFDh\u00e9llo \u2713 \u{1F600}', 'ipfs://h\u00e9\uFFFD') });
  assert.deepEqual(r.long, { key: LSP3, value: uri('\u00e9'.repeat(9000), 'ipfs://x') });
  assert.deepEqual(r.error, { isError: true, name: 'ProfileRelayerError', code: 'TRUNCATED_VERIFIABLE_URI' });
  assert.deepEqual(
    r.tokenIds,
    [255n, 2n ** 200n + 7n, 31n].map((n) => pad(toHex(n))),
  );
  assert.equal(r.tokenError, 'INVALID_TOKEN_ID');
});
