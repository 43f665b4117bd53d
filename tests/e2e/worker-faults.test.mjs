// Faults the relayer must survive: the RPC node going away and coming back, a transaction that is not mined
// (replaced with higher fees), a relayer that cannot pay, a node on the wrong chain. Short timers for the test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';

let stack;
before(async () => {
  stack = await startStack({ vars: { DEPLOY_WAIT_SECONDS: '4', REPLACE_AFTER_SECONDS: '1', RPC_TIMEOUT_SECONDS: '2' } });
});
after(async () => {
  await stack?.stop();
});

const controller = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const deploy = (body = { lsp6ControllerAddress: [controller] }) =>
  fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const status = (address) => fetch(`${stack.workerUrl}/api/universal-profile/${address}`, { headers: { authorization: `Bearer ${stack.apiKey}` } });

test('RPC node down: 503 RPC_UNAVAILABLE with Retry-After; back up: deploys work again', async () => {
  assert.equal((await deploy()).status, 200);
  await stack.chain.stop();
  for (let i = 0; i < 3; i++) {
    const res = await deploy();
    const body = await res.json();
    assert.equal(res.status, 503, JSON.stringify(body));
    assert.equal(body.error.code, 'RPC_UNAVAILABLE');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
  }
  const reg = await fetch(`${stack.workerUrl}/api/universal-profile/register`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ universalProfileAddress: controller }),
  });
  assert.equal(reg.status, 503);
  // a fresh node (state lost, nonce back to 0): the relayer re-reads the chain instead of failing on
  await stack.restartChain();
  for (let i = 0; i < 3; i++) {
    const res = await deploy();
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.notEqual(await stack.chain.rpc('eth_getCode', [body.universalProfileAddress, 'latest']), '0x');
  }
});

test('a transaction that is not mined is replaced with fees at least 10% higher', async () => {
  await stack.chain.rpc('evm_setAutomine', [false]);
  try {
    const res = await deploy();
    const body = await res.json();
    assert.equal(res.status, 202, JSON.stringify(body));
    assert.equal((await (await status(body.universalProfileAddress)).json()).deployed, false);

    // the pool holds one transaction for the relayer: the latest replacement (the relayer replaces it every
    // REPLACE_AFTER_SECONDS, 1 s: the one answered may be replaced already, and the first replacement may come after
    // the answer on a slow machine)
    const relayerPool = async () => {
      const pool = await stack.chain.rpc('txpool_content', []);
      const mine = Object.entries(pool.pending).find(([a]) => a.toLowerCase() === stack.relayerAddress.toLowerCase())[1];
      const txs = Object.values(mine);
      assert.equal(txs.length, 1);
      return txs[0];
    };
    // the first transaction had the node's suggested fees; a replacement carries at least +10% on both
    const base = BigInt((await stack.chain.rpc('eth_getBlockByNumber', ['latest', false])).baseFeePerGas);
    const tip = BigInt(await stack.chain.rpc('eth_maxPriorityFeePerGas', []));
    const firstMax = 2n * base + (tip > 0n ? tip : 1n);
    const firstTip = tip > 0n ? tip : 1n;
    let replacement;
    for (let i = 0; ; i++) {
      assert.ok(i < 240, 'never replaced');
      replacement = await relayerPool();
      if (BigInt(replacement.maxFeePerGas) > firstMax) break;
      assert.equal(replacement.hash, body.transactionHash, 'the first transaction is the one answered');
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(BigInt(replacement.maxFeePerGas) >= firstMax + firstMax / 10n, `${replacement.maxFeePerGas} vs ${firstMax}`);
    assert.ok(BigInt(replacement.maxPriorityFeePerGas) >= firstTip + firstTip / 10n);
    // the status names the transaction in the pool (read again until no replacement came between the two reads)
    for (let i = 0; ; i++) {
      assert.ok(i < 240, 'the status never named the pool transaction');
      const pending = await (await status(body.universalProfileAddress)).json();
      const inPool = await relayerPool();
      if (pending.pendingTransaction === inPool.hash) break;
      await new Promise((r) => setTimeout(r, 250));
    }

    await stack.chain.rpc('evm_mine', []);
    // the Relayer's alarm picks the receipt up and records the deployment
    let final;
    for (let i = 0; i < 240; i++) {
      final = await (await status(body.universalProfileAddress)).json();
      if (final.registered) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(final.deployed, true);
    assert.equal(final.registered, true);
    assert.equal(final.pendingTransaction, null);
    const receipt = await stack.chain.rpc('eth_getTransactionReceipt', [final.deploymentTransaction]);
    assert.equal(receipt.status, '0x1');
  } finally {
    await stack.chain.rpc('evm_setAutomine', [true]);
  }
  // and the nonce sequence continues
  assert.equal((await deploy()).status, 200);
});

test('a relayer that cannot pay answers 503 INSUFFICIENT_FUNDS and nothing is sent', async () => {
  await stack.chain.rpc('anvil_setBalance', [stack.relayerAddress, '0x0']);
  const nonce = await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'latest']);
  const res = await deploy();
  const body = await res.json();
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.error.code, 'INSUFFICIENT_FUNDS');
  assert.equal(await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'latest']), nonce);
  await stack.chain.rpc('anvil_setBalance', [stack.relayerAddress, '0x56BC75E2D63100000']);
  assert.equal((await deploy()).status, 200);
});

test('a deployment whose calldata would revert is refused before sending (idempotency by prediction)', async () => {
  // Form 2 with data the module cannot write is rejected by the core before any RPC call
  const bad = { salt: sdk.generateSalt(), postDeploymentCallData: '0x' + '00'.repeat(64) };
  const res = await deploy(bad);
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, 'INVALID_ABI');
});
