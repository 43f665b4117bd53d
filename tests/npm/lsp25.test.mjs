// LSP25 relay calls and LSP15 quota messages of the npm package against viem and @lukso/eip191-signer.js:
// digests, encoded messages and calldata byte for byte, signatures made by viem recovered to the viem account
// (by `profile-relayer/recover`),
// and every custom error of the real KeyManager / Universal Profile ABIs decoded by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  concat,
  encodeAbiParameters,
  encodeErrorResult,
  encodeFunctionData,
  encodePacked,
  hashMessage,
  keccak256,
  parseSignature,
  serializeSignature,
  toHex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { gzipSync } from 'node:zlib';
import * as sdk from 'profile-relayer';
// signer recovery (secp256k1) is its own entry: the encodings of the lite entry plus the two recover functions
import * as recover from 'profile-relayer/recover';

const require = createRequire(import.meta.url);
const { EIP191Signer } = require('@lukso/eip191-signer.js');
const KM_ABI = require('@lukso/lsp6-contracts/artifacts/LSP6KeyManagerInit.json').abi;
const UP_ABI = require('@lukso/universalprofile-contracts/artifacts/UniversalProfileInit.json').abi;
const vectors = JSON.parse(readFileSync(new URL('../fixtures/vectors/lsp25-lsp15.json', import.meta.url), 'utf8'));

const LSP3_PROFILE = '0x5ef83ad9559033e6e941db7d7c495acdce616347d28e90c7ce47cbfcfcad3bc5';
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

// viem's reference: keccak256(0x19 ‖ 0x00 ‖ keyManager ‖ encodePacked(25, chainId, nonce, validity, value, payload))
const viemMessage = ({ chainId, nonce, validityTimestamps = 0n, value = 0n, payload }) =>
  encodePacked(
    ['uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes'],
    [25n, BigInt(chainId), BigInt(nonce), BigInt(validityTimestamps), BigInt(value), payload],
  );
const viemDigest = (input) => keccak256(concat(['0x19', '0x00', input.keyManager, viemMessage(input)]));
const viemCalldata = ({ signature, nonce, validityTimestamps = 0n, payload }) =>
  encodeFunctionData({
    abi: KM_ABI,
    functionName: 'executeRelayCall',
    args: [signature, BigInt(nonce), BigInt(validityTimestamps), payload],
  });
const setData = (key, value) => encodeFunctionData({ abi: UP_ABI, functionName: 'setData', args: [key, value] });
const input = (c) => ({
  keyManager: c.keyManager,
  chainId: c.chainId,
  nonce: c.nonce,
  validityTimestamps: c.validityTimestamps,
  value: c.value,
  payload: c.payload,
});

test('reference relay calls: digest, message, signature and calldata equal viem, eip191-signer and the vectors', async () => {
  const eip191 = new EIP191Signer();
  for (const c of vectors.relayCalls) {
    const account = privateKeyToAccount(c.privateKey);
    assert.equal(account.address, c.signer, c.id);
    const digest = sdk.relayCallDigest(input(c));
    assert.equal(digest, viemDigest(c), c.id);
    assert.equal(digest, c.digest, c.id);
    const message = sdk.encodeRelayCallMessage(input(c));
    assert.equal(message, viemMessage(c), c.id);
    if (c.encodedMessage) assert.equal(message, c.encodedMessage, c.id);

    // viem signs the raw digest (RFC 6979, like ethers): the same bytes as the vectors
    const signature = await account.sign({ hash: digest });
    assert.equal(signature, c.signature, c.id);
    assert.equal(recover.recoverRelayCallSigner(input(c), signature), account.address, c.id);
    // LUKSO's own signer library gives the same hash and signature
    const lukso = eip191.signDataWithIntendedValidator(c.keyManager, message, c.privateKey);
    assert.equal(lukso.messageHash, digest, c.id);
    assert.equal(lukso.signature, signature, c.id);

    const calldata = sdk.encodeExecuteRelayCall({
      signature,
      nonce: c.nonce,
      validityTimestamps: c.validityTimestamps,
      payload: c.payload,
    });
    assert.equal(calldata, viemCalldata({ ...c, signature }), c.id);
    if (c.calldata) assert.equal(calldata, c.calldata, c.id);
  }
});

test('random relay calls signed by viem: same digest and calldata, recovery returns the viem account', async () => {
  for (let i = 0; i < 25; i++) {
    const account = privateKeyToAccount(generatePrivateKey());
    const rand = (bytes) => BigInt(toHex(crypto.getRandomValues(new Uint8Array(bytes))));
    const channel = i % 3 === 0 ? 0n : rand(16);
    const start = i % 2 ? rand(4) : 0n;
    const end = i % 4 ? start + rand(4) : 0n;
    const c = {
      keyManager: privateKeyToAccount(generatePrivateKey()).address,
      chainId: [42, 4201, 31337, 2n ** 63n][i % 4],
      nonce: (channel << 128n) | rand(4),
      validityTimestamps: (start << 128n) | end,
      value: i % 5 ? 0n : rand(12),
      payload: setData(LSP3_PROFILE, toHex(crypto.getRandomValues(new Uint8Array(i * 7)))),
    };
    // numbers as bigint, decimal string and 0x hex
    const spellings = [c, { ...c, nonce: c.nonce.toString(), value: toHex(c.value) }];
    for (const s of spellings) assert.equal(sdk.relayCallDigest(s), viemDigest(c), `case ${i}`);
    const signature = await account.sign({ hash: viemDigest(c) });
    assert.equal(recover.recoverRelayCallSigner(c, signature), account.address, `case ${i}`);
    const args = { nonce: c.nonce, validityTimestamps: c.validityTimestamps, payload: c.payload };
    assert.equal(sdk.encodeExecuteRelayCall({ ...args, signature }), viemCalldata({ ...c, signature }));

    // v as 0/1 is accepted (same signer, calldata normalised to 27/28); the malleable high-s twin is refused
    const { r, s, yParity } = parseSignature(signature);
    const v01 = serializeSignature({ r, s, yParity, v: undefined }).slice(0, -2) + (yParity ? '01' : '00');
    assert.equal(recover.recoverRelayCallSigner(c, v01), account.address);
    assert.equal(sdk.encodeExecuteRelayCall({ ...args, signature: v01 }), viemCalldata({ ...c, signature }));
    const high = serializeSignature({ r, s: toHex(N - BigInt(s), { size: 32 }), yParity: 1 - yParity });
    assert.throws(() => recover.recoverRelayCallSigner(c, high), { code: 'INVALID_SIGNATURE' });
  }
});

test('a signature for chain 4201 recovers to the InvalidRelayNonce signer of the on-chain check (reference §7.3)', async () => {
  const account = privateKeyToAccount(vectors.relayCalls[0].privateKey);
  const call = {
    keyManager: '0x75D375c6BC0C77D6d3585b18592ce12c827dea36',
    chainId: 4201,
    nonce: 1, // channel 0 after the first successful relay call of the check
    payload: setData(LSP3_PROFILE, '0xc0ffee'),
  };
  const signature = await account.sign({ hash: viemDigest(call) });
  assert.equal(recover.recoverRelayCallSigner(call, signature), account.address);
  assert.equal(recover.recoverRelayCallSigner({ ...call, chainId: 42 }, signature).toLowerCase(), '0xd6dbc5383ab74b920cbd67604a8aff6b7387ced1');
});

test('quota messages: both schemes equal viem, signatures recover to the viem account', async () => {
  for (const c of vectors.quota) {
    const account = privateKeyToAccount(c.privateKey);
    const m = sdk.quotaMessage(c.address, c.timestamp, c.scheme);
    assert.equal(m.scheme, c.scheme);
    assert.equal(m.message, c.message, c.id);
    let signature;
    if (c.scheme === 'packed') {
      assert.equal(m.message, keccak256(encodePacked(['address', 'uint256'], [c.address, BigInt(c.timestamp)])));
      assert.equal(m.hash, hashMessage({ raw: m.message }), c.id);
      signature = await account.signMessage({ message: { raw: m.message } });
    } else {
      assert.equal(m.message, `${c.address}:${c.timestamp}`);
      assert.equal(m.hash, hashMessage(m.message), c.id);
      signature = await account.signMessage({ message: m.message });
    }
    if (c.hash) assert.equal(m.hash, c.hash, c.id);
    assert.equal(signature, c.signature, c.id);
    assert.equal(recover.recoverQuotaSigner(c.address, c.timestamp, signature, c.scheme), account.address, c.id);
    const other = c.scheme === 'packed' ? 'text' : 'packed';
    assert.notEqual(recover.recoverQuotaSigner(c.address, c.timestamp, signature, other), account.address, c.id);
  }
  // default scheme is packed; a bigint timestamp works; a fresh key and timestamp
  const account = privateKeyToAccount(generatePrivateKey());
  const up = privateKeyToAccount(generatePrivateKey()).address;
  const now = Math.floor(Date.now() / 1000);
  const m = sdk.quotaMessage(up, BigInt(now));
  assert.equal(m.scheme, 'packed');
  const sig = await account.signMessage({ message: { raw: m.message } });
  assert.equal(recover.recoverQuotaSigner(up, now, sig), account.address);
  const text = sdk.quotaMessage(up.toLowerCase(), now, 'text');
  assert.equal(text.message, `${up.toLowerCase()}:${now}`);
  assert.equal(recover.recoverQuotaSigner(up.toLowerCase(), now, await account.signMessage({ message: text.message }), 'text'), account.address);
});

const sample = (type) => {
  if (type === 'address') return '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
  if (type === 'string') return 'SETDATA';
  if (type === 'bool') return true;
  if (type === 'bytes') return '0xc0ffee';
  if (type.startsWith('bytes')) return toHex(7, { size: Number(type.slice(5)) });
  if (type.startsWith('uint')) return 5n;
  throw new Error(`no sample for ${type}`);
};

test('every custom error of the KeyManager and Universal Profile ABIs decodes by name', () => {
  const errors = [...KM_ABI, ...UP_ABI].filter((x) => x.type === 'error');
  assert.ok(errors.length >= 40, `${errors.length} errors`);
  for (const e of errors) {
    const data = encodeErrorResult({ abi: [e], errorName: e.name, args: e.inputs.map((i) => sample(i.type)) });
    const d = sdk.decodeRelayCallRevert(data);
    assert.equal(d.name, e.name, data);
    assert.ok(d.reason.startsWith(e.name), d.reason);
  }
  const sig = vectors.relayCalls[0].signature;
  const nonce = encodeErrorResult({ abi: KM_ABI, errorName: 'InvalidRelayNonce', args: ['0xd6dbc5383ab74b920cbd67604a8aff6b7387ced1', 0n, sig] });
  assert.ok(nonce.startsWith('0xc9bd9eb9'));
  assert.deepEqual({ ...sdk.decodeRelayCallRevert(nonce), reason: undefined }, { name: 'InvalidRelayNonce', code: 'INVALID_RELAY_NONCE', reason: undefined });
  const auth = sdk.decodeRelayCallRevert(encodeErrorResult({ abi: KM_ABI, errorName: 'NotAuthorised', args: [sample('address'), 'SETDATA'] }));
  assert.deepEqual(auth, {
    name: 'NotAuthorised',
    code: 'NOT_AUTHORISED',
    reason: 'NotAuthorised(from: 0x70997970C51812dc3A010C7d01b50e0d17dc79C8, permission: "SETDATA")',
  });
  const message = '0x08c379a0' + encodeAbiParameters([{ type: 'string' }], ['ECDSA: invalid signature']).slice(2);
  assert.deepEqual(sdk.decodeRelayCallRevert(message), { name: 'Error', code: 'RELAY_CALL_REVERTED', reason: 'Error("ECDSA: invalid signature")' });
  assert.equal(sdk.decodeRelayCallRevert('0x').name, '');
  assert.equal(sdk.decodeRelayCallRevert('0xdeadbeef').name, 'unknown');
  assert.equal(sdk.decodeRelayCallRevert(nonce.slice(0, 50)).name, 'unknown');
  assert.throws(() => sdk.decodeRelayCallRevert('zz'), { code: 'INVALID_HEX' });
});

test('bad arguments throw ProfileRelayerErrors with specific codes', () => {
  const c = input(vectors.relayCalls[0]);
  const code = (fn) => {
    try {
      fn();
    } catch (e) {
      assert.ok(sdk.isProfileRelayerError(e));
      return e.code;
    }
    return 'no error';
  };
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, nonce: 1.5 })),
    'INVALID_NUMBER',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, nonce: 2 ** 53 })),
    'INVALID_NUMBER',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, nonce: -1n })),
    'INVALID_NUMBER',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, nonce: 2n ** 256n })),
    'INVALID_NUMBER',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, nonce: '1e3' })),
    'INVALID_NUMBER',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, chainId: 2n ** 64n })),
    'INVALID_NUMBER',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, nonce: undefined })),
    'MISSING_FIELD',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, chainId: undefined })),
    'MISSING_FIELD',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, extra: 1 })),
    'INVALID_ARGUMENT',
  );
  assert.equal(
    code(() => sdk.relayCallDigest('0x')),
    'INVALID_ARGUMENT',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, keyManager: '0xcafe' })),
    'INVALID_ADDRESS',
  );
  assert.equal(
    code(() => sdk.relayCallDigest({ ...c, payload: '0xabc' })),
    'INVALID_HEX',
  );
  assert.equal(
    code(() => sdk.encodeExecuteRelayCall({ signature: '0x1234', nonce: 0, payload: '0x' })),
    'INVALID_LENGTH',
  );
  assert.equal(
    code(() => sdk.encodeExecuteRelayCall({ signature: vectors.relayCalls[0].signature.slice(0, -2) + '1d', nonce: 0, payload: '0x' })),
    'INVALID_SIGNATURE',
  );
  assert.equal(
    code(() => sdk.quotaMessage('0xcafe', 1)),
    'INVALID_ADDRESS',
  );
  assert.equal(
    code(() => sdk.quotaMessage(c.keyManager, 1, 'utf8')),
    'INVALID_ARGUMENT',
  );
  assert.equal(
    code(() => sdk.quotaMessage(c.keyManager, -1)),
    'INVALID_NUMBER',
  );
  for (const name of ['INVALID_SIGNATURE', 'INVALID_NUMBER', 'INVALID_RELAY_NONCE', 'NOT_AUTHORISED', 'QUOTA_EXCEEDED']) {
    assert.ok(sdk.errorCodes().includes(name), name);
  }
});

test('checksummed addresses: remembered once checked, any other casing checked again (past the last 8 too)', () => {
  const base = input(vectors.relayCalls[0]);
  const code = (fn) => {
    try {
      fn();
    } catch (e) {
      return e.code;
    }
    return 'no error';
  };
  // twelve checksummed key managers, each used twice: more than the remembered eight, each digest as viem's
  const managers = Array.from({ length: 12 }, () => privateKeyToAccount(generatePrivateKey()).address);
  for (const entry of [sdk, recover]) {
    for (let round = 0; round < 2; round++) {
      for (const keyManager of managers) {
        const c = { ...base, keyManager };
        assert.equal(entry.relayCallDigest(c), viemDigest(c), keyManager);
        assert.equal(entry.encodeRelayCallMessage(c), entry.encodeRelayCallMessage({ ...c, keyManager: keyManager.toLowerCase() }));
        // the same address with any one letter's case flipped: a wrong checksum, also right after the right one
        for (let i = 2; i < 42; i++) {
          if (!/[a-fA-F]/.test(keyManager[i])) continue;
          const ch = keyManager[i];
          const flipped = keyManager.slice(0, i) + (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()) + keyManager.slice(i + 1);
          if (flipped.slice(2) === flipped.slice(2).toLowerCase() || flipped.slice(2) === flipped.slice(2).toUpperCase()) continue;
          assert.equal(
            code(() => entry.relayCallDigest({ ...c, keyManager: flipped })),
            'INVALID_ADDRESS',
            flipped,
          );
          assert.equal(
            code(() => entry.quotaMessage(flipped, 1)),
            'INVALID_ADDRESS',
            flipped,
          );
        }
        assert.equal(entry.quotaMessage(keyManager, 1).message, entry.quotaMessage(keyManager.toLowerCase(), 1).message);
      }
    }
    // the input's fields, read in one call: absent, null and unknown fields as before
    assert.equal(
      entry.relayCallDigest({ ...base, value: null, validityTimestamps: undefined }),
      entry.relayCallDigest({ ...base, value: 0, validityTimestamps: 0 }),
    );
    assert.equal(
      code(() => entry.relayCallDigest({ ...base, payload: null })),
      'MISSING_FIELD',
    );
    assert.equal(
      code(() => entry.encodeRelayCallMessage({ ...base, keyManager: undefined })),
      'MISSING_FIELD',
    );
    assert.throws(
      () => entry.encodeRelayCallMessage({ ...base, payLoad: '0x' }),
      (e) => e.code === 'INVALID_ARGUMENT' && /payLoad/.test(e.message),
    );
    assert.equal(
      code(() => entry.encodeRelayCallMessage(null)),
      'INVALID_ARGUMENT',
    );
  }
});

test('signer recovery is in profile-relayer/recover, not in the full entry, and within its budget', () => {
  for (const name of ['recoverRelayCallSigner', 'recoverQuotaSigner']) {
    assert.equal(typeof recover[name], 'function', name);
    assert.equal(sdk[name], undefined, `${name} is not in the full entry`);
  }
  // the recover entry has the lite encodings: same digest as the full entry
  const call = { keyManager: '0x' + '22'.repeat(20), chainId: 42, nonce: 1n, payload: '0x44c028fe' };
  assert.equal(recover.relayCallDigest(call), sdk.relayCallDigest(call));
  // 98,715 B gzip (lite + secp256k1 recovery, opt-level 3, 2026-11-24); ≈ 0.6 KiB of headroom
  const wasm = gzipSync(readFileSync(new URL('../../pkg/recover/web/profile_relayer_bg.wasm', import.meta.url)), { level: 9 }).length;
  // issue 26: 100,139 B with the lite entry's refused arguments and erc725.js shapes (was ≤ 97 KiB)
  assert.ok(wasm <= 98 * 1024, `${wasm} bytes of gzipped wasm`);
});
