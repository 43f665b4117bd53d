//! The plumbing below every handler: JSON bodies in and out, Durable Object calls, the Relayer object's stub,
//! the clock, JSON and query integers and the OpenAPI document. It imports no handler module and no handler imports
//! `routes` (the dispatcher sits above them all: `node scripts/imports.mjs` counts it).

use std::ops::RangeInclusive;

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;
use url::Url;
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

/// The clock: Unix milliseconds now. The Worker's one reading of the time; everything else reads it here (metering
/// moves it by `CLOCK_OFFSET_SECONDS`: `Config::now`).
pub(crate) fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// Unix seconds now ([`now_ms`]).
pub(crate) fn now() -> u64 {
    now_ms() / 1000
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

/// The integer query parameter `name` of `url` (`?limit=20`): `default` when absent; else given once, as an
/// integer is written in a query (OpenAPI's form style: decimal digits, no sign, no leading zero, no fraction or
/// exponent, no white space), within `range`. Anything else is 400 `INVALID_PARAMETER` naming the range.
pub(crate) fn query_integer(
    url: &Url,
    name: &str,
    range: RangeInclusive<u64>,
    default: u64,
) -> ApiResult<u64> {
    let mut given = url.query_pairs().filter(|(k, _)| k == name).map(|(_, v)| v);
    let Some(value) = given.next() else {
        return Ok(default);
    };
    if given.next().is_some() {
        return Err(ApiError::new(
            Code::InvalidParameter,
            format!("{name} must be given once"),
        ));
    }
    decimal(&value).filter(|n| range.contains(n)).ok_or_else(|| {
        ApiError::new(
            Code::InvalidParameter,
            format!(
                "{name} must be an integer from {} to {}",
                range.start(),
                range.end()
            ),
        )
    })
}

/// `text` as canonical decimal digits (`0`, `7`, `120`), `None` for any other spelling or above `u64::MAX`.
fn decimal(text: &str) -> Option<u64> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let leading_zero = text.len() > 1 && text.starts_with('0');
    if digits && !leading_zero {
        text.parse().ok()
    } else {
        None
    }
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

    fn query(q: &str, name: &str) -> ApiResult<u64> {
        let url = Url::parse(&format!("https://relayer.example/admin/usage?{q}")).unwrap();
        query_integer(&url, name, 1..=90, 30)
    }

    fn refused(q: &str) -> String {
        let e = query(q, "days").unwrap_err();
        assert_eq!((e.status, e.code), (400, "INVALID_PARAMETER"), "{q}");
        e.message
    }

    #[test]
    fn query_integers_are_decimal_digits_in_range() {
        assert_eq!(query("", "days").unwrap(), 30);
        assert_eq!(query("other=5&dayss=2", "days").unwrap(), 30);
        assert_eq!(query("days=1", "days").unwrap(), 1);
        assert_eq!(query("days=90", "days").unwrap(), 90);
        assert_eq!(query("days=7&other=x", "days").unwrap(), 7);
        // the name may be percent-encoded, as any query name
        assert_eq!(query("d%61ys=7", "days").unwrap(), 7);
        for q in [
            "days=0",
            "days=91",
            "days=18446744073709551616",
            "days=99999999999999999999999999",
        ] {
            assert_eq!(refused(q), "days must be an integer from 1 to 90", "{q}");
        }
    }

    #[test]
    fn query_integers_have_one_spelling() {
        // `+5` (`%2B5`) and `05` were days (u64::from_str); `5.0`, `5e0`, `0.5e1` and ` 5` (a `+` in a query is a
        // space) were limits (a JSON number); neither reader took the other's: both now take the spelling both took
        for q in [
            "days=%2B5",
            "days=05",
            "days=005",
            "days=5.0",
            "days=5.",
            "days=5e0",
            "days=0.5e1",
            "days=+5",
            "days=%205",
            "days=5%20",
            "days=5%00",
            "days=-5",
            "days=-0",
            "days=0x5",
            "days=%EF%BC%95",
            "days=5a",
            "days=",
            "days",
            "days=x",
            "days=1.5",
            "days=null",
            "days=%225%22",
        ] {
            assert_eq!(refused(q), "days must be an integer from 1 to 90", "{q}");
        }
    }

    #[test]
    fn a_query_integer_given_twice_is_refused() {
        for q in ["days=5&days=7", "days=5&days=5", "days=5&days=", "days=&days=5"] {
            assert_eq!(refused(q), "days must be given once", "{q}");
        }
    }
}
