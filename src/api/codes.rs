//! The service's error codes: every code the Worker answers with itself, with its HTTP status and meaning, declared
//! once here (the wire module, shared with the clients). [`ServiceCode::ALL`] drives the Worker's answers and the
//! checks of the OpenAPI document and docs/relayer-api.md; [`SERVICE_CODE_TS`] is the npm package's `ServiceErrorCode`
//! union, generated with the clients' own codes ([`CLIENT_CODES`]). Core errors keep the core's codes
//! ([`crate::Error::ALL_CODES`]).

/// Declares [`ServiceCode`] and [`SERVICE_CODE_TS`] from one table of `Variant = (status, "CODE")` with a doc each.
macro_rules! service_codes {
    (client: [$($client:literal),* $(,)?]; $($(#[doc = $doc:literal])* $variant:ident = ($status:literal, $code:literal),)*) => {
        /// An error code the service answers with.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ServiceCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ServiceCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];

            /// The HTTP status answered with this code.
            #[must_use]
            pub const fn status(self) -> u16 {
                match self {
                    $(Self::$variant => $status,)*
                }
            }

            /// What the code means (its documentation), for the table of docs/relayer-api.md.
            #[must_use]
            pub fn meaning(self) -> &'static str {
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

        /// Codes the clients of the npm package produce themselves (no service answered them).
        pub const CLIENT_CODES: &[&str] = &[$($client,)*];

        /// The `ServiceErrorCode` union of the package's entries without clients (`profile-relayer/lite`,
        /// `/recover`): the clients' own codes, so that `code` keeps one type in every entry.
        pub const CLIENT_CODE_TS: &str = concat!(
            "/** Codes only the clients of the full package (`profile-relayer`) produce. */\n",
            "export type ServiceErrorCode =",
            $("\n  | \"", $client, "\"",)*
            ";\n"
        );

        /// The npm package's `ServiceErrorCode` TypeScript union: every service code and the clients' own.
        pub const SERVICE_CODE_TS: &str = concat!(
            "/** Codes a client call can reject with, besides the core's ProfileRelayerErrorCode: the service's codes and\n",
            " * the client's own (`NETWORK_ERROR`, `HTTP_ERROR`, `PREDICTION_MISMATCH`, `UPLOAD_MISMATCH`, …). */\n",
            "export type ServiceErrorCode =",
            $("\n  | \"", $code, "\"",)*
            $("\n  | \"", $client, "\"",)*
            ";\n"
        );
    };
}

service_codes! {
    client: [
        "NETWORK_ERROR",
        "HTTP_ERROR",
        "PREDICTION_MISMATCH",
        "UPLOAD_MISMATCH",
        "CONTENT_MISMATCH",
        "INVALID_RESPONSE",
        "SIGNER_ERROR",
    ];

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
    /// A webhook URL that is not `https://` (plain `http://` only to this machine with `WEBHOOK_ALLOW_HTTP`),
    /// has credentials, or is too long.
    InvalidWebhookUrl = (400, "INVALID_WEBHOOK_URL"),
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
    /// The contract claims LSP0 but its code is no known Universal Profile (docs/gasless.md: Genuine profiles only).
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
    /// No signer of the pool has this address.
    SignerNotFound = (404, "SIGNER_NOT_FOUND"),
    /// The path exists for other methods (listed in `Allow`).
    MethodNotAllowed = (405, "METHOD_NOT_ALLOWED"),
    /// The transaction is not pending any more (mined, or replaced meanwhile): nothing was sent.
    TransactionNotPending = (409, "TRANSACTION_NOT_PENDING"),
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
    /// The call would take more than a fair share of a global cap for its profile, controller, API key or client
    /// address (`FAIR_SHARE_PERCENT`, `KEY_SHARE_PERCENT`, `TRUSTED_RESERVE_PERCENT`); nothing was sent.
    PolicyFairShare = (429, "POLICY_FAIR_SHARE"),
    /// The API key, or this client address under it, registered as many new profiles today as a day allows
    /// (`MAX_REGISTRATIONS_PER_KEY_PER_DAY`, `MAX_REGISTRATIONS_PER_CLIENT_PER_DAY`).
    PolicyRegistrations = (429, "POLICY_REGISTRATIONS"),
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
    /// No IPFS gateway served content that verifies against its CID (a wrong block, path or size, or no CAR for
    /// UnixFS content); nothing unverified was served.
    ContentUnverified = (502, "CONTENT_UNVERIFIED"),
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
    /// Every signer of the pool is drained: no signer takes new work.
    NoActiveSigner = (503, "NO_ACTIVE_SIGNER"),
    /// The IPFS gateways did not answer in time.
    GatewayTimeout = (504, "GATEWAY_TIMEOUT"),
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn the_typescript_union_is_every_service_and_client_code() {
        let listed: BTreeSet<&str> = SERVICE_CODE_TS
            .split("export type ServiceErrorCode =")
            .nth(1)
            .unwrap_or_default()
            .split('"')
            .skip(1)
            .step_by(2)
            .collect();
        let expected: BTreeSet<&str> = ServiceCode::ALL
            .iter()
            .map(|c| c.as_str())
            .chain(CLIENT_CODES.iter().copied())
            .collect();
        assert_eq!(listed, expected);
        assert_eq!(ServiceCode::InvalidJson.status(), 400);
        assert!(!ServiceCode::InvalidJson.meaning().is_empty());
    }
}
