// Profiles deployed by the stack's relayer (Form 1, with its API key).
import assert from 'node:assert/strict';
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem';

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
