// erc725.js's shapes where the same names are used, byte for byte against erc725.js itself: permissions objects,
// JSON objects as VerifiableURI content, erc725.js's decoded VerifiableURI; and the LUKSO constants against
// @lukso/lsp-smart-contracts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { ERC725 } from '@erc725/erc725.js';
import LSP3Schema from '@erc725/erc725.js/schemas/LSP3ProfileMetadata.json' with { type: 'json' };
import * as full from 'profile-relayer';
import * as lite from 'profile-relayer/lite';

const require = createRequire(import.meta.url);
const lsp = require('lsp-smart-contracts-0.14.0');
const NAMES = Object.keys(full.decodePermissionsObject('0x' + '00'.repeat(32))).filter((n) => n !== 'ALL_PERMISSIONS');

test('permissions: erc725.js objects in, erc725.js objects out', () => {
  const cases = [
    { SETDATA: true, CALL: true },
    { ALL_PERMISSIONS: true },
    { ALL_PERMISSIONS: true, CHANGEOWNER: false, SIGN: false },
    { CHANGEOWNER: true, ALL_PERMISSIONS: false },
    { SETDATA: false },
    {},
  ];
  // every single permission, and random sets
  for (const name of NAMES) cases.push({ [name]: true });
  for (let i = 0; i < 50; i++) {
    const o = {};
    for (const name of NAMES) if (Math.random() < 0.3) o[name] = Math.random() < 0.8;
    cases.push(o);
  }
  for (const m of [lite, full]) {
    for (const c of cases) {
      const ours = m.encodePermissions(c);
      assert.equal(ours, ERC725.encodePermissions(c), JSON.stringify(c));
      const names = Object.entries(c)
        .filter(([, v]) => v)
        .map(([k]) => k);
      if (!('ALL_PERMISSIONS' in c) && Object.values(c).every(Boolean)) assert.equal(ours, m.encodePermissions(names));
      const theirs = ERC725.decodePermissions(ours);
      // ERC4337_PERMISSION is no permission of the LSP6 KeyManager (refused by encodePermissions, as in the array form)
      delete theirs.ERC4337_PERMISSION;
      assert.deepEqual(full.decodePermissionsObject(ours), theirs, ours);
    }
  }
  assert.throws(() => lite.encodePermissions({ SETDATA: 1 }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => lite.encodePermissions({ NOPE: true }), { code: 'UNKNOWN_PERMISSION' });
  assert.throws(() => lite.encodePermissions({ ERC4337_PERMISSION: true }), { code: 'UNKNOWN_PERMISSION' });
});

test('VerifiableURI: a JSON object as content, as erc725.js encodeData takes it', () => {
  const erc725 = new ERC725(LSP3Schema);
  for (const json of [{ LSP3Profile: { name: 'alice', description: 'é 🦊', links: [] } }, [1, 'two'], {}]) {
    const url = 'ipfs://QmYr1VJLwerg6pEoscdhVGugo39pa6rycEZLjtRPDfW84UAx';
    const [theirs] = erc725.encodeData([{ keyName: 'LSP3Profile', value: { json, url } }]).values;
    for (const m of [lite, full]) {
      assert.equal(m.encodeVerifiableUriData('LSP3Profile', json, url).value, theirs);
      assert.equal(m.encodeVerifiableUri(json, url), theirs);
      assert.equal(m.encodeVerifiableUri(JSON.stringify(json), url), theirs, 'the same as its text');
    }
  }
  assert.throws(() => lite.encodeVerifiableUri({ big: 1n }, 'ipfs://x'), { code: 'INVALID_CONTENT' });
});

test("VerifiableURI: decodeDataSourceWithHash answers erc725.js's shape", () => {
  const values = [
    lite.encodeVerifiableUri('{"a":1}', 'ipfs://x'),
    lite.encodeVerifiableUri(new Uint8Array([1, 2, 3]), 'https://example.com/a.png'),
    // legacy JSONURL: hash function id ‖ hash ‖ url
    '0x6f357c6a' + 'ab'.repeat(32) + Buffer.from('ipfs://legacy').toString('hex'),
    // keccak256(bytes)
    '0x00008019f9b10020' + 'cd'.repeat(32) + Buffer.from('ipfs://y').toString('hex'),
  ];
  assert.equal(lite.decodeDataSourceWithHash, undefined, 'full entry only: the lite one keeps to the encodings');
  for (const m of [full]) {
    for (const v of values) assert.deepEqual(m.decodeDataSourceWithHash(v), ERC725.decodeDataSourceWithHash(v), v);
  }
  // an unknown method, which erc725.js refuses: its id
  const unknown = '0x0000deadbeef0020' + 'cd'.repeat(32) + Buffer.from('ipfs://y').toString('hex');
  assert.deepEqual(full.decodeDataSourceWithHash(unknown), { verification: { method: '0xdeadbeef', data: '0x' + 'cd'.repeat(32) }, url: 'ipfs://y' });
  assert.throws(
    () => full.decodeDataSourceWithHash('0x00'),
    (e) => e instanceof lite.ProfileRelayerError,
  );
});

test('LUKSO constants: the values of @lukso/lsp-smart-contracts', () => {
  assert.equal(lite.luksoConstants, undefined, 'full entry only');
  for (const m of [full]) {
    const c = m.luksoConstants();
    const permissions = { ...lsp.PERMISSIONS, ALL_PERMISSIONS: lsp.ALL_PERMISSIONS };
    assert.deepEqual(c.permissions, Object.fromEntries(Object.entries(permissions).map(([k, v]) => [k, v.toLowerCase()])), 'PERMISSIONS');
    // ERC725YDataKeys flattened: `Name[]` is `{ length, index }`, the mappings' prefixes are their names
    const known = {};
    for (const group of Object.values(lsp.ERC725YDataKeys)) {
      for (const [k, v] of Object.entries(group)) known[k] = (typeof v === 'string' ? v : v.length).toLowerCase();
    }
    known['SupportedStandards:LSP3Profile'] = known.SupportedStandards_LSP3;
    known['SupportedStandards:LSP4DigitalAsset'] = known.SupportedStandards_LSP4;
    assert.ok(Object.keys(c.dataKeys).length >= 15);
    for (const [name, key] of Object.entries(c.dataKeys)) {
      assert.equal(key, m.encodeKeyName(name), name);
      assert.equal(key, known[name], `${name} in ERC725YDataKeys`);
    }
    for (const [name, prefix] of Object.entries(c.dataKeyPrefixes)) {
      assert.equal(m.encodeKeyName(`${name}:<address>`, ['0x' + '00'.repeat(20)]).slice(0, 2 + 24), prefix, name);
      if (known[name]) assert.equal(known[name], prefix, `${name} in ERC725YDataKeys`);
    }
    assert.equal(c.dataKeyPrefixes['AddressPermissions:Permissions'], known['AddressPermissions:Permissions']);
    for (const id of ['LSP0ERC725Account', 'LSP6KeyManager', 'LSP8IdentifiableDigitalAsset']) {
      assert.equal(c.interfaceIds[id], lsp.INTERFACE_IDS[id], id);
    }
    // LSP7: the current contracts' id (@lukso/lsp7-contracts 0.16), newer than the 0.14.0 package's
    assert.match(c.interfaceIds.LSP7DigitalAsset, /^0x[0-9a-f]{8}$/);
    assert.equal(c.interfaceIds.LSP25ExecuteRelayCall, lsp.INTERFACE_IDS.LSP25ExecuteRelayCall ?? c.interfaceIds.LSP25ExecuteRelayCall);
    // the canonical addresses predict what the default network predicts
    const salt = '0x' + '11'.repeat(32);
    const { postDeploymentCallData } = m.profileDataFromControllers(['0x' + '22'.repeat(20)]);
    assert.deepEqual(
      m.predictProfileAddress({ salt, postDeploymentCallData, network: c.addresses }),
      m.predictProfileAddress({ salt, postDeploymentCallData }),
    );
  }
});
