//! LSP2 bindings: VerifiableURI (encode, decode, verify) and ERC725Y data keys from key names.

use std::borrow::Cow;

use alloy_primitives::B256;
use js_sys::{Array, JsString};
use wasm_bindgen::{JsCast, prelude::*};

use super::{
    JsResult, KeyPartsJs,
    args::{at_index, hex_array, push_hex, reject_unknown_keys},
    error::{outcome, returned},
    io::{self, ContentArg, Obj, array_arg, ascii, hex_arg, hex_concat_js, hex_js, interned, utf8},
};
use crate::{
    Error,
    lsp2::{self, Content, UriFormat},
};

enum ContentBuf {
    Text(String),
    Bytes(Vec<u8>),
}

impl ContentBuf {
    /// A string, or bytes of any kind (`INVALID_CONTENT` for anything else).
    fn of(content: &JsValue) -> JsResult<Self> {
        if let Some(text) = io::text_of(content) {
            // written by the JS engine from a JS string (lone surrogates become U+FFFD)
            return Ok(Self::Text(text));
        }
        match io::content_arg(content, false, io::content::TEXT_OR_BYTES)? {
            ContentArg::Bytes(bytes) => Ok(Self::Bytes(bytes)),
            ContentArg::Json(_) => Err(Error::InvalidContent {
                expected: io::content::TEXT_OR_BYTES,
            }),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Self::Text(t) => t.as_bytes(),
            Self::Bytes(b) => b,
        }
    }
}

/// Encodes a VerifiableURI for `content` stored at `url`: a string is hashed as UTF-8 with `keccak256(utf8)`,
/// bytes (a `Uint8Array`, an `ArrayBuffer`, another typed array or a `DataView`) with `keccak256(bytes)`, a plain
/// object or array as the text of its `JSON.stringify` (as erc725.js hashes `{ json, url }`). Hash exactly what you
/// upload.
///
/// # Errors
/// `INVALID_CONTENT` for other content (a `Blob` is read first: `await blob.arrayBuffer()`),
/// `INVALID_ARGUMENT` for a `url` that is not a string.
#[wasm_bindgen(js_name = encodeVerifiableUri, unchecked_return_type = "Hex")]
pub fn encode_verifiable_uri(
    #[wasm_bindgen(unchecked_param_type = "string | ContentBytes | object")] content: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] url: &JsValue,
) -> JsResult<JsString> {
    // the layout is the core's (`verifiable_uri_head` ‖ url), hex-encoded piecewise: no value `Vec`, and the
    // strings are read into the reused scratch area
    io::with_args(|args| verifiable_uri_hex(args, &[], content, url))
}

/// `0x prefix ‖ value` in hex, the value being the VerifiableURI of `content` at `url`, both read into `args`.
#[inline(never)]
fn verifiable_uri_hex(
    args: &io::Args<'_>,
    prefix: &[u8],
    content: &JsValue,
    url: &JsValue,
) -> JsResult<JsString> {
    let head = match args.utf8_text(content) {
        Some(text) => lsp2::verifiable_uri_head(Content::Text(&text)),
        // bytes, or a JSON object or array as erc725.js takes it (`{ json, url }`): the text of `JSON.stringify(json)`
        None => match io::content_arg(content, true, io::content::TEXT_BYTES_OR_JSON)? {
            ContentArg::Bytes(bytes) => lsp2::verifiable_uri_head(Content::Bytes(&bytes)),
            ContentArg::Json(text) => lsp2::verifiable_uri_head(Content::Text(&text)),
        },
    };
    let url = args.text("url", url)?;
    Ok(hex_concat_js(&[prefix, &head, url.as_bytes()]))
}

#[wasm_bindgen(typescript_custom_section)]
const TS_ENCODE_VERIFIABLE_URI_DATA: &'static str = r#"
/**
 * The data key of `keyName` and the VerifiableURI value for `content` at `url`, in one call: the job of
 * erc725.js `encodeData([{ keyName, value: { json, url } }], schema)` for one key. Pass `json` itself (hashed as
 * `JSON.stringify(json)`, as erc725.js does) or its text as `content`, and upload exactly that text (a string is
 * hashed as UTF-8 with `keccak256(utf8)`, bytes — a `Uint8Array`, an `ArrayBuffer`, another typed array or a
 * `DataView` — with `keccak256(bytes)`); `dynamicKeyParts` as for `encodeKeyName`.
 */
export function encodeVerifiableUriData(keyName: string, content: string | ContentBytes | object, url: string, dynamicKeyParts?: string | string[] | null): DataKeyValue;
"#;

/// The data key of `keyName` and the VerifiableURI value for `content` at `url`, in one call: the job of
/// erc725.js `encodeData([{ keyName, value: { json, url } }], schema)` for one key (pass `JSON.stringify(json)`
/// as `content`, and upload exactly that text). `dynamicKeyParts` as for `encodeKeyName`. Its TypeScript
/// declaration is written by hand (above) to keep `dynamicKeyParts` optional while it crosses as a borrowed
/// value (an `Option` of an owned value costs a slot of the externref table per call).
///
/// # Errors
/// Those of `encodeKeyName` and `encodeVerifiableUri`.
#[wasm_bindgen(js_name = encodeVerifiableUriData, skip_typescript)]
pub fn encode_verifiable_uri_data(
    #[wasm_bindgen(js_name = keyName)] key_name: &JsValue,
    content: &JsValue,
    url: &JsValue,
    #[wasm_bindgen(js_name = dynamicKeyParts)] dynamic_key_parts: &JsValue,
) -> JsResult<JsValue> {
    // every string into the scratch area in one scope; one result string `0x key ‖ head ‖ url`, split into
    // `{ key, value }` in JS (`keyValue`: one crossing for the object)
    let all = io::with_args(|args| {
        let key = key_in(args, "keyName", key_name, dynamic_key_parts)?;
        verifiable_uri_hex(args, key.as_slice(), content, url)
    })?;
    Ok(io::key_value(&all))
}

/// Decodes a VerifiableURI value (current or legacy JSONURL layout). Unknown methods are reported, not thrown.
///
/// # Errors
/// The `ProfileRelayerError` the JS function throws.
#[wasm_bindgen(js_name = decodeVerifiableUri, unchecked_return_type = "DecodedVerifiableUri")]
pub fn decode_verifiable_uri(
    #[wasm_bindgen(unchecked_param_type = "Hex")] value: &JsValue,
) -> JsResult<JsValue> {
    let uri = lsp2::decode_verifiable_uri(&hex_arg("value", value)?)?;
    // one JS string for method, hash (and an ASCII URL), sliced: one native call instead of three
    let mut text = Vec::with_capacity(10 + 2 + 2 * uri.data.len() + uri.url.len());
    push_hex(&mut text, uri.method.as_slice());
    let method_end = text.len();
    push_hex(&mut text, &uri.data);
    let hash_end = text.len();
    let ascii_url = uri.url.is_ascii();
    if ascii_url {
        text.extend_from_slice(uri.url.as_bytes());
    }
    let all = ascii(&text);
    let format = interned(match uri.format {
        UriFormat::VerifiableUri => "verifiableUri",
        UriFormat::Legacy => "legacy",
    });
    let name = uri
        .verification_method()
        .name()
        .map_or(JsValue::UNDEFINED, interned);
    let url = if ascii_url {
        JsValue::UNDEFINED
    } else {
        utf8(&uri.url).into()
    };
    Ok(io::decoded_uri(
        &format,
        &all,
        method_end as u32,
        hash_end as u32,
        &name,
        &url,
    ))
}

/// Decodes a VerifiableURI value (full entry) into erc725.js's shape, `{ verification: { method, data }, url }` (what erc725.js
/// `decodeDataSourceWithHash` answers: `method` the name of a known method, else its 4-byte id).
///
/// # Errors
/// As `decodeVerifiableUri`.
#[cfg(feature = "wasm")]
#[wasm_bindgen(js_name = decodeDataSourceWithHash, unchecked_return_type = "Erc725VerifiableUri")]
pub fn decode_data_source_with_hash(
    #[wasm_bindgen(unchecked_param_type = "Hex")] value: &JsValue,
) -> JsResult<JsValue> {
    let decoded = decode_verifiable_uri(value)?;
    Ok(io::erc725_uri(&decoded))
}

#[cfg(feature = "wasm")]
#[wasm_bindgen(typescript_custom_section)]
const TS_ERC725_URI: &'static str = r#"
/** A decoded VerifiableURI in erc725.js's shape (`decodeDataSourceWithHash`). */
export interface Erc725VerifiableUri {
  verification: { method: "keccak256(utf8)" | "keccak256(bytes)" | "ecdsa" | Hex; data: Hex };
  url: string;
}
"#;

/// Checks fetched `content` against a VerifiableURI value: `true` if keccak256 of its bytes equals the hash.
/// Throws `UNVERIFIABLE_METHOD` when the value carries no keccak256 hash.
#[wasm_bindgen(js_name = verifyVerifiableUri)]
pub fn verify_verifiable_uri(
    #[wasm_bindgen(unchecked_param_type = "Hex")] value: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "string | ContentBytes")] content: &JsValue,
) -> JsResult<bool> {
    let uri = lsp2::decode_verifiable_uri(&hex_arg("value", value)?)?;
    lsp2::verify(&uri, ContentBuf::of(content)?.bytes())
}

/// The `dynamicKeyParts` argument `parts`, given (neither undefined nor null): one string or an array of strings.
fn dynamic_parts<'a>(args: &'a io::Args<'_>, parts: &JsValue) -> JsResult<Vec<Cow<'a, str>>> {
    if parts.is_string() {
        return Ok(vec![args.text("dynamicKeyParts", parts)?]);
    }
    array_arg("dynamicKeyParts", parts)?
        .iter()
        .map(|p| args.text("dynamicKeyParts", &p))
        .collect()
}

fn key_name(name: &JsValue, parts: &JsValue) -> JsResult<B256> {
    io::with_args(|args| key_in(args, "name", name, parts))
}

/// The data key of the key name `name` (argument `field`) with its dynamic `parts`, read into `args`.
#[inline(never)]
fn key_in(args: &io::Args<'_>, field: &str, name: &JsValue, parts: &JsValue) -> JsResult<B256> {
    let known = io::known_name(name, parts);
    if let io::KnownName::Key(_, key) = known {
        return Ok(key);
    }
    let name = args.text(field, name)?;
    let parts = match known {
        io::KnownName::Parts => dynamic_parts(args, parts)?,
        _ => Vec::new(),
    };
    lsp2::encode_key_name(&name, &parts)
}

/// The ERC725Y data key of an LSP2 key name; `<type>` parts are filled from `dynamicKeyParts` in order (one
/// string or an array). An Array name (`Name[]`) gives its length key.
///
/// # Errors
/// The core's key-name errors; `INVALID_ARGUMENT` for arguments of the wrong type.
#[wasm_bindgen(js_name = encodeKeyName, unchecked_return_type = "Hex")]
pub fn encode_key_name(
    #[wasm_bindgen(unchecked_param_type = "string")] name: &JsValue,
    #[wasm_bindgen(js_name = dynamicKeyParts)] dynamic_key_parts: Option<KeyPartsJs>,
) -> JsResult<JsString> {
    let key = key_name(name, &dynamic_key_parts.map_or(JsValue::UNDEFINED, Into::into))?;
    Ok(hex_js(key.as_slice()))
}

/// The data keys of many key names in one call (the same rules as `encodeKeyName`): each entry is a name or
/// `{ keyName, dynamicKeyParts }`. Throws for the first invalid entry, naming its index.
#[wasm_bindgen(js_name = encodeKeyNames, unchecked_return_type = "Hex[]")]
pub fn encode_key_names(
    #[wasm_bindgen(unchecked_param_type = "KeyNameInput[]")] names: &JsValue,
) -> Result<Array, JsValue> {
    let list = array_arg("names", names)?;
    let mut keys = Vec::with_capacity(list.length() as usize);
    for (i, entry) in list.iter().enumerate() {
        let key = if entry.is_string() {
            key_name(&entry, &JsValue::UNDEFINED)
        } else if entry.is_object() {
            reject_unknown_keys(&entry, &["keyName", "dynamicKeyParts"], "entry").and_then(|()| {
                let o: &Obj = entry.unchecked_ref();
                key_name(&o.field("keyName"), &o.field("dynamicKeyParts"))
            })
        } else {
            Err(Error::InvalidArgument(
                "expected a key name or { keyName, dynamicKeyParts }".into(),
            ))
        };
        keys.push(key.map_err(|e| at_index("names", i, e))?);
    }
    Ok(hex_array(keys.iter().map(B256::as_slice)))
}

/// The key of element `index` of an Array: `bytes16(keccak256(name)) ‖ uint128(index)`.
///
/// # Errors
/// `NOT_AN_ARRAY_KEY`, `INVALID_ARRAY_INDEX`, or `INVALID_ARGUMENT` for a name that is not a string.
// throws by `error::returned` (the cheaper success path; the arguments owned for it)
#[wasm_bindgen(js_name = encodeArrayElementKey, unchecked_return_type = "Hex")]
pub fn encode_array_element_key(
    #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number | bigint")] index: JsValue,
) -> JsString {
    returned(outcome(move || array_element_key(&name, &index)))
}

/// [`encode_array_element_key`]'s work.
fn array_element_key(name: &JsValue, index: &JsValue) -> JsResult<JsString> {
    // a standard Array name (`AddressPermissions[]`, `LSP5ReceivedAssets[]`, …) is looked up, not read
    if let io::KnownName::Key(i, length_key) = io::known_name(name, &JsValue::UNDEFINED)
        && lsp2::known_is_array(i)
    {
        return Ok(hex_js(
            lsp2::array_element_key(length_key, array_index(index)?).as_slice(),
        ));
    }
    let key = io::with_args(|args| {
        let name = args.text("name", name)?;
        lsp2::encode_array_element_key(&name, array_index(index)?)
    })?;
    Ok(hex_js(key.as_slice()))
}

fn array_index(index: &JsValue) -> JsResult<u128> {
    if let Some(n) = io::safe_uint(index) {
        return Ok(u128::from(n));
    }
    let bad = |reason: &str| Error::InvalidArrayIndex {
        value: index
            .as_string()
            .or_else(|| index.as_f64().map(|_| io::number_text(index)))
            .unwrap_or_default(),
        reason: reason.to_owned(),
    };
    // a number that is not a safe non-negative integer (those were read above)
    if index.as_f64().is_some() {
        return Err(bad(
            "expected an integer between 0 and Number.MAX_SAFE_INTEGER (use a bigint beyond)",
        ));
    }
    if index.is_bigint() {
        let text: String = js_sys::BigInt::unchecked_from_js_ref(index)
            .to_string(10)
            .map(String::from)
            .unwrap_or_default();
        return text.parse::<u128>().map_err(|_| Error::InvalidArrayIndex {
            value: text.clone(),
            reason: "expected a bigint between 0 and 2^128 - 1".to_owned(),
        });
    }
    Err(bad("expected a number or a bigint"))
}
