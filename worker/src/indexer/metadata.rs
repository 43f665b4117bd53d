//! Metadata behind a VerifiableURI: `ipfs://` (through the IPFS module: the store, then the gateways), `data:`
//! (RFC 2397, by the data-url crate) and `https://` (`http://` only with `METADATA_ALLOW_HTTP`). Every fetch is
//! bounded: `METADATA_MAX_BYTES` is enforced while the body streams in (and on `Content-Length` before), the whole
//! fetch — redirects and body — has one timeout, redirects are followed by hand (at most 5) and never from
//! `https` to anything else, and no request — the first or a redirect — goes to an internal address
//! ([`crate::destination`]; this machine only with `METADATA_ALLOW_HTTP`).

use futures_util::{
    StreamExt,
    future::{Either, select},
};
use profile_relayer::{
    ipfs::CidPath,
    lsp2::{VerificationMethod, decode_verifiable_uri},
};
use serde_json::Value;
use worker::{Delay, Method, Request, RequestInit, RequestRedirect};

use super::ctx::Ctx;
use crate::{
    destination,
    ipfs::fetch_content,
    rpc::{TimedFetchError, fetch_with_timeout},
};

const MAX_REDIRECTS: usize = 5;

/// Why a fetch failed: a stable code and whether a later retry may help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FetchError {
    pub(crate) code: String,
    pub(crate) retryable: bool,
}

impl FetchError {
    fn permanent(code: &str) -> Self {
        Self {
            code: code.to_owned(),
            retryable: false,
        }
    }

    fn transient(code: &str) -> Self {
        Self {
            code: code.to_owned(),
            retryable: true,
        }
    }
}

/// Result of fetching metadata behind a VerifiableURI.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    /// `none`, `invalid_uri`, `fetch_failed`, `verified`, `hash_mismatch` or `unverifiable`.
    pub(crate) status: &'static str,
    pub(crate) url: Option<String>,
    pub(crate) json: Option<Value>,
    pub(crate) error: Option<FetchError>,
}

impl Fetched {
    pub(crate) const fn none() -> Self {
        Self {
            status: "none",
            url: None,
            json: None,
            error: None,
        }
    }

    fn failed(url: String, error: FetchError) -> Self {
        Self {
            status: "fetch_failed",
            url: Some(url),
            json: None,
            error: Some(error),
        }
    }
}

/// Fetches and verifies the metadata a VerifiableURI value points at.
pub(crate) async fn fetch_metadata(ctx: &Ctx<'_>, value: &[u8]) -> Fetched {
    if value.is_empty() {
        return Fetched::none();
    }
    let uri = match decode_verifiable_uri(value) {
        Ok(u) => u,
        Err(e) => {
            return Fetched {
                status: "invalid_uri",
                url: None,
                json: None,
                error: Some(FetchError::permanent(e.code())),
            };
        }
    };
    let bytes = match fetch_url(ctx, &uri.url).await {
        Ok(b) => b,
        Err(e) => return Fetched::failed(uri.url, e),
    };
    let status = match uri.verification_method() {
        VerificationMethod::Keccak256Utf8 | VerificationMethod::Keccak256Bytes => {
            if profile_relayer::lsp2::verify(&uri, &bytes).unwrap_or(false) {
                "verified"
            } else {
                "hash_mismatch"
            }
        }
        _ => "unverifiable",
    };
    Fetched {
        status,
        url: Some(uri.url),
        json: serde_json::from_slice::<Value>(&bytes).ok(),
        error: None,
    }
}

/// The bytes behind `url`, within the size cap and the timeout.
pub(crate) async fn fetch_url(ctx: &Ctx<'_>, url: &str) -> Result<Vec<u8>, FetchError> {
    let max = ctx.ipfs.max_bytes;
    let fetch = Box::pin(async {
        if url.starts_with("ipfs://") {
            let target = CidPath::parse(url).map_err(|e| FetchError::permanent(e.code()))?;
            ctx.budget.spend(1);
            let content = fetch_content(ctx.env, &ctx.ipfs, &target, None)
                .await
                .map_err(|e| FetchError::transient(e.code))?;
            Ok(content.to_vec())
        } else if url.starts_with("data:") {
            data_url::DataUrl::process(url)
                .ok()
                .and_then(|d| d.decode_to_vec().ok())
                .map(|(bytes, _)| bytes)
                .ok_or_else(|| FetchError::permanent("INVALID_DATA_URL"))
        } else if url.starts_with("https://") || (url.starts_with("http://") && ctx.allow_http) {
            fetch_http(ctx, url, max).await
        } else {
            Err(FetchError::permanent("UNSUPPORTED_URL_SCHEME"))
        }
    });
    let timeout = Box::pin(Delay::from(core::time::Duration::from_millis(
        ctx.metadata_timeout_ms,
    )));
    let bytes = match select(fetch, timeout).await {
        Either::Left((result, _)) => result?,
        Either::Right(((), _)) => return Err(FetchError::transient("FETCH_TIMEOUT")),
    };
    if bytes.len() > max {
        return Err(FetchError::permanent("TOO_LARGE"));
    }
    Ok(bytes)
}

/// Whether a redirect from `from` to `to` may be followed: never away from https, http only when allowed.
fn redirect_allowed(from: &url::Url, to: &url::Url, allow_http: bool) -> Result<(), FetchError> {
    match (from.scheme(), to.scheme()) {
        ("https", "https") | ("http", "https") => Ok(()),
        ("http", "http") if allow_http => Ok(()),
        ("https", _) => Err(FetchError::permanent("INSECURE_REDIRECT")),
        _ => Err(FetchError::permanent("UNSUPPORTED_URL_SCHEME")),
    }
}

/// Whether a request may go to `url` (the first one and each redirect's): never to an internal address in any
/// spelling, to this machine only with `METADATA_ALLOW_HTTP` (local development). A metadata URL is chain data:
/// anyone can point the indexer at the cloud's metadata service or the operator's network.
fn destination_allowed(url: &url::Url, allow_loopback: bool) -> Result<(), FetchError> {
    if destination::of_url(url).allowed(allow_loopback) {
        Ok(())
    } else {
        Err(FetchError::permanent("INTERNAL_ADDRESS"))
    }
}

/// `GET url` following redirects by hand, reading at most `max` bytes of body.
async fn fetch_http(ctx: &Ctx<'_>, url: &str, max: usize) -> Result<Vec<u8>, FetchError> {
    let mut current = url::Url::parse(url).map_err(|_| FetchError::permanent("INVALID_URL"))?;
    for _ in 0..=MAX_REDIRECTS {
        destination_allowed(&current, ctx.allow_http)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Get)
            .with_redirect(RequestRedirect::Manual);
        let request = Request::new_with_init(current.as_str(), &init)
            .map_err(|_| FetchError::permanent("INVALID_URL"))?;
        ctx.budget.spend(1);
        let mut response = match fetch_with_timeout(request, ctx.metadata_timeout_ms).await {
            Ok(r) => r,
            Err(TimedFetchError::Failed(_)) => return Err(FetchError::transient("FETCH_FAILED")),
            Err(TimedFetchError::TimedOut) => return Err(FetchError::transient("FETCH_TIMEOUT")),
        };
        let status = response.status_code();
        if matches!(status, 301 | 302 | 303 | 307 | 308) {
            let location = response
                .headers()
                .get("location")
                .ok()
                .flatten()
                .ok_or_else(|| FetchError::permanent("INVALID_REDIRECT"))?;
            let next = current
                .join(&location)
                .map_err(|_| FetchError::permanent("INVALID_REDIRECT"))?;
            redirect_allowed(&current, &next, ctx.allow_http)?;
            current = next;
            continue;
        }
        if status != 200 {
            let retryable = status >= 500 || status == 429 || status == 404;
            let code = format!("HTTP_{status}");
            return Err(if retryable {
                FetchError::transient(&code)
            } else {
                FetchError::permanent(&code)
            });
        }
        return read_capped(&mut response, max).await;
    }
    Err(FetchError::permanent("TOO_MANY_REDIRECTS"))
}

/// Reads a body chunk by chunk, giving up as soon as it grows past `max` (the rest is never read).
async fn read_capped(response: &mut worker::Response, max: usize) -> Result<Vec<u8>, FetchError> {
    let too_large = || FetchError::permanent("TOO_LARGE");
    if let Some(len) = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|l| l.trim().parse::<u64>().ok())
        && usize::try_from(len).map_or(true, |l| l > max)
    {
        return Err(too_large());
    }
    let mut stream = response
        .stream()
        .map_err(|_| FetchError::transient("FETCH_FAILED"))?;
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| FetchError::transient("FETCH_FAILED"))?;
        if body.len().saturating_add(chunk.len()) > max {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn redirects_never_downgrade() {
        let u = |s: &str| url::Url::parse(s).unwrap();
        assert!(redirect_allowed(&u("https://a/x"), &u("https://b/y"), false).is_ok());
        assert!(redirect_allowed(&u("http://a/x"), &u("https://b/y"), true).is_ok());
        assert!(redirect_allowed(&u("http://a/x"), &u("http://b/y"), true).is_ok());
        for allow in [false, true] {
            assert_eq!(
                redirect_allowed(&u("https://a/x"), &u("http://a/x"), allow)
                    .unwrap_err()
                    .code,
                "INSECURE_REDIRECT"
            );
            assert!(redirect_allowed(&u("https://a/x"), &u("file:///etc/passwd"), allow).is_err());
        }
        assert!(redirect_allowed(&u("http://a/x"), &u("http://b/y"), false).is_err());
    }

    #[test]
    fn no_request_to_an_internal_address() {
        let u = |s: &str| url::Url::parse(s).unwrap();
        for url in ["https://example.org/a.json", "http://example.org/a.json"] {
            assert!(destination_allowed(&u(url), false).is_ok(), "{url}");
        }
        for url in [
            "https://127.0.0.1:8443/x",
            "http://localhost:8080/x",
            "https://[::1]/x",
        ] {
            assert_eq!(
                destination_allowed(&u(url), false).unwrap_err().code,
                "INTERNAL_ADDRESS",
                "{url}"
            );
            assert!(destination_allowed(&u(url), true).is_ok(), "{url}");
        }
        for url in [
            "https://169.254.169.254/latest/meta-data/",
            "https://[64:ff9b::a9fe:a9fe]/",
            "https://metadata.google.internal/computeMetadata/v1/",
            "http://10.0.0.1/",
            "https://[fd00::1]/",
        ] {
            for allow in [false, true] {
                let refused = destination_allowed(&u(url), allow).unwrap_err();
                assert_eq!(refused, FetchError::permanent("INTERNAL_ADDRESS"), "{url}");
            }
        }
    }
}
