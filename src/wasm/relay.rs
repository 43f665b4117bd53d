//! Bindings for gasless transactions: LSP25 relay-call digests and calldata, LSP15 quota messages, signer
//! recovery and revert decoding. Arguments are read field by field so that every malformed value becomes a
//! `ProfileRelayerError` with its own code.

use alloy_primitives::{Address, Bytes, U256};
use js_sys::{JsString, Reflect};
use serde::Serialize;
use tsify::Tsify;
use wasm_bindgen::{JsCast, prelude::*};

use super::{
    Fields, JsResult,
    io::{self, interned, parse_address},
    reject_unknown_keys,
};
use crate::{
    Error,
    hex::{parse_hex, parse_uint256},
    lsp15::{self, QuotaScheme},
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

/// An LSP15 quota message: sign `message` with `personal_sign` (viem `signMessage({ message: { raw } })` for
/// `packed`, `signMessage({ message })` for `text`).
#[derive(Debug, Clone, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct QuotaMessage {
    /// Which scheme.
    #[tsify(type = "QuotaScheme")]
    pub scheme: String,
    /// `packed`: the 32 bytes `keccak256(abi.encodePacked(address, uint256 timestamp))`, hex;
    /// `text`: the string `"<address>:<timestamp>"`.
    pub message: String,
    /// The EIP-191 hash the wallet signs.
    #[tsify(type = "Hex")]
    pub hash: String,
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

#[wasm_bindgen(typescript_custom_section)]
const TS_RELAY: &'static str = r#"
/** How an LSP15 quota request is signed: `packed` (LSP15 spec, primary) or `text` (`"<address>:<timestamp>"`). */
export type QuotaScheme = "packed" | "text";
/** A `"packed"` quota message: `message` is the 32 bytes as hex (viem `signMessage({ message: { raw: message } })`). */
export interface PackedQuotaMessage extends QuotaMessage { scheme: "packed"; message: Hex; }
/** A `"text"` quota message: `message` is `"<address>:<timestamp>"` (viem `signMessage({ message })`). */
export interface TextQuotaMessage extends QuotaMessage { scheme: "text"; }
/** The LSP15 quota message under the default `"packed"` scheme (the signature below, by scheme). */
export function quotaMessage(address: Address, timestamp: number | bigint, scheme?: "packed" | null): PackedQuotaMessage;
/** The LSP15 quota message under the `"text"` scheme. */
export function quotaMessage(address: Address, timestamp: number | bigint, scheme: "text"): TextQuotaMessage;
"#;

/// `RelayerClient.quota`'s input by scheme: the `sign` callback gets the packed message as `Hex`.
#[cfg(feature = "wasm")]
#[wasm_bindgen(typescript_custom_section)]
const TS_QUOTA_REQUEST: &'static str = r#"
/** `RelayerClient.quota`'s input, by scheme: `sign` gets the `"packed"` message (the default) as hex, the `"text"`
 * message as a string. */
export type QuotaRequest =
  | (Omit<QuotaInput, "scheme" | "sign"> & {
      scheme?: "packed";
      sign?: (message: Hex, quotaMessage: PackedQuotaMessage) => Hex | Promise<Hex>;
    })
  | (Omit<QuotaInput, "scheme" | "sign"> & {
      scheme: "text";
      sign?: (message: string, quotaMessage: TextQuotaMessage) => Hex | Promise<Hex>;
    });
"#;

#[wasm_bindgen]
extern "C" {
    /// `QuotaScheme` on the JS side.
    #[wasm_bindgen(typescript_type = "QuotaScheme")]
    pub type QuotaSchemeJs;
}

/// `obj[key]` with the key's JS string made once (not one string crossing per read).
pub(super) fn get(obj: &JsValue, key: &'static str) -> JsValue {
    Reflect::get(obj, &interned(key)).unwrap_or(JsValue::UNDEFINED)
}

pub(super) fn is_absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// `obj[key]`, or `MISSING_FIELD` when it is undefined or null.
fn required(obj: &JsValue, key: &'static str) -> JsResult<JsValue> {
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
fn uint256(v: &JsValue, field: &str) -> JsResult<U256> {
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

fn optional_uint256(obj: &JsValue, key: &'static str) -> JsResult<U256> {
    let v = get(obj, key);
    if is_absent(&v) {
        Ok(U256::ZERO)
    } else {
        uint256(&v, key)
    }
}

fn required_uint256(obj: &JsValue, key: &'static str) -> JsResult<U256> {
    uint256(&required(obj, key)?, key)
}

pub(super) fn object(input: &JsValue, allowed: &'static [&'static str], what: &str) -> JsResult<()> {
    if !input.is_object() {
        return Err(Error::InvalidArgument(format!(
            "{what}: expected an object {{{}}}",
            allowed.join(", ")
        )));
    }
    reject_unknown_keys(input, allowed, what)
}

fn chain_id(v: &JsValue) -> JsResult<u64> {
    let id = uint256(v, "chainId")?;
    u64::try_from(id).map_err(|_| Error::InvalidNumber {
        field: "chainId".into(),
        value: id.to_string(),
        reason: "a chain id fits in 64 bits".into(),
    })
}

fn payload(obj: &JsValue) -> JsResult<Bytes> {
    Ok(io::hex_arg("payload", &required(obj, "payload")?)?.into())
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

fn parse_sig(hex: &str, field: &str) -> JsResult<alloy_primitives::Signature> {
    lsp25::parse_signature(field, &parse_hex(field, hex)?)
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

fn quota_args(
    address: &str,
    timestamp: &JsValue,
    scheme: Option<QuotaSchemeJs>,
) -> JsResult<(Address, u64, QuotaScheme)> {
    let up = parse_address("address", address)?;
    let ts = uint256(timestamp, "timestamp")?;
    let ts = u64::try_from(ts).map_err(|_| Error::InvalidNumber {
        field: "timestamp".into(),
        value: ts.to_string(),
        reason: "expected unix seconds".into(),
    })?;
    let scheme = match scheme.map(JsValue::from) {
        None => QuotaScheme::Packed,
        Some(v) if is_absent(&v) => QuotaScheme::Packed,
        Some(v) => v
            .as_string()
            .as_deref()
            .and_then(QuotaScheme::parse)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "scheme: expected \"packed\" or \"text\", got {}",
                    v.as_string().unwrap_or_else(|| "a non-string".into())
                ))
            })?,
    };
    Ok((up, ts, scheme))
}

/// The LSP15 quota message for `address` (the profile) at `timestamp` (unix seconds) under `scheme` (default
/// `"packed"`). For `"text"` the address is used exactly as given.
#[wasm_bindgen(js_name = quotaMessage, unchecked_return_type = "QuotaMessage")]
pub fn quota_message(
    #[wasm_bindgen(unchecked_param_type = "Address")] address: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "number | bigint")] timestamp: &JsValue,
    scheme: Option<QuotaSchemeJs>,
) -> JsResult<JsValue> {
    let address = &io::text_arg("address", address)?;
    let (up, ts, scheme) = quota_args(address, timestamp, scheme)?;
    let message = match scheme {
        QuotaScheme::Packed => lsp15::packed_quota_message(up, ts).to_string(),
        QuotaScheme::Text => lsp15::text_quota_message(address, ts),
    };
    let o = io::object();
    o.put("scheme", &interned(scheme.as_str()));
    o.put("message", &io::utf8(&message).into());
    o.put(
        "hash",
        &io::hex_js(lsp15::quota_signing_hash(scheme, up, address, ts).as_slice()).into(),
    );
    Ok(o.into())
}

/// The address that signed an LSP15 quota request under `scheme` (default `"packed"`), EIP-55
/// (`profile-relayer/recover` only: secp256k1 recovery).
#[cfg(feature = "wasm-recover")]
#[wasm_bindgen(js_name = recoverQuotaSigner, unchecked_return_type = "Address")]
pub fn recover_quota_signer(
    #[wasm_bindgen(unchecked_param_type = "Address")] address: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "number | bigint")] timestamp: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "Hex")] signature: &JsValue,
    scheme: Option<QuotaSchemeJs>,
) -> JsResult<String> {
    let address = &io::text_arg("address", address)?;
    let (up, ts, scheme) = quota_args(address, timestamp, scheme)?;
    let sig = parse_sig(&io::text_arg("signature", signature)?, "signature")?;
    Ok(lsp15::recover_quota_signer(scheme, up, address, ts, &sig)?.to_checksum(None))
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

#[cfg(feature = "wasm")]
/// Input of `RelayerClient.execute`: a relay call on `address` (the profile), and either its `signature` or a
/// `sign` callback. With `sign`, the client builds the LSP25 digest (which needs `keyManager` and `chainId`) and
/// calls `sign(digest)`; sign the 32 bytes raw (viem `account.sign({ hash })`, `@lukso/eip191-signer.js`
/// `signDataWithIntendedValidator`), not with `signMessage` / `personal_sign`.
#[derive(Debug, Clone, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteInput {
    /// The Universal Profile.
    #[tsify(type = "Address")]
    pub address: String,
    /// The profile's KeyManager (`owner()`); needed with `sign`.
    #[tsify(optional, type = "Address")]
    pub key_manager: Option<String>,
    /// The chain id; needed with `sign`.
    #[tsify(optional, type = "number | bigint")]
    pub chain_id: Option<u64>,
    /// `getNonce(controller, channel)` of the KeyManager.
    #[tsify(type = "number | bigint | string")]
    pub nonce: String,
    /// `(start << 128) | end`, unix seconds; default 0 (always valid).
    #[tsify(optional, type = "number | bigint | string")]
    pub validity_timestamps: Option<String>,
    /// The call on the profile, e.g. `encodeSetData(…)`.
    #[tsify(type = "Hex")]
    pub payload: String,
    /// A ready 65-byte LSP25 signature.
    #[tsify(optional, type = "Hex")]
    pub signature: Option<String>,
    /// Signs the LSP25 digest; resolves to a 65-byte `0x` signature.
    #[tsify(optional, type = "(digest: Hex) => Hex | Promise<Hex>")]
    pub sign: Option<String>,
}

#[cfg(feature = "wasm")]
/// Input of `RelayerClient.quota`: the profile and either a `signature` over the quota message of `timestamp`,
/// or a `sign` callback, called as `sign(message, quotaMessage)` with the message to `personal_sign`: for
/// `"packed"` the 32 bytes as hex (viem `signMessage({ message: { raw: message } })`), for `"text"` the string
/// (viem `signMessage({ message })`). `quotaMessage.hash` is the EIP-191 hash that ends up signed.
#[derive(Debug, Clone, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct QuotaInput {
    /// The Universal Profile (for `"text"`, signed exactly as given).
    #[tsify(type = "Address")]
    pub address: String,
    /// Unix seconds; default now (required with `signature`). The service accepts a few minutes of skew.
    #[tsify(optional, type = "number | bigint")]
    pub timestamp: Option<u64>,
    /// Default `"packed"`.
    #[tsify(optional, type = "QuotaScheme")]
    pub scheme: Option<String>,
    /// A ready signature (`personal_sign` by a controller).
    #[tsify(optional, type = "Hex")]
    pub signature: Option<String>,
    /// Signs the quota message with `personal_sign`; resolves to a 65-byte `0x` signature.
    #[tsify(
        optional,
        type = "(message: string, quotaMessage: QuotaMessage) => Hex | Promise<Hex>"
    )]
    pub sign: Option<String>,
}

#[cfg(feature = "wasm")]
/// How a client call gets its signature.
#[derive(Debug)]
pub(super) enum SignWith {
    /// Given by the caller (validated).
    Ready(String),
    /// `sign(…)`, called by the client.
    Callback(js_sys::Function),
}

#[cfg(feature = "wasm")]
fn sign_with(input: &JsValue) -> JsResult<SignWith> {
    let signature = get(input, "signature");
    let sign = get(input, "sign");
    match (is_absent(&signature), is_absent(&sign)) {
        (false, false) => Err(Error::InvalidArgument(
            "give either signature or sign, not both".into(),
        )),
        (true, true) => Err(Error::MissingField("signature (or a sign callback)".into())),
        (false, true) => {
            let hex = string_field(input, "signature")?;
            parse_sig(&hex, "signature")?;
            Ok(SignWith::Ready(hex))
        }
        (true, false) => sign
            .dyn_into::<js_sys::Function>()
            .map(SignWith::Callback)
            .map_err(|_| Error::InvalidArgument("sign: expected a function".into())),
    }
}

#[cfg(feature = "wasm")]
/// A checked `RelayerClient.execute` input.
#[derive(Debug)]
pub(super) struct ExecuteArgs {
    /// The profile, as given.
    pub address: String,
    /// The signed call (`value` 0).
    pub call: RelayCall,
    /// The KeyManager and chain id, when given.
    pub domain: Option<(Address, u64)>,
    /// Where the signature comes from.
    pub sign: SignWith,
}

#[cfg(feature = "wasm")]
/// Reads an `ExecuteInput`.
pub(super) fn execute_args(input: &JsValue) -> JsResult<ExecuteArgs> {
    object(
        input,
        &[
            "address",
            "keyManager",
            "chainId",
            "nonce",
            "validityTimestamps",
            "payload",
            "signature",
            "sign",
        ],
        "input",
    )?;
    let address = string_field(input, "address")?;
    parse_address("address", &address)?;
    let call = RelayCall {
        nonce: required_uint256(input, "nonce")?,
        validity_timestamps: ValidityTimestamps(optional_uint256(input, "validityTimestamps")?),
        value: U256::ZERO,
        payload: payload(input)?,
    };
    let sign = sign_with(input)?;
    let key_manager = get(input, "keyManager");
    let chain = get(input, "chainId");
    let domain = match (is_absent(&key_manager), is_absent(&chain)) {
        (true, true) => None,
        (false, false) => Some((
            parse_address("keyManager", &string_field(input, "keyManager")?)?,
            chain_id(&chain)?,
        )),
        (true, false) => return Err(Error::MissingField("keyManager".into())),
        (false, true) => return Err(Error::MissingField("chainId".into())),
    };
    if matches!(sign, SignWith::Callback(_)) && domain.is_none() {
        return Err(Error::MissingField(
            "keyManager and chainId (the LSP25 digest needs them)".into(),
        ));
    }
    Ok(ExecuteArgs {
        address,
        call,
        domain,
        sign,
    })
}

#[cfg(feature = "wasm")]
/// A checked `RelayerClient.quota` input.
#[derive(Debug)]
pub(super) struct QuotaArgs {
    /// The profile, as given.
    pub address: String,
    /// Unix seconds (now when not given).
    pub timestamp: u64,
    /// The message to sign and its hash.
    pub message: QuotaMessage,
    /// Where the signature comes from.
    pub sign: SignWith,
}

#[cfg(feature = "wasm")]
/// Reads a `QuotaInput`; `now` is used when no timestamp is given (only allowed with `sign`).
pub(super) fn quota_input_args(input: &JsValue, now: u64) -> JsResult<QuotaArgs> {
    object(
        input,
        &["address", "timestamp", "scheme", "signature", "sign"],
        "input",
    )?;
    let address = string_field(input, "address")?;
    let sign = sign_with(input)?;
    let timestamp = get(input, "timestamp");
    let timestamp = match (&sign, is_absent(&timestamp)) {
        (SignWith::Ready(_), true) => {
            return Err(Error::MissingField(
                "timestamp (the one the signature covers)".into(),
            ));
        }
        (SignWith::Callback(_), true) => JsValue::from_f64(now as f64),
        (_, false) => timestamp,
    };
    let scheme = get(input, "scheme");
    let (up, ts, scheme) = quota_args(&address, &timestamp, Some(scheme.unchecked_into()))?;
    let message = match scheme {
        QuotaScheme::Packed => lsp15::packed_quota_message(up, ts).to_string(),
        QuotaScheme::Text => lsp15::text_quota_message(&address, ts),
    };
    Ok(QuotaArgs {
        timestamp: ts,
        message: QuotaMessage {
            scheme: scheme.as_str().to_owned(),
            message,
            hash: lsp15::quota_signing_hash(scheme, up, &address, ts).to_string(),
        },
        address,
        sign,
    })
}

#[cfg(feature = "wasm")]
/// Checks a signature a `sign` callback answered.
pub(super) fn check_signature(value: &JsValue) -> JsResult<String> {
    let hex = value.as_string().ok_or_else(|| {
        Error::InvalidArgument("sign: the callback must resolve to a 0x hex signature string".into())
    })?;
    parse_sig(&hex, "signature")?;
    Ok(hex)
}

#[cfg(feature = "wasm")]
/// Input of `fetchRelayCallParams`.
#[derive(Debug, Clone, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RelayCallParamsInput {
    /// A JSON-RPC endpoint of the chain (e.g. `https://42.rpc.thirdweb.com`).
    pub rpc_url: String,
    /// The Universal Profile.
    #[tsify(type = "Address")]
    pub address: String,
    /// The controller that will sign.
    #[tsify(type = "Address")]
    pub controller: String,
    /// The nonce channel; default 0 (calls on one channel run in order, channels in parallel).
    #[tsify(optional, type = "number | bigint | string")]
    pub channel: Option<String>,
}

#[cfg(feature = "wasm")]
/// What a relay call's signature needs from the chain, read by `fetchRelayCallParams`: spread it into
/// `RelayerClient.execute({ ...params, address, payload, sign })`.
#[derive(Debug, Clone, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RelayCallParams {
    /// The profile's KeyManager (`owner()`), EIP-55.
    #[tsify(type = "Address")]
    pub key_manager: String,
    /// `eth_chainId`.
    pub chain_id: u64,
    /// `getNonce(controller, channel)`, decimal.
    pub nonce: String,
}

#[cfg(feature = "wasm")]
/// Reads a `RelayCallParamsInput`: `(rpcUrl, profile, controller, channel)`.
pub(super) fn relay_call_params_args(input: &JsValue) -> JsResult<(String, Address, Address, u128)> {
    object(input, &["rpcUrl", "address", "controller", "channel"], "input")?;
    let rpc_url = string_field(input, "rpcUrl")?;
    let profile = parse_address("address", &string_field(input, "address")?)?;
    let controller = parse_address("controller", &string_field(input, "controller")?)?;
    let channel = optional_uint256(input, "channel")?;
    let channel = u128::try_from(channel).map_err(|_| Error::InvalidNumber {
        field: "channel".into(),
        value: channel.to_string(),
        reason: "a channel is a uint128".into(),
    })?;
    Ok((rpc_url, profile, controller, channel))
}
