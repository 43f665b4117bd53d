//! Conversions across the JS ↔ wasm boundary, where most of the time of a small call goes.
//!
//! wasm-bindgen's own `&str` / `String` conversions copy strings in with a JS loop over `charCodeAt` and out with
//! `TextDecoder` on a fresh view: fine for short text, slow for a 2 KB `postDeploymentCallData` and costly for
//! every 66-character hex result. Here strings are written into wasm memory in one native call and results are
//! made in one native call: Node's `Buffer` methods over the wasm memory when `Buffer` exists (`utf8Write`,
//! `latin1Slice` for hex, `utf8Slice`), else `TextEncoder.encodeInto` / `TextDecoder` (browsers). Results that
//! are objects are built field by field with cached keys, never through serde.
//!
//! String arguments are read into a scratch area reused across calls ([`with_args`]): no allocation per argument.

use std::{
    borrow::Cow,
    cell::{Cell, RefCell},
    marker::PhantomData,
};

use alloy_primitives::hex;
use js_sys::{JsString, Uint8Array};
use wasm_bindgen::{JsCast, prelude::*};

use crate::{Error, Result};

#[wasm_bindgen]
extern "C" {
    /// Node's `Buffer` over the wasm memory.
    #[wasm_bindgen(js_name = Buffer)]
    type NodeBuffer;
    #[wasm_bindgen(method, js_name = latin1Slice)]
    fn latin1_slice(this: &NodeBuffer, start: u32, end: u32) -> JsString;
    #[wasm_bindgen(method, js_name = utf8Slice)]
    fn utf8_slice(this: &NodeBuffer, start: u32, end: u32) -> JsString;

    #[wasm_bindgen(js_name = Function)]
    type BufferClass;
    #[wasm_bindgen(method, catch, js_name = from)]
    fn from(this: &BufferClass, memory: &JsValue) -> std::result::Result<NodeBuffer, JsValue>;

    type TextEncoder;
    #[wasm_bindgen(constructor, catch)]
    fn new() -> std::result::Result<TextEncoder, JsValue>;
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &TextEncoder, s: &JsString, dst: &Uint8Array) -> EncodeIntoResult;

    type EncodeIntoResult;
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodeIntoResult) -> u32;

    type TextDecoder;
    #[wasm_bindgen(constructor, catch)]
    fn new() -> std::result::Result<TextDecoder, JsValue>;
    #[wasm_bindgen(method)]
    fn decode(this: &TextDecoder, src: &Uint8Array) -> JsString;

    /// A plain object, written with `o[k] = v`.
    #[wasm_bindgen(js_name = Object)]
    pub(crate) type Obj;
    #[wasm_bindgen(method, indexing_setter)]
    pub(crate) fn set(this: &Obj, key: &JsValue, value: &JsValue);
    #[wasm_bindgen(method, indexing_getter)]
    pub(crate) fn get(this: &Obj, key: &JsValue) -> JsValue;
}

#[wasm_bindgen(module = "/src/wasm/js/io.js")]
extern "C" {
    /// A `DecodedVerifiableUri` built in JS in one call (an object literal of one shape, fields sliced from one
    /// string): faster than setting five properties across the boundary (BENCHMARKS.md#wasm-boundary). `url`
    /// undefined: the rest of `all`.
    #[wasm_bindgen(js_name = decodedUri)]
    pub(crate) fn decoded_uri(
        format: &JsValue,
        all: &JsString,
        method_end: u32,
        hash_end: u32,
        method_name: &JsValue,
        url: &JsValue,
    ) -> JsValue;

    /// A `DataKeyValue` from `0x key ‖ value` (the key's 64 digits, then the value's), in one call.
    #[wasm_bindgen(js_name = keyValue)]
    pub(crate) fn key_value(all: &JsString) -> JsValue;

    /// erc725.js's `{ verification: { method, data }, url }` of a `DecodedVerifiableUri`.
    #[cfg(feature = "wasm")]
    #[wasm_bindgen(js_name = erc725Uri)]
    pub(crate) fn erc725_uri(decoded: &JsValue) -> JsValue;

    /// A `PredictedAddresses` built in JS in one call from `upChecksum ‖ kmChecksum ‖ 0x salt` (150 characters).
    pub(crate) fn predicted(all: &JsString) -> JsValue;

    /// The first own key of `o` not in the array `allowed` (`undefined` if none): one call instead of one per key.
    #[wasm_bindgen(js_name = unknownKey)]
    pub(crate) fn unknown_key(o: &JsValue, allowed: &JsValue) -> JsValue;

    /// One call for what an input object holds: bit `i` set when `o[allowed[i]]` is neither undefined nor null;
    /// -1 when `o` has an own key outside `allowed` (at most 31 keys).
    #[wasm_bindgen(js_name = presentFields)]
    pub(crate) fn present_fields(o: &JsValue, allowed: &JsValue) -> i32;

    /// The value of a number or bigint that is a safe non-negative integer (≤ 2^53 - 1), else -1: one crossing
    /// for the common case of an integer argument (the other cases, and the errors, are the caller's).
    #[wasm_bindgen(js_name = smallUint)]
    fn small_uint(v: &JsValue) -> f64;

    /// Content given as bytes or, with `json`, as a JSON value, read in one call: a `Uint8Array` of the bytes of
    /// any typed array, `DataView` or `ArrayBuffer` (of any realm); the `JSON.stringify` text of a plain object or
    /// array; `undefined` for anything else (see [`content_arg`]).
    #[wasm_bindgen(js_name = contentOf)]
    fn content_of(v: &JsValue, json: bool) -> JsValue;

    /// The bytes of a `Blob` or `File`, as a promise of a `Uint8Array`; `undefined` for anything else.
    #[cfg(feature = "wasm")]
    #[wasm_bindgen(js_name = blobBytes)]
    pub(crate) fn blob_bytes(v: &JsValue) -> JsValue;

    /// What is known of a key name before it is read, in one call: -1 when dynamic `parts` are given, else the
    /// index of `s` in `map` (the standard names, see [`known_name`]) or -2.
    #[wasm_bindgen(js_name = knownIndex)]
    fn known_index(map: &js_sys::Map, s: &JsValue, parts: &JsValue) -> i32;

    /// Node: writes a string of at most `cap / 3` UTF-16 units at `ptr` in one call and answers the bytes written;
    /// -1 when `s` is not a string, -2 when it may not fit.
    #[wasm_bindgen(js_name = utf8In)]
    fn utf8_in(buf: &NodeBuffer, s: &JsValue, ptr: u32, cap: u32) -> i32;
}

/// How strings cross: Node's `Buffer` (fast, native) or the Encoding API.
enum Backend {
    Node {
        buffer: NodeBuffer,
    },
    Web {
        encoder: TextEncoder,
        decoder: TextDecoder,
    },
    /// Neither exists: wasm-bindgen's own conversions.
    Plain,
}

struct Io {
    backend: Backend,
    /// Memory size (pages) the views were made for; memory growth detaches them.
    pages: usize,
    memory: js_sys::WebAssembly::Memory,
    /// The whole memory as bytes (Encoding API backend).
    bytes: Option<Uint8Array>,
}

thread_local! {
    static IO: RefCell<Option<Io>> = const { RefCell::new(None) };
}

fn pages() -> usize {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size::<0>()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}

fn node_buffer_class() -> Option<BufferClass> {
    let class = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("Buffer")).ok()?;
    if !class.is_function() {
        return None;
    }
    let proto = js_sys::Reflect::get(&class, &JsValue::from_str("prototype")).ok()?;
    let has =
        |name: &str| js_sys::Reflect::get(&proto, &JsValue::from_str(name)).is_ok_and(|f| f.is_function());
    (has("utf8Write") && has("latin1Slice") && has("utf8Slice")).then(|| class.unchecked_into())
}

impl Io {
    fn new() -> Self {
        let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
        let backend = if let Some(buffer) = node_buffer_class().and_then(|c| c.from(&memory.buffer()).ok()) {
            Backend::Node { buffer }
        } else if let (Ok(encoder), Ok(decoder)) = (TextEncoder::new(), TextDecoder::new()) {
            Backend::Web { encoder, decoder }
        } else {
            Backend::Plain
        };
        let mut io = Self {
            backend,
            pages: pages(),
            memory,
            bytes: None,
        };
        io.refresh_bytes();
        io
    }

    fn refresh_bytes(&mut self) {
        self.bytes =
            matches!(self.backend, Backend::Web { .. }).then(|| Uint8Array::new(&self.memory.buffer()));
    }

    /// Re-creates the views when the memory has grown since they were made.
    fn fresh(&mut self) {
        let now = pages();
        if now == self.pages {
            return;
        }
        self.pages = now;
        if let Backend::Node { buffer } = &mut self.backend {
            match node_buffer_class().and_then(|c| c.from(&self.memory.buffer()).ok()) {
                Some(b) => *buffer = b,
                None => self.backend = Backend::Plain,
            }
        }
        self.refresh_bytes();
    }

    fn view(&self, ptr: usize, len: usize) -> Option<Uint8Array> {
        self.bytes
            .as_ref()
            .map(|b| b.subarray(u32_of(ptr), u32_of(ptr.saturating_add(len))))
    }
}

fn with_io<R>(f: impl FnOnce(&mut Io) -> R) -> R {
    IO.with(|cell| {
        let mut slot = cell.borrow_mut();
        let io = slot.get_or_insert_with(Io::new);
        io.fresh();
        f(io)
    })
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// What writing a JS value as UTF-8 into wasm memory gave.
enum Written {
    /// `n` bytes from the start of the destination.
    Bytes(usize),
    /// Not a string.
    NotString,
    /// A string that may need more room than the destination has (UTF-8 takes at most 3 bytes per UTF-16 unit).
    TooLong,
    /// No native writer: read it through wasm-bindgen.
    Unsupported,
}

/// Writes `value` (if a string) as UTF-8 at `ptr` in one native call when its worst case fits `cap` bytes.
#[inline(never)]
fn write_utf8(value: &JsValue, ptr: *mut u8, cap: usize) -> Written {
    let (ptr, cap) = (ptr as usize, cap.min(u32::MAX as usize));
    with_io(|io| match &io.backend {
        Backend::Node { buffer } => match utf8_in(buffer, value, u32_of(ptr), u32_of(cap)) {
            -1 => Written::NotString,
            // ≥ 0: at most `cap` bytes written by the native writer
            n => usize::try_from(n).map_or(Written::TooLong, |n| Written::Bytes(n.min(cap))),
        },
        Backend::Web { encoder, .. } => {
            let Some(s) = value.dyn_ref::<JsString>() else {
                return Written::NotString;
            };
            if (s.length() as usize).saturating_mul(3) > cap {
                return Written::TooLong;
            }
            io.view(ptr, cap).map_or(Written::Unsupported, |v| {
                Written::Bytes((encoder.encode_into(s, &v).written() as usize).min(cap))
            })
        }
        Backend::Plain => Written::Unsupported,
    })
}

/// `value` as an integer when it is a number or a bigint in `0..=2^53 - 1` (one crossing); `None` for anything
/// else, which the caller reads (or refuses) its own way.
pub(crate) fn safe_uint(value: &JsValue) -> Option<u64> {
    let n = small_uint(value);
    // exact: the snippet answers a safe integer or -1
    (n >= 0.0).then_some(n as u64)
}

/// What a content argument that is not a string holds.
pub(crate) enum ContentArg {
    /// Bytes: of a typed array, a `DataView` or an `ArrayBuffer`.
    Bytes(Vec<u8>),
    /// The `JSON.stringify` text of a plain object or array.
    Json(String),
}

/// What `INVALID_CONTENT` says a content argument must be, by what the function takes.
pub(crate) mod content {
    /// Bytes only (`computeCid`, in the full entry).
    #[cfg(feature = "wasm")]
    pub(crate) const BYTES: &str = "bytes (a Uint8Array, an ArrayBuffer or another typed array or DataView)";
    /// A string or bytes.
    pub(crate) const TEXT_OR_BYTES: &str =
        "a string or bytes (a Uint8Array, an ArrayBuffer or another typed array or DataView)";
    /// A string, bytes or a JSON value.
    pub(crate) const TEXT_BYTES_OR_JSON: &str = "a string, bytes (a Uint8Array, an ArrayBuffer or another typed \
                                                 array or DataView) or a JSON value (a plain object or array)";
}

/// A content argument that is not a string: bytes of any kind, or (with `json`) a plain object or array as its
/// `JSON.stringify` text — never the `"{}"` that `JSON.stringify` makes of a `Blob` or an `ArrayBuffer`, nor a class
/// instance's own idea of JSON. `INVALID_CONTENT` naming `expected` for anything else.
pub(crate) fn content_arg(value: &JsValue, json: bool, expected: &'static str) -> Result<ContentArg> {
    let read = content_of(value, json);
    if let Some(bytes) = read.dyn_ref::<js_sys::Uint8Array>() {
        Ok(ContentArg::Bytes(bytes.to_vec()))
    } else if let Some(text) = read.as_string() {
        Ok(ContentArg::Json(text))
    } else {
        Err(Error::InvalidContent { expected })
    }
}

/// The text of a JS string (`None` when `value` is not a string), in a fresh allocation.
pub(crate) fn text_of(value: &JsValue) -> Option<String> {
    with_args(|args| args.utf8_text(value).map(Cow::into_owned))
}

/// Bytes of scratch space for the string arguments of one call: a 16 KiB area allocated once and reused, so a
/// call's arguments cost no allocation (a typical `postDeploymentCallData` is 2 KB of hex, written into 6 KB of room).
const SCRATCH_BYTES: usize = 16 * 1024;

thread_local! {
    /// The scratch area (allocated on first use, kept for the life of the module) and whether a call is using it.
    static SCRATCH: Cell<(*mut u8, bool)> = const { Cell::new((std::ptr::null_mut(), false)) };
}

/// The string arguments of one call, written into the scratch area (see [`with_args`]).
pub(crate) struct Args<'a> {
    /// The scratch area of `SCRATCH_BYTES` (null: none, every argument goes to the heap).
    base: *mut u8,
    /// Bytes of it taken by earlier arguments.
    used: Cell<usize>,
    _scratch: PhantomData<&'a mut [u8]>,
}

/// Runs `f` with the scratch area for reading arguments; a nested call (none today) reads them into the heap.
pub(crate) fn with_args<R>(f: impl FnOnce(&Args<'_>) -> R) -> R {
    f(&Args::open())
}

impl Args<'_> {
    /// Takes the scratch area, or none when a caller up the stack has it.
    #[inline(never)]
    fn open() -> Self {
        let base = SCRATCH.with(|cell| match cell.get() {
            (_, true) => std::ptr::null_mut(),
            (base, false) => {
                let base = if base.is_null() {
                    Box::leak(vec![0u8; SCRATCH_BYTES].into_boxed_slice()).as_mut_ptr()
                } else {
                    base
                };
                cell.set((base, true));
                base
            }
        });
        Self {
            base,
            used: Cell::new(0),
            _scratch: PhantomData,
        }
    }
}

impl Drop for Args<'_> {
    fn drop(&mut self) {
        if !self.base.is_null() {
            SCRATCH.with(|cell| cell.set((self.base, false)));
        }
    }
}

impl Args<'_> {
    /// The UTF-8 bytes of a string argument (`None` when `value` is not a string): in the scratch area when it
    /// fits, else in a fresh allocation.
    #[inline(never)]
    pub(crate) fn utf8(&self, value: &JsValue) -> Option<Cow<'_, [u8]>> {
        let used = self.used.get();
        if !self.base.is_null() {
            let free = SCRATCH_BYTES.saturating_sub(used);
            // SAFETY: `used <= room`, inside the scratch area
            let at = unsafe { self.base.add(used) };
            match write_utf8(value, at, free) {
                Written::Bytes(n) => {
                    self.used.set(used + n);
                    // SAFETY: the native writer initialised `n <= free` bytes at `at`; later arguments are written
                    // after them, and the area is borrowed for as long as `self`
                    return Some(Cow::Borrowed(unsafe { std::slice::from_raw_parts(at, n) }));
                }
                Written::NotString => return None,
                Written::TooLong | Written::Unsupported => {}
            }
        }
        // past the room (or none): a heap buffer for the worst case, 3 bytes per UTF-16 unit
        let cap = (value.dyn_ref::<JsString>()?.length() as usize).saturating_mul(3);
        let mut out: Vec<u8> = Vec::with_capacity(cap);
        // the reservation may grow the memory: `write_utf8` re-creates the views first
        match write_utf8(value, out.as_mut_ptr(), cap) {
            Written::Bytes(n) => {
                // SAFETY: the native writer initialised exactly `n <= cap` bytes from the start of the buffer
                unsafe { out.set_len(n) };
                Some(Cow::Owned(out))
            }
            Written::NotString => None,
            Written::TooLong | Written::Unsupported => value.as_string().map(|s| Cow::Owned(s.into_bytes())),
        }
    }

    /// A string argument's UTF-8 bytes, or `INVALID_ARGUMENT` naming `field`.
    pub(crate) fn string(&self, field: &str, value: &JsValue) -> Result<Cow<'_, [u8]>> {
        self.utf8(value).ok_or_else(|| not_a_string(field))
    }

    /// A string argument as Rust text, or `INVALID_ARGUMENT` naming `field`.
    pub(crate) fn text(&self, field: &str, value: &JsValue) -> Result<Cow<'_, str>> {
        self.utf8_text(value).ok_or_else(|| not_a_string(field))
    }

    /// [`Args::utf8`] as Rust text, not validated again: every way `utf8` reads a string gives well-formed UTF-8
    /// (Node's `utf8Write` and `TextEncoder.encodeInto` write lone surrogates as U+FFFD and never part of a
    /// character, and the room given is the worst case, 3 bytes per UTF-16 unit; the fallback is a Rust `String`).
    /// Validating it again was a measurable part of a call (BENCHMARKS.md#wasm-boundary).
    #[inline(never)]
    pub(crate) fn utf8_text(&self, value: &JsValue) -> Option<Cow<'_, str>> {
        Some(match self.utf8(value)? {
            Cow::Borrowed(b) => {
                debug_assert!(std::str::from_utf8(b).is_ok());
                // SAFETY: well-formed UTF-8, see above
                Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(b) })
            }
            Cow::Owned(b) => {
                debug_assert!(std::str::from_utf8(&b).is_ok());
                // SAFETY: well-formed UTF-8, see above
                Cow::Owned(unsafe { String::from_utf8_unchecked(b) })
            }
        })
    }
}

/// `INVALID_ARGUMENT`: `field` is not a string.
#[cold]
pub(crate) fn not_a_string(field: &str) -> Error {
    Error::InvalidArgument(format!("{field}: expected a string"))
}

/// A JS string from ASCII bytes (hex, addresses).
pub(crate) fn ascii(bytes: &[u8]) -> JsString {
    debug_assert!(bytes.is_ascii());
    string_from(bytes, true)
}

/// A JS string from UTF-8 bytes.
pub(crate) fn utf8(bytes: &str) -> JsString {
    string_from(bytes.as_bytes(), false)
}

fn string_from(bytes: &[u8], ascii: bool) -> JsString {
    let (ptr, end) = (bytes.as_ptr() as usize, bytes.as_ptr() as usize + bytes.len());
    let made = with_io(|io| match &io.backend {
        Backend::Node { buffer } if ascii => Some(buffer.latin1_slice(u32_of(ptr), u32_of(end))),
        Backend::Node { buffer } => Some(buffer.utf8_slice(u32_of(ptr), u32_of(end))),
        Backend::Web { decoder, .. } => io.view(ptr, bytes.len()).map(|v| decoder.decode(&v)),
        Backend::Plain => None,
    });
    made.unwrap_or_else(|| JsString::from(String::from_utf8_lossy(bytes).as_ref()))
}

/// `0x`-prefixed lower-case hex of `bytes` as a JS string.
pub(crate) fn hex_js(bytes: &[u8]) -> JsString {
    match <&[u8; 32]>::try_from(bytes) {
        Ok(word) => word_hex_js(word),
        Err(_) => hex_concat_js(&[bytes]),
    }
}

/// [`hex_js`] of a 32-byte word (keys, hashes, token ids): a buffer of exactly its size.
#[inline(never)]
fn word_hex_js(word: &[u8; 32]) -> JsString {
    let mut out = [0u8; 66];
    if write_hex(&[word], &mut out) {
        ascii(&out)
    } else {
        hex_concat_js(&[word])
    }
}

/// `0x`-prefixed lower-case hex of the concatenation of `parts` as a JS string (no concatenated copy made).
pub(crate) fn hex_concat_js(parts: &[&[u8]]) -> JsString {
    const STACK: usize = 128;
    let bytes: usize = parts.iter().map(|p| p.len()).sum();
    let len = 2 + 2 * bytes;
    if bytes <= STACK {
        let mut buf = [0u8; 2 + 2 * STACK];
        if let Some(out) = buf.get_mut(..len)
            && write_hex(parts, out)
        {
            return ascii(out);
        }
    }
    let mut buf = vec![0u8; len];
    if write_hex(parts, &mut buf) {
        ascii(&buf)
    } else {
        JsString::from(hex::encode_prefixed(parts.concat()).as_str())
    }
}

/// Writes `0x` and the hex of `parts` into `out`, which must be exactly that long.
#[inline(always)]
fn write_hex(parts: &[&[u8]], out: &mut [u8]) -> bool {
    let Some(([zero, x], mut digits)) = out.split_first_chunk_mut::<2>() else {
        return false;
    };
    // two stores: the full build (opt-level "s") called `copy_from_slice` for them
    (*zero, *x) = (b'0', b'x');
    for part in parts {
        let Some((here, rest)) = digits.split_at_mut_checked(2 * part.len()) else {
            return false;
        };
        if hex::encode_to_slice(part, here).is_err() {
            return false;
        }
        digits = rest;
    }
    digits.is_empty()
}

/// A string argument as Rust text, or `INVALID_ARGUMENT` naming `field`.
pub(crate) fn text_arg(field: &str, value: &JsValue) -> Result<String> {
    text_of(value).ok_or_else(|| not_a_string(field))
}

/// Parses a `0x`-prefixed hex string argument (either case), with the errors of [`crate::hex::parse_hex`].
#[inline(never)]
pub(crate) fn hex_arg(field: &str, value: &JsValue) -> Result<Vec<u8>> {
    // the text is decoded where it was written (the scratch area): no copy of it
    with_args(|args| {
        let text = args.string(field, value)?;
        let digits = match &*text {
            [b'0', b'x', rest @ ..] => rest,
            _ => return slow_parse(field, &text),
        };
        // const-hex strips one more prefix by itself: only hex digits may follow ours
        if digits.len() % 2 != 0 || digits.starts_with(b"0x") || digits.starts_with(b"0X") {
            return slow_parse(field, &text);
        }
        let mut out = vec![0u8; digits.len() / 2];
        match hex::decode_to_slice(digits, &mut out) {
            Ok(()) => Ok(out),
            Err(_) => slow_parse(field, &text),
        }
    })
}

/// The exact error of the core's parser.
fn slow_parse(field: &str, text: &[u8]) -> Result<Vec<u8>> {
    crate::hex::parse_hex(field, &String::from_utf8_lossy(text))
}

/// A `0x` hex string of exactly `N` bytes.
pub(crate) fn fixed_arg<const N: usize>(field: &str, value: &JsValue) -> Result<[u8; N]> {
    let bytes = hex_arg(field, value)?;
    let got = bytes.len();
    <[u8; N]>::try_from(bytes).map_err(|_| Error::InvalidLength {
        field: field.to_owned(),
        expected: N,
        got,
    })
}

/// An address argument (see [`crate::hex::parse_address`]).
pub(crate) fn address_arg(field: &str, value: &JsValue) -> Result<alloy_primitives::Address> {
    with_args(|args| parse_address(field, &args.text(field, value)?))
}

/// How many checksummed addresses [`parse_address`] remembers.
const CHECKSUMMED_SLOTS: usize = 8;

thread_local! {
    /// The hex digits of the last mixed-case addresses whose EIP-55 checksum passed, and the next slot to write.
    static CHECKSUMMED: RefCell<([[u8; 40]; CHECKSUMMED_SLOTS], usize)> =
        const { RefCell::new(([[0; 40]; CHECKSUMMED_SLOTS], 0)) };
}

/// [`crate::hex::parse_address`], remembering the last few mixed-case addresses whose EIP-55 checksum passed:
/// dApps pass the same addresses (key manager, profile) call after call, and checking a checksum is a keccak256
/// of its own (BENCHMARKS.md#wasm-boundary). viem's `isAddress` keeps such a cache too. Only the
/// exact text that passed is remembered: any other casing is checked again.
pub(crate) fn parse_address(field: &str, text: &str) -> Result<alloy_primitives::Address> {
    let digits = text
        .strip_prefix("0x")
        .and_then(|d| <&[u8; 40]>::try_from(d.as_bytes()).ok());
    let mixed =
        digits.filter(|d| d.iter().any(u8::is_ascii_uppercase) && d.iter().any(u8::is_ascii_lowercase));
    let known = mixed.is_some_and(|d| CHECKSUMMED.with(|c| c.borrow().0.contains(d)));
    let address = crate::hex::parse_address_checking(field, text, !known)?;
    if let Some(d) = mixed.filter(|_| !known) {
        CHECKSUMMED.with(|c| {
            let (slots, next) = &mut *c.borrow_mut();
            if let Some(slot) = slots.get_mut(*next) {
                *slot = *d;
            }
            *next = (*next + 1) % CHECKSUMMED_SLOTS;
        });
    }
    Ok(address)
}

/// The elements of a JS array argument.
pub(crate) fn array_arg(field: &str, value: &JsValue) -> Result<js_sys::Array> {
    if js_sys::Array::is_array(value) {
        Ok(value.clone().unchecked_into())
    } else {
        Err(Error::InvalidArgument(format!("{field}: expected an array")))
    }
}

thread_local! {
    /// JS strings made once: object keys and constant values, by the address of the Rust literal (a few dozen
    /// literals, so a linear scan over integers).
    static INTERNED: RefCell<Vec<((usize, usize), JsValue)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with the JS string for a `'static` text, made once per literal (borrowed: no table slot).
/// `f` must not intern a new text.
pub(crate) fn with_interned<R>(text: &'static str, f: impl FnOnce(&JsValue) -> R) -> R {
    let id = (text.as_ptr() as usize, text.len());
    INTERNED.with(|cell| {
        let known = cell.borrow().iter().position(|(i, _)| *i == id);
        let index = known.unwrap_or_else(|| {
            let mut list = cell.borrow_mut();
            list.push((id, JsValue::from_str(text)));
            list.len() - 1
        });
        let list = cell.borrow();
        match list.get(index) {
            Some((_, value)) => f(value),
            None => f(&JsValue::UNDEFINED),
        }
    })
}

thread_local! {
    /// JS arrays of strings made once, by the address of the Rust list (see [`interned_list`]).
    static LISTS: RefCell<Vec<((usize, usize), JsValue)>> = const { RefCell::new(Vec::new()) };
}

/// The JS array of the strings of a `'static` list, made once per list.
pub(crate) fn interned_list(list: &'static [&'static str]) -> JsValue {
    let id = (list.as_ptr() as usize, list.len());
    LISTS.with(|cell| {
        if let Some((_, v)) = cell.borrow().iter().find(|(i, _)| *i == id) {
            return v.clone();
        }
        let array: JsValue = list
            .iter()
            .map(|s| JsValue::from_str(s))
            .collect::<js_sys::Array>()
            .into();
        cell.borrow_mut().push((id, array.clone()));
        array
    })
}

thread_local! {
    /// The standard key names (`lsp2::known_names`) → their index, made on first use.
    static KNOWN_NAMES: std::cell::OnceCell<js_sys::Map> = const { std::cell::OnceCell::new() };
}

/// What a key-name argument is, asked of JS before its text is read (a `Map` look-up costs less than writing the
/// name into wasm memory and parsing it: BENCHMARKS.md#wasm-boundary).
pub(crate) enum KnownName {
    /// One of the standard names (its index in the core's table), without dynamic parts: its key from the table.
    Key(usize, alloy_primitives::B256),
    /// Any other name; `parts` is undefined or null.
    NoParts,
    /// Dynamic parts are given.
    Parts,
}

/// [`KnownName`] of `name` with the `dynamicKeyParts` argument `parts`.
pub(crate) fn known_name(name: &JsValue, parts: &JsValue) -> KnownName {
    let index = KNOWN_NAMES.with(|cell| {
        let map = cell.get_or_init(|| {
            let map = js_sys::Map::new();
            for (i, name) in crate::lsp2::known_names().enumerate() {
                map.set(&JsValue::from_str(name), &JsValue::from(i as u32));
            }
            map
        });
        known_index(map, name, parts)
    });
    let known = usize::try_from(index)
        .ok()
        .and_then(|i| Some((i, crate::lsp2::known_key(i)?)));
    match known {
        Some((i, key)) => KnownName::Key(i, key),
        None if index == -1 => KnownName::Parts,
        None => KnownName::NoParts,
    }
}

/// The JS string for a `'static` text, made once per literal.
pub(crate) fn interned(text: &'static str) -> JsValue {
    with_interned(text, JsValue::clone)
}

/// How JS prints a value that is a number (`String(n)`), without Rust's float formatting (BENCHMARKS.md#wasm-size).
pub(crate) fn number_text(value: &JsValue) -> String {
    value
        .dyn_ref::<js_sys::Number>()
        .and_then(|n| n.to_string_with_radix(10).ok())
        .map(String::from)
        .unwrap_or_default()
}

/// The decimal text of a uint256 as JS's `BigInt` writes it (for error messages), without ruint's `Display`: its
/// 128-bit division and formatting were ≈ 1.5 KB of wasm for two messages (BENCHMARKS.md#bundle-size).
#[cold]
#[inline(never)]
pub(crate) fn decimal_text(n: alloy_primitives::U256) -> String {
    js_sys::BigInt::new(&hex_js(&n.to_be_bytes::<32>()))
        .ok()
        .and_then(|b| b.to_string(10).ok())
        .map(String::from)
        .unwrap_or_default()
}

/// A fresh plain object.
pub(crate) fn object() -> Obj {
    js_sys::Object::new().unchecked_into()
}

impl Obj {
    /// `o[key] = value` with an interned key.
    pub(crate) fn put(&self, key: &'static str, value: &JsValue) {
        with_interned(key, |k| self.set(k, value));
    }

    /// `o[key]` with an interned key.
    pub(crate) fn field(&self, key: &'static str) -> JsValue {
        with_interned(key, |k| self.get(k))
    }
}
