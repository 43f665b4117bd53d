// The image route (`/image/:cid*`, LUKSO's resizing proxy) on the real stack: content uploaded through
// /api/v0/add or served by a local trustless gateway (UnixFS directories as CARs: ./ipfs-unixfs.mjs), resized PNG/JPEG decoded with pngjs / jpeg-js, SVG passed through
// under the sandbox CSP, LSP2 verification (`x-verified`), HEAD, derived images kept in R2, decompression bombs
// and bad parameters refused; and erc725.js `fetchData` of an LSP3Profile through /ipfs, its image through /image.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { crc32, deflateSync } from 'node:zlib';
import { PNG } from 'pngjs';
import jpeg from 'jpeg-js';
import { encodeDeployData, encodeFunctionData, keccak256 } from 'viem';
import { ERC725 } from '@erc725/erc725.js';
import { startStack } from '../../scripts/stack.mjs';
import { upload } from './helpers/upload.mjs';
import { waitForReceipt } from '../../scripts/chain.mjs';
import { addUnixfs, block, carOf, entityBlocks, parseIpfsUrl } from './ipfs-unixfs.mjs';

const require = createRequire(import.meta.url);
const UP = require('@lukso/universalprofile-contracts/artifacts/UniversalProfile.json');
const LSP3Schema = require('@erc725/erc725.js/schemas/LSP3ProfileMetadata.json');
const OWNER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'; // anvil's unlocked dev account
const DAG_PB = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG'; // a directory CID no gateway has

const gatewayFiles = new Map();
const gatewayHits = [];
let gateway;
let stack;
before(async () => {
  gateway = createServer((req, res) => {
    const path = req.url.replace(/^\/ipfs\//, '').split('?')[0];
    gatewayHits.push(path);
    const { root, path: segments } = parseIpfsUrl(req.url);
    if (block(root)) {
      // a UnixFS directory made by the test: its CAR, as a trustless gateway answers it
      const cids = entityBlocks(root, segments);
      if (!cids) return res.writeHead(404).end('not found');
      carOf(root, cids).then((car) => res.writeHead(200, { 'content-type': 'application/vnd.ipld.car; version=1' }).end(car));
      return;
    }
    const file = gatewayFiles.get(path);
    if (!file) return res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': file.type }).end(file.bytes);
  });
  await new Promise((r) => gateway.listen(0, '127.0.0.1', r));
  stack = await startStack({
    vars: { IPFS_GATEWAYS: `http://127.0.0.1:${gateway.address().port}`, IPFS_TIMEOUT_SECONDS: '15', UPLOAD_MAX_BYTES: '2000000' },
  });
});
after(async () => {
  await stack?.stop();
  gateway?.closeAllConnections?.();
  gateway?.close();
});

function pngImage(width, height) {
  const png = new PNG({ width, height });
  for (let i = 0; i < width * height; i++) png.data.set([i % 251, (i * 7) % 253, 90, 255], i * 4);
  return new Uint8Array(PNG.sync.write(png));
}

function jpegImage(width, height) {
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) data.set([(i * 3) % 256, 120, (i >> 4) % 256, 255], i * 4);
  return new Uint8Array(jpeg.encode({ data, width, height }, 90).data);
}

/** A PNG whose header declares `width × height` RGBA pixels, with a few rows of zeros: a decompression bomb. */
function pngBomb(width, height) {
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA
  const rows = deflateSync(Buffer.alloc((width * 4 + 1) * 4));
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array(Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', rows), chunk('IEND', Buffer.alloc(0))]));
}

const image = (path, init) => fetch(`${stack.workerUrl}/image/${path}`, init);

async function errorOf(res) {
  const body = await res.json();
  assert.ok(body.error?.code && body.error?.message, JSON.stringify(body));
  return { status: res.status, code: body.error.code };
}

test('PNG and JPEG are scaled down to width × dpr, keeping their format and aspect ratio', async () => {
  const png = pngImage(400, 300);
  const pngCid = await upload(stack, png, 'image/png', 'a.png');
  const res = await image(`${pngCid}?width=50&dpr=2`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/png');
  assert.equal(res.headers.get('cache-control'), 'public, max-age=29030400, immutable');
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(res.headers.get('etag'), `"${pngCid}@100w"`);
  assert.equal(res.headers.get('x-ipfs-path'), `/ipfs/${pngCid}`);
  assert.equal(res.headers.get('x-verified'), null, 'no verification asked for');
  const decoded = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
  assert.deepEqual([decoded.width, decoded.height], [100, 75]);

  const jpg = jpegImage(640, 480);
  const jpgCid = await upload(stack, jpg, 'image/jpeg', 'b.jpg');
  const small = await image(`${jpgCid}?width=160`);
  assert.equal(small.status, 200);
  assert.equal(small.headers.get('content-type'), 'image/jpeg');
  const out = jpeg.decode(new Uint8Array(await small.arrayBuffer()), { useTArray: true });
  assert.deepEqual([out.width, out.height], [160, 120]);

  // never enlarged; without width the original bytes, as /ipfs serves them
  for (const query of ['?width=2000', '', '?method=0x00000000&data=0x']) {
    const same = await image(`${pngCid}${query}`);
    assert.equal(same.status, 200, query);
    assert.deepEqual(new Uint8Array(await same.arrayBuffer()), png, query);
    assert.equal(same.headers.get('etag'), query.startsWith('?width') ? `"${pngCid}@2000w"` : `"${pngCid}"`);
  }
  // width × dpr past the output bound is served at the bound (here: the original is narrower)
  const capped = await image(`${jpgCid}?width=10000&dpr=5`);
  assert.equal(capped.status, 200);
  assert.equal(capped.headers.get('etag'), `"${jpgCid}@4096w"`);
});

test('x-verified answers whether keccak256 of the source bytes matches data (method by name or id)', async () => {
  const png = pngImage(64, 64);
  const cid = await upload(stack, png, 'image/png');
  const hash = keccak256(png);
  const other = keccak256(new TextEncoder().encode('other'));
  for (const [query, verified] of [
    [`method=keccak256(bytes)&data=${hash}`, 'true'],
    [`method=${encodeURIComponent('keccak256(bytes)')}&data=${hash}&width=32`, 'true'],
    [`method=0x8019f9b1&data=${hash.toUpperCase().replace('0X', '0x')}&width=32&dpr=1.5`, 'true'],
    [`method=0x6f357c6a&data=${hash}`, 'true'],
    [`method=keccak256(bytes)&data=${other}`, 'false'],
    [`method=keccak256(bytes)&data=${other}&width=32`, 'false'],
    ['method=keccak256(bytes)&data=0x', 'false'],
    ['method=ecdsa', 'false'],
  ]) {
    const res = await image(`${cid}?${query}`);
    assert.equal(res.status, 200, query);
    assert.equal(res.headers.get('x-verified'), verified, query);
    // a mismatch is still served: the header is the answer
    assert.ok((await res.arrayBuffer()).byteLength > 0, query);
  }
  // the header is readable by browser code on other origins
  const res = await image(`${cid}?method=keccak256(bytes)&data=${hash}`, { headers: { origin: 'https://wallet.example' } });
  assert.match(res.headers.get('access-control-expose-headers'), /x-verified/);
});

test('HEAD answers the GET headers (verification included) without a body', async () => {
  const png = pngImage(120, 60);
  const cid = await upload(stack, png, 'image/png');
  const head = await image(`${cid}?width=60&method=keccak256(bytes)&data=${keccak256(png)}`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-type'), 'image/png');
  assert.equal(head.headers.get('x-verified'), 'true');
  assert.equal(head.headers.get('etag'), `"${cid}@60w"`);
  assert.equal((await head.arrayBuffer()).byteLength, 0);
  // no gateway has it: 404 (502 before the relay answers 404 for "every gateway said 404"), no body
  const missing = await image(`${DAG_PB}/nothing-here.png`, { method: 'HEAD' });
  assert.ok([404, 502].includes(missing.status), String(missing.status));
  assert.equal((await missing.arrayBuffer()).byteLength, 0);
});

test('SVG and non-images are passed through unchanged under the sandbox CSP', async () => {
  const svg = new TextEncoder().encode(
    '<svg xmlns="http://www.w3.org/2000/svg" width="500" height="500"><script>alert(1)</script><rect width="500" height="500"/></svg>',
  );
  const cid = await upload(stack, svg, 'image/svg+xml', 'x.svg');
  const res = await image(`${cid}?width=50`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/svg+xml');
  assert.match(res.headers.get('content-security-policy'), /^sandbox; default-src 'none'/);
  assert.deepEqual(new Uint8Array(await res.arrayBuffer()), svg);

  const json = new TextEncoder().encode(JSON.stringify({ not: 'an image' }));
  const jsonCid = await upload(stack, json, 'application/json');
  const passed = await image(`${jsonCid}?width=10`);
  assert.equal(passed.status, 200);
  assert.equal(passed.headers.get('content-type'), 'application/json');
  assert.deepEqual(new Uint8Array(await passed.arrayBuffer()), json);
  const html = new TextEncoder().encode('<!doctype html><script>alert(1)</script>');
  const htmlCid = await upload(stack, html, 'text/html');
  const active = await image(htmlCid);
  assert.equal(active.headers.get('content-disposition'), 'attachment');
  assert.match(active.headers.get('content-security-policy'), /^sandbox/);
});

test('a resized image is kept in R2: asked again, the gateway is not contacted', async () => {
  const png = pngImage(300, 100);
  const dir = (await addUnixfs([{ path: 'cached.png', content: png }])).root.toString();
  const hits = () => gatewayHits.filter((p) => p === `${dir}/cached.png`).length;
  const first = await image(`${dir}/cached.png?width=30&method=keccak256(bytes)&data=${keccak256(png)}`);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('x-verified'), 'true');
  const firstBytes = new Uint8Array(await first.arrayBuffer());
  assert.equal(hits(), 1);
  // same target width (15 × 2 = 30): from the derived-image cache, still verified against the source's hash
  const second = await image(`${dir}/cached.png?width=15&dpr=2&method=keccak256(bytes)&data=${keccak256(png)}`);
  assert.equal(second.status, 200);
  assert.equal(second.headers.get('x-verified'), 'true');
  assert.deepEqual(new Uint8Array(await second.arrayBuffer()), firstBytes);
  const wrong = await image(`${dir}/cached.png?width=30&method=keccak256(bytes)&data=${keccak256('0x01')}`);
  assert.equal(wrong.headers.get('x-verified'), 'false');
  assert.equal(hits(), 1);
  const decoded = PNG.sync.read(Buffer.from(firstBytes));
  assert.deepEqual([decoded.width, decoded.height], [30, 10]);
  assert.equal(first.headers.get('x-content-verified'), 'true');
  assert.equal(first.headers.get('cache-control'), 'public, max-age=29030400, immutable');
  // another width is another rendition, resized from the verified source the relay kept in R2 (no gateway)
  assert.equal((await image(`${dir}/cached.png?width=60`)).status, 200);
  assert.equal(hits(), 1);
});

test('decompression bombs, oversize and corrupt images are 4xx; without width they pass through', async () => {
  for (const [w, h] of [
    [100000, 100000],
    [8000, 8000],
    [20000, 10],
  ]) {
    const bomb = pngBomb(w, h);
    const cid = await upload(stack, bomb, 'image/png', 'bomb.png');
    assert.deepEqual(await errorOf(await image(`${cid}?width=100`)), { status: 413, code: 'IMAGE_TOO_LARGE' }, `${w}×${h}`);
    const original = await image(cid);
    assert.equal(original.status, 200);
    assert.deepEqual(new Uint8Array(await original.arrayBuffer()), bomb);
  }
  const broken = pngImage(200, 200).slice(0, 120);
  const brokenCid = await upload(stack, broken, 'image/png');
  assert.deepEqual(await errorOf(await image(`${brokenCid}?width=10`)), { status: 422, code: 'INVALID_IMAGE' });
  // the Worker is still fine afterwards
  const ok = await image(`${await upload(stack, pngImage(20, 20), 'image/png')}?width=10`);
  assert.equal(ok.status, 200);
});

test('bad parameters and CIDs are 400 JSON errors', async () => {
  const cid = await upload(stack, pngImage(10, 10), 'image/png');
  for (const query of [
    'width=0',
    'width=abc',
    'width=10001',
    'width=1.5',
    'dpr=0',
    'dpr=9',
    'dpr=abc',
    'width=5&width=6',
    'method=sha256&data=0x00',
    'method=0xdeadbeef&data=0x00',
    `method=keccak256(bytes)&data=0x1234`,
  ]) {
    assert.deepEqual(await errorOf(await image(`${cid}?${query}`)), { status: 400, code: 'INVALID_PARAMETER' }, query);
  }
  assert.deepEqual(await errorOf(await image('not-a-cid?width=10')), { status: 400, code: 'INVALID_CID' });
  assert.deepEqual(await errorOf(await image(`${DAG_PB}%2F..%2Fx`)), { status: 400, code: 'INVALID_CID' });
  const post = await image(cid, { method: 'POST' });
  assert.equal(post.status, 405);
  assert.match(post.headers.get('allow'), /GET, HEAD/);
});

test('erc725.js fetchData reads an LSP3Profile through /ipfs; its image is served through /image', async () => {
  const png = pngImage(256, 256);
  const imageCid = await upload(stack, png, 'image/png', 'avatar.png');
  const lsp3 = {
    LSP3Profile: {
      name: 'image route',
      description: 'profile images through /image',
      links: [],
      tags: [],
      profileImage: [{ width: 256, height: 256, url: `ipfs://${imageCid}`, verification: { method: 'keccak256(bytes)', data: keccak256(png) } }],
      backgroundImage: [],
    },
  };
  const json = JSON.stringify(lsp3);
  const jsonCid = await upload(stack, new TextEncoder().encode(json), 'application/json', 'profile.json');

  const rpc = stack.chain.rpc;
  const send = async (tx) => {
    const hash = await rpc('eth_sendTransaction', [{ from: OWNER, gas: '0x989680', ...tx }]);
    const receipt = await waitForReceipt(rpc, hash);
    assert.equal(receipt.status, '0x1');
    return receipt;
  };
  const deployed = await send({ data: encodeDeployData({ abi: UP.abi, bytecode: UP.bytecode, args: [OWNER] }) });
  const profile = deployed.contractAddress;
  const erc725 = new ERC725(LSP3Schema, profile, stack.chain.rpcUrl, { ipfsGateway: `${stack.workerUrl}/ipfs/` });
  const { keys, values } = erc725.encodeData([{ keyName: 'LSP3Profile', value: { json: lsp3, url: `ipfs://${jsonCid}` } }]);
  await send({ to: profile, data: encodeFunctionData({ abi: UP.abi, functionName: 'setData', args: [keys[0], values[0]] }) });

  const [fetched] = await erc725.fetchData(['LSP3Profile']);
  assert.equal(fetched.name, 'LSP3Profile');
  assert.deepEqual(fetched.value, lsp3);
  assert.equal(JSON.stringify(fetched.value), json);

  // what LUKSO's wallet does with the image: /image/<cid>?method=&data=&width=&dpr=
  const { url, verification } = fetched.value.LSP3Profile.profileImage[0];
  const src = `${stack.workerUrl}/image/${url.replace(/^ipfs:\/\//, '')}?method=${verification.method}&data=${verification.data}&width=64&dpr=2`;
  const res = await fetch(src);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-verified'), 'true');
  const decoded = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
  assert.deepEqual([decoded.width, decoded.height], [128, 128]);
});
