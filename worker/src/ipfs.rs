//! The IPFS relay (`GET /ipfs/:cid*`) and upload (`POST /api/v0/add`).
//!
//! Content comes from the project's own store (R2, keyed by CID) first, then from the configured gateways raced
//! against each other (at most 6 in flight; the losers are aborted). Raw blocks (`raw` codec, no path) are verified
//! against their CID and kept in R2; a wrong answer from a gateway is discarded. Only configured gateways are ever
//! contacted. Responses are immutable, `nosniff`, sandboxed for HTML/SVG, size-limited, and support `Range`.

use cid::Cid;
use futures_util::future::{Either, select, select_ok};
use profile_relayer::ipfs::{CidPath, RAW, raw_cid, verify_block};
use worker::{AbortController, Delay, Env, Fetch, Headers, Method, Request, RequestInit, Response};

use crate::{
    config::{number, var},
    error::{ApiError, ApiResult},
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
    let trimmed = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &bytes[i..]);
    if trimmed.starts_with(b"{") || trimmed.starts_with(b"[") {
        "application/json"
    } else if bytes.starts_with(&[0x89, b'P', b'N', b'G']) {
        "image/png"
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF8") {
        "image/gif"
    } else if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        "image/webp"
    } else if trimmed.starts_with(b"<svg")
        || (trimmed.starts_with(b"<?xml") && bytes.windows(4).any(|w| w == b"<svg"))
    {
        "image/svg+xml"
    } else {
        "application/octet-stream"
    }
}

fn content_type_of(header: Option<String>, bytes: &[u8]) -> String {
    match header.map(|h| {
        h.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    }) {
        Some(t)
            if !t.is_empty()
                && t != "application/octet-stream"
                && t != "application/vnd.ipld.raw"
                && t != "text/plain" =>
        {
            t
        }
        _ => sniff(bytes).to_owned(),
    }
}

/// Fetches `target` (CID + path): R2 first, then the gateways.
pub async fn fetch_content(env: &Env, config: &IpfsConfig, target: &CidPath) -> ApiResult<Content> {
    let raw_block = target.cid.codec() == RAW && target.path.is_empty();
    if target.path.is_empty()
        && let Some(object) = env.bucket("IPFS")?.get(target.cid.to_string()).execute().await?
    {
        let content_type = object.http_metadata().content_type;
        if let Some(body) = object.body() {
            let bytes = body.bytes().await?;
            if !raw_block || verify_block(&target.cid, &bytes).unwrap_or(false) {
                let content_type = content_type_of(content_type, &bytes);
                return Ok(Content {
                    bytes,
                    content_type,
                    verified: raw_block,
                });
            }
        }
    }
    if config.gateways.is_empty() {
        return Err(ApiError::new(
            404,
            "CONTENT_NOT_FOUND",
            "not in the local store and no IPFS gateway is configured",
        ));
    }
    let content = race_gateways(config, target, raw_block).await?;
    if raw_block {
        // verified bytes are immutable: keep them
        let _ = env
            .bucket("IPFS")?
            .put(target.cid.to_string(), content.bytes.clone())
            .execute()
            .await;
    }
    Ok(content)
}

async fn fetch_one(
    gateway: String,
    target: String,
    cid: Cid,
    raw_block: bool,
    max_bytes: usize,
    signal: worker::AbortSignal,
) -> Result<Content, String> {
    let headers = Headers::new();
    if raw_block {
        headers
            .set("accept", "application/vnd.ipld.raw, */*;q=0.5")
            .map_err(|e| e.to_string())?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let url = format!("{gateway}/ipfs/{target}");
    let request = Request::new_with_init(&url, &init).map_err(|e| e.to_string())?;
    let mut response = Fetch::Request(request)
        .send_with_signal(&signal)
        .await
        .map_err(|e| format!("{gateway}: {e}"))?;
    if response.status_code() != 200 {
        return Err(format!("{gateway}: HTTP {}", response.status_code()));
    }
    if let Some(len) = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|l| l.parse::<usize>().ok())
        && len > max_bytes
    {
        return Err(format!("{gateway}: {len} bytes is over the limit"));
    }
    let bytes = response.bytes().await.map_err(|e| format!("{gateway}: {e}"))?;
    if bytes.len() > max_bytes {
        return Err(format!("{gateway}: over the size limit"));
    }
    if raw_block && !verify_block(&cid, &bytes).unwrap_or(false) {
        return Err(format!("{gateway}: the bytes do not match the CID"));
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
    let attempts: Vec<_> = gateways
        .iter()
        .zip(controllers.iter().map(AbortController::signal))
        .map(|(g, signal)| {
            Box::pin(fetch_one(
                g.clone(),
                path.clone(),
                target.cid,
                raw_block,
                config.max_bytes,
                signal,
            ))
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
            worker::console_warn!("ipfs {path}: every gateway failed; last: {last}");
            Err(ApiError::new(
                502,
                "GATEWAY_ERROR",
                "no configured IPFS gateway served valid content",
            ))
        }
        Either::Right(_) => {
            let mut err = ApiError::new(504, "GATEWAY_TIMEOUT", "the IPFS gateways did not answer in time");
            err.retry_after = Some(30);
            Err(err)
        }
    }
}

/// `GET /ipfs/:cid*`.
pub async fn relay(req: &Request, env: &Env, path: &str) -> ApiResult<Response> {
    let config = IpfsConfig::from_env(env)?;
    let target = CidPath::parse(path)?;
    let content = fetch_content(env, &config, &target).await?;
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
    let active = content.content_type.contains("html")
        || content.content_type.contains("svg")
        || content.content_type.contains("xml");
    if active {
        headers.set(
            "content-security-policy",
            "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'",
        )?;
    }
    if let Some(range) = req.headers().get("range")? {
        let unsatisfiable = || {
            ApiError::new(
                416,
                "RANGE_NOT_SATISFIABLE",
                format!("the content has {total} bytes"),
            )
        };
        let ranges = http_range_header::parse_range_header(&range)
            .and_then(|r| r.validate(total))
            .map_err(|_| unsatisfiable())?;
        // one range is served; several are answered with the first (multipart/byteranges is not produced)
        let first = ranges.first().ok_or_else(unsatisfiable)?;
        let (start, end) = (*first.start(), *first.end());
        let slice = content.bytes[start as usize..=end as usize].to_vec();
        headers.set("content-range", &format!("bytes {start}-{end}/{total}"))?;
        return Ok(Response::from_bytes(slice)?
            .with_status(206)
            .with_headers(headers));
    }
    Ok(Response::from_bytes(content.bytes)?.with_headers(headers))
}

/// `POST /api/v0/add`: multipart upload (field `file`, or the first file field) stored in R2 under its CID.
/// Answers like Kubo: `{"Name","Hash","Size"}`.
pub async fn add(mut req: Request, env: &Env) -> ApiResult<Response> {
    let config = IpfsConfig::from_env(env)?;
    let too_large = || {
        ApiError::bad_request(
            "BODY_TOO_LARGE",
            format!("uploads are limited to {} bytes", config.upload_max_bytes),
        )
    };
    if let Some(len) = req.headers().get("content-length")?
        && len
            .trim()
            .parse::<usize>()
            .map_or(true, |n| n > config.upload_max_bytes + 16 * 1024)
    {
        return Err(too_large());
    }
    let content_type = req.headers().get("content-type")?.unwrap_or_default();
    if !content_type
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        return Err(ApiError::bad_request(
            "UNSUPPORTED_CONTENT_TYPE",
            "upload with multipart/form-data and a `file` field (like `ipfs add`)",
        ));
    }
    let form = req
        .form_data()
        .await
        .map_err(|_| ApiError::bad_request("INVALID_MULTIPART", "malformed multipart body"))?;
    let file = match form.get("file") {
        Some(worker::FormEntry::File(f)) => f,
        Some(worker::FormEntry::Field(text)) => {
            return upload_bytes(
                env,
                &config,
                "file".to_owned(),
                text.into_bytes(),
                "text/plain".to_owned(),
            )
            .await;
        }
        None => {
            return Err(ApiError::bad_request(
                "MISSING_FIELD",
                "missing multipart field \"file\"",
            ));
        }
    };
    if file.size() > config.upload_max_bytes {
        return Err(too_large());
    }
    let bytes = file.bytes().await?;
    upload_bytes(env, &config, file.name(), bytes, file.type_()).await
}

async fn upload_bytes(
    env: &Env,
    config: &IpfsConfig,
    name: String,
    bytes: Vec<u8>,
    media: String,
) -> ApiResult<Response> {
    if bytes.len() > config.upload_max_bytes {
        return Err(ApiError::bad_request(
            "BODY_TOO_LARGE",
            format!("uploads are limited to {} bytes", config.upload_max_bytes),
        ));
    }
    let cid = raw_cid(&bytes);
    let size = bytes.len();
    let content_type = content_type_of(Some(media), &bytes);
    env.bucket("IPFS")?
        .put(cid.to_string(), bytes)
        .http_metadata(worker::HttpMetadata {
            content_type: Some(content_type),
            ..Default::default()
        })
        .execute()
        .await?;
    Ok(Response::from_json(
        &serde_json::json!({ "Name": name, "Hash": cid.to_string(), "Size": size.to_string() }),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
