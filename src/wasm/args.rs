//! The generic argument readers: JS objects and their fields, numbers, batches (the string and hex readers are in
//! `io`, where strings cross). Every malformed value becomes a `ProfileRelayerError` with its own code.

use alloy_primitives::U256;
use js_sys::{Array, Reflect};
use wasm_bindgen::{JsCast, prelude::*};

use super::{
    JsResult,
    io::{self, Obj, ascii, interned},
};
use crate::{Error, hex::parse_uint256};

/// Rejects an object with a key outside `allowed` (a typo would otherwise be silently ignored). Keys are
/// compared as JS strings, without copying them.
pub(crate) fn reject_unknown_keys(
    obj: &JsValue,
    allowed: &'static [&'static str],
    what: &str,
) -> JsResult<()> {
    let key = io::unknown_key(obj, &io::interned_list(allowed));
    if key.is_undefined() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{what}: unknown field {} (expected one of {})",
        crate::Quoted(&key.as_string().unwrap_or_default()),
        comma_list(allowed)
    )))
}

/// `allowed.join(", ")` for the messages above, without `join`'s generic copy (≈ 0.8 KB of wasm for two error texts).
fn comma_list(allowed: &[&str]) -> String {
    let mut text = String::new();
    for (i, key) in allowed.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(key);
    }
    text
}

/// An input object's fields, asked of JS in one call (`presentFields`) instead of two or three crossings per field:
/// which of `keys` are present (neither undefined nor null); an unknown key is refused as by
/// [`reject_unknown_keys`]. The caller checks that the input is an object.
pub(crate) struct Fields<'a> {
    obj: &'a Obj,
    keys: &'static [&'static str],
    present: i32,
}

impl<'a> Fields<'a> {
    pub(crate) fn of(input: &'a JsValue, keys: &'static [&'static str], what: &str) -> JsResult<Self> {
        let present = io::present_fields(input, &io::interned_list(keys));
        if present < 0 {
            reject_unknown_keys(input, keys, what)?;
        }
        Ok(Self {
            obj: input.unchecked_ref(),
            keys,
            present,
        })
    }

    /// The field `key` (one of the keys), when it is present.
    pub(crate) fn get(&self, key: &'static str) -> Option<JsValue> {
        let i = self.keys.iter().position(|k| *k == key)?;
        (self.present & (1 << i) != 0).then(|| self.obj.field(key))
    }
}

/// The error of the failing entry of a batch: the entry's own code, the message prefixed with `what[i]: ` and an
/// `index` property.
pub(super) fn at_index(what: &str, i: usize, e: Error) -> JsValue {
    let message = format!("{what}[{i}]: {e}");
    let err: JsValue = e.into();
    let _ = Reflect::set(&err, &JsValue::from_str("message"), &JsValue::from_str(&message));
    let _ = Reflect::set(&err, &JsValue::from_str("index"), &JsValue::from_f64(i as f64));
    err
}

/// A JS array of `0x` hex strings, made from one JS string and slices of it.
pub(super) fn hex_array<'a>(items: impl Iterator<Item = &'a [u8]> + Clone) -> Array {
    let mut text = Vec::new();
    let mut ends = Vec::new();
    for item in items {
        push_hex(&mut text, item);
        ends.push(text.len());
    }
    let all = ascii(&text);
    let out = Array::new_with_length(ends.len() as u32);
    let mut start = 0;
    for (i, end) in ends.into_iter().enumerate() {
        out.set(i as u32, all.slice(start as u32, end as u32).into());
        start = end;
    }
    out
}

/// Appends `0x` and the lower-case hex of `bytes`.
pub(super) fn push_hex(text: &mut Vec<u8>, bytes: &[u8]) {
    text.extend_from_slice(b"0x");
    let start = text.len();
    text.resize(start + 2 * bytes.len(), 0);
    if let Some(out) = text.get_mut(start..) {
        // the slice is exactly twice the input: cannot fail
        let _ = alloy_primitives::hex::encode_to_slice(bytes, out);
    }
}

/// `obj[key]` with the key's JS string made once (not one string crossing per read).
pub(super) fn get(obj: &JsValue, key: &'static str) -> JsValue {
    Reflect::get(obj, &interned(key)).unwrap_or(JsValue::UNDEFINED)
}

pub(super) fn is_absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// `obj[key]`, or `MISSING_FIELD` when it is undefined or null.
pub(super) fn required(obj: &JsValue, key: &'static str) -> JsResult<JsValue> {
    let v = get(obj, key);
    if is_absent(&v) {
        return Err(Error::MissingField(key.to_owned()));
    }
    Ok(v)
}

pub(super) fn string_field(obj: &JsValue, key: &'static str) -> JsResult<String> {
    io::text_arg(key, &required(obj, key)?)
}

/// A uint256 from a JS number (a safe non-negative integer), a bigint, or a decimal / `0x` string.
pub(super) fn uint256(v: &JsValue, field: &str) -> JsResult<U256> {
    let invalid = |value: String, reason: &str| Error::InvalidNumber {
        field: field.to_owned(),
        value,
        reason: reason.to_owned(),
    };
    if let Some(n) = io::safe_uint(v) {
        return Ok(U256::from(n));
    }
    // a number that is not a safe non-negative integer (those were read above)
    if v.as_f64().is_some() {
        return Err(invalid(
            io::number_text(v),
            "a number must be an integer between 0 and Number.MAX_SAFE_INTEGER (use a bigint or a string beyond)",
        ));
    }
    if v.is_bigint() {
        let text: String = js_sys::BigInt::unchecked_from_js_ref(v)
            .to_string(10)
            .map(String::from)
            .unwrap_or_default();
        return parse_uint256(field, &text);
    }
    if let Some(s) = v.as_string() {
        return parse_uint256(field, &s);
    }
    Err(invalid(String::new(), "expected a number, a bigint or a string"))
}

pub(super) fn optional_uint256(obj: &JsValue, key: &'static str) -> JsResult<U256> {
    let v = get(obj, key);
    if is_absent(&v) {
        Ok(U256::ZERO)
    } else {
        uint256(&v, key)
    }
}

pub(super) fn required_uint256(obj: &JsValue, key: &'static str) -> JsResult<U256> {
    uint256(&required(obj, key)?, key)
}

pub(super) fn object(input: &JsValue, allowed: &'static [&'static str], what: &str) -> JsResult<()> {
    if !input.is_object() {
        return Err(Error::InvalidArgument(format!(
            "{what}: expected an object {{{}}}",
            comma_list(allowed)
        )));
    }
    reject_unknown_keys(input, allowed, what)
}

pub(super) fn chain_id(v: &JsValue) -> JsResult<u64> {
    let id = uint256(v, "chainId")?;
    u64::try_from(id).map_err(|_| Error::InvalidNumber {
        field: "chainId".into(),
        value: io::decimal_text(id),
        reason: "a chain id fits in 64 bits".into(),
    })
}
