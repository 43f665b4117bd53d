// Content arguments (VerifiableURI encode / verify, CIDs, uploads): every kind of bytes JS has — of any realm — is
// read as its bytes, a plain object or array as its JSON, and nothing else is hashed or uploaded as what
// `JSON.stringify` makes of it (`"{}"` for a Blob, a File or an ArrayBuffer): such content throws INVALID_CONTENT.
// Checked against viem's keccak256 and erc725.js's encoding of the same bytes / JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';
import { ERC725 } from '@erc725/erc725.js';
import { keccak256 } from 'viem';
import * as full from 'profile-relayer';
import * as lite from 'profile-relayer/lite';
import * as recover from 'profile-relayer/recover';

const URL_ = 'ipfs://bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq';
const BYTES = Uint8Array.from({ length: 40 }, (_, i) => (i * 37 + 11) & 0xff);
const other = vm.runInNewContext('({ Uint8Array, ArrayBuffer, DataView, Object, Array })');

/** erc725.js's schema of the one key used here. */
const LSP3 = [
  {
    name: 'LSP3Profile',
    key: '0x5ef83ad9559033e6e941db7d7c495acdce616347d28e90c7ce47cbfcfcad3bc5',
    keyType: 'Singleton',
    valueType: 'bytes',
    valueContent: 'VerifiableURI',
  },
];

/** erc725.js's VerifiableURI of bytes hashed with keccak256(bytes). */
const erc725Bytes = (bytes) =>
  ERC725.encodeData([{ keyName: 'LSP3Profile', value: { verification: { method: 'keccak256(bytes)', data: keccak256(bytes) }, url: URL_ } }], LSP3).values[0];

/** Every form of the bytes `BYTES[4..36]` a dApp may hold. */
function forms() {
  const buffer = BYTES.buffer.slice(0);
  const foreign = new other.Uint8Array(40);
  foreign.set(BYTES);
  return {
    Uint8Array: BYTES.subarray(4, 36),
    'Node Buffer': Buffer.from(BYTES.subarray(4, 36)),
    ArrayBuffer: buffer.slice(4, 36),
    DataView: new DataView(buffer, 4, 32),
    Uint16Array: new Uint16Array(buffer, 4, 16),
    Float64Array: new Float64Array(buffer.slice(4, 36)),
    'Uint8Array of another realm': foreign.subarray(4, 36),
    'ArrayBuffer of another realm': foreign.buffer.slice(4, 36),
    'DataView of another realm': new other.DataView(foreign.buffer, 4, 32),
    SharedArrayBuffer: (() => {
      const shared = new SharedArrayBuffer(32);
      new Uint8Array(shared).set(BYTES.subarray(4, 36));
      return shared;
    })(),
  };
}

const NOT_CONTENT = {
  Blob: new Blob([BYTES]),
  File: new File([BYTES], 'a.png'),
  Date: new Date(0),
  Map: new Map([['a', 1]]),
  'class instance': new (class Profile {
    name = 'x';
  })(),
  function: () => 1,
  number: 5,
  null: null,
  undefined: undefined,
  bigint: 1n,
  'object with a BigInt': { a: 1n },
  'cyclic object': (() => {
    const o = {};
    o.self = o;
    return o;
  })(),
};

test('every kind of bytes is hashed as its bytes, in each entry: equal to erc725.js and viem', () => {
  const expected = erc725Bytes(BYTES.subarray(4, 36));
  const hash = keccak256(BYTES.subarray(4, 36));
  for (const m of [lite, full, recover]) {
    for (const [kind, content] of Object.entries(forms())) {
      assert.equal(m.encodeVerifiableUri(content, URL_), expected, kind);
      assert.equal(m.encodeVerifiableUriData('LSP3Profile', content, URL_).value, expected, kind);
      assert.equal(m.verifyVerifiableUri(expected, content), true, kind);
      assert.equal(m.decodeVerifiableUri(m.encodeVerifiableUri(content, URL_)).hash, hash, kind);
    }
  }
  const cid = full.computeCid(BYTES.subarray(4, 36));
  for (const [kind, content] of Object.entries(forms())) {
    assert.equal(full.computeCid(content), cid, kind);
    assert.equal(full.verifyCid(cid, content), true, kind);
  }
});

test('a plain object or array (of any realm) is hashed as its JSON.stringify text, as erc725.js does', () => {
  const json = { LSP3Profile: { name: 'Alice', tags: ['a'], links: [] } };
  const foreign = vm.runInNewContext(`(${JSON.stringify(json)})`);
  const bare = Object.assign(Object.create(null), json);
  for (const m of [lite, full, recover]) {
    for (const [kind, content] of Object.entries({ object: json, 'object of another realm': foreign, 'object without prototype': bare, array: [1, 'a'] })) {
      assert.equal(m.encodeVerifiableUri(content, URL_), m.encodeVerifiableUri(JSON.stringify(content), URL_), kind);
    }
    assert.equal(m.encodeVerifiableUri(json, URL_), ERC725.encodeData([{ keyName: 'LSP3Profile', value: { json, url: URL_ } }], LSP3).values[0]);
    assert.notEqual(m.encodeVerifiableUri(json, URL_), m.encodeVerifiableUri('{}', URL_));
  }
});

test('a Blob, a File, a Date, a class instance or JSON that cannot be written throws INVALID_CONTENT, never hashes "{}"', () => {
  const invalid = (e) => e.code === 'INVALID_CONTENT' && e.name === 'ProfileRelayerError' && /^content must be /.test(e.message);
  for (const m of [lite, full, recover]) {
    for (const [kind, content] of Object.entries(NOT_CONTENT)) {
      assert.throws(() => m.encodeVerifiableUri(content, URL_), invalid, kind);
      assert.throws(() => m.encodeVerifiableUriData('LSP3Profile', content, URL_), invalid, kind);
      assert.throws(() => m.verifyVerifiableUri(erc725Bytes(BYTES), content), invalid, kind);
    }
    // a JSON value is content only where JSON is taken
    assert.throws(() => m.verifyVerifiableUri(erc725Bytes(BYTES), { a: 1 }), invalid);
  }
  for (const [kind, content] of Object.entries({ ...NOT_CONTENT, string: 'abc', object: { a: 1 } })) {
    assert.throws(() => full.computeCid(content), invalid, kind);
    assert.throws(() => full.verifyCid(full.computeCid(BYTES), content), invalid, kind);
  }
});

/** A `fetch` standing in for the upload route: reads the multipart file and answers its CID (from `computeCid`). */
function uploadService() {
  const seen = [];
  const f = async (_url, init) => {
    const file = init.body.get('file');
    const bytes = new Uint8Array(await file.arrayBuffer());
    seen.push({ bytes, name: file.name });
    const cid = full.computeCid(bytes);
    const answer = { Name: file.name, Hash: cid, Size: String(bytes.length), IpfsHash: cid, PinSize: bytes.length, Timestamp: new Date().toISOString() };
    return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return Object.assign(f, { seen });
}

test('upload: bytes of every kind, a Blob or File (read), a string, JSON; anything else rejects before sending', async () => {
  const service = uploadService();
  const lookup = new full.LookupClient({ baseUrl: 'http://lookup.test', apiKey: 'k', fetch: service });
  const cid = full.computeCid(BYTES);
  const all = { ...forms(), Blob: new Blob([BYTES.subarray(4, 36)]), File: new File([BYTES.subarray(4, 36)], 'a.bin') };
  for (const [kind, content] of Object.entries(all)) {
    const result = await lookup.upload(content);
    assert.equal(result.cid, full.computeCid(BYTES.subarray(4, 36)), kind);
    assert.equal(result.size, 32, kind);
    assert.deepEqual(service.seen.at(-1).bytes, BYTES.subarray(4, 36), kind);
  }
  assert.equal((await lookup.upload(BYTES)).cid, cid);
  const json = { LSP3Profile: { name: 'Alice' } };
  assert.equal((await lookup.upload(json)).cid, full.computeCid(new TextEncoder().encode(JSON.stringify(json))));
  assert.equal((await lookup.upload('héllo')).cid, full.computeCid(new TextEncoder().encode('héllo')));
  const sent = service.seen.length;
  for (const [kind, content] of Object.entries(NOT_CONTENT)) {
    if (kind === 'Blob' || kind === 'File') continue;
    await assert.rejects(lookup.upload(content), (e) => e.code === 'INVALID_CONTENT' && /a Blob or File/.test(e.message), kind);
  }
  assert.equal(service.seen.length, sent, 'nothing sent for content that is not content');
});
