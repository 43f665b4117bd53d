// Gasless relay benchmark against the local stack (wrangler dev + anvil). Bounded: 30 sequential executes, 40
// concurrent executes across 10 profiles, 100 concurrent debits on one profile.
//   1. overhead: POST /api/execute with `Prefer: wait` (every check, the reservation, the nonce lane, the receipt, the
//      settlement) against the same signed executeRelayCall sent straight to anvil by a funded account and polled to
//      its receipt; and answered on send (no Prefer: the 202) against the direct send's own answer;
//   2. throughput of concurrent executes across profiles;
//   3. 100 concurrent debits on one profile (100 channels): the quota falls by exactly the sum of the receipts.
//
//   source scripts/setup.sh && cd tests && node bench/execute.bench.mjs
//   ... execute.bench.mjs --quick   (the test command's smoke run: 3 sequential, 2 × 2 concurrent, 10 debits; same checks)
import assert from 'node:assert/strict';
import { concat, encodeFunctionData, encodePacked, keccak256, parseAbi, decodeFunctionResult } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { waitForReceipt } from '../../scripts/chain.mjs';
import { startStack } from '../../scripts/stack.mjs';
import { WAIT_FOR_RECEIPT } from '../e2e/helpers/wait.mjs';

const QUICK = process.argv.includes('--quick');
const N = QUICK ? { sequential: 3, profiles: 2, channels: 2n, debits: 10n } : { sequential: 30, profiles: 10, channels: 4n, debits: 100n };
const QUOTA = 1_000_000_000;
const stack = await startStack({ vars: { MONTHLY_GAS_QUOTA: String(QUOTA), PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' } });
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const kmAbi = parseAbi([
  'function getNonce(address from, uint128 channel) view returns (uint256)',
  'function executeRelayCall(bytes signature, uint256 nonce, uint256 validityTimestamps, bytes payload) payable returns (bytes)',
]);
const upAbi = parseAbi(['function owner() view returns (address)', 'function setData(bytes32 key, bytes value)']);
const url = (p) => `${stack.workerUrl}${p}`;
// a request that never answers fails the bench after a minute instead of hanging it (seen once on a loaded machine);
// relay calls wait for their receipt (`Prefer: wait`, capped at DEPLOY_WAIT_SECONDS) unless `wait` is false
const post = (path, body, { wait = true } = {}) =>
  fetch(url(path), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(wait ? WAIT_FOR_RECEIPT : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
async function read(to, abi, functionName, args = []) {
  const out = await stack.chain.rpc('eth_call', [{ to, data: encodeFunctionData({ abi, functionName, args }) }, 'latest']);
  return decodeFunctionResult({ abi, functionName, data: out });
}
async function profileOf(account) {
  const { apiKey } = stack;
  const res = await fetch(url('/api/universal-profile'), {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lsp6ControllerAddress: [account.address] }),
  });
  const { universalProfileAddress: up } = await res.json();
  return { up, km: await read(up, upAbi, 'owner') };
}
async function signedCall(account, { km }, n, i, channel = 0n) {
  const nonce = (channel << 128n) | BigInt(n);
  const payload = encodeFunctionData({ abi: upAbi, functionName: 'setData', args: [keccak256(`0x${i.toString(16).padStart(8, '0')}`), '0x01'] });
  const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(stack.chain.chainId), nonce, 0n, 0n, payload]);
  const signature = await account.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
  return { nonce, payload, signature };
}
const body = (up, c) => ({ address: up, transaction: { abi: c.payload, signature: c.signature, nonce: `0x${c.nonce.toString(16)}` } });
const gasUsedOf = async (hash) => Number(BigInt((await stack.chain.rpc('eth_getTransactionReceipt', [hash])).gasUsed));
async function quota(account, up) {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = await account.signMessage({ message: `${up}:${timestamp}` });
  return (await (await post('/api/quota', { address: up, timestamp, signature })).json()).quota;
}

try {
  // 1. overhead: alternate the service and the direct send of equivalent calls (nonces interleaved on channel 0)
  const account = privateKeyToAccount(generatePrivateKey());
  const profile = await profileOf(account);
  const sender = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'; // anvil's funded account
  const service = [];
  const direct = [];
  const onSend = [];
  const directSend = [];
  let n = Number(await read(profile.km, kmAbi, 'getNonce', [account.address, 0n]));
  for (let i = 0; i < N.sequential; i++) {
    // answered on send (no Prefer): the service's 202 against the node's answer to the same call sent directly
    const c = await signedCall(account, profile, n++, 3000 + i);
    const t4 = performance.now();
    const sent = await post('/api/execute', body(profile.up, c), { wait: false });
    assert.equal(sent.status, 202, JSON.stringify(await sent.clone().json()));
    const { transactionHash } = await sent.json();
    onSend.push(performance.now() - t4);
    await waitForReceipt(stack.chain.rpc, transactionHash);
    const d = await signedCall(account, profile, n++, 4000 + i);
    const direct2 = encodeFunctionData({ abi: kmAbi, functionName: 'executeRelayCall', args: [d.signature, d.nonce, 0n, d.payload] });
    const t5 = performance.now();
    const directHash = await stack.chain.rpc('eth_sendTransaction', [{ from: sender, to: profile.km, data: direct2 }]);
    directSend.push(performance.now() - t5);
    assert.equal((await waitForReceipt(stack.chain.rpc, directHash)).status, '0x1');
    // waiting for the receipt (Prefer: wait) against the direct send polled to its receipt
    const a = await signedCall(account, profile, n++, 1000 + i);
    const t0 = performance.now();
    const res = await post('/api/execute', body(profile.up, a));
    assert.equal(res.status, 200, JSON.stringify(await res.clone().json()));
    await res.json();
    service.push(performance.now() - t0);
    const b = await signedCall(account, profile, n++, 2000 + i);
    const data = encodeFunctionData({ abi: kmAbi, functionName: 'executeRelayCall', args: [b.signature, b.nonce, 0n, b.payload] });
    const t1 = performance.now();
    const hash = await stack.chain.rpc('eth_sendTransaction', [{ from: sender, to: profile.km, data }]);
    assert.equal((await waitForReceipt(stack.chain.rpc, hash)).status, '0x1');
    direct.push(performance.now() - t1);
  }

  // 2. concurrent executes across 10 profiles (4 channels each)
  const accounts = Array.from({ length: N.profiles }, () => privateKeyToAccount(generatePrivateKey()));
  const profiles = [];
  for (const a of accounts) profiles.push(await profileOf(a));
  const calls = [];
  for (let p = 0; p < N.profiles; p++)
    for (let c = 1n; c <= N.channels; c++) calls.push([p, body(profiles[p].up, await signedCall(accounts[p], profiles[p], 0, p * 10 + Number(c), c))]);
  const t2 = performance.now();
  const answers = await Promise.all(calls.map(([, b]) => post('/api/execute', b).then((r) => r.json())));
  const concurrentMs = performance.now() - t2;
  assert.ok(
    answers.every((a) => a.status === 'mined'),
    JSON.stringify(answers.find((a) => a.status !== 'mined')),
  );

  // 3. concurrent debits on one profile, each on a nonce channel of its own
  const heavy = privateKeyToAccount(generatePrivateKey());
  const heavyProfile = await profileOf(heavy);
  const debits = [];
  for (let c = 1n; c <= N.debits; c++) debits.push(body(heavyProfile.up, await signedCall(heavy, heavyProfile, 0, 5000 + Number(c), c)));
  const t3 = performance.now();
  const debited = await Promise.all(debits.map((b) => post('/api/execute', b).then((r) => r.json())));
  const debitMs = performance.now() - t3;
  let sum = 0;
  for (const d of debited) sum += await gasUsedOf(d.transactionHash);
  const left = await quota(heavy, heavyProfile.up);

  assert.equal(answers.length, calls.length);
  assert.ok(
    debited.every((d) => d.status === 'mined'),
    JSON.stringify(debited.find((d) => d.status !== 'mined')),
  );
  const overhead = service.map((s, i) => s - direct[i]);
  const sendOverhead = onSend.map((s, i) => s - directSend[i]);
  if (QUICK) console.log('quick run (smoke test: small counts, figures not comparable with BENCHMARKS.md)');
  console.log(
    `execute (${N.sequential} sequential): service p50 ${percentile(service, 50).toFixed(1)} ms, p99 ${percentile(service, 99).toFixed(1)} ms; the same call sent straight to anvil p50 ${percentile(direct, 50).toFixed(1)} ms; overhead p50 ${percentile(overhead, 50).toFixed(1)} ms, p99 ${percentile(overhead, 99).toFixed(1)} ms`,
  );
  console.log(
    `execute answered on send (${N.sequential} sequential, no Prefer): service p50 ${percentile(onSend, 50).toFixed(1)} ms, p99 ${percentile(onSend, 99).toFixed(1)} ms; the same call's eth_sendTransaction to anvil p50 ${percentile(directSend, 50).toFixed(1)} ms; overhead p50 ${percentile(sendOverhead, 50).toFixed(1)} ms, p99 ${percentile(sendOverhead, 99).toFixed(1)} ms`,
  );
  console.log(
    `${calls.length} concurrent executes across ${N.profiles} profiles: all mined in ${concurrentMs.toFixed(0)} ms (${((calls.length * 1000) / concurrentMs).toFixed(1)} executes/s)`,
  );
  console.log(
    `${debited.length} concurrent debits on one profile: ${debited.length} mined in ${debitMs.toFixed(0)} ms; receipts sum ${sum} gas, quota fell by ${QUOTA - left} gas, lost or doubled: ${QUOTA - left - sum}`,
  );
  assert.equal(QUOTA - left, sum);
} finally {
  await stack.stop();
}
