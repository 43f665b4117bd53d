// Gasless transactions through the LSP15 relay (`/api/execute`, `/api/quota`, `/api/transaction/:hash`) and gas
// metering, end to end: anvil with the real LUKSO contracts, the Worker in `wrangler dev`. Every signature is made by
// viem (LSP25 digest built here with viem's own encodePacked/keccak256, per LIP-25), so the wire format is proven
// independently of this project's SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { concat, encodeFunctionData, encodePacked, keccak256, parseAbi, decodeFunctionResult } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startStack } from '../../scripts/stack.mjs';
import { until } from './helpers/poll.mjs';
import { profileOf } from './helpers/profile.mjs';
import { waitFor } from './helpers/wait.mjs';

const QUOTA = 2_000_000;
const kmAbi = parseAbi(['function getNonce(address from, uint128 channel) view returns (uint256)']);
const upAbi = parseAbi([
  'function owner() view returns (address)',
  'function getData(bytes32 key) view returns (bytes)',
  'function setData(bytes32 key, bytes value)',
]);

let stack;
before(async () => {
  stack = await startStack({ vars: { MONTHLY_GAS_QUOTA: String(QUOTA), DEPLOY_WAIT_SECONDS: '10', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' } });
});
after(async () => {
  await stack?.stop();
});

const url = (p) => `${stack.workerUrl}${p}`;
/** Relay calls here read the mined answer: they wait for the receipt. */
const post = (path, body, headers = {}) =>
  fetch(url(path), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...waitFor(path), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
async function json(res, status) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  return body;
}
async function read(to, abi, functionName, args = []) {
  const data = encodeFunctionData({ abi, functionName, args });
  const out = await stack.chain.rpc('eth_call', [{ to, data }, 'latest']);
  return decodeFunctionResult({ abi, functionName, data: out });
}
const relayerNonce = async () => Number(await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'pending']));

/** An LSP25 relay call signed by viem: digest = keccak256(0x19 ‖ 0x00 ‖ KM ‖ encodePacked(25, chainId, nonce, validity, 0, payload)). */
async function signed(account, { up, km }, payload, { channel = 0n, nonce, validity = 0n, chainId = stack.chain.chainId } = {}) {
  const n = nonce ?? (await read(km, kmAbi, 'getNonce', [account.address, channel]));
  const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(chainId), n, validity, 0n, payload]);
  const signature = await account.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
  return { address: up, transaction: { abi: payload, signature, nonce: `0x${n.toString(16)}`, validityTimestamps: `0x${validity.toString(16)}` } };
}
const setData = (key, value) => encodeFunctionData({ abi: upAbi, functionName: 'setData', args: [key, value] });
const key = (n) => keccak256(new TextEncoder().encode(`gasless-test-${n}`));

async function quota(account, up, scheme = 'packed') {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature =
    scheme === 'packed'
      ? await account.signMessage({ message: { raw: keccak256(encodePacked(['address', 'uint256'], [up, BigInt(timestamp)])) } })
      : await account.signMessage({ message: `${up}:${timestamp}` });
  return post('/api/quota', { address: up, timestamp, signature });
}
const gasUsedOf = async (hash) => Number(BigInt((await stack.chain.rpc('eth_getTransactionReceipt', [hash])).gasUsed));

test('gasless setData: data on chain, quota falls by exactly gasUsed, both quota schemes, status route', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const profile = await profileOf(stack, account);
  const before = await json(await quota(account, profile.up, 'packed'), 200);
  assert.deepEqual({ ...before, resetDate: 0 }, { quota: QUOTA, unit: 'gas', totalQuota: QUOTA, resetDate: 0 });
  const value = '0xc0ffee';
  const body = await json(await post('/api/execute', await signed(account, profile, setData(key(1), value))), 200);
  assert.match(body.transactionHash, /^0x[0-9a-f]{64}$/);
  assert.equal(await read(profile.up, upAbi, 'getData', [key(1)]), value);
  const used = await gasUsedOf(body.transactionHash);
  assert.equal(body.gasUsed, used);
  assert.equal(body.status, 'mined');
  const packed = await json(await quota(account, profile.up, 'packed'), 200);
  const text = await json(await quota(account, profile.up, 'text'), 200);
  assert.equal(packed.quota, QUOTA - used);
  assert.equal(text.quota, QUOTA - used);
  // the status route reads the usage the profile's meter wrote through to KV
  const profileStatus = await json(await fetch(url(`/api/universal-profile/${profile.up}`), { headers: { authorization: `Bearer ${stack.apiKey}` } }), 200);
  assert.equal(profileStatus.quota.used, used);
  assert.equal(profileStatus.quota.total, QUOTA);
  const status = await json(await fetch(url(`/api/transaction/${body.transactionHash}`)), 200);
  assert.equal(status.kind, 'execute');
  assert.equal(status.profile, profile.up);
  assert.equal(status.status, 'mined');
  assert.equal(status.gasUsed, used);
  assert.equal(status.charged, used);
  assert.equal((await fetch(url(`/api/transaction/0x${'ab'.repeat(32)}`))).status, 404);
});

test('answered on send: 202 pending at once; the status route and the quota follow; Prefer: wait answers mined', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const profile = await profileOf(stack, account);
  const send = (body, prefer) =>
    fetch(url('/api/execute'), { method: 'POST', headers: { 'content-type': 'application/json', ...(prefer ? { prefer } : {}) }, body: JSON.stringify(body) });
  // no preference (LSP15 clients, LUKSO's extension): the hash as soon as the node took the transaction
  const nonceBefore = await relayerNonce();
  const res = await send(await signed(account, profile, setData(key(10), '0x0a')));
  const sent = await json(res, 202);
  assert.equal(sent.status, 'pending');
  assert.match(sent.transactionHash, /^0x[0-9a-f]{64}$/);
  assert.equal(sent.gasUsed, undefined);
  assert.equal(res.headers.get('preference-applied'), null);
  assert.equal(await relayerNonce(), nonceBefore + 1, 'sent');
  // the status route and the quota follow the receipt
  const mined = await until('the status route shows it mined', async () => {
    const status = await json(await fetch(url(`/api/transaction/${sent.transactionHash}`)), 200);
    return status.status === 'mined' && status;
  });
  const used = await gasUsedOf(sent.transactionHash);
  assert.deepEqual([mined.gasUsed, mined.charged], [used, used]);
  await until('the quota is charged the receipt', async () => (await json(await quota(account, profile.up), 200)).quota === QUOTA - used);
  // Prefer: wait=N (RFC 7240): the receipt within N seconds, at most DEPLOY_WAIT_SECONDS (10 here)
  const waited = await send(await signed(account, profile, setData(key(11), '0x0b')), 'wait=5');
  const body = await json(waited, 200);
  assert.deepEqual([body.status, body.gasUsed, waited.headers.get('preference-applied')], ['mined', await gasUsedOf(body.transactionHash), 'wait=5']);
  const capped = await send(await signed(account, profile, setData(key(12), '0x0c')), 'respond-async, wait=3600');
  assert.equal((await json(capped, 200)).status, 'mined');
  assert.equal(capped.headers.get('preference-applied'), 'wait=10');
  // a preference outside the grammar, or wait=0, is no wait
  for (const [n, prefer] of [
    [13, 'wait=soon'],
    [14, 'wait=0'],
  ]) {
    const answer = await send(await signed(account, profile, setData(key(n), '0x0d')), prefer);
    assert.equal((await json(answer, 202)).status, 'pending', prefer);
  }
  // browsers may send the header: the preflight allows it and the answer exposes Preference-Applied
  const preflight = await fetch(url('/api/execute'), {
    method: 'OPTIONS',
    headers: { origin: 'https://dapp.example', 'access-control-request-headers': 'prefer' },
  });
  assert.match(preflight.headers.get('access-control-allow-headers'), /\bprefer\b/);
  assert.match(waited.headers.get('access-control-expose-headers'), /preference-applied/);
});

test('refusals send nothing: replay, stranger, other chain, expired, reverting, unregistered, malformed, oversized', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const profile = await profileOf(stack, account);
  const good = await signed(account, profile, setData(key(2), '0x01'));
  await json(await post('/api/execute', good), 200);
  const nonceBefore = await relayerNonce();
  const expect = async (body, status, code) => {
    const res = await post('/api/execute', body);
    const answer = await res.json();
    assert.equal(res.status, status, JSON.stringify(answer));
    assert.equal(answer.error.code, code, answer.error.message);
  };
  await expect(good, 400, 'INVALID_RELAY_NONCE'); // replayed
  const stranger = privateKeyToAccount(generatePrivateKey());
  await expect(await signed(stranger, profile, setData(key(3), '0x02'), { nonce: 0n }), 401, 'NOT_A_CONTROLLER');
  await expect(await signed(account, profile, setData(key(3), '0x02'), { chainId: 42 }), 401, 'NOT_A_CONTROLLER');
  await expect(await signed(account, profile, setData(key(3), '0x02'), { validity: (1000n << 128n) | 2000n }), 400, 'RELAY_CALL_EXPIRED');
  const reverting = await signed(account, profile, '0xdeadbeef');
  const res = await post('/api/execute', reverting);
  const reverted = await res.json();
  assert.equal(res.status, 400, JSON.stringify(reverted));
  assert.match(reverted.error.message, /revert/i);
  await expect({ ...good, address: '0x' + '12'.repeat(20) }, 404, 'PROFILE_NOT_REGISTERED');
  await expect({ ...good, extra: 1 }, 400, 'UNKNOWN_FIELD');
  await expect({ address: profile.up }, 400, 'MISSING_FIELD');
  await expect({ ...good, transaction: { ...good.transaction, signature: '0x1234' } }, 400, 'INVALID_LENGTH');
  await expect({ ...good, transaction: { ...good.transaction, abi: 'nothex' } }, 400, 'INVALID_HEX');
  await expect({ ...good, transaction: { ...good.transaction, nonce: -1 } }, 400, 'INVALID_NUMBER');
  const huge = await signed(account, profile, setData(key(4), '0x' + '00'.repeat(20_000)));
  const big = await post('/api/execute', huge);
  assert.equal(big.status, 413);
  // stale and foreign quota signatures
  const old = Math.floor(Date.now() / 1000) - 3600;
  const stale = await account.signMessage({ message: `${profile.up}:${old}` });
  assert.equal((await post('/api/quota', { address: profile.up, timestamp: old, signature: stale })).status, 401);
  const now = Math.floor(Date.now() / 1000);
  const foreign = await stranger.signMessage({ message: `${profile.up}:${now}` });
  assert.equal((await post('/api/quota', { address: profile.up, timestamp: now, signature: foreign })).status, 401);
  assert.equal(await relayerNonce(), nonceBefore, 'a refusal sent a transaction');
});

test('concurrency: 8 channels of one profile, then 50 calls across 10 profiles, every debit exact', async () => {
  const accounts = Array.from({ length: 10 }, () => privateKeyToAccount(generatePrivateKey()));
  const profiles = [];
  for (const a of accounts) profiles.push(await profileOf(stack, a));
  const run = async (jobs) => {
    const answers = await Promise.all(jobs.map(([, body]) => post('/api/execute', body).then((r) => json(r, 200))));
    const spent = new Array(accounts.length).fill(0);
    for (let i = 0; i < jobs.length; i++) spent[jobs[i][0]] += await gasUsedOf(answers[i].transactionHash);
    return spent;
  };
  // 8 executes on 8 nonce channels of one profile
  const first = [];
  for (let c = 0; c < 8; c++) first.push([0, await signed(accounts[0], profiles[0], setData(key(100 + c), '0x0a'), { channel: BigInt(c + 1) })]);
  const spentFirst = await run(first);
  // 50 across 10 profiles: 5 channels each
  const second = [];
  for (let p = 0; p < 10; p++) {
    for (let c = 0; c < 5; c++) second.push([p, await signed(accounts[p], profiles[p], setData(key(200 + c), '0x0b'), { channel: BigInt(c + 10) })]);
  }
  const spentSecond = await run(second);
  for (let p = 0; p < 10; p++) {
    const q = await json(await quota(accounts[p], profiles[p].up), 200);
    assert.equal(q.quota, QUOTA - spentFirst[p] - spentSecond[p], `profile ${p}`);
  }
});

test('exhaustion: the call that does not fit is 429 with Retry-After, nothing sent; next month starts full', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const profile = await profileOf(stack, account);
  // spend until less than a call's reservation is left
  let last;
  let call;
  for (let i = 0; i < 40; i++) {
    call = await signed(account, profile, setData(key(300 + i), '0x' + 'ff'.repeat(200)));
    const res = await post('/api/execute', call);
    last = await res.json();
    if (res.status === 429) break;
    assert.equal(res.status, 200, JSON.stringify(last));
  }
  assert.equal(last.error.code, 'QUOTA_EXCEEDED');
  const nonceBefore = await relayerNonce();
  const refused = await post('/api/execute', call);
  assert.equal(refused.status, 429);
  const retryAfter = Number(refused.headers.get('retry-after'));
  assert.ok(retryAfter > 0 && retryAfter <= 31 * 86400, String(retryAfter));
  assert.equal(await relayerNonce(), nonceBefore);
  const q = await json(await quota(account, profile.up), 200);
  assert.ok(q.quota >= 0 && q.quota < QUOTA);
  // the clock moved into the next month: full quota again, the call goes through
  await stack.restartWorker({ vars: { CLOCK_OFFSET_SECONDS: String(retryAfter + 60) } });
  try {
    const res = await post('/api/execute', call);
    const body = await json(res, 200);
    const used = await gasUsedOf(body.transactionHash);
    // the quota signature must be fresh in the Worker's (moved) clock: sign with that timestamp
    const timestamp = Math.floor(Date.now() / 1000) + retryAfter + 60;
    const signature = await account.signMessage({ message: `${profile.up}:${timestamp}` });
    const fresh = await json(await post('/api/quota', { address: profile.up, timestamp, signature }), 200);
    assert.equal(fresh.quota, QUOTA - used);
  } finally {
    await stack.restartWorker();
  }
});

test('a restart between send and receipt still settles the charge', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const profile = await profileOf(stack, account);
  await stack.chain.rpc('evm_setAutomine', [false]);
  let hash;
  try {
    const body = await json(await post('/api/execute', await signed(account, profile, setData(key(500), '0x05'))), 202);
    hash = body.transactionHash;
    await stack.restartWorker();
    await stack.chain.rpc('evm_mine', []);
  } finally {
    await stack.chain.rpc('evm_setAutomine', [true]);
  }
  const receipt = await stack.chain.rpc('eth_getTransactionReceipt', [hash]);
  assert.ok(receipt, 'mined');
  const used = Number(BigInt(receipt.gasUsed));
  // the Relayer object's alarm finds the receipt and settles
  let q;
  for (let i = 0; i < 40; i++) {
    // any request to the Relayer object after its restart makes sure its alarm runs
    await fetch(url(`/api/transaction/${hash}`));
    q = await json(await quota(account, profile.up), 200);
    if (q.quota === QUOTA - used) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.equal(q.quota, QUOTA - used);
  const status = await json(await fetch(url(`/api/transaction/${hash}`)), 200);
  assert.equal(status.status, 'mined');
  assert.equal(status.charged, used);
});

test('deploys are metered: key budget 429, oversized data 400, daily ceiling 503, usage listed', async () => {
  const small = await json(await stack.admin('POST', '/admin/api-keys', { name: 'small budget', gasBudgetPerMonth: 800_000 }), 201);
  const deploy = (apiKey, body) =>
    fetch(url('/api/universal-profile'), {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body ?? { lsp6ControllerAddress: [privateKeyToAccount(generatePrivateKey()).address] }),
    });
  await json(await deploy(small.apiKey), 200);
  const nonceBefore = await relayerNonce();
  const over = await deploy(small.apiKey);
  const refusal = await json(over, 429);
  assert.equal(refusal.error.code, 'GAS_BUDGET_EXCEEDED');
  assert.ok(Number(over.headers.get('retry-after')) > 0);
  assert.equal(await relayerNonce(), nonceBefore);
  const listed = (await json(await stack.admin('GET', '/admin/api-keys'), 200)).apiKeys.find((k) => k.id === small.id);
  assert.equal(listed.gasBudgetPerMonth, 800_000);
  assert.ok(listed.gasUsedThisMonth > 0 && listed.gasRemainingThisMonth === 800_000 - listed.gasUsedThisMonth);

  // a valid VerifiableURI (keccak256(utf8), 32-byte hash) with a 20 KB URL: over MAX_DEPLOY_DATA_BYTES (16 KiB)
  const longUrl = Buffer.from('ipfs://' + 'a'.repeat(20_000)).toString('hex');
  const oversized = await deploy(stack.apiKey, {
    lsp6ControllerAddress: [privateKeyToAccount(generatePrivateKey()).address],
    lsp3Profile: '0x00006f357c6a0020' + '11'.repeat(32) + longUrl,
  });
  const body = await json(oversized, 400);
  assert.equal(body.error.code, 'DEPLOY_DATA_TOO_LARGE');
  assert.equal(await relayerNonce(), nonceBefore);

  await stack.restartWorker({ vars: { MAX_GAS_PER_DAY: '1' } });
  try {
    const paused = await deploy(stack.apiKey);
    const answer = await json(paused, 503);
    assert.equal(answer.error.code, 'DAILY_GAS_CEILING');
    assert.ok(Number(paused.headers.get('retry-after')) > 0);
    assert.equal(await relayerNonce(), nonceBefore);
  } finally {
    await stack.restartWorker();
  }
});
