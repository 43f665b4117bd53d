// A block whose logs no `eth_getLogs` answer can carry (LogFlood.sol: thousands of `DataChanged` logs in one
// transaction) does not halt the indexer: the block is read event by event, the flooding event's logs of that block
// are skipped and recorded (`LOGS_TOO_LARGE`), and a profile deployed in the same block range is still indexed, lag 0.
// The bound is made small here (RPC_MAX_RESPONSE_BYTES = 64 KiB, so eth_getLogs answers stop at 256 KiB) so that a
// flood of ~1 MB does it; on mainnet the same happens with one full block at the default bound.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { encodeDeployData, encodeFunctionData, getAddress } from 'viem';
import { startStack } from '../../scripts/stack.mjs';
import { waitForReceipt } from '../../scripts/chain.mjs';
import { compileAttacker } from './helpers/solc.mjs';
import { indexing, OWNER } from './helpers/indexing.mjs';

let stack;
before(async () => {
  stack = await startStack({ vars: { LOOKUP_CACHE_SECONDS: '0', RPC_MAX_RESPONSE_BYTES: '65536', METADATA_ALLOW_HTTP: 'true' } });
});
after(async () => {
  await stack?.stop();
});

const { get, metadataUri, deployProfile } = indexing(() => stack);

async function sendFrom(tx) {
  const hash = await stack.chain.rpc('eth_sendTransaction', [{ from: OWNER, gas: '0x1c9c380', ...tx }]);
  const receipt = await waitForReceipt(stack.chain.rpc, hash);
  assert.equal(receipt.status, '0x1');
  return receipt;
}

test('a block of logs too large for any answer is skipped and recorded; the profiles around it are indexed', async () => {
  const before = (await deployProfile(await metadataUri({ LSP3Profile: { name: 'Before The Flood', description: '', tags: [], links: [] } })))
    .universalProfileAddress;
  const attacker = compileAttacker('LogFlood');
  const flood = getAddress((await sendFrom({ data: encodeDeployData({ abi: attacker.abi, bytecode: attacker.bytecode }) })).contractAddress);
  const flooded = await sendFrom({ to: flood, data: encodeFunctionData({ abi: attacker.abi, functionName: 'flood', args: [1500n, 256n] }) });
  const floodBlock = Number(BigInt(flooded.blockNumber));
  // the flood alone is larger than the bound: the node's answer for its one block is refused by the Worker
  const logs = await stack.chain.rpc('eth_getLogs', [{ fromBlock: flooded.blockNumber, toBlock: flooded.blockNumber }]);
  assert.ok(JSON.stringify(logs).length > 4 * 65536, 'the flood exceeds the eth_getLogs bound');
  const after = (await deployProfile(await metadataUri({ LSP3Profile: { name: 'After The Flood', description: '', tags: [], links: [] } })))
    .universalProfileAddress;

  let run;
  for (let i = 0; ; i++) {
    const res = await stack.admin('POST', '/admin/indexer/run');
    run = await res.json();
    assert.equal(res.status, 200, JSON.stringify(run));
    if (run.toBlock >= run.headBlock) break;
    assert.ok(i < 20, `the indexer did not pass the flooded block: ${JSON.stringify(run)}`);
  }
  const status = await get('/v1/31337/indexer');
  assert.equal(status.lag, 0, JSON.stringify(status));
  assert.ok(status.unindexable >= 1, JSON.stringify(status));
  assert.equal((await get(`/v1/31337/address/${before}`)).name, 'Before The Flood');
  assert.equal((await get(`/v1/31337/address/${after}`)).name, 'After The Flood');
  assert.ok(floodBlock > 0);
});
