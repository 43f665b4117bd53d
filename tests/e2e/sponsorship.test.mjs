// Fair shares of the gas the relayer sponsors (docs/gasless.md#fair-shares): no controller, client address or API
// key takes more than its share of the day's ceiling, no client address more than its share of a key's deploy
// budget and request rate, no key or client more than the day's registrations — and everyone else is still served.
// The attacks of issue 45 at a small scale: profiles their owners deployed with LUKSO's factory (no relayer gas),
// registered with a public key, relayed until the share runs out. Signatures by viem (LSP25 digest built here per
// LIP-25); the refusal sends nothing (the relayer's nonce is read from anvil); gas figures are the receipts'.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { concat, decodeFunctionResult, encodeFunctionData, encodePacked, keccak256, pad, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DEV_ACCOUNTS } from '../../scripts/chain.mjs';
import { startStack } from '../../scripts/stack.mjs';
import { controllerData, factoryProfile } from './helpers/profile.mjs';
import { WAIT_FOR_RECEIPT } from './helpers/wait.mjs';

const CEILING = 20_000_000;
const FAIR = 2_000_000; // FAIR_SHARE_PERCENT 10
const KEY_SHARE = 3_000_000; // KEY_SHARE_PERCENT 15
/** More than one relay call of this file reserves (its gas limit: ~330,000 for the 200-byte setData): a share is
 * refused only once less than that is left of it. */
const ONE_CALL = 400_000;
const PER_CLIENT = 4;
const PER_KEY = 6;
const kmAbi = parseAbi(['function getNonce(address from, uint128 channel) view returns (uint256)']);
const upAbi = parseAbi(['function setData(bytes32 key, bytes value)']);
const deployer = DEV_ACCOUNTS[0].address;

let stack;
/** The Worker's clock at noon UTC of today when the test starts: every day-long share stays in one day however slow
 * the machine (a share that reset at midnight mid-test would let through a call the test expects refused). */
let clockOffset;
const vars = () => ({
  MAX_GAS_PER_DAY: String(CEILING),
  FAIR_SHARE_PERCENT: '10',
  KEY_SHARE_PERCENT: '15',
  TRUSTED_RESERVE_PERCENT: '20',
  MAX_REGISTRATIONS_PER_CLIENT_PER_DAY: String(PER_CLIENT),
  MAX_REGISTRATIONS_PER_KEY_PER_DAY: String(PER_KEY),
  PUBLIC_RATE_LIMIT_PER_MINUTE: '100000',
  DEPLOY_WAIT_SECONDS: '10',
  CLOCK_OFFSET_SECONDS: String(clockOffset),
});
before(async () => {
  const now = Math.floor(Date.now() / 1000);
  clockOffset = now - (now % 86400) + 43200 - now;
  stack = await startStack({ vars: vars() });
});
after(async () => {
  await stack?.stop();
});

const url = (p) => `${stack.workerUrl}${p}`;
const post = (path, body, headers = {}) =>
  fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
async function json(res, status) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  return body;
}
const rpc = (...args) => stack.chain.rpc(...args);
const relayerNonce = async () => Number(await rpc('eth_getTransactionCount', [stack.relayerAddress, 'pending']));
const gasUsedOf = async (hash) => Number(BigInt((await rpc('eth_getTransactionReceipt', [hash])).gasUsed));

let ips = 0;
/** A client address no other request of this file used. */
const freshIp = () => {
  ips += 1;
  return `198.51.${100 + Math.floor(ips / 250)}.${(ips % 250) + 1}`;
};

/** A new API key (admin route) with `register` and `deploy`. */
async function newKey(body = {}) {
  return json(await stack.admin('POST', '/admin/api-keys', { name: 'sponsorship test', scopes: ['register', 'deploy'], ...body }), 201);
}
const register = (key, up, ip) =>
  post('/api/universal-profile/register', { universalProfileAddress: up }, { authorization: `Bearer ${key.apiKey}`, 'cf-connecting-ip': ip });

/** A profile its owner deployed with LUKSO's factory, controlled by a new account, registered with `key` from `ip`. */
async function ownProfile(key, ip) {
  const account = privateKeyToAccount(generatePrivateKey());
  const profile = await factoryProfile(rpc, deployer, account.address);
  assert.equal((await json(await register(key, profile.up, ip), 200)).newlyRegistered, true);
  return { account, ...profile };
}

/** An LSP25 relay call of `setData(<fresh key>, 200 bytes)` signed by viem on `channel`. */
let calls = 0;
async function relayCall(account, { up, km }, channel = 0n) {
  calls += 1;
  const payload = encodeFunctionData({
    abi: upAbi,
    functionName: 'setData',
    args: [keccak256(new TextEncoder().encode(`sponsorship-${calls}`)), `0x${'ff'.repeat(200)}`],
  });
  const data = await rpc('eth_call', [
    { to: km, data: encodeFunctionData({ abi: kmAbi, functionName: 'getNonce', args: [account.address, channel] }) },
    'latest',
  ]);
  const nonce = decodeFunctionResult({ abi: kmAbi, functionName: 'getNonce', data });
  const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(stack.chain.chainId), nonce, 0n, 0n, payload]);
  const signature = await account.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
  return { address: up, transaction: { abi: payload, signature, nonce: `0x${nonce.toString(16)}`, validityTimestamps: '0x0' } };
}
/** A relay call from `ip`, waiting for its receipt (`Prefer: wait`): the tests read the mined answer's gas. */
const execute = (body, ip) => post('/api/execute', body, { 'cf-connecting-ip': ip, ...WAIT_FOR_RECEIPT });

/**
 * Relays calls chosen by `next(i)` → `{ account, profile, ip }` until one is refused: the receipts' gas of the
 * sponsored ones and the refusal (asserted to have sent nothing, with a `Retry-After` within `resetWithin` seconds).
 */
async function spendUntilRefused(next, max = 60, { resetWithin = 86400 } = {}) {
  let spent = 0;
  for (let i = 0; i < max; i++) {
    const { account, profile, ip } = next(i);
    const body = await relayCall(account, profile);
    const before = await relayerNonce();
    const res = await execute(body, ip);
    const answer = await res.json();
    if (res.status === 429) {
      assert.equal(await relayerNonce(), before, 'a refusal sends nothing');
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter > 0 && retryAfter <= resetWithin, `Retry-After ${retryAfter}`);
      return { spent, refusal: answer.error, sponsored: i };
    }
    assert.equal(res.status, 200, JSON.stringify(answer));
    spent += await gasUsedOf(answer.transactionHash);
  }
  assert.fail(`no refusal after ${max} calls (${spent} gas)`);
}

test('one controller over several profiles and client addresses gets its share of the day, others are served', async () => {
  const key = await newKey();
  const ip = freshIp();
  const first = await ownProfile(key, ip);
  // a second profile of the same controller, deployed and registered the same way
  const second = { account: first.account, ...(await factoryProfile(rpc, deployer, first.account.address)) };
  await json(await register(key, second.up, ip), 200);
  const { spent, refusal, sponsored } = await spendUntilRefused((i) => ({ account: first.account, profile: i % 2 ? second : first, ip: freshIp() }));
  assert.equal(refusal.code, 'POLICY_FAIR_SHARE');
  assert.match(refusal.message, /the controller 0x[0-9a-f]{40}/);
  assert.ok(spent <= FAIR && spent > FAIR - ONE_CALL, `${spent} gas in ${sponsored} calls`);
  // another controller, registered with the same key: served
  const other = await ownProfile(key, freshIp());
  await json(await execute(await relayCall(other.account, other), freshIp()), 200);
});

test('one client address relaying for many controllers gets its share; the same calls from elsewhere are served', async () => {
  const key = await newKey();
  const profiles = [];
  for (let i = 0; i < 3; i++) profiles.push(await ownProfile(key, freshIp()));
  const attacker = freshIp();
  const { spent, refusal } = await spendUntilRefused((i) => ({ account: profiles[i % 3].account, profile: profiles[i % 3], ip: attacker }));
  assert.equal(refusal.code, 'POLICY_FAIR_SHARE');
  assert.match(refusal.message, /this client address/);
  assert.ok(spent <= FAIR && spent > FAIR - ONE_CALL, String(spent));
  // the profiles and controllers are not spent: from another address the next call goes through
  await json(await execute(await relayCall(profiles[0].account, profiles[0]), freshIp()), 200);
});

test('the profiles of one key get the key share; a key the operator trusts is not bound by it', async () => {
  const key = await newKey();
  const profiles = [];
  for (let i = 0; i < 4; i++) profiles.push(await ownProfile(key, freshIp()));
  const { spent, refusal } = await spendUntilRefused((i) => ({ account: profiles[i % 4].account, profile: profiles[i % 4], ip: freshIp() }), 80);
  assert.equal(refusal.code, 'POLICY_FAIR_SHARE');
  assert.match(refusal.message, /the profiles of this API key/);
  assert.ok(spent <= KEY_SHARE && spent > KEY_SHARE - ONE_CALL, String(spent));
  // the operator marks the key trusted: the next call of its profiles goes through
  await stack.restartWorker({ vars: { ...vars(), TRUSTED_API_KEYS: key.id } });
  await json(await execute(await relayCall(profiles[1].account, profiles[1]), freshIp()), 200);
  await stack.restartWorker({ vars: vars() });
});

test('50 calls at once at a share: never more sponsored than the share, the refused ones send nothing', async () => {
  const key = await newKey();
  const profile = await ownProfile(key, freshIp());
  const bodies = [];
  for (let c = 1n; c <= 50n; c++) bodies.push(await relayCall(profile.account, profile, c));
  const before = await relayerNonce();
  const answers = await Promise.all(
    bodies.map(async (b) => {
      const res = await execute(b, freshIp());
      return { status: res.status, body: await res.json() };
    }),
  );
  const sponsored = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status !== 200);
  assert.ok(sponsored.length >= 5, `${sponsored.length} sponsored`);
  for (const r of refused) assert.deepEqual([r.status, r.body.error?.code], [429, 'POLICY_FAIR_SHARE']);
  let spent = 0;
  for (const s of sponsored) spent += await gasUsedOf(s.body.transactionHash);
  assert.ok(spent <= FAIR, `${spent} gas sponsored for one controller`);
  assert.equal(await relayerNonce(), before + sponsored.length, 'exactly the sponsored calls were sent');
});

test('registrations per client address and per key and day; a profile registered already is not counted', async () => {
  const key = await newKey();
  const [a, b] = [freshIp(), freshIp()];
  const fresh = async () => (await factoryProfile(rpc, deployer, privateKeyToAccount(generatePrivateKey()).address)).up;
  const first = [];
  for (let i = 0; i < PER_CLIENT; i++) {
    const up = await fresh();
    first.push(up);
    assert.equal((await json(await register(key, up, a), 200)).newlyRegistered, true);
  }
  const over = await fresh();
  const refused = await register(key, over, a);
  assert.equal((await json(refused, 429)).error.code, 'POLICY_REGISTRATIONS');
  assert.ok(Number(refused.headers.get('retry-after')) > 0);
  // registering again what is registered costs nothing and still answers
  assert.equal((await json(await register(key, first[0], a), 200)).newlyRegistered, false);
  // the same key from another address: its registrations up to the key's day
  for (let n = PER_CLIENT; n < PER_KEY; n++)
    assert.equal((await json(await register(key, n === PER_CLIENT ? over : await fresh(), b), 200)).newlyRegistered, true);
  const keyOver = await register(key, await fresh(), b);
  const body = await json(keyOver, 429);
  assert.equal(body.error.code, 'POLICY_REGISTRATIONS');
  assert.match(body.error.message, /this API key/);
  // nothing was registered by the refusals
  const status = await fetch(url(`/api/universal-profile/${await fresh()}`), {
    headers: { authorization: `Bearer ${key.apiKey}`, 'cf-connecting-ip': freshIp() },
  });
  assert.equal((await status.json()).registered ?? false, false);
});

test('one client address takes its share of a key request rate; another client of the key is served', async () => {
  const key = await newKey({ rateLimitPerMinute: 20 }); // 2 per client address and minute
  const profile = await ownProfile(key, freshIp());
  const flooder = freshIp();
  for (let i = 0; i < 2; i++) await json(await register(key, profile.up, flooder), 200);
  const limited = await register(key, profile.up, flooder);
  const body = await json(limited, 429);
  assert.equal(body.error.code, 'RATE_LIMITED');
  assert.match(body.error.message, /from one client address/);
  assert.ok(Number(limited.headers.get('retry-after')) > 0);
  await json(await register(key, profile.up, freshIp()), 200);
});

test('one client address takes its share of a key deploy budget; another client deploys', async () => {
  // 15M gas a month: 1.5M for one client address, two deploys' reservations
  const key = await newKey({ gasBudgetPerMonth: 15_000_000 });
  const deploy = (ip) =>
    post(
      '/api/universal-profile',
      { salt: pad(generatePrivateKey()), postDeploymentCallData: controllerData(privateKeyToAccount(generatePrivateKey()).address) },
      { authorization: `Bearer ${key.apiKey}`, 'cf-connecting-ip': ip },
    );
  const ip = freshIp();
  let deployed = 0;
  let refusal;
  for (let i = 0; i < 5 && !refusal; i++) {
    const before = await relayerNonce();
    const res = await deploy(ip);
    const answer = await res.json();
    if (res.status === 429) {
      refusal = answer.error;
      assert.equal(await relayerNonce(), before, 'a refusal sends nothing');
    } else {
      assert.equal(res.status, 200, JSON.stringify(answer));
      deployed += 1;
    }
  }
  assert.ok(deployed >= 1 && refusal, `${deployed} deploys, then ${JSON.stringify(refusal)}`);
  assert.equal(refusal.code, 'POLICY_FAIR_SHARE');
  assert.match(refusal.message, /one client address may take of the API key's deploy budget/);
  const answer = await json(await deploy(freshIp()), 200);
  assert.equal(await rpc('eth_getCode', [answer.universalProfileAddress, 'latest']).then((c) => c.length > 2), true);
});

test('a warm-up quota for newly registered profiles (WARMUP_GAS_QUOTA), the full quota after WARMUP_DAYS', async () => {
  const warmUp = 600_000;
  await stack.restartWorker({ vars: { ...vars(), WARMUP_GAS_QUOTA: String(warmUp), WARMUP_DAYS: '1' } });
  try {
    const key = await newKey();
    const account = privateKeyToAccount(generatePrivateKey());
    const profile = { account, ...(await factoryProfile(rpc, deployer, account.address)) };
    const registered = await json(await register(key, profile.up, freshIp()), 200);
    assert.deepEqual([registered.newlyRegistered, registered.quota.total], [true, warmUp]);
    // the month's quota resets at the next month (the warm-up's end does not show in Retry-After)
    const { spent, refusal } = await spendUntilRefused(() => ({ account, profile, ip: freshIp() }), 60, { resetWithin: 31 * 86400 });
    assert.equal(refusal.code, 'QUOTA_EXCEEDED');
    assert.ok(spent <= warmUp && spent > warmUp - ONE_CALL, String(spent));
    const status = await json(
      await fetch(url(`/api/universal-profile/${profile.up}`), { headers: { authorization: `Bearer ${key.apiKey}`, 'cf-connecting-ip': freshIp() } }),
      200,
    );
    assert.deepEqual([status.quota.total, status.quota.used], [warmUp, spent]);
    // a day and an hour later the profile has the monthly quota: the call refused before goes through
    await stack.restartWorker({ vars: { ...vars(), WARMUP_GAS_QUOTA: String(warmUp), WARMUP_DAYS: '1', CLOCK_OFFSET_SECONDS: String(clockOffset + 90_000) } });
    await json(await execute(await relayCall(account, profile), freshIp()), 200);
  } finally {
    await stack.restartWorker({ vars: vars() });
  }
});
