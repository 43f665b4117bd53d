// Helpers of the JS ↔ wasm boundary (src/wasm/io.rs): one crossing builds a result object or answers what an
// argument holds, where field-by-field access from Rust would cost one crossing per field.

/**
 * A `DecodedVerifiableUri` from one string `all` holding method, hash (and the URL when `url` is undefined).
 * @param {string} format
 * @param {string} all
 * @param {number} m the end of the method in `all`
 * @param {number} h the end of the hash in `all`
 * @param {string | undefined} methodName
 * @param {string | undefined} url
 */
export function decodedUri(format, all, m, h, methodName, url) {
  const method = all.slice(0, m);
  const hash = all.slice(m, h);
  if (url === undefined) url = all.slice(h);
  return methodName === undefined ? { format, method, hash, url } : { format, method, methodName, hash, url };
}

/**
 * erc725.js's shape of a decoded VerifiableURI (`decodeDataSourceWithHash`): the method's name, else its id.
 * @param {{ method: string, methodName?: string, hash: string, url: string }} decoded
 */
export function erc725Uri(decoded) {
  return { verification: { method: decoded.methodName ?? decoded.method, data: decoded.hash }, url: decoded.url };
}

/**
 * A `DataKeyValue` from `0x key ‖ value` (the key's 64 digits, then the value's).
 * @param {string} all
 */
export function keyValue(all) {
  return { key: all.slice(0, 66), value: '0x' + all.slice(66) };
}

/**
 * A `PredictedAddresses` from `upChecksum ‖ kmChecksum ‖ 0x salt` (150 characters).
 * @param {string} all
 */
export function predicted(all) {
  return { universalProfile: all.slice(0, 42), keyManager: all.slice(42, 84), generatedSalt: all.slice(84, 150) };
}

/**
 * The first own key of `o` not in `allowed` (`undefined` if none).
 * @param {object} o
 * @param {string[]} allowed
 */
export function unknownKey(o, allowed) {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) return k;
  return undefined;
}

/**
 * Bit `i` set when `o[allowed[i]]` is neither undefined nor null; -1 when `o` has an own key outside `allowed`
 * (at most 31 keys).
 * @param {object} o
 * @param {string[]} allowed
 */
export function presentFields(o, allowed) {
  if (unknownKey(o, allowed) !== undefined) return -1;
  let present = 0;
  for (let i = 0; i < allowed.length; i++) {
    const v = o[allowed[i]];
    if (v !== undefined && v !== null) present |= 1 << i;
  }
  return present;
}

/**
 * The value of a number or bigint that is a safe non-negative integer (≤ 2^53 - 1), else -1.
 * @param {unknown} v
 */
export function smallUint(v) {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : -1;
  if (typeof v === 'bigint') return v >= 0n && v <= 9007199254740991n ? Number(v) : -1;
  return -1;
}

/**
 * -1 when dynamic `parts` are given, else the index of `s` in `map` (the standard key names), or -2.
 * @param {Map<unknown, number>} map
 * @param {unknown} s
 * @param {unknown} parts
 */
export function knownIndex(map, s, parts) {
  if (parts !== undefined && parts !== null) return -1;
  const i = map.get(s);
  return i === undefined ? -2 : i;
}

/**
 * Node: writes a string of at most `cap / 3` UTF-16 units at `ptr` of `buf` (a `Buffer` over the wasm memory) and
 * answers the bytes written; -1 when `s` is not a string, -2 when it may not fit.
 * @param {{ utf8Write(s: string, offset: number, length: number): number }} buf
 * @param {unknown} s
 * @param {number} ptr
 * @param {number} cap
 */
export function utf8In(buf, s, ptr, cap) {
  if (typeof s !== 'string') return -1;
  return s.length * 3 <= cap ? buf.utf8Write(s, ptr, cap) : -2;
}

/** `ArrayBuffer`'s `byteLength` getter: it throws for anything but an `ArrayBuffer` of any realm (a brand check). */
const arrayBufferLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength')?.get;
/** The same for `SharedArrayBuffer`, where the engine has one. */
const sharedBufferLength =
  typeof SharedArrayBuffer === 'function' ? Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, 'byteLength')?.get : undefined;

/**
 * Whether `v` is an `ArrayBuffer` or a `SharedArrayBuffer`, of any realm (`instanceof` is not: a buffer from a
 * worker, an iframe or a test environment such as jsdom fails it).
 * @param {unknown} v
 */
function isBuffer(v) {
  for (const length of [arrayBufferLength, sharedBufferLength]) {
    try {
      length?.call(v);
      if (length) return true;
    } catch {}
  }
  return false;
}

/**
 * Whether `v` is a JSON value as erc725.js takes one for a VerifiableURI: an array, or a plain object (its prototype
 * an `Object.prototype` of any realm, or none) — not a `Blob`, a `Date`, a typed array or another class's instance,
 * whose `JSON.stringify` is not their content (`"{}"` for a `Blob` or an `ArrayBuffer`).
 * @param {unknown} v
 */
function isPlainJson(v) {
  if (Array.isArray(v)) return true;
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * Content given as bytes or as a JSON value, in one call: the bytes of a `Uint8Array` (itself), of another typed
 * array or a `DataView` (a `Uint8Array` over the same memory), or of an `ArrayBuffer` — of any realm; with `json`,
 * the text of `JSON.stringify` of a plain object or array (what erc725.js hashes); `undefined` for anything else,
 * and for a value `JSON.stringify` refuses (a cycle, a `BigInt`).
 * @param {unknown} v
 * @param {boolean} json
 * @returns {Uint8Array | string | undefined}
 */
export function contentOf(v, json) {
  if (ArrayBuffer.isView(v)) return v instanceof Uint8Array ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (isBuffer(v)) return new Uint8Array(v);
  if (!json || !isPlainJson(v)) return undefined;
  try {
    const text = JSON.stringify(v);
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bytes of a `Blob` or `File` (of any realm, or a polyfill's with the same tag), read; `undefined` for anything
 * else.
 * @param {unknown} v
 * @returns {Promise<Uint8Array> | undefined}
 */
export function blobBytes(v) {
  const tag = Object.prototype.toString.call(v);
  if ((tag !== '[object Blob]' && tag !== '[object File]') || typeof v.arrayBuffer !== 'function') return undefined;
  return v.arrayBuffer().then((b) => new Uint8Array(b));
}
