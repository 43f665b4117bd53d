//! The image route (`GET`/`HEAD /image/:cid*?method=&data=&width=&dpr=`), as LUKSO's `api.universalprofile.cloud`
//! serves it to the wallet: IPFS content through the relay ([`crate::ipfs::fetch_content`]: the same CID/path
//! validation, gateways, CID verification and store), checked against an LSP2 verification hash when one is given,
//! and scaled down to `width × dpr` pixels wide.
//!
//! - Verification: `method` is an LSP2 verification method by name (`keccak256(bytes)`, `keccak256(utf8)`) or id
//!   (`0x8019f9b1`, `0x6f357c6a`), `data` the 32-byte hash. The answer carries `x-verified: true|false` (keccak256
//!   of the source bytes, before any resizing). `0x00000000` (or no `method`) asks for nothing: no `x-verified`.
//!   `ecdsa` cannot be checked from the bytes alone, nor a hash method without a hash: `x-verified: false`. A mismatch is still served (the header
//!   is the answer; the wallet decides what to show), as the incumbent's clients expect.
//! - Resizing ([`resize::resize`]): PNG, JPEG, static GIF and static WebP are decoded within bounds
//!   ([`resize::MAX_SOURCE_SIDE`], [`resize::MAX_DECODE_BYTES`], the whole resize within
//!   [`resize::MAX_RESIZE_BYTES`]; past them 413 `IMAGE_TOO_LARGE`, undecodable bytes
//!   422 `INVALID_IMAGE`), scaled to the target width keeping the aspect ratio and EXIF orientation, never enlarged
//!   (Cloudflare's `fit=scale-down`), and encoded as PNG (PNG, GIF), JPEG (JPEG) or lossless WebP (WebP). The target
//!   width ([`params`]) is capped at [`params::MAX_OUTPUT_WIDTH`].
//! - Passed through unchanged, exactly as `/ipfs` serves them (same headers, the sandbox CSP, `attachment` for
//!   active types): SVG, animated GIF/WebP, other formats and non-images, and anything already at most the target
//!   width or requested without `width`.
//! - Derived images are kept in R2 (`image/v1/<target width>/<cid/path>`, with the source's keccak256 so that a
//!   cached answer can still be verified), bounded by `IMAGE_CACHE_MAX_BYTES` like the relay's cache.

mod params;
mod resize;

use alloy_primitives::B256;
use profile_relayer::ipfs::CidPath;
use worker::{Env, Headers, Request, Response};

use self::{
    params::{ImageQuery, content_hash},
    resize::{Resized, resize},
};
use crate::{
    config::{Config, Setting},
    error::ApiResult,
};

/// The R2 key of a derived image. `v1` names the output policy (formats, filter, quality): a change of it takes a
/// new prefix, so that no stale rendition is served.
fn derived_key(target: &CidPath, width: u32) -> String {
    format!("image/v1/{width}/{}", target.to_gateway_path())
}

/// What is answered: the bytes, their type, and the keccak256 of the source (for `x-verified`).
struct Answer {
    bytes: Vec<u8>,
    content_type: String,
    source_hash: B256,
    source_verified: bool,
}

/// `GET`/`HEAD /image/:cid*`.
pub async fn route(req: &Request, env: &Env, settings: &Config, path: &str) -> ApiResult<Response> {
    let url = req.url()?;
    let query = ImageQuery::parse(
        url.query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect::<Vec<_>>()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str())),
    )?;
    let target = CidPath::parse(path)?;
    let config = settings.ipfs()?;
    let width = query.target_width();
    let key = width.map(|w| derived_key(&target, w));
    let cached = match &key {
        Some(key) => cached_derived(env, key).await?,
        None => None,
    };
    let answer = match cached {
        Some(answer) => answer,
        None => {
            // a resize is a miss whatever R2 holds (decoding is the work); without width only a gateway fetch is
            let client = if key.is_some() {
                crate::ipfs::limit_miss(req, env, settings.limits.ipfs_miss.value()?).await?;
                None
            } else {
                Some((req, &settings.limits.ipfs_miss))
            };
            let content = crate::ipfs::fetch_content(env, config, &target, client).await?;
            let source = content.to_vec();
            let source_hash = content_hash(&source);
            let resized = match width {
                // SVG is text: never handed to a raster decoder, always passed through
                Some(w) if content.content_type != "image/svg+xml" => resize(&source, w)?,
                _ => Resized::Original,
            };
            match (resized, &key) {
                (
                    Resized::Image {
                        bytes, content_type, ..
                    },
                    Some(key),
                ) => {
                    let answer = Answer {
                        bytes,
                        content_type: content_type.to_owned(),
                        source_hash,
                        source_verified: content.verified,
                    };
                    // an image derived from content served unverified (IPFS_ALLOW_UNVERIFIED) is not kept
                    if answer.source_verified
                        && let Err(e) =
                            store_derived(env, &settings.image_cache_max_bytes, key, &answer).await
                    {
                        worker::console_warn!("image cache {key}: {} {}", e.code, e.message);
                    }
                    answer
                }
                _ => Answer {
                    bytes: source,
                    content_type: content.content_type,
                    source_hash,
                    source_verified: content.verified,
                },
            }
        }
    };
    respond(&target, width, &query, answer)
}

fn respond(target: &CidPath, width: Option<u32>, query: &ImageQuery, answer: Answer) -> ApiResult<Response> {
    let headers = Headers::new();
    headers.set("content-type", &answer.content_type)?;
    headers.set(
        "cache-control",
        crate::ipfs::cache_control(answer.source_verified),
    )?;
    headers.set("x-content-type-options", "nosniff")?;
    let gateway_path = target.to_gateway_path();
    let etag = match width {
        Some(w) => format!("\"{gateway_path}@{w}w\""),
        None => format!("\"{gateway_path}\""),
    };
    headers.set("etag", &etag)?;
    headers.set("x-ipfs-path", &format!("/ipfs/{gateway_path}"))?;
    headers.set(
        "x-content-verified",
        if answer.source_verified { "true" } else { "false" },
    )?;
    if let Some(verified) = query.verified(answer.source_hash) {
        headers.set("x-verified", if verified { "true" } else { "false" })?;
    }
    headers.set("content-security-policy", crate::ipfs::SANDBOX_CSP)?;
    if !crate::ipfs::is_passive(&answer.content_type) {
        headers.set("content-disposition", "attachment")?;
    }
    Ok(Response::from_bytes(answer.bytes)?.with_headers(headers))
}

async fn cached_derived(env: &Env, key: &str) -> ApiResult<Option<Answer>> {
    let Some(object) = env.bucket("IPFS")?.get(key).execute().await? else {
        return Ok(None);
    };
    let meta = object.custom_metadata()?;
    let Some(source_hash) = meta.get("sourceKeccak256").and_then(|h| h.parse::<B256>().ok()) else {
        return Ok(None);
    };
    let Some(content_type) = object.http_metadata().content_type else {
        return Ok(None);
    };
    let Some(body) = object.body() else {
        return Ok(None);
    };
    Ok(Some(Answer {
        bytes: body.bytes().await?,
        content_type,
        source_hash,
        source_verified: meta.get("sourceVerified").is_some_and(|v| v == "true"),
    }))
}

/// Keeps a derived image in R2. Anyone can ask for any width of any image, so the cache is bounded like the
/// relay's (`IMAGE_CACHE_MAX_BYTES`): a ledger in D1 (`image_cache`) records what is stored, the oldest entries
/// are evicted to make room.
async fn store_derived(env: &Env, max_bytes: &Setting<u64>, key: &str, answer: &Answer) -> ApiResult<()> {
    let cache = crate::r2_cache::BoundedCache {
        table: "image_cache",
        key_column: "key",
        max_bytes: max_bytes.value()?,
    };
    cache
        .put(
            env,
            crate::r2_cache::Object {
                key,
                bytes: crate::r2_cache::Bytes::Worker(&answer.bytes),
                content_type: &answer.content_type,
                metadata: std::collections::HashMap::from([
                    ("origin".to_owned(), "image".to_owned()),
                    ("sourceKeccak256".to_owned(), answer.source_hash.to_string()),
                    ("sourceVerified".to_owned(), answer.source_verified.to_string()),
                ]),
            },
        )
        .await?;
    Ok(())
}
