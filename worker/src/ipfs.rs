//! The IPFS relay (`GET /ipfs/:cid*`) and upload (`POST /api/v0/add`).
//!
//! Content comes from the project's own store (R2, keyed by CID) first, then from the configured gateways raced
//! against each other (at most 6 in flight; the losers are aborted). Raw blocks (`raw` codec, no path) are verified
//! against their CID and kept in R2 with the type the gateway gave them; a wrong answer from a gateway is discarded.
//! Only configured gateways are ever contacted. Responses are immutable, `nosniff`, sandboxed for HTML/SVG,
//! size-limited, and support `Range` and `HEAD`. When every gateway answers 404 the relay answers 404.
//!
//! Latency trade-off of the first fetch: a raw block is read whole and hashed before the answer starts, so a client
//! never receives a byte the CID does not vouch for (a relay that streams would send most of a wrong block before it
//! could know, and a browser renders a partial image or video as it arrives). Only the R2 write (and its D1 ledger)
//! is off the answer's path, under `Context::wait_until`. The cost is the block's transfer time, paid twice (gateway
//! → Worker, then Worker → client) instead of overlapped: see BENCHMARKS.md for the comparison with a streaming
//! relay.

use cid::Cid;
use futures_util::future::{Either, select, select_ok};
use profile_relayer::ipfs::{CidPath, RAW, raw_cid, verify_block};
use worker::{AbortController, Context, Delay, Env, Fetch, Headers, Method, Request, RequestInit, Response};

use crate::{
    body::ReadError,
    config::{number, var},
    error::{ApiError, ApiResult, Code},
};

const MAX_GATEWAYS: usize = 6;

/// IPFS configuration (vars `IPFS_GATEWAYS`, `IPFS_TIMEOUT_SECONDS`, `IPFS_MAX_BYTES`, `UPLOAD_MAX_BYTES`).
#[derive(Debug, Clone)]
pub struct IpfsConfig {
    /// Gateway base URLs (`https://ipfs.io`), tried in parallel.
    pub gateways: Vec<String>,
    /// Overall timeout for a gateway fetch.
    pub timeout_ms: u64,
    /// Largest content relayed.
    pub max_bytes: usize,
    /// Largest upload.
    pub upload_max_bytes: usize,
    /// Bytes the relay may keep in R2 for content fetched on anyone's request (`IPFS_CACHE_MAX_BYTES`).
    pub cache_max_bytes: u64,
}

impl IpfsConfig {
    /// Reads the configuration.
    pub fn from_env(env: &Env) -> ApiResult<Self> {
        let num = |name: &str, default: u64| number(env, name, default);
        let gateways: Vec<String> = var(env, "IPFS_GATEWAYS")
            .unwrap_or_default()
            .split([',', ' ', '\n'])
            .map(|g| g.trim().trim_end_matches('/').to_owned())
            .filter(|g| !g.is_empty())
            .collect();
        if gateways
            .iter()
            .any(|g| !(g.starts_with("https://") || g.starts_with("http://")))
        {
            return Err(ApiError::config(
                "IPFS_GATEWAYS must be http(s) URLs separated by commas",
            ));
        }
        Ok(Self {
            gateways,
            timeout_ms: num("IPFS_TIMEOUT_SECONDS", 15)? * 1000,
            max_bytes: usize::try_from(num("IPFS_MAX_BYTES", 10 * 1024 * 1024)?).unwrap_or(usize::MAX),
            upload_max_bytes: usize::try_from(num("UPLOAD_MAX_BYTES", 5 * 1024 * 1024)?)
                .unwrap_or(usize::MAX),
            cache_max_bytes: num("IPFS_CACHE_MAX_BYTES", 1024 * 1024 * 1024)?,
        })
    }
}

/// Content and its type.
#[derive(Debug, Clone)]
pub struct Content {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Media type.
    pub content_type: String,
    /// Whether the bytes were checked against the CID.
    pub verified: bool,
}

fn sniff(bytes: &[u8]) -> &'static str {
    let trimmed = bytes.trim_ascii_start();
    if trimmed.starts_with(b"{") || trimmed.starts_with(b"[") {
        "application/json"
    } else if bytes.starts_with(&[0x89, b'P', b'N', b'G']) {
        "image/png"
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF8") {
        "image/gif"
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP".as_slice()) {
        "image/webp"
    } else if trimmed.starts_with(b"<svg")
        || (trimmed.starts_with(b"<?xml") && bytes.windows(4).any(|w| w == b"<svg"))
    {
        "image/svg+xml"
    } else if starts_with_ignore_case(trimmed, b"<!doctype html")
        || starts_with_ignore_case(trimmed, b"<html")
    {
        "text/html"
    } else if bytes.starts_with(b"%PDF-") {
        "application/pdf"
    } else if bytes.get(4..8) == Some(b"ftyp".as_slice()) {
        "video/mp4"
    } else if bytes.starts_with(&[0x1a, 0x45, 0xdf, 0xa3]) {
        "video/webm"
    } else if bytes.starts_with(b"ID3") {
        "audio/mpeg"
    } else if bytes.starts_with(b"OggS") {
        "audio/ogg"
    } else {
        "application/octet-stream"
    }
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// A media type as the relay answers and stores it: the essence of a `Content-Type` header (no parameters),
/// lower case, `type/subtype` made of RFC 9110 token characters, at most 100 bytes; `None` for anything else.
fn sanitized_media_type(header: &str) -> Option<String> {
    let essence = header.split(';').next()?.trim().to_ascii_lowercase();
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    let (kind, subtype) = essence.split_once('/')?;
    (essence.len() <= 100 && token(kind) && token(subtype)).then_some(essence)
}

/// The type content is served (and stored) with: the gateway's or uploader's, sanitized, unless it says nothing
/// (`application/octet-stream`, `application/vnd.ipld.raw`, none) — then sniffed from the bytes. `text/plain`
/// (what many servers say of any text) is sniffed too, and kept when the sniffing finds nothing.
fn content_type_of(header: Option<String>, bytes: &[u8]) -> String {
    match header.as_deref().and_then(sanitized_media_type) {
        Some(t) if t == "text/plain" => match sniff(bytes) {
            "application/octet-stream" => t,
            sniffed => sniffed.to_owned(),
        },
        Some(t) if t != "application/octet-stream" && t != "application/vnd.ipld.raw" => t,
        _ => sniff(bytes).to_owned(),
    }
}

/// Writing a verified block to R2, left to the caller (see [`fetch_content_deferred`]).
pub type PendingStore = core::pin::Pin<Box<dyn core::future::Future<Output = ()>>>;

/// Fetches `target` (CID + path): R2 first, then the gateways. A raw block fetched from a gateway is verified,
/// then stored in R2 before this returns (see [`fetch_content_deferred`] to answer without waiting for R2).
pub async fn fetch_content(env: &Env, config: &IpfsConfig, target: &CidPath) -> ApiResult<Content> {
    let (content, store) = fetch_content_deferred(env, config, target).await?;
    if let Some(store) = store {
        store.await;
    }
    Ok(content)
}

/// [`fetch_content`] without the R2 write on its path: the content is returned as soon as it is verified, with the
/// write still to do (hand it to `Context::wait_until`). Nothing unverified is ever returned as verified: a raw
/// block is read whole and hashed before it is returned; only storing it waits.
pub async fn fetch_content_deferred(
    env: &Env,
    config: &IpfsConfig,
    target: &CidPath,
) -> ApiResult<(Content, Option<PendingStore>)> {
    let raw_block = target.cid.codec() == RAW && target.path.is_empty();
    if target.path.is_empty()
        && let Some(object) = env.bucket("IPFS")?.get(target.cid.to_string()).execute().await?
    {
        let content_type = object.http_metadata().content_type;
        if let Some(body) = object.body() {
            let bytes = body.bytes().await?;
            if !raw_block || verify_block(&target.cid, &bytes).unwrap_or(false) {
                let content_type = content_type_of(content_type, &bytes);
                return Ok((
                    Content {
                        bytes,
                        content_type,
                        verified: raw_block,
                    },
                    None,
                ));
            }
        }
    }
    if config.gateways.is_empty() {
        return Err(ApiError::new(
            Code::ContentNotFound,
            "not in the local store and no IPFS gateway is configured",
        ));
    }
    let content = race_gateways(config, target, raw_block).await?;
    if !raw_block {
        return Ok((content, None));
    }
    // verified bytes are immutable: keep them, within the relay cache's bound
    let (env, config, cid, stored) = (env.clone(), config.clone(), target.cid, content.clone());
    let store: PendingStore = Box::pin(async move {
        if let Err(e) = cache_block(&env, &config, &cid, &stored).await {
            worker::console_warn!("ipfs cache {}: {} {}", cid, e.code, e.message);
        }
    });
    Ok((content, Some(store)))
}

fn origin(kind: &str) -> std::collections::HashMap<String, String> {
    std::collections::HashMap::from([("origin".to_owned(), kind.to_owned())])
}

/// Keeps a verified block fetched for anyone in R2. Anonymous traffic decides what is fetched, so the relay's
/// share of the bucket is bounded by `IPFS_CACHE_MAX_BYTES`: a ledger in D1 (`relay_cache`) records what the
/// relay stored, and the oldest entries are evicted to make room. Uploads (API key holders) are never evicted.
/// Concurrent requests may pass the bound by at most one block each.
async fn cache_block(env: &Env, config: &IpfsConfig, cid: &Cid, content: &Content) -> ApiResult<()> {
    let cache = crate::r2_cache::BoundedCache {
        table: "relay_cache",
        key_column: "cid",
        max_bytes: config.cache_max_bytes,
    };
    let key = cid.to_string();
    cache
        .put(
            env,
            crate::r2_cache::Object {
                key: &key,
                bytes: &content.bytes,
                content_type: &content.content_type,
                metadata: origin("relay"),
            },
        )
        .await?;
    Ok(())
}

/// Why one gateway did not serve the content.
#[derive(Debug)]
struct Failure {
    /// The gateway answered 404 (it does not have the content).
    not_found: bool,
    detail: String,
}

impl From<String> for Failure {
    fn from(detail: String) -> Self {
        Self {
            not_found: false,
            detail,
        }
    }
}

async fn fetch_one(
    gateway: String,
    target: String,
    cid: Cid,
    raw_block: bool,
    max_bytes: usize,
    signal: worker::AbortSignal,
) -> Result<Content, Failure> {
    let headers = Headers::new();
    if raw_block {
        headers
            .set("accept", "application/vnd.ipld.raw, */*;q=0.5")
            .map_err(|e| Failure::from(e.to_string()))?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let url = format!("{gateway}/ipfs/{target}");
    let request = Request::new_with_init(&url, &init).map_err(|e| Failure::from(e.to_string()))?;
    let mut response = Fetch::Request(request)
        .send_with_signal(&signal)
        .await
        .map_err(|e| Failure::from(format!("{gateway}: {e}")))?;
    if response.status_code() != 200 {
        return Err(Failure {
            not_found: response.status_code() == 404,
            detail: format!("{gateway}: HTTP {}", response.status_code()),
        });
    }
    let declared = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|n| n.trim().parse::<usize>().ok());
    let bytes = match declared {
        // a declared length within the limit: HTTP framing ends the body there, so the runtime reads it whole (one
        // native buffer, one copy into the Worker, instead of a copy per chunk)
        Some(length) if length <= max_bytes => match response.body() {
            worker::ResponseBody::Stream(stream) => {
                let failed = |e: wasm_bindgen::JsValue| Failure::from(format!("{gateway}: {e:?}"));
                let native =
                    worker::web_sys::Response::new_with_opt_readable_stream(Some(stream)).map_err(failed)?;
                let buffer =
                    worker::wasm_bindgen_futures::JsFuture::from(native.array_buffer().map_err(failed)?)
                        .await
                        .map_err(failed)?;
                js_sys::Uint8Array::new(&buffer).to_vec()
            }
            _ => Vec::new(),
        },
        // counted while it streams: a gateway cannot make the Worker buffer more than the limit
        _ => crate::body::response_bytes(&mut response, max_bytes)
            .await
            .map_err(|e| match e {
                ReadError::TooLarge => {
                    Failure::from(format!("{gateway}: over the size limit of {max_bytes} bytes"))
                }
                ReadError::Failed(detail) => Failure::from(format!("{gateway}: {detail}")),
            })?,
    };
    if raw_block && !verify_block(&cid, &bytes).unwrap_or(false) {
        return Err(Failure::from(format!(
            "{gateway}: the bytes do not match the CID"
        )));
    }
    let content_type = content_type_of(response.headers().get("content-type").ok().flatten(), &bytes);
    Ok(Content {
        bytes,
        content_type,
        verified: raw_block,
    })
}

async fn race_gateways(config: &IpfsConfig, target: &CidPath, raw_block: bool) -> ApiResult<Content> {
    let gateways: Vec<String> = config.gateways.iter().take(MAX_GATEWAYS).cloned().collect();
    let controllers: Vec<AbortController> = gateways.iter().map(|_| AbortController::default()).collect();
    let path = target.to_gateway_path();
    // how many gateways answered 404 (select_ok only keeps the last error)
    let not_found = std::rc::Rc::new(core::cell::Cell::new(0_usize));
    let attempts: Vec<_> = gateways
        .iter()
        .zip(controllers.iter().map(AbortController::signal))
        .map(|(g, signal)| {
            let not_found = not_found.clone();
            let attempt = fetch_one(
                g.clone(),
                path.clone(),
                target.cid,
                raw_block,
                config.max_bytes,
                signal,
            );
            Box::pin(async move {
                attempt.await.inspect_err(|failure| {
                    if failure.not_found {
                        not_found.set(not_found.get().saturating_add(1));
                    }
                })
            })
        })
        .collect();
    let timeout = Box::pin(Delay::from(core::time::Duration::from_millis(config.timeout_ms)));
    let outcome = select(select_ok(attempts), timeout).await;
    // whatever happened, stop the fetches still in flight
    for c in controllers {
        c.abort();
    }
    match outcome {
        Either::Left((Ok((content, _rest)), _)) => Ok(content),
        Either::Left((Err(last), _)) => {
            worker::console_warn!("ipfs {path}: every gateway failed; last: {}", last.detail);
            if not_found.get() == gateways.len() {
                // every gateway says it does not have the content: that is an answer, not a gateway failure
                return Err(ApiError::new(
                    Code::ContentNotFound,
                    "no configured IPFS gateway has this content",
                ));
            }
            Err(ApiError::new(
                Code::GatewayError,
                "no configured IPFS gateway served valid content",
            ))
        }
        Either::Right(_) => {
            let mut err = ApiError::new(Code::GatewayTimeout, "the IPFS gateways did not answer in time");
            err.retry_after = Some(30);
            Err(err)
        }
    }
}

/// The CSP of every relayed answer: a sandboxed document with no scripts and no fetches.
pub const SANDBOX_CSP: &str = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'";

/// Whether a media type is displayed inline (images, JSON, plain text); everything else is a download.
pub fn is_passive(content_type: &str) -> bool {
    content_type.starts_with("image/") || content_type == "application/json" || content_type == "text/plain"
}

/// The first range of a `Range` header as inclusive byte offsets into content of `total` bytes; `None` when
/// the header is malformed or cannot be satisfied (an empty body has no bytes to serve). Several ranges are
/// answered with the first (multipart/byteranges is not produced).
pub fn byte_range(header: &str, total: u64) -> Option<(u64, u64)> {
    if total == 0 {
        return None;
    }
    let ranges = http_range_header::parse_range_header(header)
        .ok()?
        .validate(total)
        .ok()?;
    let first = ranges.first()?;
    let (start, end) = (*first.start(), *first.end());
    (start <= end && end < total).then_some((start, end))
}

/// `GET` and `HEAD /ipfs/:cid*` (`HEAD`: the same status and headers, no body). The answer waits for the content
/// to be verified, never for it to be stored: the R2 write runs after the answer, under `ctx.wait_until`.
pub async fn relay(req: &Request, env: &Env, ctx: &Context, path: &str) -> ApiResult<Response> {
    let config = IpfsConfig::from_env(env)?;
    let target = CidPath::parse(path)?;
    let (content, store) = fetch_content_deferred(env, &config, &target).await?;
    let total = content.bytes.len() as u64;
    let headers = Headers::new();
    headers.set("content-type", &content.content_type)?;
    headers.set("cache-control", "public, max-age=29030400, immutable")?;
    headers.set("x-content-type-options", "nosniff")?;
    headers.set("accept-ranges", "bytes")?;
    headers.set("etag", &format!("\"{}\"", target.to_gateway_path()))?;
    headers.set("x-ipfs-path", &format!("/ipfs/{}", target.to_gateway_path()))?;
    headers.set(
        "x-content-verified",
        if content.verified { "true" } else { "false" },
    )?;
    // the API's origin serves this content: whatever it is, it cannot run scripts or load anything there
    headers.set("content-security-policy", SANDBOX_CSP)?;
    if !is_passive(&content.content_type) {
        headers.set("content-disposition", "attachment")?;
    }
    if let Some(range) = req.headers().get("range")? {
        let Some((start, end)) = byte_range(&range, total) else {
            return Err(ApiError::new(
                Code::RangeNotSatisfiable,
                format!("the content has {total} bytes"),
            ));
        };
        let slice = usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| content.bytes.get(s..=e))
            .unwrap_or_default()
            .to_vec();
        headers.set("content-range", &format!("bytes {start}-{end}/{total}"))?;
        if let Some(store) = store {
            ctx.wait_until(store);
        }
        return answer(req, 206, slice, headers);
    }
    // the R2 write runs after the answer is returned (`wait_until`): the answer waits for verification, not for R2
    if let Some(store) = store {
        ctx.wait_until(store);
    }
    answer(req, 200, content.bytes, headers)
}

/// The answer with `body`; to `HEAD`, the same headers with the length `GET` would answer and no body (the runtime
/// sends no `Content-Length` of its own for a `HEAD` answer).
fn answer(req: &Request, status: u16, body: Vec<u8>, headers: Headers) -> ApiResult<Response> {
    if req.method() == Method::Head {
        headers.set("content-length", &body.len().to_string())?;
        return Ok(Response::empty()?.with_status(status).with_headers(headers));
    }
    Ok(Response::from_bytes(body)?
        .with_status(status)
        .with_headers(headers))
}

/// `POST /api/v0/add`: multipart upload (field `file`, or the first file field) stored in R2 under its CID.
/// Answers like Kubo (`{"Name","Hash","Size"}`) and like Pinata (`{"IpfsHash","PinSize","Timestamp"}`).
pub async fn add(mut req: Request, env: &Env) -> ApiResult<Response> {
    let config = IpfsConfig::from_env(env)?;
    let content_type = req.headers().get("content-type")?.unwrap_or_default();
    if !content_type
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        return Err(ApiError::new(
            Code::UnsupportedContentType,
            "upload with multipart/form-data and a `file` field (like `ipfs add`)",
        ));
    }
    // the whole multipart body, bounded while it is read (the file plus room for the multipart framing)
    let body =
        crate::body::request_bytes(&mut req, config.upload_max_bytes.saturating_add(16 * 1024)).await?;
    let headers = Headers::new();
    headers.set("content-type", &content_type)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(js_sys::Uint8Array::from(body.as_slice()).into()));
    let form = Request::new_with_init("https://upload.invalid/", &init)?
        .form_data()
        .await
        .map_err(|_| ApiError::new(Code::InvalidMultipart, "malformed multipart body"))?;
    let (name, bytes, media) = match form.get("file") {
        Some(worker::FormEntry::File(f)) => (f.name(), f.bytes().await?, f.type_()),
        Some(worker::FormEntry::Field(text)) => {
            ("file".to_owned(), text.into_bytes(), "text/plain".to_owned())
        }
        None => {
            return Err(ApiError::new(
                Code::MissingField,
                "missing multipart field \"file\"",
            ));
        }
    };
    upload_bytes(env, &config, name, bytes, media).await
}

/// Stores an upload under its CID. Content is addressed by its bytes: when the CID is stored already, the stored
/// object (and the `Content-Type` others are served) stays as it is.
async fn upload_bytes(
    env: &Env,
    config: &IpfsConfig,
    name: String,
    bytes: Vec<u8>,
    media: String,
) -> ApiResult<Response> {
    if bytes.len() > config.upload_max_bytes {
        return Err(crate::body::too_large(config.upload_max_bytes));
    }
    let cid = raw_cid(&bytes);
    let size = bytes.len();
    let content_type = content_type_of(Some(media), &bytes);
    let bucket = env.bucket("IPFS")?;
    if bucket.head(cid.to_string()).await?.is_none() {
        bucket
            .put(cid.to_string(), bytes)
            .http_metadata(worker::HttpMetadata {
                content_type: Some(content_type),
                ..Default::default()
            })
            .custom_metadata(origin("upload"))
            .execute()
            .await?;
    }
    let hash = cid.to_string();
    // Kubo's fields, and Pinata's (`pinFileToIPFS`) for uploaders written against it
    let timestamp = String::from(js_sys::Date::new_0().to_iso_string());
    Ok(Response::from_json(&profile_relayer::api::UploadAnswer::new(
        name,
        hash,
        size as u64,
        timestamp,
    ))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(byte_range("bytes=0-", 0), None);
        assert_eq!(byte_range("bytes=-5", 0), None);
        assert_eq!(byte_range("bytes=0-", 3), Some((0, 2)));
        assert_eq!(byte_range("bytes=1-1", 3), Some((1, 1)));
        assert_eq!(byte_range("bytes=-2", 3), Some((1, 2)));
        assert_eq!(byte_range("bytes=0-99", 3), Some((0, 2)));
        assert_eq!(byte_range("bytes=3-", 3), None);
        assert_eq!(byte_range("bytes=2-1", 3), None);
        assert_eq!(byte_range("items=0-1", 3), None);
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn any_range_header_is_inside_the_content(header in "\\PC{0,40}", tail in "[0-9,= -]{0,30}", total in 0u64..2000) {
            for h in [header.clone(), format!("bytes={tail}")] {
                if let Some((start, end)) = byte_range(&h, total) {
                    proptest::prop_assert!(start <= end && end < total);
                }
            }
        }
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"  {\"a\":1}"), "application/json");
        assert_eq!(sniff(&[0x89, b'P', b'N', b'G', 0]), "image/png");
        assert_eq!(sniff(b"<svg xmlns=''/>"), "image/svg+xml");
        assert_eq!(sniff(b"\x00\x01"), "application/octet-stream");
        assert_eq!(
            content_type_of(Some("text/html; charset=utf-8".into()), b"x"),
            "text/html"
        );
        assert_eq!(
            content_type_of(Some("application/vnd.ipld.raw".into()), b"[1]"),
            "application/json"
        );
        assert_eq!(sniff(b"\n<!DOCTYPE html><p>"), "text/html");
        assert_eq!(sniff(b"%PDF-1.7"), "application/pdf");
        assert_eq!(sniff(b"\0\0\0\x18ftypmp42"), "video/mp4");
        assert_eq!(
            content_type_of(Some("text/plain".into()), b"[1]"),
            "application/json"
        );
        assert_eq!(
            content_type_of(Some("Text/Plain; charset=utf-8".into()), b"hi"),
            "text/plain"
        );
        assert_eq!(content_type_of(Some("video/MP4".into()), b"x"), "video/mp4");
        // malformed or hostile types are replaced by sniffing
        for bad in [
            "text/html, text/javascript",
            "text",
            "/x",
            "a/b/c",
            "text/ html",
            "a\u{0}/b",
            "",
        ] {
            assert_eq!(sanitized_media_type(bad), None, "{bad:?}");
            assert_eq!(
                content_type_of(Some(bad.into()), b"{}"),
                "application/json",
                "{bad:?}"
            );
        }
        assert_eq!(sanitized_media_type(&format!("a/{}", "b".repeat(99))), None);
        assert_eq!(
            sanitized_media_type("application/vnd.api+json; q=1").as_deref(),
            Some("application/vnd.api+json")
        );
    }
}
