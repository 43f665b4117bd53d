//! Service errors: an HTTP status, a stable code and a message, rendered as `{"error":{"code","message"}}`.
//! Messages never contain secrets (keys, tokens, the relayer key).

use profile_relayer::api::ErrorBody;
use worker::Response;

use crate::rpc::RpcError;

/// Declares [`Code`]: every variant with its HTTP status and wire string, in one place.
macro_rules! codes {
    ($($(#[doc = $doc:literal])* $variant:ident = ($status:literal, $code:literal),)*) => {
        /// Every error code the Worker answers with itself (core errors keep the core's codes: see
        /// [`profile_relayer::Error::ALL_CODES`]). The OpenAPI document, the README's table and the npm package's
        /// `ServiceErrorCode` union are checked against this list by tests.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];

            /// The HTTP status answered with this code.
            #[must_use]
            pub const fn status(self) -> u16 {
                match self {
                    $(Self::$variant => $status,)*
                }
            }

            /// What the code means (its documentation), for the README's table.
            #[cfg(test)]
            fn meaning(self) -> &'static str {
                match self {
                    $(Self::$variant => concat!($($doc),*).trim_start(),)*
                }
            }

            /// The code as sent on the wire.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $code,)*
                }
            }
        }
    };
}

codes! {
    /// The body is not JSON, or not the JSON object the route takes.
    InvalidJson = (400, "INVALID_JSON"),
    /// The body cannot be read as the route's format.
    InvalidBody = (400, "INVALID_BODY"),
    /// A required field is absent.
    MissingField = (400, "MISSING_FIELD"),
    /// A field the route does not take.
    UnknownField = (400, "UNKNOWN_FIELD"),
    /// A field has the wrong JSON type.
    InvalidFieldType = (400, "INVALID_FIELD_TYPE"),
    /// A path or query parameter is malformed.
    InvalidParameter = (400, "INVALID_PARAMETER"),
    /// An upload is not well-formed `multipart/form-data`.
    InvalidMultipart = (400, "INVALID_MULTIPART"),
    /// The request's `Content-Type` is not one the route takes.
    UnsupportedContentType = (400, "UNSUPPORTED_CONTENT_TYPE"),
    /// The chain id is not served by this deployment.
    UnknownChain = (400, "UNKNOWN_CHAIN"),
    /// `lsp3Profile` / `postDeploymentCallData` above `MAX_DEPLOY_DATA_BYTES`.
    DeployDataTooLarge = (400, "DEPLOY_DATA_TOO_LARGE"),
    /// The transaction needs more gas than `MAX_TRANSACTION_GAS`.
    GasLimitTooHigh = (400, "GAS_LIMIT_TOO_HIGH"),
    /// The profile's owner is not an LSP6 Key Manager.
    NotAKeyManager = (400, "NOT_A_KEY_MANAGER"),
    /// The LSP25 nonce is not the Key Manager's next one for this channel.
    InvalidRelayNonce = (400, "INVALID_RELAY_NONCE"),
    /// The relay call reverts (the decoded reason is in the message).
    RelayCallReverted = (400, "RELAY_CALL_REVERTED"),
    /// An Algolia `filters` / `facetFilters` / `numericFilters` expression cannot be parsed or is too large.
    InvalidFilters = (400, "INVALID_FILTERS"),
    /// A browse `cursor` this API did not answer.
    InvalidCursor = (400, "INVALID_CURSOR"),
    /// A multi-index search with more queries than the limit.
    TooManyQueries = (400, "TOO_MANY_QUERIES"),
    /// A multi-index query of a type not implemented (facet-value search).
    UnsupportedQueryType = (400, "UNSUPPORTED_QUERY_TYPE"),
    /// No `Authorization: Bearer` key.
    MissingApiKey = (401, "MISSING_API_KEY"),
    /// The key is unknown.
    InvalidApiKey = (401, "INVALID_API_KEY"),
    /// The upload token (the wallet's HS256 JWT) is malformed, forged, expired or from an issuer not allowed.
    InvalidUploadToken = (401, "INVALID_UPLOAD_TOKEN"),
    /// The admin token is missing or wrong.
    InvalidAdminToken = (401, "INVALID_ADMIN_TOKEN"),
    /// The quota request's signer controls no permission on the profile.
    NotAController = (401, "NOT_A_CONTROLLER"),
    /// The key was revoked.
    ApiKeyRevoked = (403, "API_KEY_REVOKED"),
    /// The key lacks the scope the route needs.
    InsufficientScope = (403, "INSUFFICIENT_SCOPE"),
    /// The signer lacks the permission the relay call needs.
    NotAuthorised = (403, "NOT_AUTHORISED"),
    /// The contract claims LSP0 but its code is no known Universal Profile (README: Genuine profiles only).
    ProfileCodeUnknown = (403, "UNKNOWN_PROFILE_CODE"),
    /// The profile's owner is a contract whose code is no known LSP6 KeyManager.
    KeyManagerCodeUnknown = (403, "UNKNOWN_KEY_MANAGER_CODE"),
    /// The profile's KeyManager controls another address (`target()`).
    KeyManagerTargetMismatch = (403, "KEY_MANAGER_TARGET_MISMATCH"),
    /// No such route or resource.
    NotFound = (404, "NOT_FOUND"),
    /// No API key with this id.
    ApiKeyNotFound = (404, "API_KEY_NOT_FOUND"),
    /// No gateway and no upload has this content.
    ContentNotFound = (404, "CONTENT_NOT_FOUND"),
    /// No search index with this name.
    IndexNotFound = (404, "INDEX_NOT_FOUND"),
    /// The address holds no LSP0 Universal Profile.
    NotAUniversalProfile = (404, "NOT_A_UNIVERSAL_PROFILE"),
    /// The profile is not registered or indexed here.
    ProfileNotFound = (404, "PROFILE_NOT_FOUND"),
    /// Relayed transactions need a registered profile.
    ProfileNotRegistered = (404, "PROFILE_NOT_REGISTERED"),
    /// No such token id on the asset.
    TokenNotFound = (404, "TOKEN_NOT_FOUND"),
    /// No record of this transaction hash.
    TransactionNotFound = (404, "TRANSACTION_NOT_FOUND"),
    /// The path exists for other methods (listed in `Allow`).
    MethodNotAllowed = (405, "METHOD_NOT_ALLOWED"),
    /// The request body is larger than the route accepts.
    BodyTooLarge = (413, "BODY_TOO_LARGE"),
    /// `/image` was asked to resize an image past its decoding bounds (served without `width`).
    ImageTooLarge = (413, "IMAGE_TOO_LARGE"),
    /// The `Range` lies outside the content.
    RangeNotSatisfiable = (416, "RANGE_NOT_SATISFIABLE"),
    /// `/image` was asked to resize bytes that do not decode as the image format they start like.
    InvalidImage = (422, "INVALID_IMAGE"),
    /// Too many requests; retry after `Retry-After` seconds.
    RateLimited = (429, "RATE_LIMITED"),
    /// The profile's monthly gas quota is used up.
    QuotaExceeded = (429, "QUOTA_EXCEEDED"),
    /// The API key's monthly deploy gas budget is used up.
    GasBudgetExceeded = (429, "GAS_BUDGET_EXCEEDED"),
    /// A fault of the service (logged, never detailed in the answer).
    InternalError = (500, "INTERNAL_ERROR"),
    /// The deployment is misconfigured (names the variable, never a secret).
    ConfigurationError = (500, "CONFIGURATION_ERROR"),
    /// The chain's RPC node answered an error or nonsense.
    RpcError = (502, "RPC_ERROR"),
    /// A contract's answer was larger than `RPC_MAX_RESPONSE_BYTES` (it was not read further).
    RpcAnswerTooLarge = (502, "RPC_ANSWER_TOO_LARGE"),
    /// The IPFS gateways or a metadata server failed.
    GatewayError = (502, "GATEWAY_ERROR"),
    /// Algolia answered an error.
    SearchBackendError = (502, "SEARCH_BACKEND_ERROR"),
    /// The deployment reverts in simulation; nothing was sent.
    DeploymentWouldRevert = (502, "DEPLOYMENT_WOULD_REVERT"),
    /// The deployment transaction was mined and reverted.
    DeploymentReverted = (502, "DEPLOYMENT_REVERTED"),
    /// The deployed address differs from the prediction.
    DeploymentMismatch = (502, "DEPLOYMENT_MISMATCH"),
    /// The chain's RPC node cannot be reached.
    RpcUnavailable = (503, "RPC_UNAVAILABLE"),
    /// The network's fees are above `MAX_FEE_PER_GAS`.
    FeeTooHigh = (503, "FEE_TOO_HIGH"),
    /// The relayer's balance cannot pay for the transaction.
    InsufficientFunds = (503, "INSUFFICIENT_FUNDS"),
    /// The relayer reached `MAX_GAS_PER_DAY`.
    DailyGasCeiling = (503, "DAILY_GAS_CEILING"),
    /// The IPFS gateways did not answer in time.
    GatewayTimeout = (504, "GATEWAY_TIMEOUT"),
}

/// An error answered to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// Stable code: a [`Code`] or a core error's code.
    pub code: &'static str,
    /// Human-readable message.
    pub message: String,
    /// `Retry-After` seconds, for 429 and 503.
    pub retry_after: Option<u64>,
}

/// `code` as the static string of a [`Code`] or a core error code; `None` when neither side declares it.
fn known_code(code: &str) -> Option<&'static str> {
    Code::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(profile_relayer::Error::ALL_CODES.iter().copied())
        .find(|c| *c == code)
}

/// Result alias of the service.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A new error, with the code's status.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            status: code.status(),
            code: code.as_str(),
            message: message.into(),
            retry_after: None,
        }
    }

    /// An error read back from a JSON error body (a Durable Object's answer). A code neither side declares
    /// becomes `INTERNAL_ERROR`.
    pub fn from_wire(status: u16, code: &str, message: String) -> Self {
        match known_code(code) {
            Some(code) => Self {
                status,
                code,
                message,
                retry_after: None,
            },
            None => Self::internal(format!("unknown error code {code} ({status}): {message}")),
        }
    }

    /// Whether this error has `code`.
    #[must_use]
    pub fn is(&self, code: Code) -> bool {
        self.code == code.as_str()
    }

    /// This error with `Retry-After: secs`.
    #[must_use]
    pub const fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    /// 404 `NOT_FOUND`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(Code::NotFound, message)
    }

    /// 500 `INTERNAL_ERROR`; the detail is logged, not answered.
    pub fn internal(detail: impl core::fmt::Display) -> Self {
        worker::console_error!("internal error: {detail}");
        Self::new(Code::InternalError, "internal error")
    }

    /// 500 `CONFIGURATION_ERROR`: the deployment is misconfigured (never names a secret's value).
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(Code::ConfigurationError, message)
    }

    /// The JSON response.
    pub fn into_response(self) -> Response {
        let body = ErrorBody::new(self.code, self.message);
        // serialising two strings cannot fail; the builder's `fixed` cannot fail either
        let json = serde_json::to_vec(&body).unwrap_or_default();
        let headers = worker::Headers::new();
        let _ = headers.set("content-type", "application/json");
        let mut res = worker::ResponseBuilder::new()
            .with_status(self.status)
            .with_headers(headers)
            .fixed(json);
        if let Some(secs) = self.retry_after {
            let _ = res.headers_mut().set("retry-after", &secs.to_string());
        }
        res
    }
}

impl From<profile_relayer::Error> for ApiError {
    fn from(e: profile_relayer::Error) -> Self {
        Self {
            status: e.http_status(),
            code: e.code(),
            message: e.to_string(),
            retry_after: None,
        }
    }
}

impl From<worker::Error> for ApiError {
    fn from(e: worker::Error) -> Self {
        Self::internal(e)
    }
}

impl From<RpcError> for ApiError {
    fn from(e: RpcError) -> Self {
        match e {
            RpcError::Unavailable(detail) => {
                worker::console_warn!("rpc unavailable: {detail}");
                let mut err = Self::new(
                    Code::RpcUnavailable,
                    "the chain's RPC node cannot be reached; retry later",
                );
                err.retry_after = Some(5);
                err
            }
            RpcError::Node { code, message, .. } => Self::new(
                Code::RpcError,
                format!("the RPC node answered an error ({code}): {message}"),
            ),
            RpcError::Decode(detail) => Self::new(Code::RpcError, format!("unexpected RPC answer: {detail}")),
            RpcError::TooLarge(detail) => Self::new(Code::RpcAnswerTooLarge, detail),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;

    fn worker_codes() -> BTreeSet<&'static str> {
        Code::ALL.iter().map(|c| c.as_str()).collect()
    }

    #[test]
    fn codes_are_unique_screaming_snake_case_with_an_error_status() {
        assert_eq!(worker_codes().len(), Code::ALL.len());
        for code in Code::ALL {
            let s = code.as_str();
            assert!(s.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'), "{s}");
            assert!((400..600).contains(&code.status()), "{s}");
            assert!(!code.meaning().is_empty(), "{s} has no documentation");
        }
    }

    #[test]
    fn wire_errors_keep_known_codes_and_hide_unknown_ones() {
        let e = ApiError::from_wire(429, "QUOTA_EXCEEDED", "m".into());
        assert_eq!((e.status, e.code), (429, "QUOTA_EXCEEDED"));
        let e = ApiError::from_wire(400, "INVALID_HEX", "m".into());
        assert_eq!(e.code, "INVALID_HEX");
        assert_eq!(known_code("TEAPOT"), None);
        assert_eq!(known_code("RATE_LIMITED"), Some("RATE_LIMITED"));
    }

    /// The OpenAPI document's error-code enum is exactly the Worker's codes and the core's.
    #[test]
    fn openapi_error_code_enum_is_the_code_list() {
        let doc: Value = serde_json::from_str(crate::plumbing::OPENAPI).unwrap();
        let listed: BTreeSet<&str> = doc
            .pointer("/components/schemas/Error/properties/error/properties/code/enum")
            .and_then(Value::as_array)
            .expect("Error.code has an enum")
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut expected = worker_codes();
        expected.extend(profile_relayer::Error::ALL_CODES.iter().copied());
        assert_eq!(listed, expected, "update worker/openapi.json's Error.code enum");
    }

    /// The README's table of service error codes, as [`Code`] makes it.
    fn readme_table() -> String {
        let mut table = String::from("| code | status | meaning |\n|---|---|---|\n");
        for code in Code::ALL {
            table.push_str(&format!(
                "| `{}` | {} | {} |\n",
                code.as_str(),
                code.status(),
                code.meaning()
            ));
        }
        table
    }

    #[test]
    fn readme_lists_every_service_code_with_its_status() {
        let readme = include_str!("../../README.md");
        let table = readme_table();
        assert!(
            readme.contains(&table),
            "README.md's service error table is out of date; it must contain:\n{table}"
        );
    }

    /// The npm package's `ServiceErrorCode` union names every code the service answers with (the core's are in
    /// `ProfileRelayerErrorCode`) and nothing the service does not have, besides the client's own codes.
    #[test]
    fn typescript_union_matches_the_codes() {
        let source = include_str!("../../src/wasm/client.rs");
        let start = source
            .find("export type ServiceErrorCode =")
            .expect("the union is declared");
        let rest = &source[start..];
        let union = &rest[..rest.find(';').unwrap()];
        let listed: BTreeSet<&str> = union.split('"').skip(1).step_by(2).collect();
        let client_own: BTreeSet<&str> = [
            "NETWORK_ERROR",
            "HTTP_ERROR",
            "PREDICTION_MISMATCH",
            "UPLOAD_MISMATCH",
            "CONTENT_MISMATCH",
            "INVALID_RESPONSE",
            "SIGNER_ERROR",
        ]
        .into();
        let core: BTreeSet<&str> = profile_relayer::Error::ALL_CODES.iter().copied().collect();
        let expected: BTreeSet<&str> = worker_codes()
            .difference(&core)
            .copied()
            .chain(client_own.iter().copied())
            .collect();
        assert_eq!(listed, expected, "update ServiceErrorCode in src/wasm/client.rs");
    }
}
