//! Browser / Node bindings (feature `wasm`). Thin: every function converts JS values, calls the core and converts
//! back. Errors become JS `Error` objects with `name = "ProfileRelayerError"` and a string `code`.

mod client;
mod relay;
mod types;

pub use self::client::fetch_relay_call_params;
pub use self::client::{LookupClient, RelayerClient};
pub use self::relay::{DecodedRevert, ExecuteRelayCallInput, QuotaMessage, RelayCallInput};
pub use self::relay::{ExecuteInput, QuotaInput, RelayCallParams, RelayCallParamsInput};

use alloy_primitives::{B256, Bytes};
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, prelude::*};

pub use self::types::{
    CustomNetwork, DataKeysValues, DecodedVerifiableUri, DeploymentInput, PredictedAddresses, ProfileData,
};
use self::types::{NetworkInput, from_js, to_js};
use crate::{
    Error,
    hex::{parse_address, parse_fixed, parse_hex, to_hex},
    lsp2::{self, Content},
    lsp6::Permissions,
    lsp8::{self, TokenIdFormat},
    lsp23,
};

type JsResult<T> = Result<T, Error>;

impl From<Error> for JsValue {
    fn from(e: Error) -> Self {
        let err = js_sys::Error::new(&e.to_string());
        err.set_name("ProfileRelayerError");
        // setting a property on a fresh Error object cannot fail
        let _ = Reflect::set(&err, &Self::from_str("code"), &Self::from_str(e.code()));
        err.into()
    }
}

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** `0x`-prefixed hex. */
export type Hex = `0x${string}`;
/** `0x`-prefixed 20-byte address; mixed case must be a valid EIP-55 checksum. */
export type Address = `0x${string}`;
/** Every `code` a ProfileRelayerError can carry. */
export type ProfileRelayerErrorCode =
  | "INVALID_HEX" | "INVALID_LENGTH" | "INVALID_ADDRESS" | "EMPTY_VERIFIABLE_URI" | "TRUNCATED_VERIFIABLE_URI"
  | "VERIFICATION_DATA_LENGTH" | "INVALID_URL_UTF8" | "UNVERIFIABLE_METHOD" | "INVALID_CONTENT"
  | "INVALID_KEY_NAME" | "DYNAMIC_KEY_PART_COUNT" | "INVALID_DYNAMIC_KEY_PART" | "NOT_AN_ARRAY_KEY"
  | "INVALID_ARRAY_INDEX" | "KEYS_VALUES_MISMATCH" | "INVALID_ABI" | "UNKNOWN_NETWORK" | "UNKNOWN_PERMISSION"
  | "INVALID_CONTROLLERS" | "INVALID_JSON" | "UNKNOWN_FIELD" | "MISSING_FIELD" | "INVALID_FIELD_TYPE"
  | "INVALID_DEPLOY_FORM" | "INVALID_METADATA" | "INVALID_TOKEN_ID" | "UNKNOWN_ENUM_VALUE" | "INVALID_CID"
  | "INVALID_ARGUMENT" | "INVALID_SIGNATURE" | "INVALID_NUMBER" | "PAYLOAD_TOO_LARGE" | "TIMESTAMP_OUT_OF_WINDOW"
  | "RELAY_CALL_NOT_YET_VALID" | "RELAY_CALL_EXPIRED" | "INVALID_RELAY_NONCE" | "NOT_AUTHORISED"
  | "RELAY_CALL_REVERTED" | "QUOTA_EXCEEDED"
  | "RANDOM_FAILURE";
/** The error every function of this package throws. */
export interface ProfileRelayerError extends Error {
  name: "ProfileRelayerError";
  /** A core code, or (from the clients) the service's code, `NETWORK_ERROR`, `HTTP_ERROR`, `PREDICTION_MISMATCH`, … */
  code: ProfileRelayerErrorCode | ServiceErrorCode;
  /** HTTP status, for errors answered by the service. */
  status?: number;
  /** Seconds to wait, when the service sent `Retry-After` (429, 503, 504). */
  retryAfter?: number;
}
/** A LUKSO network: name, chain id, or custom LSP23 constants (e.g. a local chain). */
export type NetworkInput = "mainnet" | "testnet" | 42 | 4201 | CustomNetwork;
"#;

#[wasm_bindgen]
extern "C" {
    /// `NetworkInput` on the JS side.
    #[wasm_bindgen(typescript_type = "NetworkInput")]
    pub type NetworkInputJs;
}

/// Every error code, in declaration order.
#[wasm_bindgen(js_name = errorCodes, unchecked_return_type = "ProfileRelayerErrorCode[]")]
pub fn error_codes() -> Vec<String> {
    Error::ALL_CODES.iter().map(|c| (*c).to_owned()).collect()
}

/// Whether `value` is an error thrown by this package.
#[wasm_bindgen(js_name = isProfileRelayerError, unchecked_return_type = "boolean")]
pub fn is_profile_relayer_error(value: &JsValue) -> bool {
    value.dyn_ref::<js_sys::Error>().is_some_and(|e| {
        e.name() == "ProfileRelayerError"
            && Reflect::get(e, &JsValue::from_str("code"))
                .ok()
                .and_then(|c| c.as_string())
                .is_some()
    })
}

fn content_of(content: &JsValue) -> JsResult<ContentBuf> {
    if let Some(text) = content.as_string() {
        Ok(ContentBuf::Text(text))
    } else if let Some(bytes) = content.dyn_ref::<Uint8Array>() {
        Ok(ContentBuf::Bytes(bytes.to_vec()))
    } else {
        Err(Error::InvalidContent)
    }
}

enum ContentBuf {
    Text(String),
    Bytes(Vec<u8>),
}

impl ContentBuf {
    fn as_content(&self) -> Content<'_> {
        match self {
            Self::Text(t) => Content::Text(t),
            Self::Bytes(b) => Content::Bytes(b),
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
#[wasm_bindgen(js_name = encodeVerifiableUri, unchecked_return_type = "Hex")]
pub fn encode_verifiable_uri(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] content: &JsValue,
    url: &str,
) -> JsResult<String> {
    let content = content_of(content)?;
    Ok(to_hex(lsp2::encode_verifiable_uri(content.as_content(), url)))
}

/// Decodes a VerifiableURI value (current or legacy JSONURL layout). Unknown methods are reported, not thrown.
#[wasm_bindgen(js_name = decodeVerifiableUri, unchecked_return_type = "DecodedVerifiableUri")]
pub fn decode_verifiable_uri(value: &str) -> JsResult<JsValue> {
    let uri = lsp2::decode_verifiable_uri(&parse_hex("value", value)?)?;
    to_js(&DecodedVerifiableUri::from(&uri))
}

/// Checks fetched `content` against a VerifiableURI value: `true` if keccak256 of its bytes equals the hash.
/// Throws `UNVERIFIABLE_METHOD` when the value carries no keccak256 hash.
#[wasm_bindgen(js_name = verifyVerifiableUri)]
pub fn verify_verifiable_uri(
    value: &str,
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] content: &JsValue,
) -> JsResult<bool> {
    let uri = lsp2::decode_verifiable_uri(&parse_hex("value", value)?)?;
    lsp2::verify(&uri, content_of(content)?.bytes())
}

/// The ERC725Y data key of an LSP2 key name; `<type>` parts are filled from `dynamicKeyParts` in order.
/// An Array name (`Name[]`) gives its length key.
#[wasm_bindgen(js_name = encodeKeyName, unchecked_return_type = "Hex")]
pub fn encode_key_name(name: &str, dynamic_key_parts: Option<Vec<String>>) -> JsResult<String> {
    Ok(to_hex(
        lsp2::encode_key_name(name, &dynamic_key_parts.unwrap_or_default())?.as_slice(),
    ))
}

/// The key of element `index` of an Array: `bytes16(keccak256(name)) ‖ uint128(index)`.
#[wasm_bindgen(js_name = encodeArrayElementKey, unchecked_return_type = "Hex")]
pub fn encode_array_element_key(
    name: &str,
    #[wasm_bindgen(unchecked_param_type = "number | bigint")] index: &JsValue,
) -> JsResult<String> {
    Ok(to_hex(
        lsp2::encode_array_element_key(name, array_index(index)?)?.as_slice(),
    ))
}

fn array_index(index: &JsValue) -> JsResult<u128> {
    let bad = |reason: &str| Error::InvalidArrayIndex {
        value: index
            .as_string()
            .or_else(|| index.as_f64().map(|f| f.to_string()))
            .unwrap_or_default(),
        reason: reason.to_owned(),
    };
    if let Some(f) = index.as_f64() {
        const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
        if !(f.fract() == 0.0 && (0.0..=MAX_SAFE).contains(&f)) {
            return Err(bad(
                "expected an integer between 0 and Number.MAX_SAFE_INTEGER (use a bigint beyond)",
            ));
        }
        // exact: f is an integer within 2^53
        return Ok(f as u128);
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

fn keys_values(keys: &[String], values: &[String]) -> JsResult<(Vec<B256>, Vec<Bytes>)> {
    let keys = keys
        .iter()
        .map(|k| parse_fixed::<32>("keys", k))
        .collect::<Result<Vec<_>, _>>()?;
    let values = values
        .iter()
        .map(|v| parse_hex("values", v).map(Bytes::from))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((keys, values))
}

/// `abi.encode(bytes32[] keys, bytes[] values)`: the LSP23 `postDeploymentCallData`.
#[wasm_bindgen(js_name = encodePostDeploymentCallData, unchecked_return_type = "Hex")]
pub fn encode_post_deployment_calldata(
    #[wasm_bindgen(unchecked_param_type = "Hex[]")] keys: Vec<String>,
    #[wasm_bindgen(unchecked_param_type = "Hex[]")] values: Vec<String>,
) -> JsResult<String> {
    let (keys, values) = keys_values(&keys, &values)?;
    Ok(to_hex(lsp23::encode_post_deployment_calldata(&keys, &values)?))
}

/// Decodes and validates `postDeploymentCallData` (canonical ABI, as many values as keys).
#[wasm_bindgen(js_name = decodePostDeploymentCallData, unchecked_return_type = "DataKeysValues")]
pub fn decode_post_deployment_calldata(calldata: &str) -> JsResult<JsValue> {
    let data = lsp23::decode_post_deployment_calldata(&parse_hex("postDeploymentCallData", calldata)?)?;
    to_js(&DataKeysValues::from(&data))
}

/// The data a profile created from controller addresses gets (relayer deploy Form 1): LSP3Profile, the universal
/// receiver delegate and its permissions, each controller's permissions and `AddressPermissions[]`.
#[wasm_bindgen(js_name = profileDataFromControllers, unchecked_return_type = "ProfileData")]
pub fn profile_data_from_controllers(
    #[wasm_bindgen(unchecked_param_type = "Address[]")] controllers: Vec<String>,
    lsp3_profile: Option<String>,
    network: Option<NetworkInputJs>,
) -> JsResult<JsValue> {
    let controllers = controllers
        .iter()
        .map(|c| parse_address("controllers", c))
        .collect::<Result<Vec<_>, _>>()?;
    let lsp3 = lsp3_profile.map(|v| parse_hex("lsp3Profile", &v)).transpose()?;
    let constants = network_constants(network.map(Into::into))?;
    let data = lsp23::profile_data_from_controllers(&controllers, lsp3.as_deref(), &constants)?;
    to_js(&ProfileData::new(&data)?)
}

const CUSTOM_NETWORK_KEYS: &[&str] = &[
    "factory",
    "universalProfileInit",
    "keyManagerInit",
    "postDeploymentModule",
    "universalReceiverDelegate",
];

/// The LSP23 constants of an optional `NetworkInput` argument (mainnet when absent).
pub(crate) fn network_constants(network: Option<JsValue>) -> JsResult<crate::networks::Lsp23Constants> {
    match network {
        Some(n) if !n.is_undefined() && !n.is_null() => {
            check_network_keys(&n)?;
            from_js::<NetworkInput>(n, "network")?.constants()
        }
        _ => NetworkInput::default().constants(),
    }
}

fn check_network_keys(network: &JsValue) -> JsResult<()> {
    if network.is_object() {
        reject_unknown_keys(network, CUSTOM_NETWORK_KEYS, "network")?;
    }
    Ok(())
}

// serde-wasm-bindgen only reads the fields it knows, so a typo would be silently ignored without this check
fn reject_unknown_keys(obj: &JsValue, allowed: &[&str], what: &str) -> JsResult<()> {
    let keys = js_sys::Object::keys(obj.unchecked_ref::<js_sys::Object>());
    for key in keys.iter() {
        let key = key.as_string().unwrap_or_default();
        if !allowed.contains(&key.as_str()) {
            return Err(Error::InvalidArgument(format!(
                "{what}: unknown field {key:?} (expected one of {})",
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

fn deployment_args(input: JsValue) -> JsResult<(B256, Vec<u8>, crate::networks::Lsp23Constants)> {
    if !input.is_object() {
        return Err(Error::InvalidArgument(
            "expected an object {salt, postDeploymentCallData, network?}".into(),
        ));
    }
    reject_unknown_keys(
        &input,
        &["salt", "postDeploymentCallData", "network", "implementations"],
        "input",
    )?;
    check_network_keys(&Reflect::get(&input, &JsValue::from_str("network")).unwrap_or(JsValue::UNDEFINED))?;
    let input: DeploymentInput = from_js(input, "input")?;
    let salt = parse_fixed::<32>("salt", &input.salt)?;
    let calldata = parse_hex("postDeploymentCallData", &input.post_deployment_call_data)?;
    Ok((salt, calldata, input.constants()?))
}

/// Predicts the Universal Profile and KeyManager addresses (EIP-55) an LSP23 deployment creates.
#[wasm_bindgen(js_name = predictProfileAddress, unchecked_return_type = "PredictedAddresses")]
pub fn predict_profile_address(
    #[wasm_bindgen(unchecked_param_type = "DeploymentInput")] input: JsValue,
) -> JsResult<JsValue> {
    let (salt, calldata, constants) = deployment_args(input)?;
    let p = lsp23::predict_addresses(salt, &calldata, &constants)?;
    to_js(&PredictedAddresses {
        universal_profile: p.universal_profile.to_checksum(None),
        key_manager: p.key_manager.to_checksum(None),
        generated_salt: p.generated_salt.to_string(),
    })
}

/// The `deployERC1167Proxies(…)` calldata for the LSP23 factory (what a relayer sends).
#[wasm_bindgen(js_name = encodeDeployCalldata, unchecked_return_type = "Hex")]
pub fn encode_deploy_calldata(
    #[wasm_bindgen(unchecked_param_type = "DeploymentInput")] input: JsValue,
) -> JsResult<String> {
    let (salt, calldata, constants) = deployment_args(input)?;
    Ok(to_hex(lsp23::deploy_erc1167_proxies_calldata(
        salt, &calldata, &constants,
    )?))
}

/// A random 32-byte salt (`crypto.getRandomValues`).
#[wasm_bindgen(js_name = generateSalt, unchecked_return_type = "Hex")]
pub fn generate_salt() -> JsResult<String> {
    Ok(lsp23::generate_salt()?.to_string())
}

/// The bytes32 value of a set of LSP6 permissions (`"SETDATA"`, `"ALL_PERMISSIONS"`, …).
#[wasm_bindgen(js_name = encodePermissions, unchecked_return_type = "Hex")]
pub fn encode_permissions(names: Vec<String>) -> JsResult<String> {
    Ok(Permissions::from_names(&names)?.to_bytes32().to_string())
}

/// The names of the LSP6 permissions set in a bytes32 value.
#[wasm_bindgen(js_name = decodePermissions)]
pub fn decode_permissions(value: &str) -> JsResult<Vec<String>> {
    let p = Permissions::from_bytes32(parse_fixed::<32>("permissions", value)?);
    Ok(p.names().into_iter().map(str::to_owned).collect())
}

/// An LSP8 token id as bytes32 in `format` (0 number, 1 string, 2 address, 3 unique id, 4 hash, 100–104 mixed).
#[wasm_bindgen(js_name = encodeTokenId, unchecked_return_type = "Hex")]
pub fn encode_token_id(format: u32, value: &str) -> JsResult<String> {
    let format = TokenIdFormat::from_u64(u64::from(format))?;
    Ok(lsp8::encode_token_id(format, value)?.to_string())
}

/// The CIDv1 (`raw` codec, sha2-256) of `bytes`: what `POST /api/v0/add` answers for them.
#[wasm_bindgen(js_name = computeCid)]
pub fn compute_cid(bytes: &[u8]) -> String {
    crate::ipfs::raw_cid(bytes).to_string()
}

/// Whether `bytes` is the block `cid` (`ipfs://…`, `/ipfs/…` or bare) names; throws `INVALID_CID` for a
/// malformed CID, a path, or a hash function other than sha2-256.
#[wasm_bindgen(js_name = verifyCid)]
pub fn verify_cid(cid: &str, bytes: &[u8]) -> JsResult<bool> {
    let target = crate::ipfs::CidPath::parse(cid)?;
    if !target.path.is_empty() {
        return Err(Error::InvalidCid(
            "a CID with a path names a file inside a directory, not a block".into(),
        ));
    }
    crate::ipfs::verify_block(&target.cid, bytes)
}
