// What the freshness test and benchmark share: profiles deployed through the relayer with a name, names changed
// through /api/execute (LSP25 signed by viem), and polling the search route until it finds what it should.
import assert from 'node:assert/strict';
import { concat, encodeFunctionData, encodePacked, keccak256, parseAbi } from 'viem';
import * as sdk from 'profile-relayer';
import { indexing } from './indexing.mjs';
import { WAIT_FOR_RECEIPT } from './wait.mjs';

const upAbi = parseAbi(['function owner() view returns (address)', 'function setData(bytes32 key, bytes value)']);
const kmAbi = parseAbi(['function getNonce(address from, uint128 channel) view returns (uint256)']);

/** A fresh search word (letters and digits, found by no other record). */
export const unique = () => `w${Math.random().toString(36).slice(2, 10)}`;

/** The helpers, on the stack `getStack()` answers. */
export function freshness(getStack) {
  const { metadataUri } = indexing(getStack);
  const url = (path) => `${getStack().workerUrl}${path}`;

  /** Polls `/v1/:chainId/search?q=word` until `predicate(hits)` holds, at most `boundMs`; the milliseconds it took. */
  const searchUntil = async (word, predicate, { boundMs = 30_000, since = Date.now() } = {}) => {
    for (;;) {
      const res = await fetch(url(`/v1/${getStack().chain.chainId}/search?q=${encodeURIComponent(word)}`));
      assert.equal(res.status, 200);
      const body = await res.json();
      if (predicate([...body.profiles.hits, ...body.assets.hits])) return Date.now() - since;
      assert.ok(Date.now() - since < boundMs, `"${word}" not found within ${boundMs} ms: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** Deploys a profile named `name` controlled by `controller` (a viem account) through the relayer; its address. */
  const deployNamed = async (controller, name) => {
    const lsp3Profile = await metadataUri({ LSP3Profile: { name, description: 'fresh', tags: [], links: [] } });
    const res = await fetch(url('/api/universal-profile'), {
      method: 'POST',
      headers: { authorization: `Bearer ${getStack().apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lsp6ControllerAddress: [controller.address], lsp3Profile }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return body.universalProfileAddress;
  };

  /** The signed /api/execute body that names profile `up` `name` (its LSP3Profile set by `controller`). */
  const renameBody = async (controller, up, name) => {
    const { chain } = getStack();
    const uri = await metadataUri({ LSP3Profile: { name, description: 'renamed', tags: [], links: [] } });
    const call = (abi, to, functionName, args) => chain.rpc('eth_call', [{ to, data: encodeFunctionData({ abi, functionName, args }) }, 'latest']);
    const km = `0x${(await call(upAbi, up, 'owner', [])).slice(26)}`;
    const nonce = BigInt(await call(kmAbi, km, 'getNonce', [controller.address, 0n]));
    const payload = encodeFunctionData({ abi: upAbi, functionName: 'setData', args: [sdk.encodeKeyName('LSP3Profile'), uri] });
    const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(chain.chainId), nonce, 0n, 0n, payload]);
    const signature = await controller.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
    return { address: up, transaction: { abi: payload, signature, nonce: `0x${nonce.toString(16)}`, validityTimestamps: '0x0' } };
  };

  /** Sends a signed /api/execute body waiting for its receipt (`Prefer: wait`), asserting 200 (mined). */
  const execute = async (body) => {
    const res = await fetch(url('/api/execute'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...WAIT_FOR_RECEIPT },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, await res.text());
  };

  return { searchUntil, deployNamed, renameBody, execute };
}
