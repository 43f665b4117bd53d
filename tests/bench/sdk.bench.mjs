// SDK benchmark: this package (wasm) against erc725.js and viem, in one Node process, on the same inputs.
// Every pair is first checked to give identical output, then timed. Prints ops/s, the ratio and the gzip size of
// the npm package's wasm and JS glue.
//
//   node tests/bench/sdk.bench.mjs            # full run (~1 s per case)
//   node tests/bench/sdk.bench.mjs --quick    # smoke run used by the test command (output checks + short timing)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { decodeDataSourceWithHash, encodeDataSourceWithHash, encodeKeyName as erc725EncodeKeyName } from '@erc725/erc725.js';
import { encodeAbiParameters, getCreate2Address, keccak256, toHex } from 'viem';
import * as sdk from 'profile-relayer';

const quick = process.argv.includes('--quick');
const budgetMs = quick ? 30 : 1000;

// inputs
const json = JSON.stringify({ LSP3Profile: { name: 'alice', description: 'hi', links: [], tags: ['a'] } });
const url = 'ipfs://QmYr1VJLwerg6pEoscdhVGugo39pa6rycEZLjtRPDfW84UAx';
const controller = '0xcafecafecafecafecafecafecafecafecafecafe';
const profile = sdk.profileDataFromControllers([controller], sdk.encodeVerifiableUri(json, url));
const { keys, values, postDeploymentCallData } = profile;
const salt = '0x' + '11'.repeat(32);
const C = {
  factory: '0x2300000A84D25dF63081feAa37ba6b62C4c89a30',
  upImpl: '0x3024D38EA2434BA6635003Dc1BDC0daB5882ED4F',
  kmImpl: '0x2Fe3AeD98684E7351aD2D408A43cE09a738BF8a4',
  module: '0x000000000066093407b6704B89793beFfD0D8F00',
};
const initCodeHash = (impl) =>
  keccak256(`0x3d602d80600a3d3981f3363d3d373d3d3d363d73${impl.slice(2).toLowerCase()}5af43d82803e903d91602b57fd5bf3`);
const UP_HASH = initCodeHash(C.upImpl);
const KM_HASH = initCodeHash(C.kmImpl);

function viemPredict(s, calldata) {
  const generatedSalt = keccak256(encodeAbiParameters(
    [{ type: 'bytes32' }, { type: 'address' }, { type: 'bytes' }, { type: 'bool' }, { type: 'bytes' }, { type: 'address' }, { type: 'bytes' }],
    [s, C.kmImpl, '0xc4d66de8', true, '0x', C.module, calldata]));
  const universalProfile = getCreate2Address({ from: C.factory, salt: generatedSalt, bytecodeHash: UP_HASH });
  const keyManager = getCreate2Address({ from: C.factory, salt: keccak256(universalProfile), bytecodeHash: KM_HASH });
  return { universalProfile, keyManager };
}

const vuri = sdk.encodeVerifiableUri(json, url);
const cases = [
  {
    name: 'VerifiableURI encode (hash + layout)',
    peer: 'erc725.js',
    ours: () => sdk.encodeVerifiableUri(json, url),
    theirs: () => encodeDataSourceWithHash({ method: 'keccak256(utf8)', data: keccak256(toHex(json)) }, url),
  },
  {
    name: 'VerifiableURI decode',
    peer: 'erc725.js',
    ours: () => { const d = sdk.decodeVerifiableUri(vuri); return [d.hash, d.url]; },
    theirs: () => { const d = decodeDataSourceWithHash(vuri); return [d.verification.data, d.url]; },
  },
  {
    name: 'key name: singleton LSP3Profile',
    peer: 'erc725.js',
    ours: () => sdk.encodeKeyName('LSP3Profile'),
    theirs: () => erc725EncodeKeyName('LSP3Profile'),
  },
  {
    name: 'key name: AddressPermissions:Permissions:<address>',
    peer: 'erc725.js',
    ours: () => sdk.encodeKeyName('AddressPermissions:Permissions:<address>', [controller]),
    theirs: () => erc725EncodeKeyName('AddressPermissions:Permissions:<address>', [controller]),
  },
  {
    name: 'ABI: postDeploymentCallData (7 keys/values)',
    peer: 'viem',
    ours: () => sdk.encodePostDeploymentCallData(keys, values),
    theirs: () => encodeAbiParameters([{ type: 'bytes32[]' }, { type: 'bytes[]' }], [keys, values]),
  },
  {
    name: 'LSP23 CREATE2 prediction (UP + KM)',
    peer: 'viem',
    ours: () => { const p = sdk.predictProfileAddress({ salt, postDeploymentCallData }); return [p.universalProfile, p.keyManager]; },
    theirs: () => { const p = viemPredict(salt, postDeploymentCallData); return [p.universalProfile, p.keyManager]; },
  },
];

function opsPerSecond(fn) {
  for (let i = 0; i < 200; i++) fn(); // warm-up (JIT, wasm tier-up)
  let n = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(budgetMs) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
    now = process.hrtime.bigint();
  }
  return (n * 1e9) / Number(now - start);
}

const rows = [];
for (const c of cases) {
  assert.deepEqual(c.ours(), c.theirs(), `${c.name}: outputs differ`);
  const ours = opsPerSecond(c.ours);
  const theirs = opsPerSecond(c.theirs);
  rows.push({ case: c.name, peer: c.peer, 'profile-relayer ops/s': Math.round(ours), 'peer ops/s': Math.round(theirs), ratio: `${(ours / theirs).toFixed(1)}x` });
}
console.table(rows);

const pkg = new URL('../../pkg/web/', import.meta.url);
const wasm = readFileSync(new URL('profile_relayer_bg.wasm', pkg));
const glue = readFileSync(new URL('profile_relayer.js', pkg));
const gz = (b) => gzipSync(b, { level: 9 }).length;
console.log(`package size (web build): wasm ${wasm.length} B (${gz(wasm)} B gzip), JS glue ${glue.length} B (${gz(glue)} B gzip), total gzip ${((gz(wasm) + gz(glue)) / 1024).toFixed(1)} KiB`);
console.log(`node ${process.version}, ${quick ? 'quick' : 'full'} run, ${budgetMs} ms per measurement`);
