//! The plumbing below every handler: JSON bodies in and out, Durable Object calls, the Relayer object's stub,
//! the clock, JSON integers and the OpenAPI document. It imports no handler module and no handler imports
//! `routes` (the dispatcher sits above them all: `node scripts/imports.mjs` counts it).

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;
use worker::{Date, Headers, Method, Request, RequestInit, Response, Stub};

use crate::error::{ApiError, ApiResult, Code};

/// The OpenAPI document as written (`routes::openapi` fills in the deployment; tests check answers against it).
pub const OPENAPI: &str = include_str!("../openapi.json");

pub(crate) fn json_headers() -> ApiResult<Headers> {
    let h = Headers::new();
    h.set("content-type", "application/json")?;
    Ok(h)
}

pub(crate) fn json_response<T: Serialize>(status: u16, body: &T) -> ApiResult<Response> {
    Ok(Response::from_json(body)?.with_status(status))
}

pub(crate) fn now() -> u64 {
    Date::now().as_millis() / 1000
}

/// Reads a JSON body: `application/json`, at most `max` bytes (counted while it is read), UTF-8.
pub(crate) async fn read_body(mut req: Request, max: usize) -> ApiResult<String> {
    let content_type = req.headers().get("content-type")?.unwrap_or_default();
    if !content_type.to_ascii_lowercase().starts_with("application/json") {
        return Err(ApiError::new(
            Code::UnsupportedContentType,
            "the body must be JSON with `Content-Type: application/json`",
        ));
    }
    let bytes = crate::body::request_bytes(&mut req, max).await?;
    String::from_utf8(bytes).map_err(|_| ApiError::new(Code::InvalidJson, "the body is not UTF-8"))
}

/// POSTs `body` to a Durable Object and decodes its answer, passing its error bodies through.
pub(crate) async fn call_do<B: Serialize, T: DeserializeOwned>(
    stub: &Stub,
    path: &str,
    body: &B,
) -> ApiResult<T> {
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(json_headers()?)
        .with_body(Some(
            serde_json::to_string(body).map_err(ApiError::internal)?.into(),
        ));
    let request = Request::new_with_init(&format!("https://do{path}"), &init)?;
    let mut response = stub.fetch_with_request(request).await?;
    let status = response.status_code();
    if status >= 400 {
        let retry_after = response
            .headers()
            .get("retry-after")?
            .and_then(|v| v.parse().ok());
        let body: profile_relayer::api::ErrorBody = response.json().await?;
        let mut err = ApiError::from_wire(status, &body.error.code, body.error.message);
        err.retry_after = retry_after;
        return Err(err);
    }
    Ok(response.json().await?)
}

/// A JSON integer: also one written with a zero fraction (`5.0`), which JSON Schema counts as an integer.
pub(crate) fn integer(v: &Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_f64().and_then(profile_relayer::json_shape::safe_integer))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn integers_as_json_schema_counts_them() {
        assert_eq!(integer(&json!(5)), Some(5));
        assert_eq!(integer(&json!(5.0)), Some(5));
        assert_eq!(integer(&json!(5.5)), None);
        assert_eq!(integer(&json!(-1)), None);
        assert_eq!(integer(&json!(1e300)), None);
        assert_eq!(integer(&json!("5")), None);
    }
}
