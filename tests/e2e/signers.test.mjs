// The signer pool: RELAYER_PRIVATE_KEY plus two keys of RELAYER_PRIVATE_KEYS, each with its own nonce lane (Relayer
// object). Requests spread over the signers by a rendezvous hash of the profile, a profile's work stays on its signer,
// a drained signer takes no new work while its pending transaction finishes, every signer drained answers 503, the
// meters stay exact with relay calls on several lanes at once, and the operator cancels and replaces a stuck
// transaction. anvil with the real LUKSO contracts (automine off where a transaction must stay pending); the Worker
// in `wrangler dev`; signatures by viem.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { concat, encodeFunctionData, encodePacked, keccak256, parseAbi, decodeFunctionResult } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { profileOf } from './helpers/profile.mjs';
import { until } from './helpers/poll.mjs';
import { waitFor } from './helpers/wait.mjs';

const QUOTA = 5_000_000;
const kmAbi = parseAbi(['function getNonce(address from, uint128 channel) view returns (uint256)']);
const upAbi = parseAbi(['function owner() view returns (address)', 'function setData(bytes32 key, bytes value)']);
const extraKeys = [generatePrivateKey(), generatePrivateKey()];

let stack;
let signers; // lower-case addresses, pool order (the legacy key first)
before(async () => {
  stack = await startStack({
    vars: {
      MONTHLY_GAS_QUOTA: String(QUOTA),
      DEPLOY_WAIT_SECONDS: '2',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '100000',
      // no automatic fee bumps: the replacements of this file are the operator's
      REPLACE_AFTER_SECONDS: '600',
    },
    // the format documented in docs/operations.md: comma-separated, blanks and a trailing comma ignored
    secrets: { RELAYER_PRIVATE_KEYS: ` ${extraKeys[0]}, ${extraKeys[1].slice(2)} ,` },
  });
  for (const key of extraKeys) {
    await stack.chain.rpc('anvil_setBalance', [privateKeyToAccount(key).address, '0x56bc75e2d63100000']);
  }
  signers = [stack.relayerAddress, ...extraKeys.map((k) => privateKeyToAccount(k).address)].map((a) => a.toLowerCase());
});
after(async () => {
  await stack?.chain.rpc('evm_setAutomine', [true]).catch(() => {});
  await stack?.stop();
});

const url = (p) => `${stack.workerUrl}${p}`;
const admin = () => ({ authorization: `Bearer ${stack.adminToken}` });
/** Relay calls here read the mined answer: they wait for the receipt. */
const post = (path, body, headers = {}) =>
  fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json', ...waitFor(path), ...headers }, body: JSON.stringify(body ?? {}) });
async function json(res, ...statuses) {
  const body = await res.json();
  assert.ok(statuses.includes(res.status), `${res.status} ${JSON.stringify(body)}`);
  return body;
}
const rpc = (method, params = []) => stack.chain.rpc(method, params);
async function read(to, abi, functionName, args = []) {
  const data = encodeFunctionData({ abi, functionName, args });
  return decodeFunctionResult({ abi, functionName, data: await rpc('eth_call', [{ to, data }, 'latest']) });
}
const relayerView = async () => json(await fetch(url('/admin/relayer'), { headers: admin() }), 200);
/** The pending transactions of every signer (GET /admin/relayer/transactions?state=pending). */
const pendingList = async () => json(await fetch(url('/admin/relayer/transactions?state=pending'), { headers: admin() }), 200);
/** The listed pending transaction of `signer` at `nonce`, if any. */
async function listed(signer, nonce) {
  const list = await pendingList();
  assert.equal(list.limitPerSigner, 100);
  assert.equal(list.truncated, false);
  return list.transactions.find((t) => t.signer.toLowerCase() === signer && t.nonce === nonce);
}
/** The development API key's meter, as the admin list shows it. */
async function keyUsage() {
  const { apiKeys } = await json(await fetch(url('/admin/api-keys'), { headers: admin() }), 200);
  const key = apiKeys.find((k) => k.name === 'development');
  assert.ok(key, JSON.stringify(apiKeys));
  return key;
}
const senderOf = async (hash) => (await rpc('eth_getTransactionByHash', [hash])).from.toLowerCase();
const gasUsedOf = async (hash) => Number(BigInt((await rpc('eth_getTransactionReceipt', [hash])).gasUsed));

/** The signer the pool picks for `profile` among `candidates`: highest keccak256(profile ‖ signer). */
function preferred(profile, candidates) {
  let best;
  let bestWeight = '';
  for (const s of candidates) {
    const w = keccak256(concat([profile.toLowerCase(), s]));
    if (w >= bestWeight) [best, bestWeight] = [s, w];
  }
  return best;
}

/** A Form 2 deployment whose profile address is known before it is sent. */
function newJob() {
  const { postDeploymentCallData } = sdk.profileDataFromControllers([privateKeyToAccount(generatePrivateKey()).address]);
  const salt = sdk.generateSalt();
  const profile = sdk.predictProfileAddress({ salt, postDeploymentCallData }).universalProfile;
  return { body: { salt, postDeploymentCallData }, profile };
}
/** A job whose profile the pool gives to `signer` (among `candidates`). */
function jobFor(signer, candidates = signers) {
  for (;;) {
    const job = newJob();
    if (preferred(job.profile, candidates) === signer) return job;
  }
}
const deploy = (body) => post('/api/universal-profile', body, { authorization: `Bearer ${stack.apiKey}` });

async function signed(account, { up, km }, payload, nonce) {
  const n = nonce ?? (await read(km, kmAbi, 'getNonce', [account.address, 0n]));
  const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(stack.chain.chainId), n, 0n, 0n, payload]);
  const signature = await account.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
  return { address: up, transaction: { abi: payload, signature, nonce: `0x${n.toString(16)}`, validityTimestamps: '0x0' } };
}
const setData = (n) => encodeFunctionData({ abi: upAbi, functionName: 'setData', args: [keccak256(new TextEncoder().encode(`signers-${n}`)), '0xc0ffee'] });
async function quotaLeft(account, up) {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = await account.signMessage({ message: { raw: keccak256(encodePacked(['address', 'uint256'], [up, BigInt(timestamp)])) } });
  return (await json(await post('/api/quota', { address: up, timestamp, signature }), 200)).quota;
}

test('the pool: every signer listed with its balance and lane; readiness checks each balance; no key answered', async () => {
  const view = await relayerView();
  assert.deepEqual(
    view.signers.map((s) => s.address.toLowerCase()),
    signers,
  );
  for (const s of view.signers) {
    assert.equal(s.state, 'active');
    assert.deepEqual(s.pending, { count: 0, oldestAgeSeconds: null });
    assert.equal(BigInt(s.balance), BigInt(await rpc('eth_getBalance', [s.address, 'latest'])));
  }
  assert.equal(view.signer.toLowerCase(), signers[0]);
  const ready = await (await fetch(url('/ready'))).json();
  for (const s of signers) {
    assert.equal(ready.checks.find((c) => c.name === `relayer:balance:${s}`)?.ok, true, JSON.stringify(ready));
  }
  assert.equal(ready.checks.find((c) => c.name === 'relayer:balance').ok, true);
  const everything = JSON.stringify(view) + JSON.stringify(ready);
  for (const key of extraKeys) assert.ok(!everything.includes(key.slice(2)), 'no key in an answer');
  const metrics = await (await fetch(url('/admin/metrics'), { headers: admin() })).text();
  for (const s of signers) assert.match(metrics, new RegExp(`relayer_signer_balance_wei\\{chain_id="31337",signer="${s}"\\} \\d`));
});

test('deploys spread over the signers as the rendezvous hash says; a profile’s relay calls stay on its signer', async () => {
  const used = new Set();
  const jobs = Array.from({ length: 9 }, newJob);
  const keyBefore = await keyUsage();
  const dayBefore = (await relayerView()).today.gasUsed;
  const answers = await Promise.all(jobs.map(async (job) => json(await deploy(job.body), 200)));
  for (const [i, a] of answers.entries()) {
    const from = await senderOf(a.transactionHash);
    assert.equal(from, preferred(jobs[i].profile, signers), `profile ${jobs[i].profile}`);
    used.add(from);
  }
  assert.ok(used.size >= 2, `nine profiles on ${used.size} signer(s)`);
  // the API key's month and the relayer's day, shared by the lanes: exactly the receipts, once each
  const sum = (await Promise.all(answers.map((a) => gasUsedOf(a.transactionHash)))).reduce((a, b) => a + b, 0);
  const keyAfter = await keyUsage();
  assert.equal(keyAfter.gasUsedThisMonth - keyBefore.gasUsedThisMonth, sum, 'the key meter is the sum of the receipts');
  assert.equal(keyAfter.gasReservedThisMonth, 0);
  assert.equal((await relayerView()).today.gasUsed - dayBefore, sum, 'the daily meter is the sum of the receipts');
  // three relay calls of one profile, one after the other: all by the profile's signer
  const account = privateKeyToAccount(generatePrivateKey());
  const profile = await profileOf(stack, account);
  const mine = preferred(profile.up, signers);
  assert.equal(await senderOf(profile.hash), mine);
  for (let i = 0; i < 3; i++) {
    const answer = await json(await post('/api/execute', await signed(account, profile, setData(`seq-${i}`))), 200);
    assert.equal(await senderOf(answer.transactionHash), mine, `call ${i}`);
  }
});

test('relay calls on several signers at once: the shared meters are charged exactly the receipts', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const profiles = [];
  for (let i = 0; i < 9; i++) profiles.push(await profileOf(stack, account));
  assert.ok(new Set(profiles.map((p) => preferred(p.up, signers))).size >= 2, 'the profiles are on several signers');
  const calls = await Promise.all(profiles.map((p, i) => signed(account, p, setData(`c-${i}`), 0n)));
  const before = await relayerView();
  const answers = await Promise.all(calls.map(async (call) => json(await post('/api/execute', call), 200)));
  const hashes = answers.map((a) => a.transactionHash);
  assert.equal(new Set(hashes).size, 9);
  const senders = new Set(await Promise.all(hashes.map(senderOf)));
  assert.ok(senders.size >= 2, `sent by ${senders.size} signer(s)`);
  const gas = await Promise.all(hashes.map(gasUsedOf));
  const sum = gas.reduce((a, b) => a + b, 0);
  const after = await relayerView();
  assert.equal(after.today.gasUsed - before.today.gasUsed, sum, 'the daily meter is the sum of the receipts of every signer');
  assert.equal(after.today.gasReserved, 0, 'nothing left reserved');
  for (let i = 0; i < 9; i++) assert.equal(await quotaLeft(account, profiles[i].up), QUOTA - gas[i], `profile ${i}`);
  // replayed at once on every lane: refused, nothing sent by any signer
  const nonces = await Promise.all(signers.map((s) => rpc('eth_getTransactionCount', [s, 'pending'])));
  const again = await Promise.all(calls.map((call) => post('/api/execute', call)));
  for (const res of again) assert.equal((await res.json()).error.code, 'INVALID_RELAY_NONCE');
  assert.deepEqual(await Promise.all(signers.map((s) => rpc('eth_getTransactionCount', [s, 'pending']))), nonces);
});

test('drain: new work goes elsewhere, the pending deploy finishes on the drained signer; all drained answers 503', async () => {
  const drained = signers[1];
  const stuck = jobFor(drained);
  await rpc('evm_setAutomine', [false]);
  try {
    const first = await json(await deploy(stuck.body), 202);
    assert.equal(await senderOf(first.transactionHash), drained);
    assert.equal((await post(`/admin/relayer/signers/${drained}/drain`)).status, 401);
    const view = await json(await post(`/admin/relayer/signers/${drained}/drain`, {}, admin()), 200);
    assert.equal(view.state, 'draining');
    assert.equal(view.pending.count, 1);
    assert.equal((await relayerView()).signers[1].state, 'draining');
    // the same deploy again: answered with the same transaction by the lane that holds it, never sent twice
    const replay = await json(await deploy(stuck.body), 202);
    assert.equal(replay.transactionHash, first.transactionHash);
    // a new profile the hash gives to the drained signer: sent by the signer next in rank
    const moved = jobFor(drained);
    const answer = await json(await deploy(moved.body), 202);
    const from = await senderOf(answer.transactionHash);
    assert.notEqual(from, drained);
    assert.equal(
      from,
      preferred(
        moved.profile,
        signers.filter((s) => s !== drained),
      ),
    );
    await rpc('evm_mine');
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  // the drained signer's deploy is mined and finished: its lane empties
  await until('the drained lane empties', async () => (await relayerView()).signers[1].pending?.count === 0);
  // (the moved deploy too, on its own lane: settled before the next test reads the meters)
  await until('every lane empties', async () => (await relayerView()).pending.count === 0);
  assert.notEqual(await rpc('eth_getCode', [stuck.profile, 'latest']), '0x');
  // every signer drained: 503, nothing sent
  for (const s of signers) await json(await post(`/admin/relayer/signers/${s}/drain`, {}, admin()), 200);
  const nonces = await Promise.all(signers.map((s) => rpc('eth_getTransactionCount', [s, 'pending'])));
  const refused = await deploy(newJob().body);
  assert.equal(refused.status, 503);
  assert.equal((await refused.json()).error.code, 'NO_ACTIVE_SIGNER');
  assert.ok(refused.headers.get('retry-after'));
  assert.deepEqual(await Promise.all(signers.map((s) => rpc('eth_getTransactionCount', [s, 'pending']))), nonces);
  for (const s of signers) assert.equal((await json(await post(`/admin/relayer/signers/${s}/activate`, {}, admin()), 200)).state, 'active');
  // unknown or malformed signer
  assert.equal((await json(await post(`/admin/relayer/signers/0x${'00'.repeat(20)}/drain`, {}, admin()), 404)).error.code, 'SIGNER_NOT_FOUND');
  assert.equal((await post('/admin/relayer/signers/nope/drain', {}, admin())).status, 400);
  await json(await deploy(newJob().body), 200);
});

test('replace then cancel a stuck deploy: same nonce, records replaced / dropped, the cancel charged to the relayer only', async () => {
  const owner = signers[2];
  const job = jobFor(owner);
  const before = await relayerView();
  await rpc('evm_setAutomine', [false]);
  let cancel;
  let replaced;
  let h1;
  let nonce;
  try {
    const asked = Date.now();
    h1 = (await json(await deploy(job.body), 202)).transactionHash;
    const tx1 = await rpc('eth_getTransactionByHash', [h1]);
    nonce = Number(BigInt(tx1.nonce));
    // the pending list shows it; the admin token is required, and only state=pending is listed
    assert.equal((await fetch(url('/admin/relayer/transactions?state=pending'))).status, 401);
    assert.equal((await json(await fetch(url('/admin/relayer/transactions?state=mined'), { headers: admin() }), 400)).error.code, 'INVALID_PARAMETER');
    const l1 = await listed(owner, nonce);
    assert.ok(l1, 'the stuck deploy is listed');
    assert.equal(l1.hash, h1);
    assert.equal(l1.kind, 'deploy');
    assert.equal(l1.profile.toLowerCase(), job.profile.toLowerCase());
    assert.equal(l1.feeBumps, 0);
    assert.equal(l1.cancelled, false);
    // sent while the deploy was asked for (from the second it was asked in)
    assert.ok(l1.firstSentAt >= Math.floor(asked / 1000) && l1.firstSentAt <= Date.now() / 1000, `first sent at ${l1.firstSentAt}`);
    assert.equal((await post(`/admin/relayer/transactions/${h1}/replace`)).status, 401);
    replaced = await json(await post(`/admin/relayer/transactions/${h1}/replace`, {}, admin()), 200);
    assert.equal(replaced.signer.toLowerCase(), owner);
    assert.equal(replaced.replaced, h1);
    assert.equal(replaced.nonce, Number(BigInt(tx1.nonce)));
    const tx2 = await rpc('eth_getTransactionByHash', [replaced.transactionHash]);
    assert.equal(tx2.nonce, tx1.nonce);
    assert.equal(tx2.input, tx1.input, 'the same job');
    assert.ok(BigInt(tx2.maxFeePerGas) >= (BigInt(tx1.maxFeePerGas) * 11n) / 10n, 'fees bumped by at least 10%');
    const r1 = await json(await fetch(url(`/api/transaction/${h1}`)), 200);
    assert.equal(r1.status, 'replaced');
    assert.equal(r1.replacedBy, replaced.transactionHash);
    const l2 = await listed(owner, nonce);
    assert.equal(l2.hash, replaced.transactionHash, 'the list shows the latest hash of the nonce');
    assert.equal(l2.feeBumps, 1);
    assert.equal(l2.firstSentAt, l1.firstSentAt);
    cancel = await json(await post(`/admin/relayer/transactions/${replaced.transactionHash}/cancel`, {}, admin()), 200);
    const tx3 = await rpc('eth_getTransactionByHash', [cancel.transactionHash]);
    assert.equal(tx3.nonce, tx1.nonce);
    assert.equal(tx3.to.toLowerCase(), owner, 'a transfer to the signer itself');
    assert.equal(BigInt(tx3.value), 0n);
    assert.equal(tx3.input, '0x');
    assert.ok(BigInt(tx3.maxFeePerGas) > BigInt(tx2.maxFeePerGas));
    assert.equal((await json(await fetch(url(`/api/transaction/${replaced.transactionHash}`)), 200)).status, 'dropped');
    const l3 = await listed(owner, nonce);
    assert.equal(l3.hash, cancel.transactionHash);
    assert.equal(l3.cancelled, true);
    assert.equal(l3.feeBumps, 2);
    // cancelled already: refused, nothing sent
    const count = await rpc('eth_getTransactionCount', [owner, 'pending']);
    assert.equal((await json(await post(`/admin/relayer/transactions/${h1}/cancel`, {}, admin()), 409)).error.code, 'TRANSACTION_NOT_PENDING');
    assert.equal(await rpc('eth_getTransactionCount', [owner, 'pending']), count);
    await rpc('evm_mine');
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  const receipt = await until('the cancel mined', () => rpc('eth_getTransactionReceipt', [cancel.transactionHash]));
  assert.equal(receipt.status, '0x1');
  assert.equal(await rpc('eth_getCode', [job.profile, 'latest']), '0x', 'the deployment never happened');
  await until('the lane empties', async () => (await relayerView()).signers[2].pending?.count === 0);
  assert.equal(await listed(owner, nonce), undefined, 'mined: no longer listed');
  const after = await relayerView();
  assert.equal(after.today.gasUsed - before.today.gasUsed, 21_000, 'the relayer pays the self-transfer, once');
  assert.equal(after.today.gasReserved, before.today.gasReserved, 'the deploy reservation is released');
  // mined now: a replace is refused and sends nothing
  const count = await rpc('eth_getTransactionCount', [owner, 'pending']);
  assert.equal((await json(await post(`/admin/relayer/transactions/${h1}/replace`, {}, admin()), 409)).error.code, 'TRANSACTION_NOT_PENDING');
  assert.equal((await json(await post(`/admin/relayer/transactions/0x${'ab'.repeat(32)}/replace`, {}, admin()), 404)).error.code, 'TRANSACTION_NOT_FOUND');
  assert.equal((await post('/admin/relayer/transactions/0x12/cancel', {}, admin())).status, 400);
  assert.equal(await rpc('eth_getTransactionCount', [owner, 'pending']), count);
  // the deployment can be asked again: a new transaction
  await json(await deploy(job.body), 200);
});
