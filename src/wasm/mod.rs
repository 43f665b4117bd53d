//! Browser / Node bindings. Thin: every function converts JS values, calls the core and converts back. Errors
//! become JS `Error` objects with `name = "ProfileRelayerError"` and a string `code`.
//!
//! Three builds of the npm package come from this module:
//! - feature `wasm-lite` (`profile-relayer/lite`): the encodings: VerifiableURI, data keys, LSP6 permissions,
//!   LSP8 token ids, LSP23 data and prediction, LSP25 relay-call digests and calldata, LSP15 quota messages.
//!   Hashing is keccak256 only.
//! - feature `wasm` (`profile-relayer`): the above plus the typed API clients (`RelayerClient`, `LookupClient`),
//!   IPFS CIDs and LSP25 revert decoding.
//! - feature `wasm-recover` (`profile-relayer/recover`, built with `wasm-lite`): the encodings plus LSP25 / LSP15
//!   signer recovery (secp256k1), which the clients don't need.
//!
//! Strings and results cross the boundary through `io` (native string writes and reads, objects built with
//! cached keys), not through serde.

#[cfg(feature = "wasm")]
mod client;
#[cfg(feature = "wasm")]
mod full;
#[cfg(feature = "wasm")]
mod http;
mod io;
mod relay;
mod types;

#[cfg(feature = "wasm")]
pub use self::client::fetch_relay_call_params;
#[cfg(feature = "wasm")]
pub use self::client::{LookupClient, RelayerClient};
#[cfg(feature = "wasm")]
pub use self::full::{compute_cid, verify_cid};
#[cfg(feature = "wasm")]
pub use self::relay::decode_relay_call_revert;
pub use self::relay::{
    DecodedRevert, ExecuteRelayCallInput, QuotaMessage, RelayCallInput, encode_execute_relay_call,
    encode_relay_call_message, quota_message, relay_call_digest,
};
#[cfg(feature = "wasm")]
pub use self::relay::{ExecuteInput, QuotaInput, RelayCallParams, RelayCallParamsInput};
#[cfg(feature = "wasm-recover")]
pub use self::relay::{recover_quota_signer, recover_relay_call_signer};
pub use self::types::{
    CustomNetwork, DataKeyValue, DataKeysValues, DecodedVerifiableUri, DeploymentInput, PredictedAddresses,
    ProfileData,
};

use std::borrow::Cow;

use alloy_primitives::{Address, B256, Bytes};
use js_sys::{Array, JsString, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, prelude::*};

use self::io::{
    Obj, address_arg, array_arg, ascii, fixed_arg, hex_arg, hex_concat_js, hex_js, interned, object, utf8,
};
use crate::{
    Error,
    lsp2::{self, Content, UriFormat},
    lsp6::Permissions,
    lsp8::{self, TokenIdFormat},
    lsp23,
    networks::{Lsp23Constants, Network},
};

type JsResult<T> = Result<T, Error>;

#[wasm_bindgen(module = "/src/wasm/js/errors.js")]
extern "C" {
    /// The package's error class (`src/wasm/js/errors.js`), re-exported by the package (its TypeScript declaration
    /// is `TS_TYPES`'s); a class is not called, so this import is never used from Rust.
    #[allow(dead_code)]
    #[wasm_bindgen(js_name = ProfileRelayerError, reexport, skip_typescript)]
    fn profile_relayer_error_class();

    /// Whether `value` is an error thrown by this package (what `instanceof ProfileRelayerError` answers).
    #[wasm_bindgen(js_name = isProfileRelayerError, reexport, skip_typescript)]
    pub fn is_profile_relayer_error(value: &JsValue) -> bool;

    /// A `ProfileRelayerError` with its optional fields (`status`, `retryAfter`, `cause`: left out when absent).
    #[wasm_bindgen(js_name = newError)]
    pub(crate) fn new_error(
        message: &str,
        code: &str,
        status: Option<u16>,
        retry_after: Option<u32>,
        cause: &JsValue,
    ) -> JsValue;
}

impl From<Error> for JsValue {
    fn from(e: Error) -> Self {
        new_error(&e.to_string(), e.code(), None, None, &Self::UNDEFINED)
    }
}

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** `0x`-prefixed hex. */
export type Hex = `0x${string}`;
/** `0x`-prefixed 20-byte address; mixed case must be a valid EIP-55 checksum. */
export type Address = `0x${string}`;
/** The error every function of this package throws (every promise rejects with); `instanceof` recognises those of
 * another copy of the package too. */
export declare class ProfileRelayerError extends Error {
  constructor(message: string, code: ProfileRelayerErrorCode | ServiceErrorCode, options?: { cause?: unknown });
  name: "ProfileRelayerError";
  /** A core code, or (from the clients of the full package) the service's code, `NETWORK_ERROR`, … */
  code: ProfileRelayerErrorCode | ServiceErrorCode;
  /** HTTP status, for errors answered by the service. */
  status?: number;
  /** Seconds to wait, when the service sent `Retry-After` (429, 503, 504). */
  retryAfter?: number;
}
/** Whether `value` is an error thrown by this package (what `instanceof ProfileRelayerError` answers). */
export function isProfileRelayerError(value: unknown): value is ProfileRelayerError;
/** A LUKSO network: name, chain id, or custom LSP23 constants (e.g. a local chain). */
export type NetworkInput = "mainnet" | "testnet" | 42 | 4201 | CustomNetwork;
/** An entry of `encodeKeyNames`: a key name, or a name with its dynamic parts (as in erc725.js `getData`). */
export type KeyNameInput = string | { keyName: string; dynamicKeyParts?: string | string[] };
"#;

/// `ProfileRelayerErrorCode`: generated from the core's code table.
#[wasm_bindgen(typescript_custom_section)]
const TS_ERROR_CODES: &'static str = crate::error::ERROR_CODE_TS;

/// The lite and recover entries' `ServiceErrorCode`: the clients' own codes (generated).
#[cfg(not(feature = "wasm"))]
#[wasm_bindgen(typescript_custom_section)]
const TS_LITE: &'static str = crate::api::codes::CLIENT_CODE_TS;

#[wasm_bindgen]
extern "C" {
    /// `NetworkInput` on the JS side.
    #[wasm_bindgen(typescript_type = "NetworkInput")]
    pub type NetworkInputJs;
    /// `string | string[]` on the JS side (dynamic key parts).
    #[wasm_bindgen(typescript_type = "string | string[]")]
    pub type KeyPartsJs;
    /// `Hex` on the JS side.
    #[wasm_bindgen(typescript_type = "Hex")]
    pub type HexJs;
}

/// Every error code, in declaration order.
#[wasm_bindgen(js_name = errorCodes, unchecked_return_type = "ProfileRelayerErrorCode[]")]
pub fn error_codes() -> Vec<String> {
    Error::ALL_CODES.iter().map(|c| (*c).to_owned()).collect()
}

enum ContentBuf {
    Text(String),
    Bytes(Vec<u8>),
}

impl ContentBuf {
    fn of(content: &JsValue) -> JsResult<Self> {
        if let Some(text) = io::text_of(content) {
            // written by the JS engine from a JS string (lone surrogates become U+FFFD)
            Ok(Self::Text(text))
        } else if let Some(bytes) = content.dyn_ref::<Uint8Array>() {
            Ok(Self::Bytes(bytes.to_vec()))
        } else {
            Err(Error::InvalidContent)
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
/// a `Uint8Array` with `keccak256(bytes)`. Hash exactly what you upload.
///
/// # Errors
/// `INVALID_CONTENT` for content that is neither a string nor a `Uint8Array`, `INVALID_ARGUMENT` for a `url`
/// that is not a string.
#[wasm_bindgen(js_name = encodeVerifiableUri, unchecked_return_type = "Hex")]
pub fn encode_verifiable_uri(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] content: &JsValue,
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
        None => lsp2::verifiable_uri_head(Content::Bytes(
            &content
                .dyn_ref::<Uint8Array>()
                .ok_or(Error::InvalidContent)?
                .to_vec(),
        )),
    };
    let url = args.text("url", url)?;
    Ok(hex_concat_js(&[prefix, &head, url.as_bytes()]))
}

#[wasm_bindgen(typescript_custom_section)]
const TS_ENCODE_VERIFIABLE_URI_DATA: &'static str = r#"
/**
 * The data key of `keyName` and the VerifiableURI value for `content` at `url`, in one call: the job of
 * erc725.js `encodeData([{ keyName, value: { json, url } }], schema)` for one key. Pass `JSON.stringify(json)` as
 * `content` and upload exactly that text (a string is hashed as UTF-8 with `keccak256(utf8)`, a `Uint8Array` with
 * `keccak256(bytes)`); `dynamicKeyParts` as for `encodeKeyName`.
 */
export function encodeVerifiableUriData(keyName: string, content: string | Uint8Array, url: string, dynamicKeyParts?: string | string[] | null): DataKeyValue;
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

/// Appends `0x` and the lower-case hex of `bytes`.
fn push_hex(text: &mut Vec<u8>, bytes: &[u8]) {
    text.extend_from_slice(b"0x");
    let start = text.len();
    text.resize(start + 2 * bytes.len(), 0);
    if let Some(out) = text.get_mut(start..) {
        // the slice is exactly twice the input: cannot fail
        let _ = alloy_primitives::hex::encode_to_slice(bytes, out);
    }
}

/// Checks fetched `content` against a VerifiableURI value: `true` if keccak256 of its bytes equals the hash.
/// Throws `UNVERIFIABLE_METHOD` when the value carries no keccak256 hash.
#[wasm_bindgen(js_name = verifyVerifiableUri)]
pub fn verify_verifiable_uri(
    #[wasm_bindgen(unchecked_param_type = "Hex")] value: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] content: &JsValue,
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

/// The error of the failing entry of a batch: the entry's own code, the message prefixed with `what[i]: ` and an
/// `index` property.
fn at_index(what: &str, i: usize, e: Error) -> JsValue {
    let message = format!("{what}[{i}]: {e}");
    let err: JsValue = e.into();
    let _ = Reflect::set(&err, &JsValue::from_str("message"), &JsValue::from_str(&message));
    let _ = Reflect::set(&err, &JsValue::from_str("index"), &JsValue::from_f64(i as f64));
    err
}

/// A JS array of `0x` hex strings, made from one JS string and slices of it.
fn hex_array<'a>(items: impl Iterator<Item = &'a [u8]> + Clone) -> Array {
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

/// The key of element `index` of an Array: `bytes16(keccak256(name)) ‖ uint128(index)`.
///
/// # Errors
/// `NOT_AN_ARRAY_KEY`, `INVALID_ARRAY_INDEX`, or `INVALID_ARGUMENT` for a name that is not a string.
#[wasm_bindgen(js_name = encodeArrayElementKey, unchecked_return_type = "Hex")]
pub fn encode_array_element_key(
    #[wasm_bindgen(unchecked_param_type = "string")] name: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "number | bigint")] index: &JsValue,
) -> JsResult<JsString> {
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

fn keys_values(keys: &JsValue, values: &JsValue) -> JsResult<(Vec<B256>, Vec<Bytes>)> {
    let keys = array_arg("keys", keys)?
        .iter()
        .map(|k| fixed_arg::<32>("keys", &k).map(B256::from))
        .collect::<Result<Vec<_>, _>>()?;
    let values = array_arg("values", values)?
        .iter()
        .map(|v| hex_arg("values", &v).map(Bytes::from))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((keys, values))
}

/// `abi.encode(bytes32[] keys, bytes[] values)`: the LSP23 `postDeploymentCallData`.
#[wasm_bindgen(js_name = encodePostDeploymentCallData, unchecked_return_type = "Hex")]
pub fn encode_post_deployment_calldata(
    #[wasm_bindgen(unchecked_param_type = "Hex[]")] keys: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "Hex[]")] values: &JsValue,
) -> JsResult<JsString> {
    let (keys, values) = keys_values(keys, values)?;
    Ok(hex_js(&lsp23::encode_post_deployment_calldata(&keys, &values)?))
}

fn keys_values_object(data: &lsp23::ProfileData) -> Obj {
    let o = object();
    o.put("keys", &hex_array(data.keys.iter().map(B256::as_slice)).into());
    o.put(
        "values",
        &hex_array(data.values.iter().map(|v| v.as_ref())).into(),
    );
    o
}

/// Decodes and validates `postDeploymentCallData` (canonical ABI, as many values as keys).
#[wasm_bindgen(js_name = decodePostDeploymentCallData, unchecked_return_type = "DataKeysValues")]
pub fn decode_post_deployment_calldata(
    #[wasm_bindgen(unchecked_param_type = "Hex")] calldata: &JsValue,
) -> JsResult<JsValue> {
    let data = lsp23::decode_post_deployment_calldata(&hex_arg("postDeploymentCallData", calldata)?)?;
    Ok(keys_values_object(&data).into())
}

/// The data a profile created from controller addresses gets (relayer deploy Form 1): LSP3Profile, the universal
/// receiver delegate and its permissions, each controller's permissions and `AddressPermissions[]`.
#[wasm_bindgen(js_name = profileDataFromControllers, unchecked_return_type = "ProfileData")]
pub fn profile_data_from_controllers(
    #[wasm_bindgen(unchecked_param_type = "Address[]")] controllers: &JsValue,
    #[wasm_bindgen(js_name = lsp3Profile)] lsp3_profile: Option<HexJs>,
    network: Option<NetworkInputJs>,
) -> JsResult<JsValue> {
    let controllers = array_arg("controllers", controllers)?
        .iter()
        .map(|c| address_arg("controllers", &c))
        .collect::<Result<Vec<_>, _>>()?;
    let lsp3 = match lsp3_profile.map(JsValue::from) {
        Some(v) if !(v.is_undefined() || v.is_null()) => Some(hex_arg("lsp3Profile", &v)?),
        _ => None,
    };
    let constants = network_constants(network.map(Into::into))?;
    let data = lsp23::profile_data_from_controllers(&controllers, lsp3.as_deref(), &constants)?;
    let o = keys_values_object(&data);
    o.put(
        "postDeploymentCallData",
        &hex_js(&data.to_post_deployment_calldata()?),
    );
    Ok(o.into())
}

const CUSTOM_NETWORK_KEYS: &[&str] = &[
    "factory",
    "universalProfileInit",
    "keyManagerInit",
    "postDeploymentModule",
    "universalReceiverDelegate",
];

/// The LSP23 constants of an optional `NetworkInput` argument (mainnet when absent).
pub(crate) fn network_constants(network: Option<JsValue>) -> JsResult<Lsp23Constants> {
    match network {
        Some(n) => network_of(&n),
        None => Ok(Network::Mainnet.constants()),
    }
}

/// `"mainnet"`, `"testnet"`, a chain id, custom constants, or absent (mainnet).
fn network_of(n: &JsValue) -> JsResult<Lsp23Constants> {
    if n.is_undefined() || n.is_null() {
        return Ok(Network::Mainnet.constants());
    }
    if let Some(name) = n.as_string() {
        return Ok(Network::parse(&name)?.constants());
    }
    if let Some(id) = n.as_f64() {
        if id.fract() == 0.0 && (0.0..1e15).contains(&id) {
            // exact: an integer below 2^53
            return Ok(Network::from_chain_id(id as u64)?.constants());
        }
        return Err(Error::UnknownNetwork(io::number_text(n)));
    }
    if !n.is_object() || Array::is_array(n) {
        return Err(Error::InvalidArgument(
            "network: expected \"mainnet\", \"testnet\", a chain id or { factory, universalProfileInit, \
             keyManagerInit, postDeploymentModule, universalReceiverDelegate? }"
                .into(),
        ));
    }
    reject_unknown_keys(n, CUSTOM_NETWORK_KEYS, "network")?;
    let o: &Obj = n.unchecked_ref();
    let address = |key: &'static str| -> JsResult<Option<Address>> {
        let v = o.field(key);
        if v.is_undefined() || v.is_null() {
            return Ok(None);
        }
        address_arg(&format!("network.{key}"), &v).map(Some)
    };
    let required = |key: &'static str| -> JsResult<Address> {
        address(key)?.ok_or_else(|| Error::InvalidArgument(format!("network: missing field `{key}`")))
    };
    Ok(Lsp23Constants {
        factory: required("factory")?,
        universal_profile_init: required("universalProfileInit")?,
        key_manager_init: required("keyManagerInit")?,
        post_deployment_module: required("postDeploymentModule")?,
        universal_receiver_delegate: address("universalReceiverDelegate")?
            .unwrap_or(Lsp23Constants::V0_14_0.universal_receiver_delegate),
    })
}

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
        allowed.join(", ")
    )))
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

const DEPLOYMENT_KEYS: &[&str] = &["salt", "postDeploymentCallData", "network", "implementations"];

fn deployment_args(input: &JsValue) -> JsResult<(B256, Vec<u8>, Lsp23Constants)> {
    if !input.is_object() {
        return Err(Error::InvalidArgument(
            "expected an object {salt, postDeploymentCallData, network?}".into(),
        ));
    }
    // which fields are there, and no unknown one, in one call instead of ≈ 15 (3–4 % of a prediction)
    let fields = Fields::of(input, DEPLOYMENT_KEYS, "input")?;
    let read = |key: &'static str| fields.get(key);
    let required = |key: &'static str| -> JsResult<JsValue> {
        read(key).ok_or_else(|| Error::InvalidArgument(format!("input: missing field `{key}`")))
    };
    let salt = B256::from(fixed_arg::<32>("salt", &required("salt")?)?);
    let calldata = hex_arg("postDeploymentCallData", &required("postDeploymentCallData")?)?;
    let network = read("network");
    let constants = match &network {
        Some(n) => network_of(n)?,
        None => Network::Mainnet.constants(),
    };
    let Some(implementations) = read("implementations") else {
        return Ok((salt, calldata, constants));
    };
    let constants = match implementations.as_string().as_deref() {
        Some("v0.14.0") => constants,
        Some("v0.12.1") if network.as_ref().is_some_and(JsValue::is_object) => {
            return Err(Error::InvalidArgument(
                "implementations only applies to named networks; give the addresses in network".into(),
            ));
        }
        Some("v0.12.1") => Lsp23Constants::V0_12_1,
        _ => {
            return Err(Error::InvalidArgument(
                "input: implementations must be \"v0.14.0\" or \"v0.12.1\"".into(),
            ));
        }
    };
    Ok((salt, calldata, constants))
}

fn prediction_object(p: &lsp23::Prediction) -> JsValue {
    // one JS string for the three results, sliced into an object literal in JS: one crossing for the whole result
    let (up, km) = (
        p.universal_profile.to_checksum_buffer(None),
        p.key_manager.to_checksum_buffer(None),
    );
    let mut text = Vec::with_capacity(42 + 42 + 66);
    text.extend_from_slice(up.as_str().as_bytes());
    text.extend_from_slice(km.as_str().as_bytes());
    push_hex(&mut text, p.generated_salt.as_slice());
    io::predicted(&ascii(&text))
}

/// Predicts the Universal Profile and KeyManager addresses (EIP-55) an LSP23 deployment creates.
///
/// # Errors
/// The `ProfileRelayerError` the JS function throws.
#[wasm_bindgen(js_name = predictProfileAddress, unchecked_return_type = "PredictedAddresses")]
pub fn predict_profile_address(
    #[wasm_bindgen(unchecked_param_type = "DeploymentInput")] input: &JsValue,
) -> JsResult<JsValue> {
    let (salt, calldata, constants) = deployment_args(input)?;
    Ok(prediction_object(&lsp23::predict_addresses(
        salt, &calldata, &constants,
    )?))
}

/// `predictProfileAddress` for many deployments in one call (e.g. candidate salts). Throws for the first
/// invalid entry, naming its index.
#[wasm_bindgen(js_name = predictProfileAddresses, unchecked_return_type = "PredictedAddresses[]")]
pub fn predict_profile_addresses(
    #[wasm_bindgen(unchecked_param_type = "DeploymentInput[]")] inputs: &JsValue,
) -> Result<Array, JsValue> {
    let list = array_arg("inputs", inputs)?;
    let out = Array::new_with_length(list.length());
    for (i, input) in list.iter().enumerate() {
        let p = deployment_args(&input)
            .and_then(|(salt, calldata, constants)| lsp23::predict_addresses(salt, &calldata, &constants))
            .map_err(|e| at_index("inputs", i, e))?;
        out.set(i as u32, prediction_object(&p));
    }
    Ok(out)
}

/// The `deployERC1167Proxies(…)` calldata for the LSP23 factory (what a relayer sends).
#[wasm_bindgen(js_name = encodeDeployCalldata, unchecked_return_type = "Hex")]
pub fn encode_deploy_calldata(
    #[wasm_bindgen(unchecked_param_type = "DeploymentInput")] input: &JsValue,
) -> JsResult<JsString> {
    let (salt, calldata, constants) = deployment_args(input)?;
    Ok(hex_js(&lsp23::deploy_erc1167_proxies_calldata(
        salt, &calldata, &constants,
    )?))
}

/// A random 32-byte salt (`crypto.getRandomValues`).
#[wasm_bindgen(js_name = generateSalt, unchecked_return_type = "Hex")]
pub fn generate_salt() -> JsResult<JsString> {
    Ok(hex_js(lsp23::generate_salt()?.as_slice()))
}

/// The bytes32 value of a set of LSP6 permissions (`"SETDATA"`, `"ALL_PERMISSIONS"`, …).
///
/// # Errors
/// The `ProfileRelayerError` the JS function throws.
#[wasm_bindgen(js_name = encodePermissions, unchecked_return_type = "Hex")]
pub fn encode_permissions(
    #[wasm_bindgen(unchecked_param_type = "string[]")] names: &JsValue,
) -> JsResult<JsString> {
    // each name read into the scratch area and combined as it comes: no `String` per name
    let names = array_arg("names", names)?;
    let permissions = io::with_args(|args| {
        names.iter().try_fold(Permissions::default(), |acc, name| {
            let name = Permissions::from_name(&args.text("names", &name)?)?;
            Ok::<_, Error>(Permissions::combine(&[acc, name]))
        })
    })?;
    Ok(hex_js(permissions.to_bytes32().as_slice()))
}

/// The names of the LSP6 permissions set in a bytes32 value.
#[wasm_bindgen(js_name = decodePermissions, unchecked_return_type = "string[]")]
pub fn decode_permissions(#[wasm_bindgen(unchecked_param_type = "Hex")] value: &JsValue) -> JsResult<Array> {
    let p = Permissions::from_bytes32(fixed_arg::<32>("permissions", value)?.into());
    Ok(p.names().into_iter().map(interned).collect())
}

/// An LSP8 token id as bytes32 in `format` (0 number, 1 string, 2 address, 3 unique id, 4 hash, 100–104 mixed).
///
/// # Errors
/// `UNKNOWN_ENUM_VALUE` for an unknown format, `INVALID_TOKEN_ID` for a value that is not of the format.
#[wasm_bindgen(js_name = encodeTokenId, unchecked_return_type = "Hex")]
pub fn encode_token_id(
    format: f64,
    #[wasm_bindgen(unchecked_param_type = "string")] value: &JsValue,
) -> JsResult<JsString> {
    // a number parameter (no crossing to read it): JS converts the argument with `Number(…)`, which gives NaN for
    // anything but a number or a numeric string, refused here with the fractions and the out-of-range values
    let format = if format.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&format) {
        // exact: an integer in u32 range
        TokenIdFormat::from_u64(format as u64)?
    } else {
        return Err(Error::InvalidArgument(
            "format: expected a token id format (0–4, 100–104)".into(),
        ));
    };
    let id = io::with_args(|args| lsp8::encode_token_id(format, &args.text("value", value)?))?;
    Ok(hex_js(id.as_slice()))
}
