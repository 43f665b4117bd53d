// The shared reference vectors against the built npm package (Node build, via the package's "exports").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as sdk from 'profile-relayer';

const load = (name) => JSON.parse(readFileSync(new URL(`../fixtures/vectors/${name}.json`, import.meta.url), 'utf8'));
const hexToBytes = (hex) => Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));

test('verifiable-uri.json', () => {
  const file = load('verifiable-uri');
  for (const c of file.cases) {
    if (c.function === 'encodeVerifiableUri') {
      const content = 'content' in c.input ? c.input.content : hexToBytes(c.input.contentHex);
      const value = sdk.encodeVerifiableUri(content, c.input.url);
      assert.equal(value, c.expected.toLowerCase(), c.id);
      const d = sdk.decodeVerifiableUri(value);
      assert.deepEqual({ method: d.method, hash: d.hash, url: d.url }, c.decoded, c.id);
      assert.equal(sdk.verifyVerifiableUri(value, content), true, c.id);
    } else {
      const d = sdk.decodeVerifiableUri(c.input);
      assert.deepEqual({ method: d.method, hash: d.hash, url: d.url }, c.expected, c.id);
      assert.equal(d.format, c.input.startsWith('0x0000') ? 'verifiableUri' : 'legacy', c.id);
    }
  }
  // design choices for the notPinned cases: unverifiable URIs decode, keccak methods need exactly 32 bytes
  const none = sdk.decodeVerifiableUri('0x000000000000000068747470733a2f2f6d79626173652e7572692f');
  assert.deepEqual(none, { format: 'verifiableUri', method: '0x00000000', hash: '0x', url: 'https://mybase.uri/' });
  assert.throws(() => sdk.decodeVerifiableUri('0x00006f357c6a0004deadbeef697066733a2f2f78'), { code: 'VERIFICATION_DATA_LENGTH' });
});

test('data-keys.json', () => {
  for (const c of load('data-keys').cases) {
    const got =
      c.function === 'encodeKeyName' ? sdk.encodeKeyName(c.input.name, c.input.dynamicKeyParts) : sdk.encodeArrayElementKey(c.input.name, c.input.index);
    assert.equal(got, c.expected.toLowerCase(), c.id);
  }
  assert.equal(sdk.encodeArrayElementKey('AddressPermissions[]', 2n ** 64n), '0xdf30dba06db6a30e65354d9a64c6098600000000000000010000000000000000');
});

test('post-deployment-calldata.json', () => {
  for (const c of load('post-deployment-calldata').cases) {
    const hex = sdk.encodePostDeploymentCallData(c.input.keys, c.input.values);
    assert.equal(hex, c.expected.toLowerCase(), c.id);
    const lower = (xs) => xs.map((x) => x.toLowerCase());
    assert.deepEqual(sdk.decodePostDeploymentCallData(hex), { keys: lower(c.input.keys), values: lower(c.input.values) });
  }
});

test('lsp23-address.json', () => {
  for (const c of load('lsp23-address').cases) {
    const p = sdk.predictProfileAddress(c.input);
    assert.equal(p.universalProfile, c.expected.universalProfile, c.id);
    assert.equal(p.keyManager, c.expected.keyManager, c.id);
    if (c.intermediate?.generatedSalt) assert.equal(p.generatedSalt, c.intermediate.generatedSalt, c.id);
  }
});

test('invalid-inputs.json: every case throws an Error with a string code', () => {
  const codes = new Set(sdk.errorCodes());
  for (const c of load('invalid-inputs').cases) {
    let thrown;
    try {
      sdk[c.function](...c.args);
    } catch (e) {
      thrown = e;
    }
    assert.ok(thrown instanceof Error, `${c.id} (${c.reason}) did not throw`);
    assert.equal(thrown.name, 'ProfileRelayerError', c.id);
    assert.equal(typeof thrown.code, 'string', c.id);
    assert.ok(codes.has(thrown.code), `${c.id}: unknown code ${thrown.code}`);
    assert.ok(sdk.isProfileRelayerError(thrown));
  }
});
