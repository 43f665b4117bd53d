//! The clients' inputs: `RelayerClient.execute` / `.quota` and `fetchRelayCallParams`, read and checked before
//! anything is sent.

use alloy_primitives::{Address, U256};
use serde::Serialize;
use tsify::Tsify;
use wasm_bindgen::{JsCast, prelude::*};

use crate::wasm::{
    JsResult,
    args::{chain_id, get, is_absent, object, optional_uint256, required_uint256, string_field},
    io::parse_address,
    lsp15::{QuotaMessage, quota_args},
    lsp25::{parse_sig, payload},
};
use crate::{
    Error,
    lsp15::{self, QuotaScheme},
    lsp25::{RelayCall, ValidityTimestamps},
};

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
    /// Seconds the relayer should wait for the receipt before it answers (`Prefer: wait`, at most its
    /// `DEPLOY_WAIT_SECONDS`): the answer is then `"mined"` (or `"reverted"`) when the transaction was mined in time.
    /// Default: answered as soon as the transaction is sent (`"pending"`; follow it with `transaction(hash)`).
    #[tsify(optional, type = "number")]
    pub wait: Option<u32>,
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
    /// `wait`: seconds to wait for the receipt.
    pub wait: Option<u32>,
}

#[cfg(feature = "wasm")]
/// The longest `wait` accepted (an hour: the relayer caps it much lower).
const MAX_WAIT_SECONDS: f64 = 3600.0;

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
            "wait",
        ],
        "input",
    )?;
    let wait = get(input, "wait");
    let wait = if is_absent(&wait) {
        None
    } else {
        match wait.as_f64() {
            Some(n) if (0.0..=MAX_WAIT_SECONDS).contains(&n) && n.fract() == 0.0 => Some(n as u32),
            _ => {
                return Err(Error::InvalidArgument(
                    "wait must be a whole number of seconds from 0 to 3600".into(),
                ));
            }
        }
    };
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
        wait,
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
/// Reads a `RelayCallParamsInput` (with the transport options of the clients): `(rpcUrl, profile, controller,
/// channel)`; the transport options are read by `http::transport`.
pub(super) fn relay_call_params_args(input: &JsValue) -> JsResult<(String, Address, Address, u128)> {
    object(
        input,
        super::http::with_transport_keys!["rpcUrl", "address", "controller", "channel"],
        "input",
    )?;
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
