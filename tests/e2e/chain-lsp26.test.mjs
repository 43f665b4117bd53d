// The dev chain has LUKSO's LSP26 follower registry at its official address, byte-identical to LUKSO's deployment:
// its init code is the one whose CREATE2 address through Nick's factory (with LIP-26's salt) is that address — viem
// computes it here — and the registry behaves as LIP-26 says, read and written with viem: follow, isFollowing,
// followerCount / followingCount, the lists, unfollow, and the Follow / Unfollow events with unindexed parameters
// (filtered by the registry's address and topic, as an indexer must).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeEventLog, decodeFunctionResult, encodeFunctionData, getContractAddress, keccak256, parseAbi, toEventSelector } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DEV_ACCOUNTS, FOLLOWER_REGISTRY, startChain, waitForReceipt } from '../../scripts/chain.mjs';
import { factoryProfile } from './helpers/profile.mjs';

const REGISTRY = '0xf01103E5a9909Fc0DBe8166dA7085e0285daDDcA';
const NICK_FACTORY = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
const abi = parseAbi([
  'function follow(address addr)',
  'function followBatch(address[] addresses)',
  'function unfollow(address addr)',
  'function isFollowing(address follower, address addr) view returns (bool)',
  'function followerCount(address addr) view returns (uint256)',
  'function followingCount(address addr) view returns (uint256)',
  'function getFollowersByIndex(address addr, uint256 startIndex, uint256 endIndex) view returns (address[])',
  'function getFollowsByIndex(address addr, uint256 startIndex, uint256 endIndex) view returns (address[])',
  'function supportsInterface(bytes4 interfaceId) view returns (bool)',
  'event Follow(address follower, address addr)',
  'event Unfollow(address unfollower, address addr)',
]);

let chain;
before(async () => {
  chain = await startChain();
});
after(async () => {
  await chain?.stop();
});

const read = async (functionName, args) =>
  decodeFunctionResult({
    abi,
    functionName,
    data: await chain.rpc('eth_call', [{ to: REGISTRY, data: encodeFunctionData({ abi, functionName, args }) }, 'latest']),
  });
/** A registry call from an unlocked anvil account: its receipt, asserted successful. */
async function send(from, functionName, args) {
  const hash = await chain.rpc('eth_sendTransaction', [{ from, to: REGISTRY, data: encodeFunctionData({ abi, functionName, args }), gas: '0x2dc6c0' }]);
  const receipt = await waitForReceipt(chain.rpc, hash);
  assert.equal(receipt.status, '0x1', `${functionName} failed`);
  return receipt;
}

test('the registry is at its official address with the code LUKSO deployed', async () => {
  assert.equal(getContractAddress({ opcode: 'CREATE2', from: NICK_FACTORY, salt: FOLLOWER_REGISTRY.salt, bytecode: FOLLOWER_REGISTRY.initCode }), REGISTRY);
  assert.equal(FOLLOWER_REGISTRY.address, REGISTRY);
  const code = await chain.rpc('eth_getCode', [REGISTRY, 'latest']);
  // the runtime code is the tail of the init code (no constructor arguments, no immutables)
  assert.ok(code.length > 6000 && FOLLOWER_REGISTRY.initCode.endsWith(code.slice(2)), 'runtime code is the init code’s');
  // the event topics an indexer filters by are in it
  for (const event of ['Follow(address,address)', 'Unfollow(address,address)'])
    assert.ok(code.includes(keccak256(new TextEncoder().encode(event)).slice(2)), event);
  // LUKSO's registry claims no ERC165 interface (no supportsInterface): it is found by its address, not by a claim
  await assert.rejects(read('supportsInterface', ['0x2b299cea']), /revert/);
});

test('follow, lists and counts, unfollow; events unindexed, by registry and topic', async () => {
  const [a, b] = DEV_ACCOUNTS.map((x) => x.address);
  const profile = await factoryProfile(chain.rpc, a, privateKeyToAccount(generatePrivateKey()).address);
  // an EOA follows an EOA and a Universal Profile (whose LSP1 hook the registry calls)
  const followed = await send(a, 'followBatch', [[b, profile.up]]);
  assert.equal(await read('isFollowing', [a, b]), true);
  assert.equal(await read('isFollowing', [a, profile.up]), true);
  assert.equal(await read('isFollowing', [b, a]), false);
  assert.equal(await read('followingCount', [a]), 2n);
  assert.equal(await read('followerCount', [profile.up]), 1n);
  assert.deepEqual(
    (await read('getFollowsByIndex', [a, 0n, 2n])).map((x) => x.toLowerCase()),
    [b, profile.up].map((x) => x.toLowerCase()),
  );
  assert.deepEqual(await read('getFollowersByIndex', [b, 0n, 1n]), [a]);
  const follows = followed.logs.filter((l) => l.address.toLowerCase() === REGISTRY.toLowerCase() && l.topics[0] === toEventSelector('Follow(address,address)'));
  assert.equal(follows.length, 2);
  for (const log of follows) assert.equal(log.topics.length, 1, 'no indexed parameters');
  assert.deepEqual(decodeEventLog({ abi, ...follows[0] }).args, { follower: a, addr: b });
  // following twice is refused; unfollowing what one does not follow too
  const again = await chain
    .rpc('eth_call', [{ from: a, to: REGISTRY, data: encodeFunctionData({ abi, functionName: 'follow', args: [b] }) }, 'latest'])
    .catch((e) => e);
  assert.ok(again instanceof Error, 'a second follow reverts');
  const unfollowed = await send(a, 'unfollow', [b]);
  assert.equal(await read('isFollowing', [a, b]), false);
  assert.equal(await read('followingCount', [a]), 1n);
  const [log] = unfollowed.logs.filter((l) => l.topics[0] === toEventSelector('Unfollow(address,address)'));
  assert.deepEqual(decodeEventLog({ abi, ...log }).args, { unfollower: a, addr: b });
  // events found by address and topic over the chain, as an indexer reads them
  const logs = await chain.rpc('eth_getLogs', [
    {
      address: REGISTRY,
      fromBlock: '0x0',
      toBlock: 'latest',
      topics: [[toEventSelector('Follow(address,address)'), toEventSelector('Unfollow(address,address)')]],
    },
  ]);
  assert.equal(logs.length, 3);
});
