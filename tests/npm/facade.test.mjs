// The package's JS facade (src/wasm/js/facade.js): the exports it stands in front of answer every input exactly as
// the wasm export does — the same value, or the same ProfileRelayerError (code and message) — in every entry, and the
// facade answers itself only the inputs it is sure of, passing every other one to the wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as facade from '../../src/wasm/js/facade.js';

const require = createRequire(import.meta.url);
const pkgDir = fileURLToPath(new URL('../../pkg/', import.meta.url));

// a wasm export stand-in that records what reached it
const recording = () => {
  const seen = [];
  const wasm = (...args) => {
    seen.push(args);
    return 'from wasm';
  };
  return { seen, wasm };
};

test('facade encodeTokenId: decimals below 2^256 in the number formats answered in JS, everything else by the wasm', () => {
  const { seen, wasm } = recording();
  const encode = facade.encodeTokenId(wasm);
  assert.equal(encode(0, '0'), `0x${'0'.repeat(64)}`);
  assert.equal(encode(0, '255'), `0x${'0'.repeat(62)}ff`);
  assert.equal(encode(100, '000255'), `0x${'0'.repeat(62)}ff`);
  assert.equal(encode(0, '999999999999999'), `0x${'0'.repeat(51)}38d7ea4c67fff`);
  // past 2^53: by BigInt
  assert.equal(encode(0, '9007199254740993'), `0x${'0'.repeat(50)}20000000000001`);
  const max = (2n ** 256n - 1n).toString();
  assert.equal(encode(100, max), `0x${'f'.repeat(64)}`);
  assert.equal(encode(0, `000${'1'.repeat(75)}`), `0x${BigInt('1'.repeat(75)).toString(16).padStart(64, '0')}`);
  assert.equal(seen.length, 0);
  const passed = [
    [0, (2n ** 256n).toString()], // past 2^256 - 1: the wasm's error
    [0, '9'.repeat(78)],
    [0, '1'.repeat(79)], // longer than any uint256 in decimal: not converted at all
    [0, ''],
    [0, '-1'],
    [0, '+1'],
    [0, ' 1'],
    [0, '1 '],
    [0, '1.0'],
    [0, '1e3'],
    [0, '0x10'],
    [0, '١٢'], // Arabic-Indic digits are no ASCII decimal
    [0, 12],
    [0, 12n],
    [0, null],
    ['0', '12'], // a format given as a string: the wasm's conversion decides
    [1, '12'],
    [2, '12'],
    [101, '12'],
    [0.5, '12'],
    [Number.NaN, '12'],
  ];
  for (const args of passed)
    assert.equal(
      encode(...args),
      'from wasm',
      JSON.stringify(args, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)),
    );
  assert.deepEqual(seen, passed);
});

// what a call gives: its value, or its error's class, code and message
const outcome = (call) => {
  try {
    return { value: call() };
  } catch (e) {
    return { error: e?.name, code: e?.code, message: e?.message };
  }
};

// inputs around the facade's edges: digit strings of 1–80 digits (leading zeros; 2^53, 2^64 and 2^256 on the way), and
// the near misses
function* tokenIdInputs() {
  const formats = [0, 100, -0, 1, 3, 4, 101, 104, 7, '0', 0.5];
  const values = [
    '0',
    '00',
    '1',
    '007',
    '255',
    '9007199254740991',
    '9007199254740993',
    '18446744073709551616',
    (2n ** 256n - 1n).toString(),
    (2n ** 256n).toString(),
    `0${(2n ** 256n - 1n).toString()}`,
    '9'.repeat(78),
    '1'.repeat(79),
    '',
    '-1',
    ' 1',
    '1e3',
    '0x1f',
    'x',
  ];
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  for (let n = 1; n <= 80; n++) {
    for (let i = 0; i < 10; i++) values.push(Array.from({ length: n }, () => String(random() % 10)).join(''));
  }
  for (const format of formats) for (const value of values) yield [format, value];
  for (const value of [5, 5n, null, undefined, {}]) yield [0, value];
}

const flavours = [
  ['full', ''],
  ['lite', 'lite/'],
  ['recover', 'recover/'],
];
for (const [flavour, dir] of flavours) {
  test(`${flavour}: the entries' encodeTokenId answers as the wasm export on every input`, async () => {
    const raw = require(`${pkgDir}${dir}node/profile_relayer.js`);
    const entries = {
      node: require(`profile-relayer/${dir}node`),
      import: await import(`profile-relayer${dir ? '/' + flavour : ''}`),
    };
    let count = 0;
    for (const [name, m] of Object.entries(entries)) {
      assert.notEqual(m.encodeTokenId, raw.encodeTokenId, `${name}: the facade is in front`);
      for (const [format, value] of tokenIdInputs()) {
        const expected = outcome(() => raw.encodeTokenId(format, value));
        assert.deepEqual(
          outcome(() => m.encodeTokenId(format, value)),
          expected,
          `${name}: encodeTokenId(${String(format)}, ${String(value)})`,
        );
        count++;
      }
    }
    assert.ok(count > 2 * 5000, `${count} inputs`);
  });
}
