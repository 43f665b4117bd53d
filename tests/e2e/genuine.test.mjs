// Genuine profiles only (docs/gasless.md, "Genuine profiles only"): the relayer pays for a profile only when its runtime code
// and its KeyManager's are LUKSO's and the KeyManager's target() is the profile. Attacker contracts
// (tests/fixtures/attackers/FakeProfiles.sol, compiled here with solc from npm) try to pass for profiles; each is
// refused with its own code, nothing is sent (the relayer's nonce and balance do not move) and nothing is
// registered. Profiles made by this relayer (v0.14.0 proxies), by LUKSO's factory with the v0.12.1 implementations
// and full (non-proxy) v0.14.0 contracts are accepted and relay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { concat, decodeFunctionResult, encodeFunctionData, encodePacked, getAddress, keccak256, pad, parseAbi, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import solc from 'solc';
import { DEV_ACCOUNTS, waitForReceipt } from '../../scripts/chain.mjs';
import { startStack } from '../../scripts/stack.mjs';
import { LSP23, controllerData, factoryProfile as factoryWith } from './helpers/profile.mjs';
import { waitFor } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const UP_FULL = require('lsp-smart-contracts-0.14.0/artifacts/UniversalProfile.json');
const KM_FULL = require('lsp-smart-contracts-0.14.0/artifacts/LSP6KeyManager.json');

const UP_INIT = LSP23.upInit;
const KM_INIT = LSP23.kmInit;
const ALL_PERMISSIONS = pad('0x7f3f7f');
const permissionsKey = (address) => concat(['0x4b80742de2bf82acb3630000', address]);

const upAbi = parseAbi([
  'function owner() view returns (address)',
  'function initialize(address initialOwner) payable',
  'function setData(bytes32 key, bytes value)',
  'function getData(bytes32 key) view returns (bytes)',
  'function setDataBatch(bytes32[] keys, bytes[] values)',
  'function transferOwnership(address newOwner)',
  'function acceptOwnership()',
]);
const kmAbi = parseAbi([
  'function target() view returns (address)',
  'function execute(bytes payload) payable returns (bytes)',
  'function getNonce(address from, uint128 channel) view returns (uint256)',
]);
const attackerAbi = parseAbi([
  'function setTarget(address profile)',
  'function call(address to, bytes data) returns (bytes)',
  'function relayed() view returns (uint256)',
  'function initialize(address keyManager, address controller)',
]);

// anvil's unlocked accounts: the deployer / attacker, a controller, an owner EOA
const deployer = DEV_ACCOUNTS[0].address;
const controller = privateKeyToAccount(DEV_ACCOUNTS[1].privateKey);
const ownerEoa = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

let stack;
let contracts;
before(async () => {
  contracts = compile();
  stack = await startStack({ vars: { DEPLOY_WAIT_SECONDS: '10', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' } });
});
after(async () => {
  await stack?.stop();
});

/** The attacker contracts, compiled by solc-js (no optimizer settings that could matter: any code is refused). */
function compile() {
  const source = readFileSync(new URL('../fixtures/attackers/FakeProfiles.sol', import.meta.url), 'utf8');
  const input = {
    language: 'Solidity',
    sources: { 'FakeProfiles.sol': { content: source } },
    settings: { evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  assert.deepEqual(errors, [], 'FakeProfiles.sol compiles');
  const result = {};
  for (const [name, c] of Object.entries(out.contracts['FakeProfiles.sol'])) {
    result[name] = { bytecode: `0x${c.evm.bytecode.object}`, runtime: `0x${c.evm.deployedBytecode.object}` };
  }
  return result;
}

const rpc = (...args) => stack.chain.rpc(...args);
const url = (p) => `${stack.workerUrl}${p}`;
/** Relay calls here read the mined answer: they wait for the receipt. */
const post = (path, body, headers = {}) =>
  fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json', ...waitFor(path), ...headers }, body: JSON.stringify(body) });
const withKey = { authorization: () => `Bearer ${stack.apiKey}` };
const register = (address) => post('/api/universal-profile/register', { universalProfileAddress: address }, { authorization: withKey.authorization() });
async function json(res, status) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  return body;
}
async function refused(res, status, code) {
  const body = await json(res, status);
  assert.equal(body.error.code, code, body.error.message);
  return body.error.message;
}
async function read(to, abi, functionName, args = []) {
  const out = await rpc('eth_call', [{ to, data: encodeFunctionData({ abi, functionName, args }) }, 'latest']);
  return decodeFunctionResult({ abi, functionName, data: out });
}
/** A transaction from an unlocked anvil account; fails unless it succeeds. */
async function send(from, to, data, value = 0n) {
  const hash = await rpc('eth_sendTransaction', [{ from, to, data, gas: '0x989680', value: toHex(value) }]);
  const receipt = await waitForReceipt(rpc, hash);
  assert.equal(receipt.status, '0x1', `transaction to ${to ?? 'create'} failed`);
  return receipt;
}
const call = (from, to, abi, functionName, args = []) => send(from, to, encodeFunctionData({ abi, functionName, args }));
async function deploy(bytecode, ctor = '0x') {
  return getAddress((await send(deployer, undefined, concat([bytecode, ctor]))).contractAddress);
}
/** An ERC-1167 minimal proxy to `implementation`, created with a plain CREATE of the standard 55-byte init code. */
const proxyTo = (implementation) => deploy(concat(['0x3d602d80600a3d3981f3363d3d373d3d3d363d73', implementation, '0x5af43d82803e903d91602b57fd5bf3']));

/** The relayer's account: nonce and balance, to show that a refusal sent nothing. */
const relayerState = async () => ({
  nonce: Number(await rpc('eth_getTransactionCount', [stack.relayerAddress, 'pending'])),
  balance: BigInt(await rpc('eth_getBalance', [stack.relayerAddress, 'latest'])),
});
const registered = async (address) =>
  (await json(await fetch(url(`/api/universal-profile/${address}`), { headers: { authorization: withKey.authorization() } }), 200)).registered;

/** A profile deployed by this relayer (Form 2: the controller gets ALL_PERMISSIONS). */
async function relayerProfile(who = controller.address) {
  const body = await json(
    await post(
      '/api/universal-profile',
      { salt: pad(generatePrivateKey()), postDeploymentCallData: controllerData(who) },
      { authorization: withKey.authorization() },
    ),
    200,
  );
  return { up: body.universalProfileAddress, km: body.keyManagerAddress };
}

/** A profile deployed the way LUKSO's factory does: LSP23 deployERC1167Proxies with the `version` implementations. */
const factoryProfile = (version) => factoryWith(rpc, deployer, controller.address, version);

/** An LSP25 relay call signed by `account` for `km` (viem's own digest). */
async function relayCall(account, { up, km }, payload, nonce = 0n) {
  const message = encodePacked(['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'], [25n, BigInt(stack.chain.chainId), nonce, 0n, 0n, payload]);
  const signature = await account.sign({ hash: keccak256(concat(['0x19', '0x00', km, message])) });
  return { address: up, transaction: { abi: payload, signature, nonce: toHex(nonce), validityTimestamps: '0x0' } };
}
const setData = (n) => encodeFunctionData({ abi: upAbi, functionName: 'setData', args: [keccak256(toHex(`genuine-${n}`)), '0xc0ffee'] });
async function quota(account, up) {
  const timestamp = Math.floor(Date.now() / 1000);
  return post('/api/quota', { address: up, timestamp, signature: await account.signMessage({ message: `${up}:${timestamp}` }) });
}

test('the table of accepted code matches the npm artifacts of 0.12.1, 0.14.0 and split 0.15.5', () => {
  const doc = readFileSync(new URL('../../docs/gasless.md', import.meta.url), 'utf8');
  const row = (release) => {
    const line = doc.split('\n').find((l) => l.startsWith(`| ${release} | \``));
    assert.ok(line, `docs/gasless.md lists ${release}`);
    return line.match(/0x[0-9a-f]{64}/g);
  };
  const hash = (artifact) => keccak256(require(artifact).deployedBytecode);
  const artifacts = (pkg, up = pkg, km = pkg) =>
    [
      `${up}/artifacts/UniversalProfileInit.json`,
      `${km}/artifacts/LSP6KeyManagerInit.json`,
      `${up}/artifacts/UniversalProfile.json`,
      `${km}/artifacts/LSP6KeyManager.json`,
    ].map(hash);
  assert.deepEqual(row('0.14.0'), artifacts('lsp-smart-contracts-0.14.0'));
  assert.deepEqual(row('0.12.1'), artifacts('lsp-smart-contracts-0.12.1'));
  assert.deepEqual(row('split 0.15.5'), artifacts(null, '@lukso/universalprofile-contracts', '@lukso/lsp6-contracts'));
});

test('the local chain holds the code the real networks hold at the canonical implementation addresses', async () => {
  for (const version of ['0.14.0', '0.12.1']) {
    const pkg = `lsp-smart-contracts-${version}`;
    assert.equal(await rpc('eth_getCode', [UP_INIT[version], 'latest']), require(`${pkg}/artifacts/UniversalProfileInit.json`).deployedBytecode);
    assert.equal(await rpc('eth_getCode', [KM_INIT[version], 'latest']), require(`${pkg}/artifacts/LSP6KeyManagerInit.json`).deployedBytecode);
  }
});

test('fakes are refused at registration, each with its own code; nothing sent, nothing registered', async () => {
  const { ClaimsEverythingProfile, ObedientKeyManager, ConsistentProfile } = contracts;
  const other = await relayerProfile();
  const before = await relayerState();

  // 1. the attack: a "profile" claiming every interface, owned by a "KeyManager" claiming LSP6 whose code
  //    executes whatever (a supportsInterface check let this through)
  const obedient = await deploy(ObedientKeyManager.bytecode);
  const claimsEverything = await deploy(ClaimsEverythingProfile.bytecode, pad(obedient));
  await call(deployer, obedient, attackerAbi, 'setTarget', [claimsEverything]);
  assert.equal(await read(claimsEverything, upAbi, 'owner'), obedient);
  let message = await refused(await register(claimsEverything), 403, 'UNKNOWN_PROFILE_CODE');
  const judged = keccak256(await rpc('eth_getCode', [claimsEverything, 'latest']));
  assert.ok(message.includes(judged), `the message names the judged hash ${judged}: ${message}`);
  // and its relay call: nothing to relay for an unregistered profile
  const attacker = privateKeyToAccount(generatePrivateKey());
  await refused(await post('/api/execute', await relayCall(attacker, { up: claimsEverything, km: obedient }, setData(1))), 404, 'PROFILE_NOT_REGISTERED');

  // 2. a consistent fake: plain ERC165 answers, owner() its KeyManager, target() the profile, not LUKSO's code
  const consistentKm = await deploy(ObedientKeyManager.bytecode);
  const consistent = await deploy(ConsistentProfile.bytecode);
  await call(deployer, consistent, attackerAbi, 'initialize', [consistentKm, attacker.address]);
  await call(deployer, consistentKm, attackerAbi, 'setTarget', [consistent]);
  assert.equal(await read(consistentKm, kmAbi, 'target'), consistent);
  await refused(await register(consistent), 403, 'UNKNOWN_PROFILE_CODE');

  // 3. the same fake behind an ERC-1167 proxy: the shape alone is not enough, the implementation's code is judged
  const proxiedKm = await deploy(ObedientKeyManager.bytecode);
  const proxied = await proxyTo(consistent);
  assert.equal((await rpc('eth_getCode', [proxied, 'latest'])).length, 2 + 90);
  await call(deployer, proxied, attackerAbi, 'initialize', [proxiedKm, attacker.address]);
  await call(deployer, proxiedKm, attackerAbi, 'setTarget', [proxied]);
  message = await refused(await register(proxied), 403, 'UNKNOWN_PROFILE_CODE');
  assert.match(message, /ERC-1167 proxy/);

  // 4. LUKSO's profile code (a v0.14.0 proxy) owned by the attacker's KeyManager, which targets it
  const fakeOwned = await proxyTo(UP_INIT['0.14.0']);
  const fakeOwner = await deploy(ObedientKeyManager.bytecode);
  await call(deployer, fakeOwned, upAbi, 'initialize', [fakeOwner]);
  await call(deployer, fakeOwner, attackerAbi, 'setTarget', [fakeOwned]);
  await refused(await register(fakeOwned), 403, 'UNKNOWN_KEY_MANAGER_CODE');

  // 5. LUKSO's profile code owned by LUKSO's KeyManager code that controls another profile
  const mismatched = await proxyTo(UP_INIT['0.14.0']);
  await call(deployer, mismatched, upAbi, 'initialize', [other.km]);
  assert.equal(await read(other.km, kmAbi, 'target'), other.up);
  message = await refused(await register(mismatched), 403, 'KEY_MANAGER_TARGET_MISMATCH');
  assert.match(message, new RegExp(other.up.slice(2), 'i'));

  // 6. LUKSO's profile code owned by an EOA
  const eoaOwned = await proxyTo(UP_INIT['0.12.1']);
  await call(deployer, eoaOwned, upAbi, 'initialize', [ownerEoa]);
  await refused(await register(eoaOwned), 400, 'NOT_A_KEY_MANAGER');

  // 7. a contract that does not even claim LSP0, and an address without code
  await refused(await register(obedient), 404, 'NOT_A_UNIVERSAL_PROFILE');
  await refused(await register(ownerEoa), 404, 'PROFILE_NOT_FOUND');

  assert.deepEqual(await relayerState(), before, 'a refusal sent a transaction');
  for (const fake of [claimsEverything, consistent, proxied, fakeOwned, mismatched, eoaOwned]) {
    assert.equal(await registered(fake), false, `${fake} was registered`);
  }
  assert.equal(await read(obedient, attackerAbi, 'relayed'), 0n);
});

test('a registered profile that stops being genuine is refused by /api/execute and /api/quota; nothing sent', async () => {
  const { ClaimsEverythingProfile, ObedientKeyManager } = contracts;
  const expectRefusal = async (profile, status, code) => {
    const before = await relayerState();
    await refused(await post('/api/execute', await relayCall(controller, profile, setData(2))), status, code);
    await refused(await quota(controller, profile.up), status, code);
    assert.deepEqual(await relayerState(), before, `${code}: a refusal sent a transaction`);
    assert.equal(await registered(profile.up), true);
  };

  // handed to an EOA (LSP14: transferOwnership through the KeyManager, accepted by the EOA)
  const toEoa = await relayerProfile();
  const transfer = (profile, to) =>
    call(controller.address, profile.km, kmAbi, 'execute', [encodeFunctionData({ abi: upAbi, functionName: 'transferOwnership', args: [to] })]);
  await transfer(toEoa, ownerEoa);
  await call(ownerEoa, toEoa.up, upAbi, 'acceptOwnership');
  assert.equal(await read(toEoa.up, upAbi, 'owner'), ownerEoa);
  await expectRefusal(toEoa, 400, 'NOT_A_KEY_MANAGER');

  // handed to the attacker's KeyManager, which accepts through its own door and targets the profile
  const toFake = await relayerProfile();
  const obedient = await deploy(ObedientKeyManager.bytecode);
  await call(deployer, obedient, attackerAbi, 'setTarget', [toFake.up]);
  await transfer(toFake, obedient);
  await call(deployer, obedient, attackerAbi, 'call', [toFake.up, encodeFunctionData({ abi: upAbi, functionName: 'acceptOwnership' })]);
  assert.equal(await read(toFake.up, upAbi, 'owner'), obedient);
  await expectRefusal({ up: toFake.up, km: obedient }, 403, 'UNKNOWN_KEY_MANAGER_CODE');
  assert.equal(await read(obedient, attackerAbi, 'relayed'), 0n, 'the fake KeyManager was relayed');

  // owned by LUKSO's KeyManager of another profile (the owner slot rewritten on the dev chain)
  const mismatched = await relayerProfile();
  const other = await relayerProfile();
  // the owner shares slot 0 with Initializable's flags: replace the address inside the word
  const [from, to] = [mismatched.km, other.km].map((a) => a.slice(2).toLowerCase());
  let slot;
  let word;
  for (let i = 0; i < 32 && slot === undefined; i++) {
    word = await rpc('eth_getStorageAt', [mismatched.up, toHex(i), 'latest']);
    if (word.includes(from)) slot = i;
  }
  assert.notEqual(slot, undefined, 'the owner slot was found');
  await rpc('anvil_setStorageAt', [mismatched.up, toHex(slot, { size: 32 }), word.replace(from, to)]);
  assert.equal(await read(mismatched.up, upAbi, 'owner'), other.km);
  await expectRefusal(mismatched, 403, 'KEY_MANAGER_TARGET_MISMATCH');

  // its code replaced by a fake's (a profile registered before the code was judged, or metamorphic code)
  const replaced = await relayerProfile();
  const fakeKm = await deploy(ObedientKeyManager.bytecode);
  const fake = await deploy(ClaimsEverythingProfile.bytecode, pad(fakeKm));
  await rpc('anvil_setCode', [replaced.up, await rpc('eth_getCode', [fake, 'latest'])]);
  await call(deployer, fakeKm, attackerAbi, 'setTarget', [replaced.up]);
  await expectRefusal({ up: replaced.up, km: fakeKm }, 403, 'UNKNOWN_PROFILE_CODE');
  assert.equal(await read(fakeKm, attackerAbi, 'relayed'), 0n);
});

test("accepted: this relayer's profiles, LUKSO's factory with v0.12.1, full v0.14.0 contracts; each relays", async () => {
  const relay = async (profile, n) => {
    const nonce = await read(profile.km, kmAbi, 'getNonce', [controller.address, 0n]);
    const body = await json(await post('/api/execute', await relayCall(controller, profile, setData(n), nonce)), 200);
    assert.equal(body.status, 'mined');
    assert.equal(await read(profile.up, upAbi, 'getData', [keccak256(toHex(`genuine-${n}`))]), '0xc0ffee');
    const q = await json(await quota(controller, profile.up), 200);
    assert.ok(q.quota < q.totalQuota);
  };

  // deployed by this relayer (v0.14.0 proxies through LSP23): registered by the deploy, registering again is fine
  const mine = await relayerProfile();
  assert.equal((await json(await register(mine.up), 200)).newlyRegistered, false);
  await relay(mine, 10);

  // deployed by LUKSO's factory: LSP23 with the v0.12.1 implementations LUKSO's relayer uses
  const lukso = await factoryProfile('0.12.1');
  assert.equal(
    (await rpc('eth_getCode', [lukso.up, 'latest'])).toLowerCase(),
    `0x363d3d373d3d3d363d73${UP_INIT['0.12.1'].slice(2)}5af43d82803e903d91602b57fd5bf3`.toLowerCase(),
  );
  assert.equal((await json(await register(lukso.up), 200)).newlyRegistered, true);
  await relay(lukso, 11);

  // full contracts (lsp-factory.js with deployProxy: false): UniversalProfile and LSP6KeyManager v0.14.0
  const up = getAddress((await send(controller.address, undefined, concat([UP_FULL.bytecode, pad(controller.address)]))).contractAddress);
  const km = getAddress((await send(controller.address, undefined, concat([KM_FULL.bytecode, pad(up)]))).contractAddress);
  await call(controller.address, up, upAbi, 'setData', [permissionsKey(controller.address), ALL_PERMISSIONS]);
  await call(controller.address, up, upAbi, 'transferOwnership', [km]);
  await call(controller.address, km, kmAbi, 'execute', [encodeFunctionData({ abi: upAbi, functionName: 'acceptOwnership' })]);
  assert.equal(await read(up, upAbi, 'owner'), km);
  assert.equal((await json(await register(up), 200)).newlyRegistered, true);
  await relay({ up, km }, 12);
});

test('the operator extends the list: a listed code hash is accepted, as a proxy implementation and whole', async () => {
  const { ObedientKeyManager, ConsistentProfile } = contracts;
  const km = await deploy(ObedientKeyManager.bytecode);
  const fake = await deploy(ConsistentProfile.bytecode);
  await call(deployer, fake, attackerAbi, 'initialize', [km, controller.address]);
  await call(deployer, km, attackerAbi, 'setTarget', [fake]);
  await refused(await register(fake), 403, 'UNKNOWN_PROFILE_CODE');
  const upHash = keccak256(await rpc('eth_getCode', [fake, 'latest']));
  const kmHash = keccak256(await rpc('eth_getCode', [km, 'latest']));
  await stack.restartWorker({ vars: { UNIVERSAL_PROFILE_IMPLEMENTATIONS: ` ${upHash} ` } });
  await refused(await register(fake), 403, 'UNKNOWN_KEY_MANAGER_CODE');
  await stack.restartWorker({ vars: { UNIVERSAL_PROFILE_IMPLEMENTATIONS: upHash, KEY_MANAGER_IMPLEMENTATIONS: `${pad('0x01')},${kmHash}` } });
  assert.equal((await json(await register(fake), 200)).newlyRegistered, true);
  // a proxy to the listed code counts too
  const proxiedKm = await deploy(ObedientKeyManager.bytecode);
  const proxied = await proxyTo(fake);
  await call(deployer, proxied, attackerAbi, 'initialize', [proxiedKm, controller.address]);
  await call(deployer, proxiedKm, attackerAbi, 'setTarget', [proxied]);
  assert.equal((await json(await register(proxied), 200)).newlyRegistered, true);
  // (a malformed list is a CONFIGURATION_ERROR naming the variable: worker/src/config unit tests; /health fails too)
});
