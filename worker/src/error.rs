//! Service errors: an HTTP status, a stable code and a message, rendered as `{"error":{"code","message"}}`.
//! Messages never contain secrets (keys, tokens, the relayer key).

use profile_relayer::api::ErrorBody;
use worker::Response;

// Every error code the Worker answers with itself, declared in the core's wire module (`api::codes`) with its status
// and meaning; core errors keep the core's codes (`profile_relayer::Error::ALL_CODES`).
pub use profile_relayer::api::codes::ServiceCode as Code;

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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

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

    /// The table of service error codes in docs/relayer-api.md, as [`Code`] makes it.
    fn doc_table() -> String {
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
    fn docs_list_every_service_code_with_its_status() {
        let doc = include_str!("../../docs/relayer-api.md");
        let table = doc_table();
        assert!(
            doc.contains(&table),
            "docs/relayer-api.md's service error table is out of date; it must contain:\n{table}"
        );
    }
}
