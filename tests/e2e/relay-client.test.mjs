// The npm package's LSP15 relay clients (RelayerClient.execute / quota / transaction, fetchRelayCallParams) against
// the real Worker and chain, in Node and in headless Chromium (the `web` build). Every signature is made by viem or
// @lukso/eip191-signer.js; the digest the client hands to `sign` and the body it sends are compared byte for byte
// with what viem builds on its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { concat, decodeFunctionResult, encodeFunctionData, encodePacked, getAddress, hashMessage, keccak256, parseAbi, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { until } from './helpers/poll.mjs';
import { profileOf } from './helpers/profile.mjs';
import { launchChromium } from '../helpers/chromium.mjs';

const require = createRequire(import.meta.url);
const { EIP191Signer } = require('@lukso/eip191-signer.js');

const QUOTA = 3_000_000;
const LSP3_PROFILE = '0x5ef83ad9559033e6e941db7d7c495acdce616347d28e90c7ce47cbfcfcad3bc5';
const upAbi = parseAbi([
  'function owner() view returns (address)',
  'function getData(bytes32 key) view returns (bytes)',
  'function setData(bytes32 key, bytes value)',
]);

let stack;
let relayer;
/** Every request the SDK sent to the Worker's /api routes from Node: `{ method, url, body }`. */
const sent = [];
const realFetch = globalThis.fetch;

before(async () => {
  stack = await startStack({
    vars: { MONTHLY_GAS_QUOTA: String(QUOTA), DEPLOY_WAIT_SECONDS: '10', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' },
  });
  globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    if (request.url.startsWith(`${stack.workerUrl}/api/`)) {
      sent.push({ method: request.method, url: request.url, prefer: request.headers.get('prefer'), body: request.body ? await request.clone().text() : null });
    }
    return realFetch(request);
  };
  // no API key: the LSP15 routes take none
  relayer = new sdk.RelayerClient({ baseUrl: stack.workerUrl });
});
after(async () => {
  globalThis.fetch = realFetch;
  await stack?.stop();
});

async function read(to, functionName, args = []) {
  const data = encodeFunctionData({ abi: upAbi, functionName, args });
  const out = await stack.chain.rpc('eth_call', [{ to, data }, 'latest']);
  return decodeFunctionResult({ abi: upAbi, functionName, data: out });
}
const receipt = (hash) => stack.chain.rpc('eth_getTransactionReceipt', [hash]);

// viem's own LSP25 message and digest (LIP-25): keccak256(0x19 ‖ 0x00 ‖ KM ‖ encodePacked(25, chainId, nonce, validity, 0, payload))
const viemMessage = ({ chainId, nonce, validity = 0n, payload }) =>
  encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(chainId), BigInt(nonce), validity, 0n, payload]);
const viemDigest = (call) => keccak256(concat(['0x19', '0x00', call.km, viemMessage(call)]));
const viemSetData = (key, value) => encodeFunctionData({ abi: upAbi, functionName: 'setData', args: [key, value] });
/** The LSP15 body for a call, as a viem-only dApp would write it. */
const viemBody = (up, { nonce, validity = 0n, payload }, signature) => ({
  address: up,
  transaction: { abi: payload, signature, nonce: BigInt(nonce).toString(), validityTimestamps: toHex(validity) },
});
const lastBody = (path) => JSON.parse(sent.filter((r) => r.url.endsWith(path)).at(-1).body);

test('Node: execute with a viem sign callback and with an eip191-signer signature, quota in both schemes, status', async () => {
  const privateKey = generatePrivateKey();
  const account = privateKeyToAccount(privateKey);
  const { up, km } = await profileOf(stack, account);

  const params = await sdk.fetchRelayCallParams({ rpcUrl: stack.chain.rpcUrl, address: up, controller: account.address });
  assert.deepEqual(params, { keyManager: getAddress(km), chainId: stack.chain.chainId, nonce: '0' });

  const before = await relayer.quota({
    address: up,
    sign: (message, m) => {
      assert.equal(m.hash, hashMessage({ raw: message }));
      return account.signMessage({ message: { raw: message } });
    },
  });
  assert.deepEqual({ ...before, resetDate: 0 }, { quota: QUOTA, unit: 'gas', totalQuota: QUOTA, resetDate: 0 });
  assert.ok(before.resetDate > Date.now() / 1000);

  // 1. sign callback: the client builds the digest, viem signs it raw
  const value = toHex(new TextEncoder().encode('gasless through the SDK'));
  const payload = sdk.encodeSetData(LSP3_PROFILE, value);
  assert.equal(payload, viemSetData(LSP3_PROFILE, value));
  const call = { km, chainId: params.chainId, nonce: 0n, payload };
  const digests = [];
  const answer = await relayer.execute({
    ...params,
    address: up,
    payload,
    wait: 10,
    sign: async (digest) => {
      digests.push(digest);
      return account.sign({ hash: digest });
    },
  });
  assert.deepEqual(digests, [viemDigest(call)]);
  const signature = await account.sign({ hash: viemDigest(call) });
  assert.deepEqual(lastBody('/api/execute'), viemBody(up, call, signature));
  assert.deepEqual([sent.at(-1).method, sent.at(-1).prefer], ['POST', 'wait=10']);
  const mined = await receipt(answer.transactionHash);
  const used = Number(BigInt(mined.gasUsed));
  assert.deepEqual(answer, {
    transactionHash: answer.transactionHash,
    gasUsed: used,
    status: 'mined',
    quota: { quota: QUOTA - used, unit: 'gas', totalQuota: QUOTA, resetDate: before.resetDate },
  });
  assert.equal(await read(up, 'getData', [LSP3_PROFILE]), value);

  assert.deepEqual(await relayer.transaction(answer.transactionHash), {
    hash: answer.transactionHash,
    kind: 'execute',
    profile: up,
    status: 'mined',
    replacedBy: null,
    blockNumber: Number(BigInt(mined.blockNumber)),
    gasUsed: used,
    charged: used,
  });

  // 2. a ready signature from LUKSO's @lukso/eip191-signer.js, channel 3, a validity window; no keyManager needed
  const channel = 3n;
  const next = await sdk.fetchRelayCallParams({ rpcUrl: stack.chain.rpcUrl, address: up, controller: account.address, channel });
  assert.equal(BigInt(next.nonce), channel << 128n);
  const now = BigInt(Math.floor(Date.now() / 1000));
  const second = {
    km,
    chainId: params.chainId,
    nonce: BigInt(next.nonce),
    validity: ((now - 60n) << 128n) | (now + 600n),
    payload: viemSetData(LSP3_PROFILE, '0xc0ffee'),
  };
  const lukso = new EIP191Signer().signDataWithIntendedValidator(km, viemMessage(second), privateKey);
  assert.equal(lukso.messageHash, viemDigest(second));
  // without `wait`: answered once sent (no Prefer header), then followed on the status route until mined
  const again = await relayer.execute({
    address: up,
    nonce: next.nonce,
    validityTimestamps: second.validity,
    payload: second.payload,
    signature: lukso.signature,
  });
  assert.deepEqual(lastBody('/api/execute'), viemBody(up, second, lukso.signature));
  assert.deepEqual([again.status, again.gasUsed, sent.at(-1).prefer], ['pending', undefined, null]);
  const used2 = Number(BigInt((await receipt(again.transactionHash)).gasUsed));
  await until('the relay call shows mined and charged', async () => {
    const status = await relayer.transaction(again.transactionHash);
    return status.status === 'mined' && status.charged === used2;
  });
  assert.equal(await read(up, 'getData', [LSP3_PROFILE]), '0xc0ffee');

  // quota in the text scheme with a ready viem signature: fell by exactly the gas both calls used
  const timestamp = Math.floor(Date.now() / 1000);
  const textSig = await account.signMessage({ message: `${up}:${timestamp}` });
  const after = await relayer.quota({ address: up, timestamp, scheme: 'text', signature: textSig });
  assert.deepEqual(lastBody('/api/quota'), { address: up, timestamp, signature: textSig });
  assert.equal(after.quota, QUOTA - used - used2);
});

test('Node: the quota message handed to sign is the packed one of the timestamp sent', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const { up } = await profileOf(stack, account);
  let seen;
  const asked = Date.now();
  const q = await relayer.quota({
    address: up,
    sign: (message, m) => {
      seen = { message, m };
      return account.signMessage({ message: { raw: message } });
    },
  });
  const { timestamp } = lastBody('/api/quota');
  // the time of the call: from the second it was made in to its answer
  assert.ok(timestamp >= Math.floor(asked / 1000) && timestamp <= Date.now() / 1000, String(timestamp));
  assert.equal(seen.message, keccak256(encodePacked(['address', 'uint256'], [up, BigInt(timestamp)])));
  assert.deepEqual(seen.m, { scheme: 'packed', message: seen.message, hash: hashMessage({ raw: seen.message }) });
  assert.equal(q.quota, QUOTA);
  // the text scheme hands the string, signed as given
  const text = await relayer.quota({
    address: up.toLowerCase(),
    scheme: 'text',
    sign: (message) => {
      seen = message;
      return account.signMessage({ message });
    },
  });
  assert.equal(seen, `${up.toLowerCase()}:${lastBody('/api/quota').timestamp}`);
  assert.equal(text.quota, QUOTA);
});

test('Node: refusals carry the service code and status; bad input and failing signers send nothing', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const { up, km } = await profileOf(stack, account);
  const params = await sdk.fetchRelayCallParams({ rpcUrl: stack.chain.rpcUrl, address: up, controller: account.address });
  const payload = sdk.encodeSetData(LSP3_PROFILE, '0x01');
  const viemSign = (digest) => account.sign({ hash: digest });
  const rejects = (promise, code, status) =>
    assert.rejects(promise, (e) => {
      assert.ok(sdk.isProfileRelayerError(e), String(e));
      assert.equal(e.code, code, e.message);
      assert.equal(e.status, status, e.message);
      return true;
    });

  const stranger = privateKeyToAccount(generatePrivateKey());
  await rejects(relayer.execute({ ...params, address: up, payload, sign: (d) => stranger.sign({ hash: d }) }), 'NOT_A_CONTROLLER', 401);
  await rejects(relayer.execute({ ...params, nonce: 5, address: up, payload, sign: viemSign }), 'INVALID_RELAY_NONCE', 400);
  await rejects(relayer.execute({ ...params, validityTimestamps: (1000n << 128n) | 2000n, address: up, payload, sign: viemSign }), 'RELAY_CALL_EXPIRED', 400);
  const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
  await rejects(relayer.execute({ ...params, address: elsewhere, payload, sign: viemSign }), 'PROFILE_NOT_REGISTERED', 404);
  const old = Math.floor(Date.now() / 1000) - 3600;
  await rejects(
    relayer.quota({ address: up, timestamp: old, signature: await account.signMessage({ message: `${up}:${old}` }), scheme: 'text' }),
    'TIMESTAMP_OUT_OF_WINDOW',
    401,
  );
  await rejects(relayer.quota({ address: up, sign: (m) => stranger.signMessage({ message: { raw: m } }) }), 'NOT_A_CONTROLLER', 401);
  await rejects(relayer.transaction(`0x${'ab'.repeat(32)}`), 'TRANSACTION_NOT_FOUND', 404);

  const count = sent.length;
  const declined = Object.assign(new Error('User rejected the request.'), { code: 4001 });
  await assert.rejects(
    relayer.execute({
      ...params,
      address: up,
      payload,
      sign: async () => {
        throw declined;
      },
    }),
    (e) => e.code === 'SIGNER_ERROR' && e.cause === declined && /User rejected/.test(e.message) && e.status === undefined,
  );
  await assert.rejects(
    relayer.quota({
      address: up,
      sign: () => {
        throw declined;
      },
    }),
    (e) => e.code === 'SIGNER_ERROR' && e.cause === declined,
  );
  await rejects(relayer.execute({ ...params, address: up, payload, sign: () => '0x1234' }), 'INVALID_LENGTH', undefined);
  await rejects(relayer.execute({ ...params, address: up, payload, sign: () => 42 }), 'INVALID_ARGUMENT', undefined);
  for (const wait of [-1, 1.5, 3601, '10'])
    await rejects(relayer.execute({ ...params, address: up, payload, sign: viemSign, wait }), 'INVALID_ARGUMENT', undefined);
  const good = await viemSign(viemDigest({ km, chainId: params.chainId, nonce: 0n, payload }));
  await rejects(relayer.execute({ ...params, address: up, payload, sign: viemSign, signature: good }), 'INVALID_ARGUMENT', undefined);
  await rejects(relayer.execute({ ...params, address: up, payload }), 'MISSING_FIELD', undefined);
  await rejects(relayer.execute({ address: up, nonce: 0, payload, sign: viemSign }), 'MISSING_FIELD', undefined);
  await rejects(relayer.execute({ ...params, address: up, payload: '0x7f23', signature: good }), 'INVALID_ABI', undefined);
  await rejects(relayer.execute({ ...params, address: up, payload, signature: good, extra: 1 }), 'INVALID_ARGUMENT', undefined);
  await rejects(relayer.quota({ address: up, signature: good }), 'MISSING_FIELD', undefined);
  await rejects(relayer.transaction('0x1234'), 'INVALID_LENGTH', undefined);
  assert.equal(sent.length, count, 'a refused input was sent');

  // chain reads: an account without code is no profile
  await rejects(
    sdk.fetchRelayCallParams({ rpcUrl: stack.chain.rpcUrl, address: elsewhere, controller: account.address }),
    'NOT_A_UNIVERSAL_PROFILE',
    undefined,
  );
  // a contract without owner() (the KeyManager itself): the node answers a revert
  await rejects(
    sdk.fetchRelayCallParams({ rpcUrl: stack.chain.rpcUrl, address: params.keyManager, controller: account.address }),
    'NOT_A_UNIVERSAL_PROFILE',
    undefined,
  );
  // a node that cannot be reached, refuses or fails is said so, never taken for a missing profile
  await assert.rejects(
    sdk.fetchRelayCallParams({ rpcUrl: 'http://127.0.0.1:9', address: up, controller: account.address }),
    (e) => e.code === 'NETWORK_ERROR' && e.cause instanceof Error,
  );
  const node = (answer) => ({ rpcUrl: 'http://rpc.test', address: up, controller: account.address, fetch: async () => answer() });
  await rejects(sdk.fetchRelayCallParams(node(() => new Response('slow down', { status: 429 }))), 'RPC_ERROR', 429);
  await assert.rejects(
    sdk.fetchRelayCallParams(node(() => Response.json({ jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'daily request count exceeded' } }))),
    (e) => e.code === 'RPC_ERROR' && /daily request count exceeded/.test(e.message),
  );
  // the transport options apply: a node that never answers times out
  await assert.rejects(
    sdk.fetchRelayCallParams({
      ...node(() => new Promise(() => {})),
      fetch: (_url, init) => new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(init.signal.reason))),
      timeout: 100,
    }),
    (e) => e.code === 'NETWORK_ERROR' && e.cause?.name === 'TimeoutError',
  );
  // the untouched call still goes through afterwards
  assert.equal((await relayer.execute({ ...params, address: up, payload, sign: viemSign, wait: 10 })).status, 'mined');
});

test('Chromium: the web build signs through a viem callback; digest and body equal viem, quota falls by the charge', async () => {
  const privateKey = generatePrivateKey();
  const account = privateKeyToAccount(privateKey);
  const { up, km } = await profileOf(stack, account);
  const root = fileURLToPath(new URL('../../pkg/', import.meta.url));
  const PAGE = `<!doctype html><meta charset="utf-8"><script type="module">
    import init, * as sdk from '/web/profile_relayer.js';
    await init();
    window.sdk = sdk;
    window.ready = true;
  </script>`;
  const server = createServer(async (req, res) => {
    if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    const path = normalize(join(root, new URL(req.url, 'http://x').pathname));
    if (!path.startsWith(root)) return res.writeHead(403).end();
    try {
      const body = await readFile(path);
      const type = { '.js': 'text/javascript', '.wasm': 'application/wasm' }[extname(path)] ?? 'application/octet-stream';
      res.writeHead(200, { 'content-type': type }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const browser = await launchChromium(chromium);
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e));
    const bodies = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${stack.workerUrl}/api/`) && r.method() === 'POST') bodies.push([r.url(), r.postData()]);
    });
    // the page's wallet: viem in Node
    const digests = [];
    await page.exposeFunction('viemSign', (digest) => {
      digests.push(digest);
      return account.sign({ hash: digest });
    });
    await page.exposeFunction('viemSignMessage', (raw) => account.signMessage({ message: { raw } }));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => window.ready, null, { timeout: 60_000 });

    const value = toHex(new TextEncoder().encode('from Chromium'));
    const r = await page.evaluate(
      async ({ workerUrl, rpcUrl, up, controller, value }) => {
        const { sdk } = window;
        const relayer = new sdk.RelayerClient({ baseUrl: workerUrl });
        const params = await sdk.fetchRelayCallParams({ rpcUrl, address: up, controller });
        const payload = sdk.encodeSetData(sdk.encodeKeyName('LSP3Profile'), value);
        const sign = (m) => window.viemSignMessage(m);
        const before = await relayer.quota({ address: up, sign });
        const answer = await relayer.execute({ ...params, address: up, payload, wait: 10, sign: (d) => window.viemSign(d) });
        const status = await relayer.transaction(answer.transactionHash);
        const after = await relayer.quota({ address: up, sign });
        let error;
        try {
          await relayer.execute({ ...params, address: up, payload, sign: (d) => window.viemSign(d) }); // replayed nonce
        } catch (e) {
          error = { name: e.name, code: e.code, status: e.status, isError: e instanceof Error };
        }
        return { params, payload, before, answer, status, after, error };
      },
      { workerUrl: stack.workerUrl, rpcUrl: stack.chain.rpcUrl, up, controller: account.address, value },
    );

    assert.deepEqual(errors, []);
    assert.deepEqual(r.params, { keyManager: getAddress(km), chainId: stack.chain.chainId, nonce: '0' });
    assert.equal(r.payload, viemSetData(LSP3_PROFILE, value));
    const call = { km, chainId: stack.chain.chainId, nonce: 0n, payload: r.payload };
    assert.equal(digests[0], viemDigest(call));
    const executeBodies = bodies.filter(([url]) => url.endsWith('/api/execute')).map(([, body]) => JSON.parse(body));
    assert.deepEqual(executeBodies[0], viemBody(up, call, await account.sign({ hash: viemDigest(call) })));
    const used = Number(BigInt((await receipt(r.answer.transactionHash)).gasUsed));
    assert.equal(r.answer.status, 'mined');
    assert.equal(r.answer.gasUsed, used);
    assert.equal(r.status.charged, used);
    assert.equal(r.status.profile, up);
    assert.equal(r.before.quota - r.after.quota, r.status.charged);
    assert.equal(await read(up, 'getData', [LSP3_PROFILE]), value);
    assert.deepEqual(r.error, { name: 'ProfileRelayerError', code: 'INVALID_RELAY_NONCE', status: 400, isError: true });
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
});
