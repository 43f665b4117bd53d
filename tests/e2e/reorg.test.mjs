// Reorganizations on anvil (evm_snapshot / evm_revert: the blocks after the snapshot are dropped, the chain grows
// again with other blocks of the same numbers and other hashes). The indexer remembers the hash of the block each
// window ended at, sees the chain drop it, rewinds to the common ancestor and re-checks what it read past it: an
// asset created in a dropped block leaves lookup and search, one created on the new chain is found. With
// INDEXER_CONFIRMATIONS=N nothing is read from the N newest blocks. The relayer watches a mined transaction until it
// is N deep: reorganized away, it goes back to pending, is broadcast again from its stored bytes and mined again,
// and its gas is charged once, at depth (meters read through /api/quota and /admin/relayer).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { concat, decodeFunctionResult, encodeFunctionData, encodePacked, keccak256, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { until } from './helpers/poll.mjs';
import { OWNER, indexing } from './helpers/indexing.mjs';
import { freshness } from './helpers/freshness.mjs';
import { compileAttacker } from './helpers/solc.mjs';
import { rpcOutage } from './helpers/rpc-outage.mjs';
import { waitFor } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const LSP7 = require('@lukso/lsp7-contracts/artifacts/LSP7Mintable.json');

let stack;
before(async () => {
  stack = await startStack({ vars: { LOOKUP_CACHE_SECONDS: '0', LOOKUP_MISS_SECONDS: '0', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' } });
});
after(async () => {
  await stack?.stop();
});
const { get, metadataUri, deploy, send } = indexing(() => stack);
const { searchUntil, deployNamed } = freshness(() => stack);

const rpc = (method, params = []) => stack.chain.rpc(method, params);
const head = async () => Number(await rpc('eth_blockNumber'));
const mine = (n) => rpc('anvil_mine', [`0x${n.toString(16)}`]);
const unique = (word) => `${word}${Math.random().toString(36).slice(2, 8)}`;

/** Deploys an LSP7 asset named `name` with its metadata set (two blocks); its address. */
const asset = async (name) => {
  const uri = await metadataUri({ LSP4Metadata: { name, description: 'reorg test', links: [], icon: [], images: [], assets: [] } });
  const token = await deploy(LSP7, [name, 'RORG', OWNER, 0n, false]);
  await send({ to: token, data: encodeFunctionData({ abi: LSP7.abi, functionName: 'setData', args: [sdk.encodeKeyName('LSP4Metadata'), uri] }) });
  return token;
};

/** One indexer run (POST /admin/indexer/run); its stats. */
const run = async () => {
  const res = await stack.admin('POST', '/admin/indexer/run');
  const stats = await res.json();
  assert.equal(res.status, 200, JSON.stringify(stats));
  return stats;
};

/** The asset hits of a search for `word`. */
const search = async (word) => (await get(`/v1/31337/search?q=${encodeURIComponent(word)}`)).assets.hits;

test('an asset from a dropped block leaves lookup and search; the new chain’s asset is found', async () => {
  // a window ends before the fork: its hash is the common ancestor the indexer finds again
  await mine(3);
  await run();
  const fork = await head();
  const snapshot = await rpc('evm_snapshot');
  const doomedName = unique('Doomed');
  const doomed = await asset(doomedName);
  await mine(2);
  const first = await run();
  assert.ok(first.toBlock >= first.headBlock, JSON.stringify(first));
  assert.equal((await get(`/v1/31337/address/${doomed}`)).name, doomedName);
  assert.deepEqual(
    (await search(doomedName)).map((h) => h.address),
    [doomed],
  );
  const dropped = await head();

  // the reorganization: back to the snapshot, another asset from another address, the chain past the old head
  assert.equal(await rpc('evm_revert', [snapshot]), true);
  await send({ to: OWNER, value: '0x0' }); // the owner's nonce moves on: the new asset's address is not the doomed one
  const replacementName = unique('Replacement');
  const replacement = await asset(replacementName);
  assert.notEqual(replacement, doomed);
  await mine(4);
  assert.ok((await head()) > dropped);
  assert.equal(await rpc('eth_getCode', [doomed, 'latest']), '0x');

  const second = await run();
  assert.ok(second.toBlock >= second.headBlock, JSON.stringify(second));
  // the rewind: the checkpoint went back below the fork and the range was read again
  assert.equal(second.fromBlock, fork + 1, `rewound: ${JSON.stringify(second)} (old head ${dropped})`);
  assert.deepEqual(await search(doomedName), []);
  const gone = await get(`/v1/31337/address/${doomed}`);
  assert.equal(gone.name, undefined, JSON.stringify(gone));
  assert.equal(gone.LSPStandard, 'EOA');
  assert.deepEqual(
    (await search(replacementName)).map((h) => h.address),
    [replacement],
  );
  assert.equal((await get(`/v1/31337/address/${replacement}`)).name, replacementName);
  // a run on the same chain rewinds nothing more
  const third = await run();
  assert.equal(third.fromBlock, second.toBlock + 1);
});

test('an asset at the same address on both chains is read again, not removed', async () => {
  await run();
  const snapshot = await rpc('evm_snapshot');
  // the owner's same nonce deploys the same code to the same address on both chains; its metadata differs
  const before = unique('Before');
  const token = await asset(before);
  await mine(2);
  await run();
  assert.deepEqual(
    (await search(before)).map((h) => h.address),
    [token],
  );
  assert.equal(await rpc('evm_revert', [snapshot]), true);
  const after = unique('After');
  assert.equal(await asset(after), token);
  await mine(4);
  const stats = await run();
  assert.ok(stats.toBlock >= stats.headBlock, JSON.stringify(stats));
  assert.deepEqual(await search(before), []);
  assert.deepEqual(
    (await search(after)).map((h) => h.address),
    [token],
  );
  assert.equal((await get(`/v1/31337/address/${token}`)).name, after);
});

test('a reorganization deeper than every remembered block rewinds 1,024 blocks further and is signalled', async () => {
  await run();
  const snapshot = await rpc('evm_snapshot');
  const base = await head();
  // 66 one-block windows: the 64 remembered hashes are all of blocks the reorganization drops
  for (let i = 0; i < 66; i++) {
    await mine(1);
    await run();
  }
  const before = await get('/v1/31337/indexer');
  assert.equal(await rpc('evm_revert', [snapshot]), true);
  await mine(70);
  const stats = await run();
  const oldestRemembered = base + 3;
  assert.equal(stats.fromBlock, Math.max(0, oldestRemembered - 1024), JSON.stringify(stats));
  const after = await get('/v1/31337/indexer');
  assert.equal(after.unindexable, before.unindexable + 1, 'a DEEP_REORG row');
});

test('with INDEXER_CONFIRMATIONS=5 nothing is read from the 5 newest blocks', async () => {
  await stack.restartWorker({ vars: { INDEXER_CONFIRMATIONS: '5' } });
  await mine(6);
  await run();
  const name = unique('Shallow');
  const token = await asset(name);
  await mine(2);
  const shallow = await run();
  const top = await head();
  assert.equal(shallow.headBlock, top);
  assert.equal(shallow.toBlock, top - 5, JSON.stringify(shallow));
  assert.deepEqual(await search(name), [], 'nothing indexed from a block less than 5 deep');
  await mine(3);
  const deep = await run();
  assert.equal(deep.toBlock, deep.headBlock - 5);
  assert.deepEqual(
    (await search(name)).map((h) => h.address),
    [token],
  );
});

// the relayer: a relay call mined, reorganized away, mined again; charged once, at depth
const QUOTA = 5_000_000;
const kmAbi = parseAbi(['function getNonce(address from, uint128 channel) view returns (uint256)']);
const upAbi = parseAbi([
  'function owner() view returns (address)',
  'function setData(bytes32 key, bytes value)',
  'function getData(bytes32 key) view returns (bytes)',
]);
const upExecute = parseAbi(['function execute(uint256 operation, address target, uint256 value, bytes data) payable returns (bytes)']);
/** Relay calls here read the mined answer: they wait for the receipt. */
const post = (path, body, headers = {}) =>
  fetch(`${stack.workerUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...waitFor(path), ...headers },
    body: JSON.stringify(body),
  });
const json = async (res, status) => {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  return body;
};
const read = async (to, abi, functionName, args = []) => {
  const out = await rpc('eth_call', [{ to, data: encodeFunctionData({ abi, functionName, args }) }, 'latest']);
  return decodeFunctionResult({ abi, functionName, data: out });
};
const relayerView = async () => json(await stack.admin('GET', '/admin/relayer'), 200);
const txStatus = async (hash) => json(await fetch(`${stack.workerUrl}/api/transaction/${hash}`), 200);
const quotaLeft = async (account, up) => {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = await account.signMessage({ message: { raw: keccak256(encodePacked(['address', 'uint256'], [up, BigInt(timestamp)])) } });
  return (await json(await post('/api/quota', { address: up, timestamp, signature }), 200)).quota;
};
const eventually = (check, ms, what) => until(what, check, { timeoutMs: ms, intervalMs: 250 });

/**
 * The relayer at depth 3 with a monthly quota of QUOTA, and a profile it deployed for a fresh controller, its
 * deployment charged (3 deep, nothing reserved): `{ account, up, km, before }`, `before` the relayer's view then.
 * `vars`: more Worker vars.
 */
const relayerAtDepth3 = async (vars = {}) => {
  await stack.restartWorker({ vars: { INDEXER_CONFIRMATIONS: '3', MONTHLY_GAS_QUOTA: String(QUOTA), DEPLOY_WAIT_SECONDS: '5', ...vars } });
  const account = privateKeyToAccount(generatePrivateKey());
  const deployed = await json(
    await post('/api/universal-profile', { lsp6ControllerAddress: [account.address] }, { authorization: `Bearer ${stack.apiKey}` }),
    200,
  );
  const up = deployed.universalProfileAddress;
  const km = await read(up, upAbi, 'owner');
  // the deployment is charged once 3 deep: nothing reserved afterwards
  await mine(3);
  await eventually(async () => (await relayerView()).today.gasReserved === 0, 20_000, 'deployment final');
  return { account, up, km, before: await relayerView() };
};

test('a relayed transaction reorganized away goes back to pending, is mined again and charged once', async () => {
  const { account, up, km, before } = await relayerAtDepth3();

  const payload = encodeFunctionData({ abi: upAbi, functionName: 'setData', args: [keccak256(new TextEncoder().encode('reorg')), '0xc0ffee'] });
  const nonce = await read(km, kmAbi, 'getNonce', [account.address, 0n]);
  const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(stack.chain.chainId), nonce, 0n, 0n, payload]);
  const signature = await account.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
  const snapshot = await rpc('evm_snapshot');
  const sent = await json(
    await post('/api/execute', { address: up, transaction: { abi: payload, signature, nonce: `0x${nonce.toString(16)}`, validityTimestamps: '0x0' } }),
    200,
  );
  const hash = sent.transactionHash;
  const first = await rpc('eth_getTransactionReceipt', [hash]);
  assert.ok(first, 'mined');
  const mined = await txStatus(hash);
  assert.equal(mined.status, 'mined');
  assert.equal(mined.charged, null, 'not charged before it is 3 deep');
  const reserved = (await relayerView()).today.gasReserved;
  assert.ok(reserved > 0, 'its gas limit stays reserved meanwhile');

  // the block is reorganized away (automine off: the relayer's broadcast waits in the pool)
  await rpc('evm_setAutomine', [false]);
  try {
    assert.equal(await rpc('evm_revert', [snapshot]), true);
    assert.equal(await rpc('eth_getTransactionReceipt', [hash]), null);
    await eventually(async () => (await txStatus(hash)).status === 'pending', 20_000, 'back to pending');
    assert.equal((await txStatus(hash)).blockNumber, null);
    // broadcast again from the stored bytes: the node has it
    await eventually(async () => (await rpc('eth_getTransactionByHash', [hash])) !== null, 20_000, 'broadcast again');
    // nothing charged yet: the profile's quota holds the reservation only
    assert.equal(await quotaLeft(account, up), QUOTA - reserved);
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  await mine(1);
  const again = await rpc('eth_getTransactionReceipt', [hash]);
  assert.ok(again, 'mined again');
  await eventually(async () => (await txStatus(hash)).status === 'mined', 20_000, 'mined again');
  await mine(3);
  const used = Number(BigInt(again.gasUsed));
  await eventually(async () => (await txStatus(hash)).charged === used, 20_000, 'charged at depth');
  // once: the profile's month and the relayer's day, exactly the receipt's gas, nothing left reserved
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(await quotaLeft(account, up), QUOTA - used);
  const after = await relayerView();
  assert.equal(after.today.gasUsed - before.today.gasUsed, used);
  assert.equal(after.today.gasReserved, 0);
  assert.deepEqual(after.pending, { count: 0, oldestAgeSeconds: null });
});

// A relay call that reverted on chain leaves its LSP25 nonce unused: relayed again (here a heavier call at that
// nonce, while the first transaction waits for its depth), the second transaction is a new attempt with its own
// reservation — checked against the quota and charged — never one that rides on the first one's (attacker:
// tests/fixtures/attackers/Trapdoor.sol).
test('a nonce relayed again after its transaction reverted is charged again: every transaction, exactly', async () => {
  const attacker = compileAttacker('Trapdoor');
  const trapdoor = await deploy(attacker, []);
  const door = attacker.abi;
  const { account, up, km, before } = await relayerAtDepth3();

  const nonce = await read(km, kmAbi, 'getNonce', [account.address, 0n]);
  /** The /api/execute body of `UP.execute(CALL, trapdoor, 0, walk(rounds))` at the controller's current nonce. */
  const walk = async (rounds) => {
    const call = encodeFunctionData({ abi: door, functionName: 'walk', args: [BigInt(rounds)] });
    const payload = encodeFunctionData({ abi: upExecute, functionName: 'execute', args: [0n, trapdoor, 0n, call] });
    const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(stack.chain.chainId), nonce, 0n, 0n, payload]);
    const signature = await account.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
    return { address: up, transaction: { abi: payload, signature, nonce: `0x${nonce.toString(16)}`, validityTimestamps: '0x0' } };
  };
  const shut = (value, fees = {}) =>
    rpc('eth_sendTransaction', [
      { from: OWNER, to: trapdoor, gas: '0x186a0', data: encodeFunctionData({ abi: door, functionName: 'setShut', args: [value] }), ...fees },
    ]);

  // the first call, simulated with the door open, mined in a block where the door is shut just before it
  const light = await walk(50);
  await rpc('evm_setAutomine', [false]);
  let first;
  try {
    const answer = post('/api/execute', light);
    await eventually(async () => Object.keys((await rpc('txpool_content')).pending ?? {}).length > 0, 20_000, 'relay call in the pool');
    await shut(true, { maxFeePerGas: '0x2e90edd000', maxPriorityFeePerGas: '0x174876e800' });
    await mine(1);
    const res = await answer;
    const body = await res.json();
    assert.ok([200, 202].includes(res.status), JSON.stringify(body));
    first = body.transactionHash;
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  const reverted = await rpc('eth_getTransactionReceipt', [first]);
  assert.equal(reverted.status, '0x0', 'the first relay call reverted on chain');
  await shut(false);
  assert.equal(await read(km, kmAbi, 'getNonce', [account.address, 0n]), nonce, 'its nonce is unused');

  // the same nonce again, a heavier call, while the first waits for its depth: sent, as a transaction of its own
  const second = await json(await post('/api/execute', await walk(20_000)), 200);
  assert.notEqual(second.transactionHash, first);
  const heavy = await rpc('eth_getTransactionReceipt', [second.transactionHash]);
  assert.equal(heavy.status, '0x1');

  await mine(3);
  const usedFirst = Number(BigInt(reverted.gasUsed));
  const usedSecond = Number(BigInt(heavy.gasUsed));
  assert.ok(usedSecond > 1_000_000, `the second call is the heavy one (${usedSecond} gas)`);
  await eventually(async () => (await txStatus(first)).charged === usedFirst, 20_000, 'the reverted call charged');
  await eventually(async () => (await txStatus(second.transactionHash)).charged === usedSecond, 20_000, 'the second call charged');
  await new Promise((r) => setTimeout(r, 3000));
  // every transaction the relayer paid for is on the profile's month and the relayer's day, nothing left reserved
  assert.equal(await quotaLeft(account, up), QUOTA - usedFirst - usedSecond);
  const after = await relayerView();
  assert.equal(after.today.gasUsed - before.today.gasUsed, usedFirst + usedSecond);
  assert.equal(after.today.gasReserved, 0);
});

/** The /api/execute body of `UP.setData(keccak(word), 0xc0ffee)` signed by `account` at the LSP25 `nonce`. */
const setDataCall = async ({ account, up, km }, nonce, word) => {
  const payload = encodeFunctionData({ abi: upAbi, functionName: 'setData', args: [keccak256(new TextEncoder().encode(word)), '0xc0ffee'] });
  const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(stack.chain.chainId), nonce, 0n, 0n, payload]);
  const signature = await account.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
  return { address: up, transaction: { abi: payload, signature, nonce: `0x${nonce.toString(16)}`, validityTimestamps: '0x0' } };
};
const txNonce = async (hash) => Number((await rpc('eth_getTransactionByHash', [hash])).nonce);
const gasOf = async (hash) => Number(BigInt((await rpc('eth_getTransactionReceipt', [hash])).gasUsed));
/** The gas of every transaction the relayer's signer had mined after block `from`, by the receipts. */
const spentSince = async (from) => {
  const signer = (await relayerView()).signer.toLowerCase();
  let spent = 0;
  for (let n = from + 1; n <= (await head()); n++) {
    const block = await rpc('eth_getBlockByNumber', [`0x${n.toString(16)}`, true]);
    for (const tx of block.transactions.filter((t) => t.from.toLowerCase() === signer)) {
      spent += Number(BigInt((await rpc('eth_getTransactionReceipt', [tx.hash])).gasUsed));
    }
  }
  return spent;
};

/**
 * A relay call ("first") mined and watched at depth 3, its block reorganized away while the relayer could not read
 * the chain's head (its passes skipped the confirmations and reconciled the lane with the new chain), then a second
 * call of the same controller (on another LSP25 channel) given the first one's transaction nonce, waiting in the
 * pool (automine off: the caller turns it on again). The relayer reads the head again, and sees the first one gone
 * while its lane holds the second: `{ profile, before, from, first, second, raw, outage }` — `from` the block
 * before the first, `raw` its signed bytes, `outage` the proxy the Worker reaches the node through (the caller
 * stops it).
 */
const displacedBySecond = async () => {
  const outage = await rpcOutage(stack.chain.rpcUrl);
  const profile = await relayerAtDepth3({ RPC_URL: outage.url });
  const [channel0, channel1] = [0n, 1n].map((channel) => read(profile.km, kmAbi, 'getNonce', [profile.account.address, channel]));
  const from = await head();
  const snapshot = await rpc('evm_snapshot');
  const first = (await json(await post('/api/execute', await setDataCall(profile, await channel0, 'first')), 200)).transactionHash;
  assert.equal((await txStatus(first)).status, 'mined');
  const raw = await rpc('eth_getRawTransactionByHash', [first]);
  const slot = await txNonce(first);

  outage.down.add('eth_blockNumber');
  await rpc('evm_setAutomine', [false]);
  assert.equal(await rpc('evm_revert', [snapshot]), true);
  assert.equal(await rpc('eth_getTransactionByHash', [first]), null, 'gone from the chain and the pool');
  // a pass reads the relayer's pending nonce from the new chain: the lane's next nonce is the first one's again
  const reads = outage.calls('eth_getTransactionCount').length;
  await eventually(
    async () =>
      outage
        .calls('eth_getTransactionCount')
        .slice(reads)
        .some((p) => p[1] === 'pending'),
    20_000,
    'the lane reconciled',
  );

  const res = await post('/api/execute', await setDataCall(profile, await channel1, 'second'));
  const body = await res.json();
  assert.ok([200, 202].includes(res.status), JSON.stringify(body));
  const second = body.transactionHash;
  assert.equal(await txNonce(second), slot, "the second call got the first one's nonce");

  // the head is readable again: the first one's receipt is gone, and the lane holds the second at its nonce
  outage.down.delete('eth_blockNumber');
  await eventually(async () => (await txStatus(first)).status === 'pending', 20_000, 'the first one seen reorganized');
  return { profile, before: profile.before, from, first, second, raw, outage };
};

/** Once the profile holds `word`'s data (the relay call of that word done, whatever transaction did it). */
const done = (profile, word) =>
  eventually(
    async () => (await read(profile.up, upAbi, 'getData', [keccak256(new TextEncoder().encode(word))])) === '0xc0ffee',
    30_000,
    `the call "${word}" done`,
  );

/**
 * Once every job is done: every transaction the relayer had mined since `from` is charged (3 deep), once, to the
 * profile and the relayer's day, and nothing is left reserved.
 */
const everyGasCharged = async ({ profile, before, from }) => {
  await eventually(async () => (await relayerView()).pending.count === 0, 20_000, 'nothing left pending');
  await mine(3);
  await eventually(async () => (await relayerView()).today.gasReserved === 0, 20_000, 'nothing left reserved');
  const spent = await spentSince(from);
  await eventually(async () => (await relayerView()).today.gasUsed - before.today.gasUsed === spent, 20_000, `the day charged ${spent}`);
  // the profile's meter is settled beside the day's (at once, not after it)
  await eventually(async () => (await quotaLeft(profile.account, profile.up)) === QUOTA - spent, 20_000, `the profile charged ${spent}`);
  return spent;
};

// Neither test can be made by a stranger: each needs a reorganization and a relayer that reconciled its lane with the
// new chain before it saw the reorganization (a restart, a node that could not answer). The money must add up anyway.
test('a transaction reorganized away while its nonce went to another job: its call sent again once that nonce is final', async () => {
  let outage;
  try {
    const { first, second, ...rest } = await displacedBySecond();
    outage = rest.outage;
    await rpc('evm_setAutomine', [true]);
    await mine(1);
    await eventually(async () => (await txStatus(second)).status === 'mined', 20_000, 'the second mined');
    await mine(3);
    const used = await gasOf(second);
    await eventually(async () => (await txStatus(second)).charged === used, 20_000, 'the second charged at depth');
    // its nonce is used 3 deep: the first can never be mined; its call (on its own channel, still valid) is sent
    // again at a fresh nonce, with its reservation
    await eventually(async () => (await txStatus(first)).status === 'dropped', 20_000, 'the first dropped');
    assert.equal((await txStatus(first)).charged, null);
    await done(rest.profile, 'first');
    const spent = await everyGasCharged(rest);
    assert.ok(spent > used, 'the first call was sent again and mined');
  } finally {
    await rpc('evm_setAutomine', [true]);
    await outage?.stop();
  }
});

test('a transaction reorganized away while its nonce went to another job is charged if the network mines it again', async () => {
  let outage;
  try {
    const { first, second, raw, ...rest } = await displacedBySecond();
    outage = rest.outage;
    // another node still had the first one's bytes, and a block takes them, not the second's: the relayer's rounds
    // cannot broadcast the second again meanwhile
    outage.down.add('eth_sendRawTransaction');
    await rpc('anvil_dropTransaction', [second]);
    assert.equal(await rpc('eth_sendRawTransaction', [raw]), first);
    await mine(1);
    await rpc('evm_setAutomine', [true]);
    assert.equal((await rpc('eth_getTransactionReceipt', [first])).status, '0x1', 'the first mined again');
    outage.down.delete('eth_sendRawTransaction');

    await eventually(async () => (await txStatus(first)).status === 'mined', 20_000, 'the first watched again');
    await mine(3);
    const used = await gasOf(first);
    await eventually(async () => (await txStatus(first)).charged === used, 20_000, 'the first charged at depth');
    // the second's nonce is used: it is sent again at another one (its call, on its own channel, still succeeds)
    await eventually(async () => (await txStatus(second)).status === 'dropped', 20_000, 'the second dropped');
    await done(rest.profile, 'second');
    const spent = await everyGasCharged(rest);
    assert.ok(spent > used, 'the second was sent again and mined');
  } finally {
    await rpc('evm_setAutomine', [true]);
    await outage?.stop();
  }
});

test('at LUKSO’s depth (96) what the relayer mines is still searchable at once, by address', async () => {
  await stack.restartWorker({ vars: { INDEXER_CONFIRMATIONS: '96' } });
  const name = unique('Fresh');
  const block = (await head()) + 1; // the deployment's block, or a later one
  const up = await deployNamed(privateKeyToAccount(generatePrivateKey()), name);
  await searchUntil(name, (hits) => hits.some((h) => h.address === up));
  // not from the chain's run: its checkpoint is below the deployment's block
  const status = await get('/v1/31337/indexer');
  assert.ok(status.lastIndexedBlock < block, JSON.stringify(status));
});
