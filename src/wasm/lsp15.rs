//! LSP15 bindings: quota messages and their signers.

use alloy_primitives::Address;
use serde::Serialize;
use tsify::Tsify;
use wasm_bindgen::prelude::*;

#[cfg(feature = "wasm-recover")]
use super::lsp25::parse_sig;
use super::{
    JsResult,
    args::{is_absent, uint256},
    io::{self, interned, parse_address},
};
use crate::{
    Error,
    lsp15::{self, QuotaScheme},
};

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

#[wasm_bindgen]
extern "C" {
    /// `QuotaScheme` on the JS side.
    #[wasm_bindgen(typescript_type = "QuotaScheme")]
    pub type QuotaSchemeJs;
}

pub(super) fn quota_args(
    address: &str,
    timestamp: &JsValue,
    scheme: Option<QuotaSchemeJs>,
) -> JsResult<(Address, u64, QuotaScheme)> {
    let up = parse_address("address", address)?;
    let ts = uint256(timestamp, "timestamp")?;
    let ts = u64::try_from(ts).map_err(|_| Error::InvalidNumber {
        field: "timestamp".into(),
        value: io::decimal_text(ts),
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
