// The Relayer's nonce lane against a real node: transactions the node lost, nonces taken by someone else, a Worker
// restarted with transactions stored but not sent, nonce holes found at start-up, and the MAX_FEE_PER_GAS cap.
// anvil runs with automine off where a transaction must stay pending; the Relayer's alarm (every 2 s) does the work.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { until } from './helpers/poll.mjs';

const GWEI = 10n ** 9n;
const CAP = 100n * GWEI;
const hex = (n) => '0x' + BigInt(n).toString(16);

let stack;
before(async () => {
  stack = await startStack({
    vars: {
      DEPLOY_WAIT_SECONDS: '2',
      // no fee bumps unless a test asks for them: a re-broadcast must be the stored bytes, not a replacement
      REPLACE_AFTER_SECONDS: '600',
      RPC_TIMEOUT_SECONDS: '2',
      MAX_FEE_PER_GAS: CAP.toString(),
    },
  });
});
after(async () => {
  await stack?.stop();
});

const controller = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const rpc = (method, params = []) => stack.chain.rpc(method, params);

/** A Form 2 deployment (known salt, so the profile address is known before sending). */
function newJob() {
  const { postDeploymentCallData } = sdk.profileDataFromControllers([controller]);
  const salt = sdk.generateSalt();
  const profile = sdk.predictProfileAddress({ salt, postDeploymentCallData }).universalProfile;
  return { body: { salt, postDeploymentCallData }, profile };
}
const deploy = (job) =>
  fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(job.body),
  });
async function deployPending(job) {
  const res = await deploy(job);
  const body = await res.json();
  assert.equal(res.status, 202, JSON.stringify(body));
  assert.equal(body.universalProfileAddress, job.profile);
  const tx = await rpc('eth_getTransactionByHash', [body.transactionHash]);
  assert.ok(tx, 'the answered transaction is in the pool');
  return { hash: body.transactionHash, tx };
}
const status = async (address) =>
  (
    await fetch(`${stack.workerUrl}/api/universal-profile/${address}`, {
      headers: { authorization: `Bearer ${stack.apiKey}` },
    })
  ).json();

const recorded = (profile) =>
  until(`${profile} deployed and recorded`, async () => {
    const s = await status(profile);
    return s.deployed && s.registered && s.pendingTransaction === null && s.deploymentTransaction && s;
  });
/** The relayer's transactions in the node's pool, by nonce. */
async function relayerPool() {
  const pool = await rpc('txpool_content');
  const byNonce = {};
  for (const part of [pool.pending, pool.queued]) {
    const mine = Object.entries(part ?? {}).find(([a]) => a.toLowerCase() === stack.relayerAddress.toLowerCase());
    Object.assign(byNonce, mine?.[1] ?? {});
  }
  return byNonce;
}
const nonceOf = async (tag) => BigInt(await rpc('eth_getTransactionCount', [stack.relayerAddress, tag]));
/** A transfer from the relayer's account sent by someone else (anvil impersonation: the key used elsewhere). */
async function sendAsRelayerElsewhere(nonce) {
  await rpc('anvil_impersonateAccount', [stack.relayerAddress]);
  try {
    return await rpc('eth_sendTransaction', [
      {
        from: stack.relayerAddress,
        to: controller,
        value: '0x1',
        gas: hex(21000),
        nonce: hex(nonce),
        // outbids the relayer's own transaction at that nonce, if it is in the pool
        maxFeePerGas: hex(50n * GWEI),
        maxPriorityFeePerGas: hex(10n * GWEI),
      },
    ]);
  } finally {
    await rpc('anvil_stopImpersonatingAccount', [stack.relayerAddress]);
  }
}
async function withoutAutomine(f) {
  await rpc('evm_setAutomine', [false]);
  try {
    await f();
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
}

test('a transaction that vanished from the node, nonce unused, is broadcast again from the stored bytes', async () => {
  await withoutAutomine(async () => {
    const job = newJob();
    const { hash, tx } = await deployPending(job);
    // dropped (the node answers what it removed): the relayer's next round may broadcast it again at any moment
    assert.equal(await rpc('anvil_dropTransaction', [hash]), hash);

    // the same signed transaction comes back: same hash, so same nonce, fees and calldata
    const back = await until('the stored copy broadcast again', () => rpc('eth_getTransactionByHash', [hash]));
    assert.equal(back.nonce, tx.nonce);
    assert.equal(back.maxFeePerGas, tx.maxFeePerGas);
    assert.equal((await status(job.profile)).pendingTransaction, hash);

    await rpc('evm_mine');
    assert.equal((await recorded(job.profile)).deploymentTransaction, hash);
  });
});

test('a transaction whose nonce another transaction used is dropped and its job sent again with a fresh nonce', async () => {
  await withoutAutomine(async () => {
    const job = newJob();
    const { hash, tx } = await deployPending(job);
    const nonce = BigInt(tx.nonce);
    await rpc('anvil_dropTransaction', [hash]);
    const other = await sendAsRelayerElsewhere(nonce);
    await rpc('evm_mine');
    assert.equal((await rpc('eth_getTransactionReceipt', [other])).status, '0x1');
    assert.equal(await nonceOf('latest'), nonce + 1n);

    // no receipt and unknown to the node, its nonce used: the deployment goes out again at the next nonce
    const resent = await until('the deployment sent again', async () => {
      const s = await status(job.profile);
      return s.pendingTransaction && s.pendingTransaction !== hash && s.pendingTransaction;
    });
    const again = await rpc('eth_getTransactionByHash', [resent]);
    assert.equal(BigInt(again.nonce), nonce + 1n);
    assert.equal(again.input, tx.input, 'the same deployment');
    assert.equal(again.to, tx.to);

    await rpc('evm_mine');
    const final = await recorded(job.profile);
    assert.equal(final.deploymentTransaction, resent);
    assert.equal((await rpc('eth_getTransactionReceipt', [resent])).status, '0x1');
    assert.equal(await rpc('eth_getTransactionReceipt', [hash]), null, 'the dropped one was never mined');
  });
  // the lane goes on from the right nonce
  assert.equal((await deploy(newJob())).status, 200);
});

test('a stored transaction the node never got (crash between storing and sending) is sent after a restart', async () => {
  await withoutAutomine(async () => {
    const job = newJob();
    const { hash } = await deployPending(job);
    // the Worker goes away; the node loses the transaction: what the Relayer has is exactly what a crash between
    // storing and broadcasting leaves behind
    await stack.stopWorker();
    await rpc('anvil_dropAllTransactions');
    assert.equal(await rpc('eth_getTransactionByHash', [hash]), null);
    await stack.restartWorker();

    // first use of the new Relayer instance: the lane is reconciled with the chain
    assert.equal((await status(job.profile)).pendingTransaction, hash);
    await until('the stored bytes broadcast', () => rpc('eth_getTransactionByHash', [hash]));
    await rpc('evm_mine');
    assert.equal((await recorded(job.profile)).deploymentTransaction, hash);
  });
  assert.equal((await deploy(newJob())).status, 200);
});

test('a nonce hole found at start-up is filled with a 0-value self-transfer so later nonces are mined', async () => {
  await withoutAutomine(async () => {
    const a = newJob();
    const sentA = await deployPending(a);
    const n = BigInt(sentA.tx.nonce);
    // the relayer's key used elsewhere takes n + 1 (outbidding the relayer), so the next deployment gets n + 2
    const other = await sendAsRelayerElsewhere(n + 1n);
    const b = newJob();
    const sentB = await deployPending(b);
    assert.equal(BigInt(sentB.tx.nonce), n + 2n);

    // while the Worker is down the other transaction disappears: stored n and n + 2, nothing anywhere at n + 1
    await stack.stopWorker();
    await rpc('anvil_dropTransaction', [other]);
    assert.equal(await rpc('eth_getTransactionByHash', [other]), null);
    assert.equal(await nonceOf('latest'), n);
    assert.equal(await nonceOf('pending'), n + 1n, 'n + 2 cannot be mined: n + 1 is missing');
    await stack.restartWorker();
    await status(a.profile); // first use

    const filler = await until('the hole filled', async () => (await relayerPool())[String(n + 1n)]);
    assert.equal(filler.to.toLowerCase(), stack.relayerAddress.toLowerCase(), 'to the relayer itself');
    assert.equal(BigInt(filler.value), 0n);
    assert.equal(filler.input, '0x');
    assert.equal(await nonceOf('pending'), n + 3n);

    await rpc('evm_mine');
    assert.equal((await rpc('eth_getTransactionReceipt', [filler.hash])).status, '0x1');
    assert.equal((await recorded(a.profile)).deploymentTransaction, sentA.hash);
    assert.equal((await recorded(b.profile)).deploymentTransaction, sentB.hash);
    assert.equal(await nonceOf('latest'), n + 3n);
  });
  assert.equal((await deploy(newJob())).status, 200);
});

async function setBaseFee(wei) {
  await rpc('anvil_setNextBlockBaseFeePerGas', [hex(wei)]);
  await rpc('evm_mine');
  assert.equal(BigInt((await rpc('eth_getBlockByNumber', ['latest', false])).baseFeePerGas), wei);
}

test('a base fee above MAX_FEE_PER_GAS answers 503 FEE_TOO_HIGH with Retry-After and sends nothing', async () => {
  const pending = await nonceOf('pending');
  await setBaseFee(150n * GWEI);
  try {
    const job = newJob();
    const res = await deploy(job);
    const body = await res.json();
    assert.equal(res.status, 503, JSON.stringify(body));
    assert.equal(body.error.code, 'FEE_TOO_HIGH');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assert.equal(await nonceOf('pending'), pending, 'nothing sent');
    assert.equal(await rpc('eth_getCode', [job.profile, 'latest']), '0x');
  } finally {
    await setBaseFee(GWEI);
  }
  assert.equal((await deploy(newJob())).status, 200);
});

test('fee bumps go up by at least 10% and stop below MAX_FEE_PER_GAS; concurrent requests share one transaction', async () => {
  await stack.restartWorker({ vars: { REPLACE_AFTER_SECONDS: '1' } });
  // 2 x 40 gwei + the tip: the first transaction is at ~81 gwei, two bumps fit under 100 gwei, a third does not
  await setBaseFee(40n * GWEI);
  try {
    await withoutAutomine(async () => {
      const job = newJob();
      const answers = await Promise.all([deploy(job), deploy(job), deploy(job)]);
      for (const res of answers) {
        const body = await res.json();
        assert.equal(res.status, 202, JSON.stringify(body));
        assert.equal(body.universalProfileAddress, job.profile);
      }
      const tip = BigInt(await rpc('eth_maxPriorityFeePerGas'));
      const first = 80n * GWEI + (tip > 0n ? tip : 1n);

      // watch the pool: one transaction of the relayer, replaced on a ladder of +10% steps, never above the cap
      const seen = [];
      const watch = async () => {
        const pool = Object.values(await relayerPool());
        assert.equal(pool.length, 1, 'one transaction for the three requests');
        const fee = BigInt(pool[0].maxFeePerGas);
        if (seen.at(-1)?.fee !== fee) seen.push({ fee, hash: pool[0].hash });
        assert.ok(fee <= CAP, `${fee} above the cap`);
        return fee;
      };
      await until('two fee bumps', async () => (await watch()) > (first * 121n) / 100n);
      const top = seen.at(-1);
      const end = Date.now() + 4000;
      while (Date.now() < end) {
        await watch();
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(seen.at(-1), top, 'no replacement above the cap: the transaction waits at its fees');
      for (let i = 1; i < seen.length; i++) {
        assert.ok(seen[i].fee > seen[i - 1].fee + seen[i - 1].fee / 10n, `${seen[i].fee} after ${seen[i - 1].fee}`);
      }
      assert.ok(seen[0].fee >= first && seen.length <= 3, seen.map((s) => s.fee).join(' → '));
      assert.equal((await status(job.profile)).pendingTransaction, top.hash);

      await setBaseFee(GWEI);
      assert.equal((await recorded(job.profile)).deploymentTransaction, top.hash);
    });
  } finally {
    await setBaseFee(GWEI).catch(() => {});
  }
});
