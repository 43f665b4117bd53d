// Every export of every module of the package throws (or, for promises, rejects with) a `ProfileRelayerError` with a
// `code` on bad input: the raw wasm-bindgen modules (Node CommonJS builds, `--target web` builds) and the entries, which
// put the JS facade (src/wasm/js/facade.js) in front of some exports (`profile-relayer`, `/lite`, `/recover`: the
// inline bundler glue; `/node`, `/web`). The list of bad calls below is checked in both
// directions: an export missing from it fails the test, so a new export cannot silently return its errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const pkgDir = fileURLToPath(new URL('../../pkg/', import.meta.url));

const ADDRESS = '0x3303ce3b8644d566271dd2eb54292d32f1458968';
const KEY = '0x' + '11'.repeat(32);
const RELAY_CALL = { keyManager: ADDRESS, chainId: 42, nonce: 0, payload: '0x' };
// a `fetch` that fails the test when a call with bad input goes to the network instead of refusing it
const fetchNever = () => Promise.reject(new Error('bad input reached the network'));
const clientOptions = { baseUrl: 'http://127.0.0.1:9', fetch: fetchNever };

// export → calls with bad input (each must throw); several per export: a wrong type for each argument where
// wasm-bindgen would otherwise coerce or misread it, and a well-typed but invalid value
const BAD = {
  decodePermissions: [(m) => m.decodePermissions(42), (m) => m.decodePermissions('0x12')],
  decodePostDeploymentCallData: [(m) => m.decodePostDeploymentCallData(1), (m) => m.decodePostDeploymentCallData('0x1234')],
  decodeDataSourceWithHash: [(m) => m.decodeDataSourceWithHash(5), (m) => m.decodeDataSourceWithHash('0x00')],
  decodePermissionsObject: [(m) => m.decodePermissionsObject(42), (m) => m.decodePermissionsObject('0x12')],
  decodeVerifiableUri: [(m) => m.decodeVerifiableUri(undefined), (m) => m.decodeVerifiableUri('0x00')],
  encodeArrayElementKey: [
    (m) => m.encodeArrayElementKey(1, 0),
    (m) => m.encodeArrayElementKey('LSP3Profile', 0),
    (m) => m.encodeArrayElementKey('AddressPermissions[]', -1),
    (m) => m.encodeArrayElementKey('AddressPermissions[]', 'x'),
  ],
  encodeDeployCalldata: [(m) => m.encodeDeployCalldata(null), (m) => m.encodeDeployCalldata({ salt: '0x' })],
  encodeExecuteRelayCall: [(m) => m.encodeExecuteRelayCall(1), (m) => m.encodeExecuteRelayCall({ signature: '0x', nonce: 0, payload: '0x' })],
  encodeKeyName: [(m) => m.encodeKeyName(42), (m) => m.encodeKeyName('a:b:c:d:e'), (m) => m.encodeKeyName('LSP3Profile', 5)],
  encodeKeyNames: [(m) => m.encodeKeyNames('LSP3Profile'), (m) => m.encodeKeyNames([42])],
  encodePermissions: [
    (m) => m.encodePermissions(42),
    (m) => m.encodePermissions(['NOPE']),
    (m) => m.encodePermissions([1]),
    (m) => m.encodePermissions({ SETDATA: 'yes' }),
    (m) => m.encodePermissions({ NOPE: true }),
  ],
  encodePostDeploymentCallData: [(m) => m.encodePostDeploymentCallData(1, []), (m) => m.encodePostDeploymentCallData(['0x12'], ['0x'])],
  encodeRelayCallMessage: [(m) => m.encodeRelayCallMessage('x'), (m) => m.encodeRelayCallMessage({ ...RELAY_CALL, nonce: -1 })],
  encodeTokenId: [
    (m) => m.encodeTokenId('x', '1'),
    (m) => m.encodeTokenId(0, 5),
    (m) => m.encodeTokenId(7, '1'),
    (m) => m.encodeTokenId(0, 'x'),
    // next to the facade's decimals: none of these is one
    (m) => m.encodeTokenId(0, ''),
    (m) => m.encodeTokenId(100, '-1'),
    (m) => m.encodeTokenId(0, ' 12'),
    (m) => m.encodeTokenId(0, '1e3'),
  ],
  encodeVerifiableUri: [
    (m) => m.encodeVerifiableUri(1, 'ipfs://x'),
    (m) => m.encodeVerifiableUri({ n: 1n }, 'ipfs://x'),
    (m) => m.encodeVerifiableUri('{}', 1),
  ],
  encodeVerifiableUriData: [
    (m) => m.encodeVerifiableUriData(1, '{}', 'ipfs://x'),
    (m) => m.encodeVerifiableUriData('LSP3Profile', 1, 'ipfs://x'),
    (m) => m.encodeVerifiableUriData('LSP3Profile', '{}', 1),
    (m) => m.encodeVerifiableUriData('LSP3Profile', '{}', 'ipfs://x', 5),
  ],
  predictProfileAddress: [(m) => m.predictProfileAddress(1), (m) => m.predictProfileAddress({ salt: KEY, postDeploymentCallData: '0x', network: 'goerli' })],
  predictProfileAddresses: [(m) => m.predictProfileAddresses(1), (m) => m.predictProfileAddresses([1])],
  profileDataFromControllers: [
    (m) => m.profileDataFromControllers([]),
    (m) => m.profileDataFromControllers(1),
    (m) => m.profileDataFromControllers([ADDRESS], 5),
    (m) => m.profileDataFromControllers([ADDRESS], undefined, 'goerli'),
  ],
  quotaMessage: [(m) => m.quotaMessage(42, 1), (m) => m.quotaMessage(undefined, 1), (m) => m.quotaMessage(ADDRESS, -1), (m) => m.quotaMessage(ADDRESS, 1, 'x')],
  relayCallDigest: [(m) => m.relayCallDigest(1), (m) => m.relayCallDigest({ ...RELAY_CALL, payload: undefined })],
  verifyVerifiableUri: [(m) => m.verifyVerifiableUri(1, '{}'), (m) => m.verifyVerifiableUri(m.encodeVerifiableUri('{}', 'ipfs://x'), 5)],
  // full entry
  computeCid: [(m) => m.computeCid('abc'), (m) => m.computeCid(5)],
  verifyCid: [(m) => m.verifyCid(5, new Uint8Array()), (m) => m.verifyCid(m.computeCid(new Uint8Array()), 'x'), (m) => m.verifyCid('b', new Uint8Array())],
  decodeRelayCallRevert: [(m) => m.decodeRelayCallRevert(5), (m) => m.decodeRelayCallRevert('0x1')],
  encodeSetData: [(m) => m.encodeSetData(1, '0x'), (m) => m.encodeSetData(KEY, 5)],
  encodeSetDataBatch: [(m) => m.encodeSetDataBatch(1, []), (m) => m.encodeSetDataBatch([KEY], [])],
  fetchRelayCallParams: [(m) => m.fetchRelayCallParams(1), (m) => m.fetchRelayCallParams({ rpcUrl: 'ftp://x', address: ADDRESS, controller: ADDRESS })],
  // recover entry
  recoverRelayCallSigner: [(m) => m.recoverRelayCallSigner(RELAY_CALL, 5), (m) => m.recoverRelayCallSigner(1, '0x')],
  recoverQuotaSigner: [(m) => m.recoverQuotaSigner(5, 1, '0x'), (m) => m.recoverQuotaSigner(ADDRESS, 1, 5)],
  // classes: the constructor, then every method of an instance
  RelayerClient: [(m) => new m.RelayerClient(1), (m) => new m.RelayerClient({}), (m) => new m.RelayerClient({ baseUrl: 5 })],
  LookupClient: [(m) => new m.LookupClient(1), (m) => new m.LookupClient({}), (m) => new m.LookupClient({ baseUrl: 'x', timeout: -1 })],
};
const METHODS = {
  RelayerClient: {
    createProfile: [(c) => c.createProfile(1), (c) => c.createProfile({ metadata: {}, controllers: [] })],
    deployProfile: [(c) => c.deployProfile(1), (c) => c.deployProfile({ salt: KEY })],
    execute: [(c) => c.execute(1), (c) => c.execute({ address: ADDRESS, nonce: 0, payload: '0x' })],
    profileStatus: [(c) => c.profileStatus(5), (c) => c.profileStatus('0x12')],
    quota: [(c) => c.quota(1), (c) => c.quota({ address: ADDRESS, signature: '0x' })],
    registerProfile: [(c) => c.registerProfile(5), (c) => c.registerProfile('alice')],
    transaction: [(c) => c.transaction(5), (c) => c.transaction('0x12')],
  },
  LookupClient: {
    address: [(c) => c.address('x', ADDRESS), (c) => c.address(42, 5), (c) => c.address(42, '0x12')],
    indexer: [(c) => c.indexer('x'), (c) => c.indexer(-1)],
    ipfs: [(c) => c.ipfs(5), (c) => c.ipfs('nope')],
    searchIndex: [(c) => c.searchIndex(5, 'q'), (c) => c.searchIndex('i', 5), (c) => c.searchIndex('i', 'q', { page: -1 })],
    search: [(c) => c.search('x', 'q'), (c) => c.search(42, 5), (c) => c.search(42, 'q', { hitsPerPage: 'x' }), (c) => c.search(42, 'q', { pages: 1 })],
    stats: [(c) => c.stats('x'), (c) => c.stats(2 ** 40)],
    token: [(c) => c.token(42, ADDRESS, 5), (c) => c.token(1.5, ADDRESS, '1'), (c) => c.token(42, 5, '1')],
    upload: [(c) => c.upload(5), (c) => c.upload(undefined)],
  },
};
// exports with no input to refuse: the error class, the guard (answers false, never throws), the lists and salts of
// no arguments, and the `--target web` loaders (which throw the engine's own errors for a bad module)
const NO_BAD_INPUT = new Set(['ProfileRelayerError', 'isProfileRelayerError', 'errorCodes', 'generateSalt', 'luksoConstants', 'default', 'initSync']);
const WASM_BINDGEN_METHODS = new Set(['constructor', 'free', '__destroy_into_raw']);

const isClass = (f) => /^class\b/.test(Function.prototype.toString.call(f));

function checkError(m, e, what) {
  assert.ok(e instanceof Error, `${what}: threw a non-Error ${e}`);
  assert.ok(e instanceof m.ProfileRelayerError, `${what}: threw ${e?.name}: ${e?.message}`);
  assert.ok(m.isProfileRelayerError(e), what);
  assert.equal(e.name, 'ProfileRelayerError', what);
  assert.ok(errorCodesOf(m).has(e.code), `${what}: code ${e.code}`);
}

// a module's `errorCodes()`, asked once per module (a call builds the list anew: ≈ 250 µs, more than a throw)
const errorCodes = new WeakMap();
function errorCodesOf(m) {
  if (!errorCodes.has(m)) errorCodes.set(m, new Set(m.errorCodes()));
  return errorCodes.get(m);
}

/** Each call throws (a synchronous export) or returns a promise that rejects (a client method, the async export). */
async function expectRefused(m, call, what, async) {
  let out;
  try {
    out = call();
  } catch (e) {
    assert.ok(!async, `${what}: threw synchronously instead of rejecting`);
    checkError(m, e, what);
    return;
  }
  assert.ok(out instanceof Promise, `${what}: returned ${String(out)} instead of throwing`);
  assert.ok(async, `${what}: a synchronous export returned a promise`);
  await out.then(
    () => assert.fail(`${what}: resolved`),
    (e) => checkError(m, e, what),
  );
}

async function checkModule(label, m) {
  const names = Object.keys(m).filter((n) => typeof m[n] === 'function');
  assert.ok(names.length > 15, `${label}: ${names.length} exported functions`);
  let calls = 0;
  for (const name of names) {
    if (NO_BAD_INPUT.has(name)) continue;
    assert.ok(BAD[name], `${label}: export ${name} has no bad-input case in throws.test.mjs`);
    for (const [i, call] of BAD[name].entries()) {
      await expectRefused(m, () => call(m), `${label} ${name} #${i}`, name === 'fetchRelayCallParams');
      calls++;
    }
    if (!isClass(m[name])) continue;
    const client = new m[name](clientOptions);
    const methods = Object.getOwnPropertyNames(m[name].prototype).filter((n) => !WASM_BINDGEN_METHODS.has(n));
    assert.deepEqual(methods.toSorted(), Object.keys(METHODS[name] ?? {}).toSorted(), `${label} ${name}: every method has cases`);
    for (const method of methods) {
      for (const [i, call] of METHODS[name][method].entries()) {
        await expectRefused(m, () => call(client), `${label} ${name}.${method} #${i}`, true);
        calls++;
      }
    }
    client.free();
  }
  // the exports without bad input: the guard never throws, the rest take no argument
  assert.equal(m.isProfileRelayerError(new Error('x')), false);
  assert.equal(m.isProfileRelayerError(undefined), false);
  assert.equal(m.errorCodes.length, 0);
  assert.equal(m.generateSalt.length, 0);
  if (m.luksoConstants) assert.equal(m.luksoConstants.length, 0);
  return calls;
}

const flavours = [
  ['full', ''],
  ['lite', 'lite/'],
  ['recover', 'recover/'],
];

for (const [flavour, dir] of flavours) {
  test(`${flavour}: every export of the raw Node module throws a ProfileRelayerError on bad input`, async () => {
    const m = require(`${pkgDir}${dir}node/profile_relayer.js`);
    assert.ok((await checkModule(`${dir}node`, m)) > 40);
  });

  test(`${flavour}: every export of the raw --target web module throws a ProfileRelayerError on bad input`, async () => {
    const m = await import(pathToFileURL(`${pkgDir}${dir}web/profile_relayer.js`).href);
    await m.default({ module_or_path: readFileSync(`${pkgDir}${dir}web/profile_relayer_bg.wasm`) });
    await checkModule(`${dir}web`, m);
  });

  // the entries with the JS facade (src/wasm/js/facade.js) in front of some exports
  test(`${flavour}: every export of the Node entry (CommonJS, with the facade) throws a ProfileRelayerError on bad input`, async () => {
    const m = require(`profile-relayer/${dir}node`);
    assert.notEqual(m.encodeTokenId, require(`${pkgDir}${dir}node/profile_relayer.js`).encodeTokenId, 'the facade is in front');
    assert.ok((await checkModule(`${dir}node entry`, m)) > 40);
  });

  test(`${flavour}: every export of the --target web entry (with the facade) throws a ProfileRelayerError on bad input`, async () => {
    const m = await import(`profile-relayer/${dir}web`);
    await m.default({ module_or_path: readFileSync(`${pkgDir}${dir}web/profile_relayer_bg.wasm`) });
    await checkModule(`${dir}web entry`, m);
  });

  test(`${flavour}: every export of the package entry throws a ProfileRelayerError on bad input`, async () => {
    const m = await import(`profile-relayer${dir ? '/' + flavour : ''}`);
    await checkModule(`entry ${flavour}`, m);
  });
}

test('ProfileRelayerError: a class usable with instanceof, across copies of the package, like the guard', async () => {
  const full = await import('profile-relayer');
  const lite = await import('profile-relayer/lite');
  const cjs = require(`${pkgDir}node/profile_relayer.js`);
  let thrown;
  try {
    lite.encodeKeyName(42);
  } catch (e) {
    thrown = e;
  }
  for (const m of [full, lite, cjs]) {
    assert.ok(thrown instanceof m.ProfileRelayerError, 'an error of another copy is recognised');
    assert.equal(m.isProfileRelayerError(thrown), true);
  }
  const made = new full.ProfileRelayerError('custom', 'INVALID_ARGUMENT', { cause: 'why' });
  assert.ok(made instanceof Error && made instanceof lite.ProfileRelayerError);
  assert.equal(made.name, 'ProfileRelayerError');
  assert.equal(made.code, 'INVALID_ARGUMENT');
  assert.equal(made.cause, 'why');
  assert.equal(lite.isProfileRelayerError(made), true);
  // not one of ours: an Error of another name, or one without a code
  const other = Object.assign(new Error('x'), { code: 'INVALID_ARGUMENT' });
  assert.ok(!(other instanceof full.ProfileRelayerError));
  assert.equal(full.isProfileRelayerError(other), false);
  assert.ok(!({ name: 'ProfileRelayerError', code: 'X' } instanceof full.ProfileRelayerError), 'a plain object is no Error');
});

// The hottest exports throw from inside the wasm instead of returning a `Result` (src/wasm/error.rs `throw`): a JS
// exception leaves the wasm frames without their epilogues. Anything those would have undone — a shadow-stack frame,
// a slot of wasm-bindgen's borrowed-externref stack (1,024 slots), a scratch area left marked as in use, an owned
// value — would leak on each throw; 100,000 throws of each kind, interleaved with good calls, would then exhaust the
// stack or the slots (a trap or a wrong answer) or leave the scratch area to the heap path.
const THROWING = {
  encodeTokenId: {
    bad: [(m) => m.encodeTokenId(7, '1'), (m) => m.encodeTokenId(0, 'x'), (m) => m.encodeTokenId(0, 5), (m) => m.encodeTokenId(1.5, '1')],
    good: (m) => m.encodeTokenId(0, '123456789'),
    expected: '0x00000000000000000000000000000000000000000000000000000000075bcd15',
  },
  encodePermissions: {
    bad: [(m) => m.encodePermissions(['NOPE']), (m) => m.encodePermissions(42), (m) => m.encodePermissions({ SETDATA: 'yes' })],
    good: (m) => m.encodePermissions(['SETDATA', 'CALL']),
    expected: '0x0000000000000000000000000000000000000000000000000000000000040800',
  },
  encodeArrayElementKey: {
    bad: [(m) => m.encodeArrayElementKey('LSP3Profile', 0), (m) => m.encodeArrayElementKey('AddressPermissions[]', -1), (m) => m.encodeArrayElementKey(1, 0)],
    good: (m) => m.encodeArrayElementKey('AddressPermissions[]', 1),
    expected: '0xdf30dba06db6a30e65354d9a64c6098600000000000000000000000000000001',
  },
};
// which exports throw from the wasm: wasm-bindgen's glue of the others throws the error a `Result` returned
const throwsInGlue = (f) => /\bthrow\b/.test(Function.prototype.toString.call(f));
for (const [flavour, dir] of flavours) {
  test(`${flavour}: exports that throw from the wasm leak nothing per throw (100,000 throws each)`, async () => {
    // (the Node entry `profile-relayer/node` is the raw Node module's instance with the facade in front: checked above)
    const entries = [require(`${pkgDir}${dir}node/profile_relayer.js`), await import(`profile-relayer${dir ? '/' + flavour : ''}`)];
    for (const m of entries) {
      // the list above is every synchronous export whose glue does not throw (both ways: a new one must be listed
      // here; the async `fetchRelayCallParams` rejects its promise)
      const fromWasm = Object.keys(m).filter(
        (n) => typeof m[n] === 'function' && !isClass(m[n]) && !NO_BAD_INPUT.has(n) && n !== 'fetchRelayCallParams' && !throwsInGlue(m[n]),
      );
      assert.deepEqual(fromWasm.toSorted(), Object.keys(THROWING).toSorted(), 'the exports that throw from the wasm');
      for (const [name, { bad, good, expected }] of Object.entries(THROWING)) {
        assert.equal(good(m), expected, name);
        const codes = new Set();
        // the JS stack trace of each error is not what is tested (the wasm's shadow stack is), and capturing it is
        // half the cost of a throw
        const stackTraceLimit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        try {
          for (let i = 0; i < 100_000; i++) {
            try {
              bad[i % bad.length](m);
              assert.fail(`${name}: bad call #${i % bad.length} returned`);
            } catch (e) {
              checkError(m, e, name);
              codes.add(e.code);
            }
            if (i % 1000 === 0) assert.equal(good(m), expected, `${name} after ${i} throws`);
          }
        } finally {
          Error.stackTraceLimit = stackTraceLimit;
        }
        assert.equal(good(m), expected, `${name} after 100,000 throws`);
        assert.ok(codes.size >= 2, `${name}: the bad calls' codes ${[...codes]}`);
        // the module's other calls still work too (the shared scratch area is free again)
        assert.equal(m.encodeKeyName('LSP3Profile'), '0x5ef83ad9559033e6e941db7d7c495acdce616347d28e90c7ce47cbfcfcad3bc5');
      }
    }
  });
}
