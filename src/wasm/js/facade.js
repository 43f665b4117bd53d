// The package's JS facade: exports whose commonest input costs less in JS than the crossing into the wasm and back.
// Each function here is named after the wasm export it stands in front of, takes that export and returns the
// package's: it answers the inputs it is sure of itself, exactly as the wasm would, and passes every other input
// (every invalid one included) to the wasm, whose answer and `ProfileRelayerError` are the package's.
// Not imported by the wasm: `scripts/pkg-entries.mjs` copies it next to each build and writes the package's entries
// (`index.js`, the inline and workerd entries) to export these in place of the raw ones, every other export as it is.
// `tests/npm/facade.test.mjs` checks it answers as the wasm does; `tests/npm/throws.test.mjs` that its exports throw.

// a decimal of 1–78 digits (2^256 - 1 has 78; leading zeros read as the wasm reads them)
const DECIMAL = /^[0-9]{1,78}$/;

/**
 * `encodeTokenId` for a number token id (format 0, or 100: mixed with number as default) given as a decimal below
 * 2^256, the common case of an LSP8 collection's ids: the 32-byte big-endian value as lower-case hex. A JS number
 * below 10^15, a `BigInt` above (the engine's own decimal conversion, faster than the wasm's); a value past 2^256 - 1
 * goes to the wasm for its error.
 * @param {(format: number, value: string) => string} wasm the wasm export
 * @returns {(format: number, value: string) => string}
 */
export function encodeTokenId(wasm) {
  return function encodeTokenId(format, value) {
    if ((format === 0 || format === 100) && typeof value === 'string' && DECIMAL.test(value)) {
      // up to 15 digits: below 10^15 < 2^53, exact as a JS number
      if (value.length <= 15) return `0x${Number(value).toString(16).padStart(64, '0')}`;
      const hex = BigInt(value).toString(16);
      if (hex.length <= 64) return `0x${hex.padStart(64, '0')}`;
    }
    return wasm(format, value);
  };
}
