//! Service errors: an HTTP status, a stable code and a message, rendered as `{"error":{"code","message"}}`.
//! Messages never contain secrets (keys, tokens, the relayer key).

use profile_relayer::api::ErrorBody;
use worker::Response;

use crate::rpc::RpcError;

/// An error answered to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// Stable code.
    pub code: String,
    /// Human-readable message.
    pub message: String,
    /// `Retry-After` seconds, for 429 and 503.
    pub retry_after: Option<u64>,
}

/// Result alias of the service.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A new error.
    pub fn new(status: u16, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            code: code.to_owned(),
            message: message.into(),
            retry_after: None,
        }
    }

    /// 400 with `code`.
    pub fn bad_request(code: &str, message: impl Into<String>) -> Self {
        Self::new(400, code, message)
    }

    /// 404 `NOT_FOUND`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "NOT_FOUND", message)
    }

    /// 500 `INTERNAL_ERROR`; the detail is logged, not answered.
    pub fn internal(detail: impl core::fmt::Display) -> Self {
        worker::console_error!("internal error: {detail}");
        Self::new(500, "INTERNAL_ERROR", "internal error")
    }

    /// 500 `CONFIGURATION_ERROR`: the deployment is misconfigured (never names a secret's value).
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(500, "CONFIGURATION_ERROR", message)
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
        Self::new(e.http_status(), e.code(), e.to_string())
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
                    503,
                    "RPC_UNAVAILABLE",
                    "the chain's RPC node cannot be reached; retry later",
                );
                err.retry_after = Some(5);
                err
            }
            RpcError::Node { code, message, .. } => Self::new(
                502,
                "RPC_ERROR",
                format!("the RPC node answered an error ({code}): {message}"),
            ),
            RpcError::Decode(detail) => {
                Self::new(502, "RPC_ERROR", format!("unexpected RPC answer: {detail}"))
            }
        }
    }
}
