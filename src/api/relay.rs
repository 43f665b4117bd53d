//! Wire types of the LSP15 relay routes (`POST /api/execute`, `POST /api/quota`) and of transaction status.
//!
//! The request shapes are LSP15's (`lukso-network/LIPs` `LSP-15-TransactionRelayServiceAPI.md`), accepted in the
//! spellings LUKSO's clients send: `nonce` as a JSON number, a decimal string or `0x` hex; `validityTimestamps`
//! optional (default 0).

use alloy_primitives::{Address, B256, Signature, U256};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Quota, as_object, checksummed, field, reject_unknown, str_field, type_error};
use crate::{
    Error, Result,
    hex::{parse_address, parse_hex, parse_uint256},
    lsp15::{self, QuotaScheme},
    lsp25::{RelayCall, ValidityTimestamps, parse_signature},
};

/// A payload cap for [`ExecuteRequest`] when the service has no other figure: 64 KiB.
pub const DEFAULT_MAX_PAYLOAD_BYTES: usize = 64 * 1024;

/// LSP15's accepted distance between a quota request's signed timestamp and the service's clock, in seconds
/// (the LUKSO docs page and mock relayer use 5).
pub const QUOTA_TIMESTAMP_WINDOW_SECS: u64 = 300;

/// `POST /api/execute`: relay a signed LSP25 call to the profile's KeyManager.
///
/// ```json
/// {"address": "0x<profile>",
///  "transaction": {"abi": "0x<payload>", "signature": "0x<65 bytes>", "nonce": 0, "validityTimestamps": "0x0"}}
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteRequest {
    /// `address`: the Universal Profile.
    pub address: Address,
    /// `transaction.signature`: the LSP25 signature (low s; `v` 27/28 or 0/1).
    pub signature: Signature,
    /// `transaction.abi` (payload), `nonce` and `validityTimestamps`; `value` is 0 (the relayer sends no LYX).
    pub call: RelayCall,
}

const EXECUTE_FIELDS: [&str; 2] = ["address", "transaction"];
const TRANSACTION_FIELDS: [&str; 4] = ["abi", "signature", "nonce", "validityTimestamps"];

impl ExecuteRequest {
    /// Parses and validates a JSON body; `transaction.abi` may carry at most `max_payload_bytes` bytes.
    ///
    /// # Errors
    /// [`Error::InvalidJson`], [`Error::UnknownField`], [`Error::MissingField`], [`Error::InvalidFieldType`],
    /// [`Error::InvalidAddress`], [`Error::InvalidHex`], [`Error::PayloadTooLarge`], [`Error::InvalidAbi`] (payload
    /// shorter than a 4-byte selector), [`Error::InvalidLength`] / [`Error::InvalidSignature`],
    /// [`Error::InvalidNumber`].
    pub fn from_json(body: &str, max_payload_bytes: usize) -> Result<Self> {
        let value: Value = serde_json::from_str(body).map_err(|e| Error::InvalidJson(e.to_string()))?;
        Self::from_value(&value, max_payload_bytes)
    }

    /// Parses and validates an already parsed JSON value.
    ///
    /// # Errors
    /// As [`ExecuteRequest::from_json`].
    pub fn from_value(value: &Value, max_payload_bytes: usize) -> Result<Self> {
        let obj = as_object(value)?;
        reject_unknown(obj, &EXECUTE_FIELDS)?;
        let address = parse_address("address", address_str(field(obj, "address")?)?)?;
        let tx = field(obj, "transaction")?.as_object().ok_or_else(|| {
            type_error(
                "transaction",
                "an object {abi, signature, nonce, validityTimestamps?}",
            )
        })?;
        reject_unknown(tx, &TRANSACTION_FIELDS).map_err(|e| match e {
            Error::UnknownField(k) => Error::UnknownField(format!("transaction.{k}")),
            other => other,
        })?;

        let abi = str_field("transaction.abi", field(tx, "abi").map_err(nested)?)?;
        let got = abi.len().saturating_sub(2) / 2;
        if got > max_payload_bytes {
            return Err(Error::PayloadTooLarge {
                field: "transaction.abi".into(),
                max: max_payload_bytes,
                got,
            });
        }
        let payload = parse_hex("transaction.abi", abi)?;
        if payload.len() < 4 {
            return Err(Error::InvalidAbi {
                expected: "a call on the profile (4-byte selector and arguments)".into(),
                reason: format!("{} bytes", payload.len()),
            });
        }

        let signature = parse_hex(
            "transaction.signature",
            str_field("transaction.signature", field(tx, "signature").map_err(nested)?)?,
        )?;
        let signature = parse_signature("transaction.signature", &signature)?;
        let nonce = uint_field("transaction.nonce", field(tx, "nonce").map_err(nested)?)?;
        let validity = match tx.get("validityTimestamps") {
            None | Some(Value::Null) => U256::ZERO,
            Some(v) => uint_field("transaction.validityTimestamps", v)?,
        };
        Ok(Self {
            address,
            signature,
            call: RelayCall {
                nonce,
                validity_timestamps: ValidityTimestamps(validity),
                value: U256::ZERO,
                payload: payload.into(),
            },
        })
    }

    /// The controller that signed the call for `key_manager` (the profile's `owner()`) on `chain_id`.
    ///
    /// # Errors
    /// [`Error::InvalidSignature`] when no public key can be recovered.
    pub fn recover_signer(&self, key_manager: Address, chain_id: u64) -> Result<Address> {
        self.call.recover_signer(key_manager, chain_id, &self.signature)
    }

    /// `executeRelayCall(signature, nonce, validityTimestamps, payload)` calldata for the KeyManager.
    #[must_use]
    pub fn calldata(&self) -> Vec<u8> {
        self.call.execute_relay_call_calldata(&self.signature)
    }
}

fn nested(e: Error) -> Error {
    match e {
        Error::MissingField(k) => Error::MissingField(format!("transaction.{k}")),
        other => other,
    }
}

fn address_str(v: &Value) -> Result<&str> {
    v.as_str()
        .ok_or_else(|| type_error("address", "an address string"))
}

/// A JSON number that is a non-negative integer: `5` or `5.0` (JSON Schema's `integer`), at most
/// [`MAX_SAFE_INTEGER`](crate::json_shape::MAX_SAFE_INTEGER) when written with a fraction part (larger floats are not
/// exact).
fn json_integer(n: &serde_json::Number) -> Option<u64> {
    n.as_u64()
        .or_else(|| n.as_f64().and_then(crate::json_shape::safe_integer))
}

/// A JSON number as text for an error message, without a float formatter: serde_json's `Display` formats floats
/// with `ryu`, whose tables outweigh these two messages in the npm package's wasm (BENCHMARKS.md#wasm-size). Integers
/// (also as floats below 10^19) are exact; other numbers show their integer part and up to nine decimals, with
/// `≈` when that does not read back as the number.
fn number_text(n: &serde_json::Number) -> String {
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    let sign = if f < 0.0 { "-" } else { "" };
    let (whole, fraction) = (f.abs().trunc(), f.abs().fract());
    if whole.is_nan() || whole >= 1e19 {
        return if f < 0.0 { "≤ -1e19" } else { "≥ 1e19" }.to_owned();
    }
    // nine decimals, rounded (`floor` is a wasm instruction, `round` a libm call); a fraction that rounds to 0
    // or 1 is not shown as one
    let nanos = (fraction * 1e9 + 0.5).floor();
    let whole = whole as u64;
    let approx = if nanos / 1e9 == fraction { "" } else { "≈" };
    if !(1.0..1e9).contains(&nanos) {
        format!("{approx}{sign}{}", whole + u64::from(nanos >= 1e9))
    } else {
        let digits = format!("{:09}", nanos as u32);
        format!("{approx}{sign}{whole}.{}", digits.trim_end_matches('0'))
    }
}

/// A uint256 given as a JSON number (a non-negative integer up to 2^64 - 1), a decimal string or `0x` hex.
fn uint_field(name: &str, v: &Value) -> Result<U256> {
    match v {
        Value::String(s) => parse_uint256(name, s),
        Value::Number(n) => {
            json_integer(n).map(U256::from).ok_or_else(|| {
                Error::InvalidNumber {
            field: name.to_owned(),
            value: number_text(n),
            reason:
                "a JSON number must be a non-negative integer below 2^64; send larger values as a decimal \
                     or 0x string"
                    .to_owned(),
        }
            })
        }
        _ => Err(type_error(name, "a number, a decimal string or a 0x hex string")),
    }
}

/// `POST /api/quota`: a profile's quota, authenticated by a controller's signature over the profile and a
/// timestamp (see [`crate::lsp15`] for the two signing schemes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaRequest {
    /// `address`: the Universal Profile.
    pub address: Address,
    /// `address` exactly as given (the [`QuotaScheme::Text`] message contains it verbatim).
    pub address_as_given: String,
    /// `timestamp`: unix seconds.
    pub timestamp: u64,
    /// `signature`: `personal_sign` by a controller of the profile.
    pub signature: Signature,
}

impl QuotaRequest {
    /// Parses and validates a JSON body.
    ///
    /// # Errors
    /// [`Error::InvalidJson`], [`Error::UnknownField`], [`Error::MissingField`], [`Error::InvalidFieldType`],
    /// [`Error::InvalidAddress`], [`Error::InvalidNumber`], [`Error::InvalidHex`], [`Error::InvalidLength`],
    /// [`Error::InvalidSignature`].
    pub fn from_json(body: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(body).map_err(|e| Error::InvalidJson(e.to_string()))?;
        Self::from_value(&value)
    }

    /// Parses and validates an already parsed JSON value.
    ///
    /// # Errors
    /// As [`QuotaRequest::from_json`].
    pub fn from_value(value: &Value) -> Result<Self> {
        let obj = as_object(value)?;
        reject_unknown(obj, &["address", "timestamp", "signature"])?;
        let given = address_str(field(obj, "address")?)?;
        let address = parse_address("address", given)?;
        let timestamp = match field(obj, "timestamp")? {
            Value::Number(n) => json_integer(n).ok_or_else(|| Error::InvalidNumber {
                field: "timestamp".into(),
                value: number_text(n),
                reason: "expected unix seconds, a non-negative integer".into(),
            })?,
            _ => return Err(type_error("timestamp", "a number (unix seconds)")),
        };
        let signature = parse_hex("signature", str_field("signature", field(obj, "signature")?)?)?;
        Ok(Self {
            address,
            address_as_given: given.to_owned(),
            timestamp,
            signature: parse_signature("signature", &signature)?,
        })
    }

    /// Checks that the signed timestamp is within `window` seconds of `now` (both directions).
    ///
    /// # Errors
    /// [`Error::TimestampOutOfWindow`] (401).
    pub fn check_timestamp(&self, now: u64, window: u64) -> Result<()> {
        if self.timestamp.abs_diff(now) > window {
            return Err(Error::TimestampOutOfWindow {
                timestamp: self.timestamp,
                now,
                window,
            });
        }
        Ok(())
    }

    /// The signer under `scheme`.
    ///
    /// # Errors
    /// [`Error::InvalidSignature`] when no public key can be recovered.
    pub fn recover_signer(&self, scheme: QuotaScheme) -> Result<Address> {
        lsp15::recover_quota_signer(
            scheme,
            self.address,
            &self.address_as_given,
            self.timestamp,
            &self.signature,
        )
    }

    /// The signer under each scheme, [`QuotaScheme::Packed`] first. Exactly one of them is the real signer (the
    /// other is a meaningless address); accept the one with permissions on the profile.
    ///
    /// # Errors
    /// [`Error::InvalidSignature`] when no public key can be recovered.
    pub fn signer_candidates(&self) -> Result<[(QuotaScheme, Address); 2]> {
        Ok([
            (QuotaScheme::Packed, self.recover_signer(QuotaScheme::Packed)?),
            (QuotaScheme::Text, self.recover_signer(QuotaScheme::Text)?),
        ])
    }
}

/// The unit of an LSP15 quota.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum QuotaUnit {
    /// Gas (this service).
    Gas,
    /// LYX (pay-as-you-go relayers).
    Lyx,
    /// Number of transactions.
    TransactionCount,
}

/// Response of `POST /api/quota` (LSP15 shape): `{"quota", "unit", "totalQuota", "resetDate"}`.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaResponse {
    /// What is left this period.
    pub quota: u64,
    /// `"gas"` here; other LSP15 relayers may answer `"lyx"` or `"transactionCount"`.
    pub unit: QuotaUnit,
    /// The quota per period; other relayers may omit it (pay-as-you-go).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_quota: Option<u64>,
    /// When the quota resets, unix seconds (the first second of next month, UTC); may be omitted elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_date: Option<u64>,
}

impl From<&Quota> for QuotaResponse {
    fn from(q: &Quota) -> Self {
        Self {
            quota: q.remaining,
            unit: QuotaUnit::Gas,
            total_quota: Some(q.total),
            reset_date: Some(q.reset_date),
        }
    }
}

/// Response of `POST /api/execute`: LSP15's `{"transactionHash"}`, plus what this service knows when it answers.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteResponse {
    /// The relay transaction (it may later be replaced with higher fees: see [`TransactionStatus`]).
    #[cfg_attr(feature = "wasm", tsify(type = "Hex"))]
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Hash"))]
    pub transaction_hash: B256,
    /// Gas used, once mined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gas_used: Option<u64>,
    /// Where the transaction is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TransactionState>,
    /// The profile's quota after this transaction was charged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<QuotaResponse>,
}

/// What a relayed transaction does.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransactionKind {
    /// An LSP23 profile deployment.
    Deploy,
    /// An LSP25 `executeRelayCall`.
    Execute,
}

/// Where a relayed transaction is.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransactionState {
    /// Sent, not yet in a block.
    Pending,
    /// In a block, succeeded.
    Mined,
    /// In a block, reverted.
    Reverted,
    /// Superseded by another transaction with the same nonce (`replacedBy`), e.g. resent with higher fees.
    Replaced,
    /// Gone from the mempool and never mined.
    Dropped,
}

/// The status of a relayed transaction (`GET` by hash).
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionStatus {
    /// The transaction hash asked about.
    #[cfg_attr(feature = "wasm", tsify(type = "Hex"))]
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Hash"))]
    pub hash: B256,
    /// Deployment or relay call.
    pub kind: TransactionKind,
    /// The profile it concerns (EIP-55).
    #[cfg_attr(feature = "wasm", tsify(type = "Address"))]
    #[serde(with = "checksummed")]
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub profile: Address,
    /// Where it is.
    pub status: TransactionState,
    /// The transaction that replaced it, when `status` is `replaced`.
    #[cfg_attr(feature = "wasm", tsify(type = "Hex | null"))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::api::schema::Hash>"))]
    pub replaced_by: Option<B256>,
    /// The block it was mined in.
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub block_number: Option<u64>,
    /// Gas used, once mined.
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub gas_used: Option<u64>,
    /// Gas charged to the profile's quota.
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub charged: Option<u64>,
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const UP: &str = "0xBB645D97B0c7D101ca0d73131e521fe89B463BFD";
    const SIG: &str = "0x07b936951b32a04e8e5a29c1ca077c6225caec4aaa6fc510063b6f6c3e935b852ef268a1c79c9f289f99e44022995c8dd983929cea58f78b61b94c188db0749d1c";

    fn execute(tx: &Value) -> Result<ExecuteRequest> {
        ExecuteRequest::from_value(&json!({ "address": UP, "transaction": tx }), 64)
    }

    #[track_caller]
    fn code(r: Result<impl core::fmt::Debug>) -> &'static str {
        r.unwrap_err().code()
    }

    #[test]
    fn integral_floats_are_integers() {
        assert_eq!(
            json_integer(&serde_json::Number::from_f64(353_047.0).unwrap()),
            Some(353_047)
        );
        assert_eq!(json_integer(&serde_json::Number::from_f64(1.5).unwrap()), None);
    }

    #[test]
    fn numbers_in_messages_without_a_float_formatter() {
        let text = |v: Value| match v {
            Value::Number(n) => number_text(&n),
            _ => unreachable!(),
        };
        for (v, shown) in [
            (json!(7), "7"),
            (json!(u64::MAX), "18446744073709551615"),
            (json!(-3), "-3"),
            (json!(1.5), "1.5"),
            (json!(-0.25), "-0.25"),
            (json!(12.125), "12.125"),
            (json!(-2e18), "-2000000000000000000"),
            (json!(1e30), "≥ 1e19"),
            (json!(0.1), "0.1"),
            (json!(0.123_456_789_123_4), "≈0.123456789"),
            (json!(1e-12), "≈0"),
            (json!(2.9999999999), "≈3"),
            (json!(-1e300), "≤ -1e19"),
        ] {
            assert_eq!(text(v.clone()), shown, "{v}");
        }
        assert_eq!(json_integer(&serde_json::Number::from_f64(-1.0).unwrap()), None);
        assert_eq!(json_integer(&serde_json::Number::from(7u64)), Some(7));
    }

    proptest! {
        #[test]
        fn relay_request_parsers_never_panic(body in ".{0,300}") {
            let _ = ExecuteRequest::from_json(&body, 100);
            let _ = QuotaRequest::from_json(&body);
        }

        #[test]
        fn structured_relay_bodies_never_panic(
            abi in "(0x)?[0-9a-fA-Fz]{0,140}",
            sig in "(0x)?[0-9a-f]{0,134}",
            nonce in prop_oneof![
                "(0x)?[0-9a-fA-F_ -]{0,70}".prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                Just(Value::Null),
                Just(json!([1])),
            ],
            ts in prop_oneof![any::<i64>().prop_map(Value::from), any::<f64>().prop_map(Value::from), "[0-9]{0,30}".prop_map(Value::from)],
            address in "(0x)?[0-9a-fA-F]{0,42}",
            extra in proptest::option::of("[a-zA-Z]{1,12}"),
        ) {
            let mut tx = json!({ "abi": abi, "signature": sig, "nonce": nonce, "validityTimestamps": nonce });
            if let Some(k) = &extra { tx[k] = json!(1); }
            let _ = ExecuteRequest::from_value(&json!({ "address": address, "transaction": tx }), 64);
            let r = QuotaRequest::from_value(&json!({ "address": address, "timestamp": ts, "signature": sig }));
            if let Ok(q) = r {
                let _ = q.signer_candidates();
                let _ = q.check_timestamp(0, 5);
            }
        }
    }

    #[test]
    fn execute_request_forms() {
        let r = execute(&json!({ "abi": "0x7f23690c", "signature": SIG, "nonce": 7 })).unwrap();
        assert_eq!(r.call.nonce, U256::from(7));
        assert_eq!(r.call.validity_timestamps, ValidityTimestamps::ALWAYS);
        assert_eq!(r.call.value, U256::ZERO);
        for nonce in [json!("7"), json!("0x7"), json!("0x0007")] {
            let r = execute(
                &json!({ "abi": "0x7f23690c", "signature": SIG, "nonce": nonce, "validityTimestamps": "0x0" }),
            );
            assert_eq!(r.unwrap().call.nonce, U256::from(7));
        }
        let channel5 = "0x0000000000000000000000000000000500000000000000000000000000000001";
        let r = execute(&json!({ "abi": "0x7f23690c", "signature": SIG, "nonce": channel5,
            "validityTimestamps": "0x0000000000000000000000006553f1000000000000000000000000006b49d200" }))
        .unwrap();
        assert_eq!(crate::lsp25::Nonce(r.call.nonce).channel(), 5);
        assert_eq!(r.call.validity_timestamps.start(), 1_700_000_000);
        assert_eq!(r.call.validity_timestamps.end(), 1_800_000_000);
        let r = execute(&json!({ "abi": "0x7f23690c", "signature": SIG, "nonce": 0, "validityTimestamps": 1_800_000_000u64 }))
            .unwrap();
        assert_eq!(r.call.validity_timestamps.end(), 1_800_000_000);
        assert_eq!(&r.calldata()[..4], &[0x4c, 0x8a, 0x4e, 0x74]);
    }

    #[test]
    fn execute_request_errors_have_specific_codes() {
        let ok = json!({ "abi": "0x7f23690c", "signature": SIG, "nonce": 0 });
        let with = |k: &str, v: Value| {
            let mut tx = ok.clone();
            tx[k] = v;
            execute(&tx)
        };
        assert_eq!(code(ExecuteRequest::from_json("nope", 10)), "INVALID_JSON");
        assert_eq!(code(ExecuteRequest::from_json("[]", 10)), "INVALID_JSON");
        assert_eq!(
            code(ExecuteRequest::from_value(&json!({ "transaction": ok }), 64)),
            "MISSING_FIELD"
        );
        assert_eq!(
            code(ExecuteRequest::from_value(&json!({ "address": UP }), 64)),
            "MISSING_FIELD"
        );
        assert_eq!(
            code(ExecuteRequest::from_value(
                &json!({ "address": UP, "transaction": ok, "x": 1 }),
                64
            )),
            "UNKNOWN_FIELD"
        );
        let e = with("value", json!(1)).unwrap_err();
        assert_eq!(
            (e.code(), e.to_string().as_str()),
            ("UNKNOWN_FIELD", "unknown field \"transaction.value\"")
        );
        let e = execute(&json!({ "abi": "0x7f23690c", "signature": SIG })).unwrap_err();
        assert_eq!(e.to_string(), "missing field \"transaction.nonce\"");
        assert_eq!(
            code(ExecuteRequest::from_value(
                &json!({ "address": UP, "transaction": "0x" }),
                64
            )),
            "INVALID_FIELD_TYPE"
        );
        assert_eq!(
            code(ExecuteRequest::from_value(
                &json!({ "address": "0xbb645d97B0c7D101ca0d73131e521fe89B463BFD", "transaction": ok }),
                64
            )),
            "INVALID_ADDRESS"
        );
        assert_eq!(code(with("abi", json!("0x7f23"))), "INVALID_ABI");
        assert_eq!(code(with("abi", json!("7f23690c"))), "INVALID_HEX");
        assert_eq!(
            code(with("abi", json!(format!("0x{}", "00".repeat(65))))),
            "PAYLOAD_TOO_LARGE"
        );
        assert_eq!(
            with("abi", json!(format!("0x{}", "00".repeat(65))))
                .unwrap_err()
                .http_status(),
            413
        );
        assert!(with("abi", json!(format!("0x{}", "00".repeat(64)))).is_ok());
        assert_eq!(code(with("signature", json!("0x1234"))), "INVALID_LENGTH");
        assert_eq!(
            code(with("signature", json!(format!("{}02", &SIG[..SIG.len() - 2])))),
            "INVALID_SIGNATURE"
        );
        assert_eq!(code(with("signature", json!(1))), "INVALID_FIELD_TYPE");
        assert_eq!(code(with("nonce", json!(-1))), "INVALID_NUMBER");
        assert_eq!(code(with("nonce", json!(1.5))), "INVALID_NUMBER");
        assert_eq!(code(with("nonce", json!(1e30))), "INVALID_NUMBER");
        assert_eq!(code(with("nonce", json!("1e3"))), "INVALID_NUMBER");
        assert_eq!(code(with("nonce", json!(true))), "INVALID_FIELD_TYPE");
        assert_eq!(code(with("validityTimestamps", json!("0x"))), "INVALID_NUMBER");
        assert_eq!(code(with("validityTimestamps", json!({}))), "INVALID_FIELD_TYPE");
        assert!(with("validityTimestamps", Value::Null).is_ok());
    }

    #[test]
    fn quota_request() {
        let r = QuotaRequest::from_json(&format!(
            r#"{{"address":"{UP}","timestamp":1656408193,"signature":"{SIG}"}}"#
        ))
        .unwrap();
        assert_eq!(r.address_as_given, UP);
        assert_eq!(r.timestamp, 1_656_408_193);
        assert!(r.check_timestamp(1_656_408_193 + 300, 300).is_ok());
        assert!(r.check_timestamp(1_656_408_193 - 300, 300).is_ok());
        let late = r.check_timestamp(1_656_408_193 + 301, 300).unwrap_err();
        assert_eq!(
            (late.code(), late.http_status()),
            ("TIMESTAMP_OUT_OF_WINDOW", 401)
        );
        let q = |v: Value| QuotaRequest::from_value(&v);
        assert_eq!(code(q(json!({ "address": UP, "timestamp": 1 }))), "MISSING_FIELD");
        assert_eq!(
            code(q(json!({ "address": UP, "timestamp": "1", "signature": SIG }))),
            "INVALID_FIELD_TYPE"
        );
        assert_eq!(
            code(q(json!({ "address": UP, "timestamp": -1, "signature": SIG }))),
            "INVALID_NUMBER"
        );
        assert_eq!(
            code(q(
                json!({ "address": UP, "timestamp": 1, "signature": SIG, "s": 1 })
            )),
            "UNKNOWN_FIELD"
        );
        assert_eq!(
            code(q(json!({ "address": 5, "timestamp": 1, "signature": SIG }))),
            "INVALID_FIELD_TYPE"
        );
        assert_eq!(
            code(q(json!({ "address": UP, "timestamp": 1, "signature": "0x00" }))),
            "INVALID_LENGTH"
        );
    }

    #[test]
    fn relay_responses_serialize_in_lsp15_shapes() {
        let quota = QuotaResponse::from(&Quota::monthly(1_000, 1_795_341_600));
        assert_eq!(
            serde_json::to_value(&quota).unwrap(),
            json!({ "quota": 19_999_000, "unit": "gas", "totalQuota": 20_000_000, "resetDate": 1_796_083_200 })
        );
        // another relayer's pay-as-you-go answer
        let other: QuotaResponse = serde_json::from_str(r#"{"quota":5,"unit":"transactionCount"}"#).unwrap();
        assert_eq!(
            (other.unit, other.total_quota),
            (QuotaUnit::TransactionCount, None)
        );
        let hash = B256::repeat_byte(0xab);
        let bare = ExecuteResponse {
            transaction_hash: hash,
            gas_used: None,
            status: None,
            quota: None,
        };
        assert_eq!(
            serde_json::to_value(&bare).unwrap(),
            json!({ "transactionHash": hash })
        );
        let full = ExecuteResponse {
            status: Some(TransactionState::Pending),
            gas_used: Some(50_000),
            quota: Some(quota),
            ..bare
        };
        let v = serde_json::to_value(&full).unwrap();
        assert_eq!(
            (v["status"].as_str(), v["gasUsed"].as_u64()),
            (Some("pending"), Some(50_000))
        );
        assert_eq!(serde_json::from_value::<ExecuteResponse>(v).unwrap(), full);
        let status = TransactionStatus {
            hash,
            kind: TransactionKind::Execute,
            profile: UP.parse().unwrap(),
            status: TransactionState::Replaced,
            replaced_by: Some(B256::repeat_byte(1)),
            block_number: None,
            gas_used: None,
            charged: None,
        };
        let v = serde_json::to_value(&status).unwrap();
        assert_eq!(
            (v["kind"].as_str(), v["status"].as_str(), v["profile"].as_str()),
            (Some("execute"), Some("replaced"), Some(UP))
        );
        assert!(v["blockNumber"].is_null() && v["replacedBy"].is_string());
        assert_eq!(serde_json::from_value::<TransactionStatus>(v).unwrap(), status);
    }
}
