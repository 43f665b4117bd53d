// Money is counted exactly: every relayed transaction is charged once to each meter it goes to (the profile's
// month, the relayer's day), also when many calls share a signer and an LSP25 nonce across profiles, and a
// reservation that is never settled expires, while its transaction, mined late, is still charged. The operator's
// view of it is `GET /admin/relayer`. Signatures by viem; anvil with the real LUKSO contracts; the Worker in
// `wrangler dev`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { concat, encodeFunctionData, encodePacked, keccak256, parseAbi, decodeFunctionResult } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startStack } from '../../scripts/stack.mjs';
import { profileOf } from './helpers/profile.mjs';
import { until } from './helpers/poll.mjs';
import { waitFor } from './helpers/wait.mjs';

const QUOTA = 5_000_000;
/** RESERVATION_TTL_SECONDS of this stack: short, to see a reservation expire. */
const TTL_SECONDS = 10;
const kmAbi = parseAbi(['function getNonce(address from, uint128 channel) view returns (uint256)']);
const upAbi = parseAbi(['function owner() view returns (address)', 'function setData(bytes32 key, bytes value)']);

let stack;
before(async () => {
  stack = await startStack({
    vars: {
      MONTHLY_GAS_QUOTA: String(QUOTA),
      DEPLOY_WAIT_SECONDS: '3',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '100000',
      RESERVATION_TTL_SECONDS: String(TTL_SECONDS),
    },
  });
});
after(async () => {
  await stack?.stop();
});

const url = (p) => `${stack.workerUrl}${p}`;
/** Relay calls here read the mined answer: they wait for the receipt. */
const post = (path, body, headers = {}) =>
  fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json', ...waitFor(path), ...headers }, body: JSON.stringify(body) });
async function json(res, ...statuses) {
  const body = await res.json();
  assert.ok(statuses.includes(res.status), `${res.status} ${JSON.stringify(body)}`);
  return body;
}
async function read(to, abi, functionName, args = []) {
  const data = encodeFunctionData({ abi, functionName, args });
  const out = await stack.chain.rpc('eth_call', [{ to, data }, 'latest']);
  return decodeFunctionResult({ abi, functionName, data: out });
}
const relayerView = async () => json(await fetch(url('/admin/relayer'), { headers: { authorization: `Bearer ${stack.adminToken}` } }), 200);
const gasUsedOf = async (hash) => Number(BigInt((await stack.chain.rpc('eth_getTransactionReceipt', [hash])).gasUsed));

/** An LSP25 relay call signed by viem at the Key Manager's current nonce (or `nonce`). */
async function signed(account, { up, km }, payload, nonce) {
  const n = nonce ?? (await read(km, kmAbi, 'getNonce', [account.address, 0n]));
  const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(stack.chain.chainId), n, 0n, 0n, payload]);
  const signature = await account.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
  return { address: up, transaction: { abi: payload, signature, nonce: `0x${n.toString(16)}`, validityTimestamps: '0x0' } };
}
const setData = (n) => encodeFunctionData({ abi: upAbi, functionName: 'setData', args: [keccak256(new TextEncoder().encode(`metering-${n}`)), '0xc0ffee'] });

async function quotaLeft(account, up) {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = await account.signMessage({ message: { raw: keccak256(encodePacked(['address', 'uint256'], [up, BigInt(timestamp)])) } });
  return (await json(await post('/api/quota', { address: up, timestamp, signature }), 200)).quota;
}

/** Polls `check` until it returns true or `ms` pass. */
const eventually = (check, ms, what) => until(what, check, { timeoutMs: ms, intervalMs: 250 });

test('GET /admin/relayer: signer, balance, meters, lane; admin token required', async () => {
  assert.equal((await fetch(url('/admin/relayer'))).status, 401);
  assert.equal((await fetch(url('/admin/relayer'), { headers: { authorization: 'Bearer wrong' } })).status, 401);
  const view = await relayerView();
  assert.equal(view.chainId, stack.chain.chainId);
  assert.equal(view.signer.toLowerCase(), stack.relayerAddress.toLowerCase());
  assert.equal(BigInt(view.balance), BigInt(await stack.chain.rpc('eth_getBalance', [stack.relayerAddress, 'latest'])));
  assert.equal(view.today.ceiling, 500_000_000);
  assert.equal(view.today.remaining, view.today.ceiling - view.today.gasUsed - view.today.gasReserved);
  assert.ok(view.month.gasUsed >= view.today.gasUsed);
  assert.deepEqual(view.pending, { count: 0, oldestAgeSeconds: null });
});

test('8 relay calls at once, one signer and nonce across 8 profiles: each meter charged exactly the receipts', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const profiles = [];
  for (let i = 0; i < 8; i++) profiles.push(await profileOf(stack, account));
  // every profile's Key Manager expects nonce 0 from this signer: the same (signer, channel, nonce) eight times
  const calls = await Promise.all(profiles.map((p, i) => signed(account, p, setData(i), 0n)));
  const before = await relayerView();
  const answers = await Promise.all(calls.map(async (call) => json(await post('/api/execute', call), 200)));
  const hashes = answers.map((a) => a.transactionHash);
  assert.equal(new Set(hashes).size, 8, 'eight transactions');
  const gas = await Promise.all(hashes.map(gasUsedOf));
  const sum = gas.reduce((a, b) => a + b, 0);
  const after = await relayerView();
  assert.equal(after.today.gasUsed - before.today.gasUsed, sum, 'the daily meter is the sum of the receipts');
  assert.equal(after.month.gasUsed - before.month.gasUsed, sum);
  assert.equal(after.today.gasReserved, 0, 'nothing left reserved');
  for (let i = 0; i < 8; i++) {
    assert.equal(answers[i].gasUsed, gas[i]);
    assert.equal(await quotaLeft(account, profiles[i].up), QUOTA - gas[i], `profile ${i} charged its own receipt`);
  }
  // the same calls again: refused (the nonce is used), nothing sent, nothing charged
  const nonce = await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'pending']);
  const again = await Promise.all(calls.map((call) => post('/api/execute', call)));
  for (const res of again) assert.equal((await res.json()).error.code, 'INVALID_RELAY_NONCE');
  assert.equal(await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'pending']), nonce);
  assert.equal((await relayerView()).today.gasUsed, after.today.gasUsed);
});

test('a reservation never settled expires after its TTL; the transaction mined late is still charged once', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const profile = await profileOf(stack, account);
  const call = await signed(account, profile, setData('late'));
  const before = await relayerView();
  await stack.chain.rpc('evm_setAutomine', [false]);
  let hash;
  try {
    // not mined within DEPLOY_WAIT_SECONDS: answered pending, its gas limit reserved on both meters — until the TTL
    // from its reservation, made after `asked`: what is read back before asked + TTL (less a second of the meters'
    // whole-second clock) must show it, whatever the time the machine took
    const asked = Date.now();
    const unexpired = () => Date.now() - asked < (TTL_SECONDS - 1) * 1000;
    const pending = await json(await post('/api/execute', call), 202);
    hash = pending.transactionHash;
    const reservedView = await relayerView();
    const reserved = reservedView.today.gasReserved - before.today.gasReserved;
    if (unexpired()) assert.ok(reserved > 0, 'reserved on the daily meter');
    assert.equal(reservedView.pending.count, 1);
    assert.ok(reservedView.pending.oldestAgeSeconds >= 0);
    const left = await quotaLeft(account, profile.up);
    if (unexpired()) assert.equal(left, QUOTA - reserved, 'reserved on the profile');
    // the TTL passes: the meters' alarms give the gas back
    await eventually(async () => (await relayerView()).today.gasReserved === before.today.gasReserved, 60_000, 'daily reservation expired');
    await eventually(async () => (await quotaLeft(account, profile.up)) === QUOTA, 60_000, 'profile reservation expired');
  } finally {
    await stack.chain.rpc('evm_setAutomine', [true]);
  }
  await stack.chain.rpc('evm_mine', []);
  // the lane's alarm finds the receipt and settles it: charged, once, although its reservation had expired
  const used = await gasUsedOf(hash);
  await eventually(async () => (await quotaLeft(account, profile.up)) === QUOTA - used, 60_000, 'late receipt charged to the profile');
  await eventually(async () => (await relayerView()).today.gasUsed === before.today.gasUsed + used, 60_000, 'late receipt charged to the day');
  const status = await json(await fetch(url(`/api/transaction/${hash}`)), 200);
  assert.equal(status.status, 'mined');
  assert.equal(status.charged, used);
  const view = await relayerView();
  assert.equal(view.today.gasReserved, 0);
  assert.deepEqual(view.pending, { count: 0, oldestAgeSeconds: null });
});
