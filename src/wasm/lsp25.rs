//! LSP25 bindings: relay-call digests, messages and calldata, signer recovery, revert decoding, and the ERC725Y
//! `setData` payloads a relay call carries.

use alloy_primitives::{Address, Bytes, U256};
use js_sys::JsString;
use serde::Serialize;
use tsify::Tsify;
use wasm_bindgen::prelude::*;

#[cfg(feature = "wasm")]
use super::io::interned;
use super::{
    JsResult,
    args::{Fields, chain_id, object, optional_uint256, required, required_uint256, string_field, uint256},
    io,
};
use crate::{
    Error,
    hex::parse_hex,
    lsp25::{self, RelayCall, ValidityTimestamps},
};

/// What the controller signs for an LSP25 relay call.
#[derive(Debug, Clone, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RelayCallInput {
    /// The profile's KeyManager (`UP.owner()`).
    #[tsify(type = "Address")]
    pub key_manager: String,
    /// The chain id (42 mainnet, 4201 testnet).
    #[tsify(type = "number | bigint")]
    pub chain_id: u64,
    /// `getNonce(controller, channel)`: `(channel << 128) | id`.
    #[tsify(type = "number | bigint | string")]
    pub nonce: String,
    /// `(start << 128) | end`, unix seconds; default 0 (always valid).
    #[tsify(optional, type = "number | bigint | string")]
    pub validity_timestamps: Option<String>,
    /// `msg.value` in wei; default 0 (what a relayer sends).
    #[tsify(optional, type = "number | bigint | string")]
    pub value: Option<String>,
    /// The call on the profile, e.g. `setData(…)` or `execute(…)`.
    #[tsify(type = "Hex")]
    pub payload: String,
}

/// The arguments of `executeRelayCall`.
#[derive(Debug, Clone, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteRelayCallInput {
    /// The 65-byte LSP25 signature.
    #[tsify(type = "Hex")]
    pub signature: String,
    /// The signed nonce.
    #[tsify(type = "number | bigint | string")]
    pub nonce: String,
    /// The signed validity timestamps; default 0.
    #[tsify(optional, type = "number | bigint | string")]
    pub validity_timestamps: Option<String>,
    /// The signed payload.
    #[tsify(type = "Hex")]
    pub payload: String,
}

/// Decoded revert data of a relay call.
#[derive(Debug, Clone, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct DecodedRevert {
    /// The custom error's name (`NotAuthorised`, `InvalidRelayNonce`, …), `"Error"`, `"Panic"`, `""` (no data)
    /// or `"unknown"`.
    pub name: String,
    /// A one-line description with the arguments.
    pub reason: String,
    /// The error code a relayer answers for it (`NOT_AUTHORISED`, `INVALID_RELAY_NONCE`, …).
    #[tsify(type = "ProfileRelayerErrorCode")]
    pub code: String,
}

/// The fields of a `RelayCallInput`.
const RELAY_CALL_KEYS: &[&str] = &[
    "keyManager",
    "chainId",
    "nonce",
    "validityTimestamps",
    "value",
    "payload",
];

fn relay_call_args(input: &JsValue) -> JsResult<(Address, u64, RelayCall)> {
    if !input.is_object() {
        object(input, RELAY_CALL_KEYS, "input")?;
    }
    // the fields present, and no unknown one, in one call (the hot LSP25 encodings read six fields)
    let fields = Fields::of(input, RELAY_CALL_KEYS, "input")?;
    let required = |key: &'static str| fields.get(key).ok_or_else(|| Error::MissingField(key.to_owned()));
    let optional = |key: &'static str| fields.get(key).map_or(Ok(U256::ZERO), |v| uint256(&v, key));
    let key_manager = io::address_arg("keyManager", &required("keyManager")?)?;
    let chain = required("chainId")?;
    let call = RelayCall {
        nonce: uint256(&required("nonce")?, "nonce")?,
        validity_timestamps: ValidityTimestamps(optional("validityTimestamps")?),
        value: optional("value")?,
        payload: io::hex_arg("payload", &required("payload")?)?.into(),
    };
    Ok((key_manager, chain_id(&chain)?, call))
}

pub(super) fn parse_sig(hex: &str, field: &str) -> JsResult<alloy_primitives::Signature> {
    lsp25::parse_signature(field, &parse_hex(field, hex)?)
}

pub(super) fn payload(obj: &JsValue) -> JsResult<Bytes> {
    Ok(io::hex_arg("payload", &required(obj, "payload")?)?.into())
}

/// The LSP25 digest a controller signs for a relay call: `keccak256(0x19 ‖ 0x00 ‖ keyManager ‖
/// abi.encodePacked(25, chainId, nonce, validityTimestamps, value, payload))`. Sign it raw (viem
/// `account.sign({ hash })`), not with `signMessage`.
///
/// # Errors
/// The `ProfileRelayerError` the JS function throws.
#[wasm_bindgen(js_name = relayCallDigest, unchecked_return_type = "Hex")]
pub fn relay_call_digest(
    #[wasm_bindgen(unchecked_param_type = "RelayCallInput")] input: JsValue,
) -> JsResult<JsString> {
    let (km, chain, call) = relay_call_args(&input)?;
    Ok(io::hex_js(call.digest(km, chain).as_slice()))
}

/// The LSP25 encoded message `abi.encodePacked(25, chainId, nonce, validityTimestamps, value, payload)` (what
/// `@lukso/eip191-signer.js` `signDataWithIntendedValidator(keyManager, message, key)` takes).
///
/// # Errors
/// The `ProfileRelayerError` the JS function throws.
#[wasm_bindgen(js_name = encodeRelayCallMessage, unchecked_return_type = "Hex")]
pub fn encode_relay_call_message(
    #[wasm_bindgen(unchecked_param_type = "RelayCallInput")] input: JsValue,
) -> JsResult<JsString> {
    let (_, chain, call) = relay_call_args(&input)?;
    Ok(io::hex_js(&call.encoded_message(chain)))
}

/// The controller that signed a relay call (EIP-55) (`profile-relayer/recover` only: secp256k1 recovery). A
/// signature for another KeyManager, chain or payload recovers to some other address.
#[cfg(feature = "wasm-recover")]
#[wasm_bindgen(js_name = recoverRelayCallSigner, unchecked_return_type = "Address")]
pub fn recover_relay_call_signer(
    #[wasm_bindgen(unchecked_param_type = "RelayCallInput")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Hex")] signature: &JsValue,
) -> JsResult<String> {
    let (km, chain, call) = relay_call_args(&input)?;
    let sig = parse_sig(&io::text_arg("signature", signature)?, "signature")?;
    Ok(call.recover_signer(km, chain, &sig)?.to_checksum(None))
}

/// `executeRelayCall(signature, nonce, validityTimestamps, payload)` calldata for the KeyManager (`v` written
/// as 27/28; a high-`s` signature is refused).
///
/// # Errors
/// The `ProfileRelayerError` the JS function throws.
#[wasm_bindgen(js_name = encodeExecuteRelayCall, unchecked_return_type = "Hex")]
pub fn encode_execute_relay_call(
    #[wasm_bindgen(unchecked_param_type = "ExecuteRelayCallInput")] input: JsValue,
) -> JsResult<JsString> {
    object(
        &input,
        &["signature", "nonce", "validityTimestamps", "payload"],
        "input",
    )?;
    let sig = parse_sig(&string_field(&input, "signature")?, "signature")?;
    let call = RelayCall {
        nonce: required_uint256(&input, "nonce")?,
        validity_timestamps: ValidityTimestamps(optional_uint256(&input, "validityTimestamps")?),
        value: U256::ZERO,
        payload: payload(&input)?,
    };
    Ok(io::hex_js(&call.execute_relay_call_calldata(&sig)))
}

/// Decodes the revert data of a relay call (LSP6 / LSP20 / LSP25 / profile custom errors, `Error(string)`,
/// `Panic(uint256)`); never throws for well-formed hex. Full package only (the error tables are large).
#[cfg(feature = "wasm")]
#[wasm_bindgen(js_name = decodeRelayCallRevert, unchecked_return_type = "DecodedRevert")]
pub fn decode_relay_call_revert(
    #[wasm_bindgen(unchecked_param_type = "Hex")] data: &JsValue,
) -> JsResult<JsValue> {
    let revert = lsp25::Revert::decode(&io::hex_arg("data", data)?);
    let o = io::object();
    o.put("name", &io::utf8(revert.name()).into());
    o.put("reason", &io::utf8(&revert.describe()).into());
    o.put(
        "code",
        &interned(revert.to_error(0, &RelayCall::default()).code()),
    );
    Ok(o.into())
}

/// `setData(key, value)` calldata for the profile: the payload of a relay call that writes one data key, e.g.
/// `encodeSetData(encodeKeyName("LSP3Profile"), encodeVerifiableUri(json, url))`.
#[cfg(feature = "wasm")]
#[wasm_bindgen(js_name = encodeSetData, unchecked_return_type = "Hex")]
pub fn encode_set_data(
    #[wasm_bindgen(unchecked_param_type = "Hex")] key: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "Hex")] value: &JsValue,
) -> JsResult<JsString> {
    let key = io::fixed_arg::<32>("key", key)?.into();
    Ok(io::hex_js(&lsp25::set_data_payload(
        key,
        &io::hex_arg("value", value)?,
    )))
}

/// `setDataBatch(keys, values)` calldata for the profile (as many values as keys).
#[cfg(feature = "wasm")]
#[wasm_bindgen(js_name = encodeSetDataBatch, unchecked_return_type = "Hex")]
pub fn encode_set_data_batch(
    #[wasm_bindgen(unchecked_param_type = "Hex[]")] keys: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "Hex[]")] values: &JsValue,
) -> JsResult<JsString> {
    let keys = io::array_arg("keys", keys)?
        .iter()
        .map(|k| io::fixed_arg::<32>("keys", &k).map(alloy_primitives::B256::from))
        .collect::<Result<Vec<_>, _>>()?;
    let values = io::array_arg("values", values)?
        .iter()
        .map(|v| io::hex_arg("values", &v).map(Bytes::from))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(io::hex_js(&lsp25::set_data_batch_payload(&keys, &values)?))
}
