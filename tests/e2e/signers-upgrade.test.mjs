// Upgrading a single-key deployment to a signer pool: a deploy left pending by the one-key Worker (RELAYER_PRIVATE_KEY,
// the Relayer object named by the chain) is finished after the Worker restarts with RELAYER_PRIVATE_KEYS added: the
// key of RELAYER_PRIVATE_KEY keeps its lane. Then the old key is drained and new work goes to the new one (the
// rotation path of docs/operations.md). anvil with automine off while the deploy is pending; the Worker in `wrangler dev`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { until as poll } from './helpers/poll.mjs';

const newKey = generatePrivateKey();
const newSigner = privateKeyToAccount(newKey).address.toLowerCase();

let stack;
before(async () => {
  stack = await startStack({ vars: { DEPLOY_WAIT_SECONDS: '2', REPLACE_AFTER_SECONDS: '600' } });
  await stack.chain.rpc('anvil_setBalance', [newSigner, '0x56bc75e2d63100000']);
});
after(async () => {
  await stack?.chain.rpc('evm_setAutomine', [true]).catch(() => {});
  await stack?.stop();
});

const rpc = (method, params = []) => stack.chain.rpc(method, params);
/** Polls `f` every 250 ms for at most 30 s. */
const until = (what, f) => poll(what, f, { timeoutMs: 30_000, intervalMs: 250 });
function newJob() {
  const { postDeploymentCallData } = sdk.profileDataFromControllers([privateKeyToAccount(generatePrivateKey()).address]);
  const salt = sdk.generateSalt();
  return { body: { salt, postDeploymentCallData }, profile: sdk.predictProfileAddress({ salt, postDeploymentCallData }).universalProfile };
}
const deploy = (job) =>
  fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(job.body),
  });
const status = async (address) =>
  (await fetch(`${stack.workerUrl}/api/universal-profile/${address}`, { headers: { authorization: `Bearer ${stack.apiKey}` } })).json();
const view = async () => (await stack.admin('GET', '/admin/relayer')).json();

test('a deploy pending on the single-key lane finishes after the upgrade to a pool; the old key drains, work moves', async () => {
  const legacy = stack.relayerAddress.toLowerCase();
  const job = newJob();
  await rpc('evm_setAutomine', [false]);
  let hash;
  try {
    const res = await deploy(job);
    const body = await res.json();
    assert.equal(res.status, 202, JSON.stringify(body));
    hash = body.transactionHash;
    assert.equal((await rpc('eth_getTransactionByHash', [hash])).from.toLowerCase(), legacy);
    // the upgrade: a second key (the var reaches the Worker as the secret would)
    await stack.restartWorker({ vars: { RELAYER_PRIVATE_KEYS: newKey } });
    const pool = await view();
    assert.deepEqual(
      pool.signers.map((s) => s.address.toLowerCase()),
      [legacy, newSigner],
    );
    assert.equal(pool.signers[0].pending.count, 1, 'the pending deploy is still in the lane of RELAYER_PRIVATE_KEY');
    // asked again: the same transaction, from the lane that holds it
    const again = await (await deploy(job)).json();
    assert.equal(again.transactionHash, hash);
    await rpc('evm_mine');
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  const done = await until('the pending deploy finished and recorded', async () => {
    const s = await status(job.profile);
    return s.deployed && s.deploymentTransaction && s;
  });
  assert.equal(done.deploymentTransaction, hash);
  assert.equal((await (await fetch(`${stack.workerUrl}/api/transaction/${hash}`)).json()).status, 'mined');
  await until('the old lane is empty', async () => (await view()).signers[0].pending.count === 0);
  // rotation: drain the old key; every new deploy goes to the new one
  const drained = await (await stack.admin('POST', `/admin/relayer/signers/${legacy}/drain`)).json();
  assert.equal(drained.state, 'draining');
  for (let i = 0; i < 3; i++) {
    const res = await deploy(newJob());
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal((await rpc('eth_getTransactionByHash', [body.transactionHash])).from.toLowerCase(), newSigner);
  }
});
