// Profiles deployed by the stack's relayer (Form 1, with its API key).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { concat, decodeFunctionResult, encodeAbiParameters, encodeFunctionData, pad, parseAbi } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { waitForReceipt } from '../../../scripts/chain.mjs';

const ownerAbi = parseAbi(['function owner() view returns (address)']);

/** Deploys a profile with `controllers` (and `lsp3Profile` when given) through the relayer, asserting 200: the answer. */
export async function deployProfile(stack, controllers, lsp3Profile) {
  const res = await fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lsp6ControllerAddress: controllers, ...(lsp3Profile ? { lsp3Profile } : {}) }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

/** A profile deployed with `account` as its controller: its address, its Key Manager (`owner()`) and the deploy's hash. */
export async function profileOf(stack, account) {
  const { universalProfileAddress: up, transactionHash: hash } = await deployProfile(stack, [account.address]);
  const data = await stack.chain.rpc('eth_call', [{ to: up, data: encodeFunctionData({ abi: ownerAbi, functionName: 'owner' }) }, 'latest']);
  return { up, km: decodeFunctionResult({ abi: ownerAbi, functionName: 'owner', data }), hash };
}

const require = createRequire(import.meta.url);
const factoryAbi = require('@lukso/lsp23-contracts/artifacts/LSP23LinkedContractsFactory.json').abi;
/** LUKSO's canonical LSP23 factory, post-deployment module and v0.14.0 implementations. */
export const LSP23 = {
  factory: '0x2300000A84D25dF63081feAa37ba6b62C4c89a30',
  module: '0x000000000066093407b6704B89793beFfD0D8F00',
  upInit: { '0.14.0': '0x3024D38EA2434BA6635003Dc1BDC0daB5882ED4F', '0.12.1': '0x52c90985AF970D4E0DC26Cb5D052505278aF32A9' },
  kmInit: { '0.14.0': '0x2Fe3AeD98684E7351aD2D408A43cE09a738BF8a4', '0.12.1': '0xa75684d7D048704a2DB851D05Ba0c3cbe226264C' },
};
const ARRAY_KEY = '0xdf30dba06db6a30e65354d9a64c609861f089545ca58c6b4dbe31a5f338cb0e3';

/** abi.encode(bytes32[] keys, bytes[] values): `who` as the one controller, with ALL_PERMISSIONS (0x7f3f7f). */
export const controllerData = (who) =>
  encodeAbiParameters(
    [{ type: 'bytes32[]' }, { type: 'bytes[]' }],
    [
      [concat(['0x4b80742de2bf82acb3630000', who]), ARRAY_KEY, concat([ARRAY_KEY.slice(0, 34), pad('0x00', { size: 16 })])],
      [pad('0x7f3f7f'), pad('0x01', { size: 16 }), who],
    ],
  );

/**
 * A profile its owner deployed with LUKSO's factory (LSP23 deployERC1167Proxies with the `version` implementations),
 * sent by the unlocked anvil account `from`, not by the relayer: `{ up, km }`.
 */
export async function factoryProfile(rpc, from, who, version = '0.14.0') {
  const args = [
    {
      salt: generatePrivateKey(),
      fundingAmount: 0n,
      implementationContract: LSP23.upInit[version],
      initializationCalldata: concat(['0xc4d66de8', pad(LSP23.module)]),
    },
    {
      fundingAmount: 0n,
      implementationContract: LSP23.kmInit[version],
      initializationCalldata: '0xc4d66de8',
      addPrimaryContractAddress: true,
      extraInitializationParams: '0x',
    },
    LSP23.module,
    controllerData(who),
  ];
  const data = encodeFunctionData({ abi: factoryAbi, functionName: 'deployERC1167Proxies', args });
  const [up, km] = decodeFunctionResult({
    abi: factoryAbi,
    functionName: 'deployERC1167Proxies',
    data: await rpc('eth_call', [{ from, to: LSP23.factory, data }, 'latest']),
  });
  const hash = await rpc('eth_sendTransaction', [{ from, to: LSP23.factory, data, gas: '0x989680' }]);
  const receipt = await waitForReceipt(rpc, hash);
  assert.equal(receipt.status, '0x1', 'factory deployment failed');
  return { up, km };
}
