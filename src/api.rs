//! Wire types of the relayer API, shared by the Worker and the clients.
//!
//! Requests are parsed by hand from JSON so that every problem gets its own error code (unknown field, missing
//! field, mixed forms, bad hex, wrong length, bad checksum). Responses are plain serde structs in camelCase.
//! The LSP15 relay routes (`/api/execute`, `/api/quota`) are defined in the `relay` submodule and re-exported here.

pub mod admin;
pub mod algolia;
mod calendar;
pub mod codes;
pub mod records;
mod relay;
#[cfg(feature = "schema")]
pub mod schema;
pub mod shape;

pub use self::calendar::{iso8601, month_start, next_month_start};

pub use self::relay::{
    DEFAULT_MAX_PAYLOAD_BYTES, ExecuteRequest, ExecuteResponse, QUOTA_TIMESTAMP_WINDOW_SECS, QuotaRequest,
    QuotaResponse, QuotaUnit, TransactionKind, TransactionState, TransactionStatus,
};

use alloy_primitives::{Address, B256};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{
    Error, Result,
    hex::{parse_address, parse_fixed, parse_hex},
    lsp2::decode_verifiable_uri,
    lsp23::check_post_deployment_calldata,
};

/// The monthly free gas quota of every registered profile.
pub const MONTHLY_GAS_QUOTA: u64 = 20_000_000;

/// `POST /api/universal-profile`: exactly one of the two forms.
///
/// Parsed by hand ([`DeployRequest::from_json`]); the `serde` attributes only shape its TypeScript declaration.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), serde(untagged))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeployRequest {
    /// Form 1: the relayer builds the profile data and picks a random salt.
    Controllers {
        /// `lsp6ControllerAddress`: the controllers, each given the default controller permissions.
        #[cfg_attr(
            feature = "wasm",
            serde(rename = "lsp6ControllerAddress"),
            tsify(type = "Address[]")
        )]
        controllers: Vec<Address>,
        /// `lsp3Profile`: a VerifiableURI (optional).
        #[cfg_attr(
            feature = "wasm",
            serde(rename = "lsp3Profile"),
            tsify(optional, type = "Hex")
        )]
        lsp3_profile: Option<Vec<u8>>,
    },
    /// Form 2: the client chose the salt and the data, and can predict the address.
    Salt {
        /// `salt`: 32 bytes.
        #[cfg_attr(feature = "wasm", tsify(type = "Hex"))]
        salt: B256,
        /// `postDeploymentCallData`: `abi.encode(bytes32[] keys, bytes[] values)`.
        #[cfg_attr(
            feature = "wasm",
            serde(rename = "postDeploymentCallData"),
            tsify(type = "Hex")
        )]
        post_deployment_calldata: Vec<u8>,
    },
}

const FORM1: [&str; 2] = ["lsp6ControllerAddress", "lsp3Profile"];
const FORM2: [&str; 2] = ["salt", "postDeploymentCallData"];

impl DeployRequest {
    /// Parses and validates a JSON body.
    ///
    /// # Errors
    /// [`Error::InvalidJson`], [`Error::UnknownField`], [`Error::InvalidDeployForm`], [`Error::MissingField`],
    /// [`Error::InvalidFieldType`], and the hex / address / VerifiableURI / ABI errors of the fields.
    pub fn from_json(body: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(body).map_err(|e| Error::InvalidJson(e.to_string()))?;
        Self::from_value(&value)
    }

    /// Parses and validates an already parsed JSON value.
    ///
    /// # Errors
    /// As [`DeployRequest::from_json`].
    pub fn from_value(value: &Value) -> Result<Self> {
        let obj = as_object(value)?;
        reject_unknown(obj, &[&FORM1[..], &FORM2[..]].concat())?;
        let has1 = FORM1.iter().any(|k| obj.contains_key(*k));
        let has2 = FORM2.iter().any(|k| obj.contains_key(*k));
        match (has1, has2) {
            (true, true) => Err(Error::InvalidDeployForm(
                "give either lsp6ControllerAddress (+ lsp3Profile) or salt + postDeploymentCallData, not both".into(),
            )),
            (false, false) => Err(Error::InvalidDeployForm(
                "expected lsp6ControllerAddress (+ lsp3Profile) or salt + postDeploymentCallData".into(),
            )),
            (true, false) => {
                let list = field(obj, "lsp6ControllerAddress")?
                    .as_array()
                    .ok_or_else(|| type_error("lsp6ControllerAddress", "an array of addresses"))?;
                let controllers = list
                    .iter()
                    .map(|v| {
                        let s = v.as_str().ok_or_else(|| type_error("lsp6ControllerAddress", "an array of addresses"))?;
                        parse_address("lsp6ControllerAddress", s)
                    })
                    .collect::<Result<Vec<_>>>()?;
                let lsp3_profile = match obj.get("lsp3Profile") {
                    None | Some(Value::Null) => None,
                    Some(v) => {
                        let bytes = parse_hex("lsp3Profile", str_field("lsp3Profile", v)?)?;
                        decode_verifiable_uri(&bytes)?;
                        Some(bytes)
                    }
                };
                Ok(Self::Controllers { controllers, lsp3_profile })
            }
            (false, true) => {
                let salt = parse_fixed::<32>("salt", str_field("salt", field(obj, "salt")?)?)?;
                let calldata = parse_hex(
                    "postDeploymentCallData",
                    str_field("postDeploymentCallData", field(obj, "postDeploymentCallData")?)?,
                )?;
                check_post_deployment_calldata(&calldata)?;
                Ok(Self::Salt { salt, post_deployment_calldata: calldata })
            }
        }
    }
}

/// `POST /api/universal-profile/register`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterRequest {
    /// The profile to register.
    pub universal_profile_address: Address,
}

impl RegisterRequest {
    /// Parses and validates a JSON body.
    ///
    /// # Errors
    /// [`Error::InvalidJson`], [`Error::UnknownField`], [`Error::MissingField`], [`Error::InvalidFieldType`],
    /// [`Error::InvalidAddress`].
    pub fn from_json(body: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(body).map_err(|e| Error::InvalidJson(e.to_string()))?;
        let obj = as_object(&value)?;
        reject_unknown(obj, &["universalProfileAddress"])?;
        let s = str_field("universalProfileAddress", field(obj, "universalProfileAddress")?)?;
        Ok(Self {
            universal_profile_address: parse_address("universalProfileAddress", s)?,
        })
    }
}

/// Response to a deployment.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeployResponse {
    /// The profile (EIP-55).
    #[serde(with = "checksummed")]
    #[cfg_attr(feature = "wasm", tsify(type = "Address"))]
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub universal_profile_address: Address,
    /// Its KeyManager (EIP-55).
    #[serde(with = "checksummed")]
    #[cfg_attr(feature = "wasm", tsify(type = "Address"))]
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub key_manager_address: Address,
    /// The deployment transaction; `null` when the profile already existed and nothing was sent.
    #[cfg_attr(feature = "wasm", tsify(type = "Hex | null"))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::api::schema::Hash>"))]
    pub transaction_hash: Option<B256>,
}

/// A profile's gas quota for the current calendar month (UTC).
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Quota {
    /// Gas per month.
    pub total: u64,
    /// Gas used this month.
    pub used: u64,
    /// Gas left this month.
    pub remaining: u64,
    /// Always `"gas"`.
    #[cfg_attr(feature = "wasm", tsify(type = "\"gas\""))]
    #[cfg_attr(feature = "schema", schemars(extend("const" = "gas")))]
    pub unit: String,
    /// When the quota resets: the first second of next month, unix seconds.
    pub reset_date: u64,
}

impl Quota {
    /// The quota at `now` (unix seconds) after `used` gas this month.
    #[must_use]
    pub fn monthly(used: u64, now: u64) -> Self {
        Self::with_total(MONTHLY_GAS_QUOTA, used, now)
    }

    /// The quota at `now` of a deployment granting `total` gas a month, after `used` gas this month.
    #[must_use]
    pub fn with_total(total: u64, used: u64, now: u64) -> Self {
        Self {
            total,
            used,
            remaining: total.saturating_sub(used),
            unit: "gas".to_owned(),
            reset_date: next_month_start(now),
        }
    }
}

/// Response to a registration.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisterResponse {
    /// The registered profile (EIP-55).
    #[serde(with = "checksummed")]
    #[cfg_attr(feature = "wasm", tsify(type = "Address"))]
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub universal_profile_address: Address,
    /// Whether this call registered it (`false`: it was registered before).
    pub newly_registered: bool,
    /// The profile's quota.
    pub quota: Quota,
}

/// Response to `GET /api/universal-profile/{address}`: deployment, registration and quota of a profile.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileStatus {
    /// The profile (EIP-55).
    #[serde(with = "checksummed")]
    #[cfg_attr(feature = "wasm", tsify(type = "Address"))]
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub universal_profile_address: Address,
    /// Whether it has code on chain.
    pub deployed: bool,
    /// Whether it is registered for the monthly gas quota.
    pub registered: bool,
    /// A deployment this relayer sent that is not mined yet.
    #[cfg_attr(feature = "wasm", tsify(type = "Hex | null"))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::api::schema::Hash>"))]
    pub pending_transaction: Option<B256>,
    /// The transaction that deployed it, when this relayer did.
    #[cfg_attr(feature = "wasm", tsify(type = "Hex | null"))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::api::schema::Hash>"))]
    pub deployment_transaction: Option<B256>,
    /// When it was registered, unix seconds.
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub registered_at: Option<u64>,
    /// Its quota, when registered.
    #[cfg_attr(feature = "wasm", tsify(type = "Quota | null"))]
    pub quota: Option<Quota>,
}

/// One index's answer to a search (Algolia's shape): `GET /v1/:chainId/search` answers one per index.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// The records found, best first (stored as the indexer wrote them; see [`records`]).
    #[cfg_attr(feature = "wasm", tsify(type = "IndexRecord[]"))]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<crate::api::schema::Record>"))]
    pub hits: Vec<Value>,
    /// Records matching in all.
    pub nb_hits: u64,
    /// This page, from 0.
    pub page: u64,
    /// Pages in all.
    pub nb_pages: u64,
    /// Records per page.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 100)))]
    pub hits_per_page: u64,
    /// Time the search took, milliseconds.
    #[serde(rename = "processingTimeMS")]
    pub processing_time_ms: u64,
    /// The query text.
    pub query: String,
    /// The query as Algolia's URL parameters.
    pub params: String,
    /// The index searched.
    pub index: String,
}

/// Response to `GET /v1/:chainId/search`: the profiles index's answer and the assets index's.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchBoth {
    /// Profiles found.
    pub profiles: SearchResult,
    /// Assets and LSP8 tokens found.
    pub assets: SearchResult,
}

/// Response to `POST /api/v0/add`: Kubo's fields (`Name`, `Hash`, `Size` as a decimal string) and Pinata's
/// (`IpfsHash`, `PinSize`, `Timestamp`), so uploaders written against either read it.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Upload"))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadAnswer {
    /// The file name of the part (`file` for a plain field).
    #[serde(rename = "Name")]
    pub name: String,
    /// The CID (CIDv1, raw codec, sha2-256, base32).
    #[serde(rename = "Hash")]
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^bafkrei[a-z2-7]{52}$")))]
    pub hash: String,
    /// Bytes, as a decimal string (like Kubo).
    #[serde(rename = "Size")]
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^(0|[1-9][0-9]*)$")))]
    pub size: String,
    /// The same CID as `Hash` (like Pinata's `pinFileToIPFS`).
    #[serde(rename = "IpfsHash")]
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^bafkrei[a-z2-7]{52}$")))]
    pub ipfs_hash: String,
    /// Bytes, as a number (like Pinata).
    #[serde(rename = "PinSize")]
    pub pin_size: u64,
    /// When the upload was answered, ISO 8601 in UTC (like Pinata).
    #[serde(rename = "Timestamp")]
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::DateTime"))]
    pub timestamp: String,
}

impl UploadAnswer {
    /// The answer for `size` bytes stored under `cid`, at `timestamp`.
    #[must_use]
    pub fn new(name: String, cid: String, size: u64, timestamp: String) -> Self {
        Self {
            name,
            size: size.to_string(),
            ipfs_hash: cid.clone(),
            hash: cid,
            pin_size: size,
            timestamp,
        }
    }
}

/// `{"error": {"code": …, "message": …}}`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Error"))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error.
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::api::schema::service_error")
    )]
    pub error: ErrorDetail,
}

/// The inner object of [`ErrorBody`].
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Stable machine-readable code.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^[A-Z0-9_]+$")))]
    pub code: String,
    /// Human-readable explanation.
    pub message: String,
}

impl ErrorBody {
    /// A body with `code` and `message`.
    #[must_use]
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error: ErrorDetail {
                code: code.into(),
                message: message.into(),
            },
        }
    }
}

impl From<&Error> for ErrorBody {
    fn from(e: &Error) -> Self {
        Self::new(e.code(), e.to_string())
    }
}

fn as_object(value: &Value) -> Result<&Map<String, Value>> {
    value
        .as_object()
        .ok_or_else(|| Error::InvalidJson("the body must be a JSON object".into()))
}

fn reject_unknown(obj: &Map<String, Value>, known: &[&str]) -> Result<()> {
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(Error::UnknownField(k.clone())),
        None => Ok(()),
    }
}

fn field<'a>(obj: &'a Map<String, Value>, name: &str) -> Result<&'a Value> {
    match obj.get(name) {
        None | Some(Value::Null) => Err(Error::MissingField(name.to_owned())),
        Some(v) => Ok(v),
    }
}

fn str_field<'a>(name: &str, v: &'a Value) -> Result<&'a str> {
    v.as_str()
        .ok_or_else(|| type_error(name, "a 0x-prefixed hex string"))
}

fn type_error(field: &str, expected: &str) -> Error {
    Error::InvalidFieldType {
        field: field.to_owned(),
        expected: expected.to_owned(),
    }
}

mod checksummed {
    use alloy_primitives::Address;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(a: &Address, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&a.to_checksum(None))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Address, D::Error> {
        let s = String::deserialize(d)?;
        crate::hex::parse_address("address", &s).map_err(serde::de::Error::custom)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // request bodies come from the internet: no input may panic
        #[test]
        fn request_parsers_never_panic(body in ".{0,200}") {
            let _ = DeployRequest::from_json(&body);
            let _ = RegisterRequest::from_json(&body);
            let _ = crate::lsp3::Lsp3ProfileJson::from_slice(body.as_bytes());
            let _ = crate::lsp4::Lsp4MetadataJson::from_slice(body.as_bytes());
        }

        #[test]
        fn structured_bodies_never_panic(
            salt in "(0x)?[0-9a-fA-Fz]{0,70}",
            calldata in "(0x)?[0-9a-f]{0,300}",
            controllers in proptest::collection::vec("(0x)?[0-9a-fA-F]{0,42}", 0..3),
            extra in proptest::option::of("[a-zA-Z]{1,12}"),
        ) {
            let mut obj = serde_json::json!({ "salt": salt, "postDeploymentCallData": calldata });
            if let Some(k) = &extra { obj[k] = serde_json::json!(1); }
            let _ = DeployRequest::from_value(&obj);
            let _ = DeployRequest::from_value(&serde_json::json!({ "lsp6ControllerAddress": controllers, "lsp3Profile": calldata }));
        }
    }

    const CALLDATA: &str = "0x0000000000000000000000000000000000000000000000000000000000000040000000000000000000000000000000000000000000000000000000000000006000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000";
    const SALT: &str = "0x1111111111111111111111111111111111111111111111111111111111111111";

    fn code(body: &str) -> &'static str {
        DeployRequest::from_json(body).unwrap_err().code()
    }

    #[test]
    fn deploy_forms() {
        let f1 = DeployRequest::from_json(
            r#"{"lsp6ControllerAddress":["0xcafecafecafecafecafecafecafecafecafecafe"]}"#,
        )
        .unwrap();
        assert!(
            matches!(f1, DeployRequest::Controllers { ref controllers, lsp3_profile: None } if controllers.len() == 1)
        );
        let f2 = DeployRequest::from_json(&format!(
            r#"{{"salt":"{SALT}","postDeploymentCallData":"{CALLDATA}"}}"#
        ))
        .unwrap();
        assert!(matches!(f2, DeployRequest::Salt { .. }));
    }

    #[test]
    fn deploy_errors_have_specific_codes() {
        assert_eq!(code("not json"), "INVALID_JSON");
        assert_eq!(code("[]"), "INVALID_JSON");
        assert_eq!(code("{}"), "INVALID_DEPLOY_FORM");
        assert_eq!(code(r#"{"foo":1}"#), "UNKNOWN_FIELD");
        assert_eq!(
            code(&format!(r#"{{"salt":"{SALT}","lsp6ControllerAddress":[]}}"#)),
            "INVALID_DEPLOY_FORM"
        );
        assert_eq!(code(&format!(r#"{{"salt":"{SALT}"}}"#)), "MISSING_FIELD");
        assert_eq!(
            code(r#"{"salt":"0x11","postDeploymentCallData":"0x"}"#),
            "INVALID_LENGTH"
        );
        assert_eq!(
            code(&format!(
                r#"{{"salt":"{SALT}","postDeploymentCallData":"0xdeadbeef"}}"#
            )),
            "INVALID_ABI"
        );
        assert_eq!(
            code(&format!(r#"{{"salt":"{SALT}","postDeploymentCallData":"0xzz"}}"#)),
            "INVALID_HEX"
        );
        assert_eq!(
            code(&format!(r#"{{"salt":5,"postDeploymentCallData":"{CALLDATA}"}}"#)),
            "INVALID_FIELD_TYPE"
        );
        assert_eq!(
            code(r#"{"lsp6ControllerAddress":"0xcafecafecafecafecafecafecafecafecafecafe"}"#),
            "INVALID_FIELD_TYPE"
        );
        assert_eq!(code(r#"{"lsp6ControllerAddress":["0xcafe"]}"#), "INVALID_ADDRESS");
        assert_eq!(
            code(
                r#"{"lsp6ControllerAddress":["0xcafecafecafecafecafecafecafecafecafecafe"],"lsp3Profile":"0x0000"}"#
            ),
            "TRUNCATED_VERIFIABLE_URI"
        );
        assert_eq!(code(r#"{"lsp3Profile":"0x0000"}"#), "MISSING_FIELD");
    }

    #[test]
    fn register_request() {
        let r = RegisterRequest::from_json(
            r#"{"universalProfileAddress":"0xcafecafecafecafecafecafecafecafecafecafe"}"#,
        )
        .unwrap();
        assert_eq!(
            format!("0x{:x}", r.universal_profile_address),
            "0xcafecafecafecafecafecafecafecafecafecafe"
        );
        assert_eq!(
            RegisterRequest::from_json("{}").unwrap_err().code(),
            "MISSING_FIELD"
        );
        assert_eq!(
            RegisterRequest::from_json(r#"{"universalProfileAddress":"0x1","x":1}"#)
                .unwrap_err()
                .code(),
            "UNKNOWN_FIELD"
        );
    }

    #[test]
    fn responses_serialize_in_camel_case_with_checksums() {
        let up: Address = "0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC".parse().unwrap();
        let r = DeployResponse {
            universal_profile_address: up,
            key_manager_address: up,
            transaction_hash: None,
        };
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(
            json,
            r#"{"universalProfileAddress":"0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC","keyManagerAddress":"0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC","transactionHash":null}"#
        );
        assert_eq!(serde_json::from_str::<DeployResponse>(&json).unwrap(), r);
        let body = serde_json::to_string(&ErrorBody::from(&Error::MissingField("salt".into()))).unwrap();
        assert_eq!(
            body,
            r#"{"error":{"code":"MISSING_FIELD","message":"missing field \"salt\""}}"#
        );
    }

    #[test]
    fn monthly_quota() {
        let q = Quota::monthly(25_000_000, 1_795_341_600);
        assert_eq!((q.total, q.remaining, q.unit.as_str()), (20_000_000, 0, "gas"));
    }
}
