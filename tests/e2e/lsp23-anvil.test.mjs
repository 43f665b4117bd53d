// The address prediction proven on a real chain: anvil + the real LUKSO contracts at their canonical addresses,
// a Form-2 payload built by the npm package, sent to the real factory's deployERC1167Proxies.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem';
import * as sdk from 'profile-relayer';
import { startChain, waitForReceipt } from '../../scripts/chain.mjs';

const require = createRequire(import.meta.url);
const factoryAbi = require('@lukso/lsp23-contracts/artifacts/LSP23LinkedContractsFactory.json').abi;
const upAbi = parseAbi(['function owner() view returns (address)', 'function getDataBatch(bytes32[] keys) view returns (bytes[] values)']);
const kmAbi = parseAbi(['function target() view returns (address)']);
const FACTORY = '0x2300000A84D25dF63081feAa37ba6b62C4c89a30';
const DEPLOYED_TOPIC = '0xe20570ed9bda3b93eea277b4e5d975c8933fd5f85f2c824d0845ae96c55a54fe';
const SUPPORTED_STANDARDS_LSP3 = '0xeafec4d89fa9619884b600005ef83ad9559033e6e941db7d7c495acdce616347';

let chain;
before(async () => {
  chain = await startChain();
});
after(async () => {
  await chain?.stop();
});

async function call(to, abi, functionName, args = []) {
  const data = encodeFunctionData({ abi, functionName, args });
  const result = await chain.rpc('eth_call', [{ to, data }, 'latest']);
  return decodeFunctionResult({ abi, functionName, data: result });
}

async function send(data) {
  const from = chain.accounts[0].address;
  const hash = await chain.rpc('eth_sendTransaction', [{ from, to: FACTORY, data, gas: '0x1c9c380' }]);
  return waitForReceipt(chain.rpc, hash);
}

test('a Form-2 profile appears at the predicted address with the expected data', async () => {
  const controller = chain.accounts[1].address;
  const lsp3Profile = sdk.encodeVerifiableUri(JSON.stringify({ LSP3Profile: { name: 'anvil', description: 'e2e' } }), 'ipfs://QmTest');
  const data = sdk.profileDataFromControllers([controller], lsp3Profile);
  const salt = sdk.generateSalt();
  const input = { salt, postDeploymentCallData: data.postDeploymentCallData, network: 'mainnet' };
  const predicted = sdk.predictProfileAddress(input);

  // the factory's own view agrees before anything is deployed
  const [up, km] = await call(FACTORY, factoryAbi, 'computeERC1167Addresses', [
    {
      salt,
      fundingAmount: 0n,
      implementationContract: '0x3024D38EA2434BA6635003Dc1BDC0daB5882ED4F',
      initializationCalldata: '0xc4d66de8000000000000000000000000000000000066093407b6704b89793beffd0d8f00',
    },
    {
      fundingAmount: 0n,
      implementationContract: '0x2Fe3AeD98684E7351aD2D408A43cE09a738BF8a4',
      initializationCalldata: '0xc4d66de8',
      addPrimaryContractAddress: true,
      extraInitializationParams: '0x',
    },
    '0x000000000066093407b6704B89793beFfD0D8F00',
    data.postDeploymentCallData,
  ]);
  assert.equal(up, predicted.universalProfile);
  assert.equal(km, predicted.keyManager);
  assert.equal(await chain.rpc('eth_getCode', [predicted.universalProfile, 'latest']), '0x');

  const receipt = await send(sdk.encodeDeployCalldata(input));
  assert.equal(receipt.status, '0x1');
  const event = receipt.logs.find((l) => l.topics[0] === DEPLOYED_TOPIC);
  assert.ok(event, 'DeployedERC1167Proxies emitted');
  assert.equal(event.topics[1], '0x' + predicted.universalProfile.slice(2).toLowerCase().padStart(64, '0'));
  assert.equal(event.topics[2], '0x' + predicted.keyManager.slice(2).toLowerCase().padStart(64, '0'));

  assert.notEqual(await chain.rpc('eth_getCode', [predicted.universalProfile, 'latest']), '0x');
  assert.equal(await call(predicted.universalProfile, upAbi, 'owner'), predicted.keyManager);
  assert.equal(await call(predicted.keyManager, kmAbi, 'target'), predicted.universalProfile);
  const stored = await call(predicted.universalProfile, upAbi, 'getDataBatch', [[...data.keys, SUPPORTED_STANDARDS_LSP3]]);
  assert.deepEqual(stored, [...data.values, '0x5ef83ad9']);
  const decoded = sdk.decodeVerifiableUri(stored[0]);
  assert.equal(decoded.url, 'ipfs://QmTest');

  // the same salt and data again: CREATE2 collides, the factory reverts
  await assert.rejects(chain.rpc('eth_estimateGas', [{ from: chain.accounts[0].address, to: FACTORY, data: sdk.encodeDeployCalldata(input) }]));
});

test('every reference vector predicts what the real factory computes', async () => {
  const { readFileSync } = await import('node:fs');
  const file = JSON.parse(readFileSync(new URL('../fixtures/vectors/lsp23-address.json', import.meta.url), 'utf8'));
  for (const c of file.cases) {
    const p = sdk.predictProfileAddress(c.input);
    const calldata = sdk.encodeDeployCalldata(c.input);
    // eth_call of the deployment itself returns (primary, secondary) without mining it
    const result = await chain.rpc('eth_call', [{ from: chain.accounts[0].address, to: FACTORY, data: calldata }, 'latest']);
    const [up, km] = decodeFunctionResult({ abi: factoryAbi, functionName: 'deployERC1167Proxies', data: result });
    assert.equal(up, p.universalProfile, c.id);
    assert.equal(km, p.keyManager, c.id);
  }
});

test('a tuple-wrapped postDeploymentCallData is rejected before it could revert on chain', async () => {
  const good = sdk.encodePostDeploymentCallData([], []);
  const wrapped = '0x' + '20'.padStart(64, '0') + good.slice(2);
  assert.throws(() => sdk.encodeDeployCalldata({ salt: sdk.generateSalt(), postDeploymentCallData: wrapped }), { code: 'INVALID_ABI' });
});
