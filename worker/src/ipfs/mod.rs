//! The IPFS relay (`GET /ipfs/:cid*`) and upload (`POST /api/v0/add`).
//!
//! Content comes from the project's own store (R2, keyed by CID) first, then from the configured gateways raced
//! against each other (at most 6 in flight; the losers are aborted). Raw blocks (`raw` codec, no path) are verified
//! against their CID and kept in R2 with the type the gateway gave them; dag-pb (UnixFS) content and every path below
//! a CID are fetched as CARs, every block verified and the file proven from them ([`car`]), and kept in R2 under
//! `<cid>/<path>`. A wrong answer from a gateway is discarded and the race goes on. Only configured gateways are ever
//! contacted. Verified responses are immutable; content a gateway served unverified (only with
//! `IPFS_ALLOW_UNVERIFIED=true`) is never marked immutable nor kept in R2. Responses are `nosniff`, sandboxed for
//! HTML/SVG, size-limited, and support `Range` and `HEAD`. When every gateway answers 404 the relay answers 404.
//!
//! Latency trade-off of the first fetch: below `IPFS_STREAM_MIN_BYTES` (UnixFS) or 16× it (raw blocks) content is
//! verified whole before the answer starts; a raw block then never enters the Worker's memory ([`native`]: the
//! runtime buffers, hashes and sends it). From there it is answered as it is verified ([`answer_streaming`]): a UnixFS
//! file's bytes go out leaf by leaf, each leaf hashed and reached from the root first; a raw block's pieces go out
//! as they are hashed, its hash checked at the end. The answer carries the content's `Content-Length`, and the last piece is
//! held back until the whole content is proven — when the proof fails the body is aborted, so a client never takes
//! a cut or wrong answer as complete (a browser may still have shown the part it got). The R2 write (with its D1 ledger) starts only after the answer's last byte has left,
//! under `Context::wait_until`, and only for proven content. See BENCHMARKS.md for the comparison with LUKSO's
//! streaming relay.

mod car;
mod content;
mod gateways;
mod native;

use profile_relayer::ipfs::{CidPath, RAW, raw_cid};
use worker::{Context, Env, Headers, Method, Request, RequestInit, Response};

pub use self::{
    content::{SANDBOX_CSP, is_passive},
    native::Content,
};
use self::{
    content::{byte_range, content_type_of, upload_type},
    gateways::{Fetched, Streaming, race_gateways},
};
use crate::{
    config::{Config, IpfsConfig, Setting},
    error::{ApiError, ApiResult, Code},
};

/// The request a gateway fetch is made for, and its client's miss limit (`IPFS_MISS_RATE_LIMIT_PER_MINUTE`).
pub type Client<'a> = (&'a Request, &'a Setting<u32>);
/// How long after an answer's last byte the R2 write of its block starts (see [`relay`]).
const STORE_AFTER_ANSWER: core::time::Duration = core::time::Duration::from_millis(150);

/// Writing a verified block to R2, left to the caller (the relay starts it after its answer).
pub type PendingStore = core::pin::Pin<Box<dyn core::future::Future<Output = ()>>>;

/// Fetches `target` (CID + path): R2 first, then the gateways. Content fetched from a gateway is verified (or, in
/// the unverified mode, marked unverified), and verified content is stored in R2 before this returns (the relay, [`relay`], answers without waiting for R2).
/// `client`: the request a gateway fetch is made for, which then takes a token of its client's miss bucket
/// ([`limit_miss`]); `None` for the Worker's own reads (the indexer).
pub async fn fetch_content(
    env: &Env,
    config: &IpfsConfig,
    target: &CidPath,
    client: Option<Client<'_>>,
) -> ApiResult<Content> {
    match fetch_content_deferred(env, config, target, true, client, None).await? {
        Found::Whole(content, store) => {
            if let Some(store) = store {
                store.await;
            }
            Ok(content)
        }
        Found::Stream(_) => Err(ApiError::internal("a stream where whole content was asked for")),
    }
}

/// Content found for a request: whole (with its R2 write still to do), or streaming as it is verified.
enum Found {
    Whole(Content, Option<PendingStore>),
    Stream(Box<Streaming>),
}

/// [`fetch_content`] without the R2 write on its path: the content is returned as soon as it is verified, with the
/// write still to do (hand it to `Context::wait_until`). Nothing unverified is ever returned as verified: a raw
/// block is read whole and hashed, a UnixFS file proven from its CAR, before it is returned; only storing it waits.
/// `look_in_store: false` skips R2 (the caller asked it already). `stream_min`: content at least this long may come
/// back as a [`Streaming`] (verified piece by piece; proven only at its end), `None`: always whole.
async fn fetch_content_deferred(
    env: &Env,
    config: &IpfsConfig,
    target: &CidPath,
    look_in_store: bool,
    client: Option<Client<'_>>,
    stream_min: Option<u64>,
) -> ApiResult<Found> {
    let raw_block = target.cid.codec() == RAW && target.path.is_empty();
    // what R2 holds under `<cid>[/<path>]` was verified before it was written (or is an upload: a raw block)
    if look_in_store && let Some(object) = env.bucket("IPFS")?.get(store_key(target)).execute().await? {
        let content_type = object.http_metadata().content_type;
        if let Some(body) = object.body()
            && let worker::ResponseBody::Stream(stream) = body.response_body()?
        {
            let bytes = native::read_all(&stream).await.map_err(ApiError::internal)?;
            if !raw_block || native::is_block_of(&target.cid, &bytes).await {
                let content_type = content_type_of(content_type, &native::head(&bytes));
                return Ok(Found::Whole(
                    Content {
                        bytes,
                        content_type,
                        verified: true,
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
    if let Some((req, limit)) = client {
        limit_miss(req, env, limit.value()?).await?;
    }
    let content = match race_gateways(config, target, raw_block, stream_min).await? {
        Fetched::Stream(stream) => return Ok(Found::Stream(stream)),
        Fetched::Whole(content) => content,
    };
    if !content.verified {
        return Ok(Found::Whole(content, None));
    }
    // verified bytes are immutable: keep them, within the relay cache's bound
    let (env, config, key, stored) = (env.clone(), config.clone(), store_key(target), content.clone());
    let store: PendingStore = Box::pin(async move {
        if let Err(e) = cache_block(&env, &config, &key, &stored).await {
            worker::console_warn!("ipfs cache {}: {} {}", key, e.code, e.message);
        }
    });
    Ok(Found::Whole(content, Some(store)))
}

/// Takes one token from the client IP's miss bucket (`IPFS_MISS_RATE_LIMIT_PER_MINUTE`, 0 turns it off): every
/// `/ipfs` or `/image` request whose content is not in R2 (gateways are raced for it), and every `/image` resize
/// not in the derived-image cache. What R2 already holds costs nothing. A client that keeps missing takes its tokens
/// a lease at a time ([`crate::ratelimit::Taking::Leases`]): no object call for most of its misses.
///
/// # Errors
/// 429 `RATE_LIMITED` with `Retry-After`.
pub async fn limit_miss(req: &Request, env: &Env, limit: u32) -> ApiResult<()> {
    crate::ratelimit::limit_client_in(
        req,
        env,
        "miss",
        limit,
        "IPFS and image requests for content not stored here",
        crate::ratelimit::Taking::Leases,
    )
    .await
}

fn origin(kind: &str) -> std::collections::HashMap<String, String> {
    std::collections::HashMap::from([("origin".to_owned(), kind.to_owned())])
}

/// The R2 key of content: the CID's text (a raw block, an upload, a UnixFS file) and the path below it.
fn store_key(target: &CidPath) -> String {
    target.to_gateway_path()
}

/// Keeps a verified block (or UnixFS file) fetched for anyone in R2. Anonymous traffic decides what is fetched, so the relay's
/// share of the bucket is bounded by `IPFS_CACHE_MAX_BYTES`: a ledger in D1 (`relay_cache`) records what the
/// relay stored, and the oldest entries are evicted to make room. Uploads (API key holders) are never evicted.
/// Concurrent requests may pass the bound by at most one block each.
async fn cache_block(env: &Env, config: &IpfsConfig, key: &str, content: &Content) -> ApiResult<()> {
    let cache = crate::r2_cache::BoundedCache {
        table: "relay_cache",
        key_column: "cid",
        max_bytes: config.cache_max_bytes,
    };
    cache
        .put(
            env,
            crate::r2_cache::Object {
                key,
                bytes: crate::r2_cache::Bytes::Runtime(&content.bytes),
                content_type: &content.content_type,
                metadata: origin("relay"),
            },
        )
        .await?;
    Ok(())
}

/// `GET` and `HEAD /ipfs/:cid*` (`HEAD`: the same status and headers, no body). The answer waits for the content
/// to be verified, never for it to be stored: the R2 write runs after the answer, under `ctx.wait_until`.
pub async fn relay(
    req: &Request,
    env: &Env,
    settings: &Config,
    ctx: &Context,
    path: &str,
) -> ApiResult<Response> {
    let config = settings.ipfs()?;
    let target = CidPath::parse(path)?;
    let range = req.headers().get("range")?;
    // whole content R2 has streams straight from there; otherwise R2 is not asked twice
    let streamable = range.is_none();
    if streamable && let Some(answer) = answer_from_store(req, env, &target).await? {
        crate::analytics::record(&crate::analytics::Point::ipfs_cache(true));
        return Ok(answer);
    }
    if streamable {
        crate::analytics::record(&crate::analytics::Point::ipfs_cache(false));
    }
    // a whole GET may be answered as it is verified; `HEAD` and ranges wait for the whole content
    let stream_min = (streamable && req.method() != Method::Head).then_some(config.stream_min_bytes);
    let (content, store) = match fetch_content_deferred(
        env,
        config,
        &target,
        !streamable,
        Some((req, &settings.limits.ipfs_miss)),
        stream_min,
    )
    .await?
    {
        Found::Whole(content, store) => (content, store),
        Found::Stream(stream) => return answer_streaming(env, config, ctx, &target, *stream),
    };
    let total = u64::from(content.bytes.length());
    let headers = relay_headers(&target, &content.content_type, content.verified)?;
    if let Some(range) = range {
        let Some((start, end)) = byte_range(&range, total) else {
            return Err(ApiError::new(
                Code::RangeNotSatisfiable,
                format!("the content has {total} bytes"),
            ));
        };
        // `byte_range` keeps both ends inside the content, whose length is a `u32` (a JS array's)
        let slice = content.bytes.subarray(
            u32::try_from(start).unwrap_or(u32::MAX),
            u32::try_from(end.saturating_add(1)).unwrap_or(u32::MAX),
        );
        headers.set("content-range", &format!("bytes {start}-{end}/{total}"))?;
        if let Some(store) = store {
            ctx.wait_until(store);
        }
        return answer(req, 206, slice, headers);
    }
    match store {
        // the answer waits for verification, never for R2: the write starts a moment after the runtime has taken
        // the answer's last byte (in `wrangler dev` R2 and D1 run in the Worker's own process, and a 1 MB write
        // while the answer was still going out delayed its end: BENCHMARKS.md#ipfs-relay; in production nothing but
        // the time the block reaches R2)
        Some(store) if req.method() != Method::Head => {
            let (body, sent) = crate::body::body_with_end(&content.bytes).map_err(ApiError::internal)?;
            ctx.wait_until(async move {
                // settles when the body has been read to its end or abandoned: the block is verified either way
                let _ = worker::wasm_bindgen_futures::JsFuture::from(sent).await;
                worker::Delay::from(STORE_AFTER_ANSWER).await;
                store.await;
            });
            Ok(Response::from_body(worker::ResponseBody::Stream(body))?.with_headers(headers))
        }
        store => {
            if let Some(store) = store {
                ctx.wait_until(store);
            }
            answer(req, 200, content.bytes, headers)
        }
    }
}

/// Answers content as it is verified: each verified piece is sent as it comes, but the last is held back until the
/// whole content is proven (a raw block's hash; a UnixFS file's every block, reached from its root, and its size).
/// The answer has the content's `Content-Length`; when the proof fails the body is aborted, so the client's read
/// fails and a cut body is never taken as whole. The content is kept in R2 only once proven.
fn answer_streaming(
    env: &Env,
    config: &IpfsConfig,
    ctx: &Context,
    target: &CidPath,
    stream: Streaming,
) -> ApiResult<Response> {
    let headers = relay_headers(target, &stream.content_type, true)?;
    let length = u32::try_from(stream.total).map_err(|_| ApiError::internal("content over 4 GiB"))?;
    let (sink, body) = native::Sink::new(length).map_err(ApiError::internal)?;
    let (env, config, key, content_type) = (
        env.clone(),
        config.clone(),
        store_key(target),
        stream.content_type.clone(),
    );
    ctx.wait_until(async move {
        match pump(stream, sink).await {
            Ok(bytes) => {
                worker::Delay::from(STORE_AFTER_ANSWER).await;
                let content = Content {
                    bytes,
                    content_type,
                    verified: true,
                };
                if let Err(e) = cache_block(&env, &config, &key, &content).await {
                    worker::console_warn!("ipfs cache {}: {} {}", key, e.code, e.message);
                }
            }
            Err(e) => worker::console_warn!("ipfs {key}: the answer was aborted: {e}"),
        }
    });
    Ok(Response::from_body(worker::ResponseBody::Stream(body))?.with_headers(headers))
}

/// How many verified pieces may be on their way to the client at once: the next pieces are read and verified while
/// the client takes the previous ones.
const PIECES_IN_FLIGHT: usize = 16;

/// Sends a stream's verified pieces to `sink`, holding back the last until the content is proven; aborts the body
/// otherwise. The proven content (copied aside as it is sent, for the R2 write).
async fn pump(mut stream: Streaming, sink: native::Sink) -> Result<js_sys::Uint8Array, String> {
    let mut held: Option<js_sys::Uint8Array> = None;
    let mut sent: Vec<js_sys::Uint8Array> = Vec::new();
    let mut in_flight = std::collections::VecDeque::new();
    let mut pieces = stream.take_ready();
    loop {
        for piece in pieces {
            if let Some(previous) = held.replace(piece) {
                // a copy for R2: the runtime may take the sent buffer
                sent.push(previous.slice(0, previous.length()));
                in_flight.push_back(sink.write(&previous));
            }
        }
        while in_flight.len() > PIECES_IN_FLIGHT {
            if let Some(write) = in_flight.pop_front()
                && let Err(e) = write.await
            {
                stream.stop();
                settle(in_flight).await;
                return Err(format!("the client went away: {e:?}"));
            }
        }
        match stream.next().await {
            Ok(Some(more)) => pieces = more,
            Ok(None) => break,
            Err(e) => {
                sink.abort(&e);
                // the writes still queued fail with the body
                settle(in_flight).await;
                return Err(e);
            }
        }
    }
    if let Some(last) = held {
        sent.push(last.slice(0, last.length()));
        in_flight.push_back(sink.write(&last));
    }
    for write in in_flight {
        write.await.map_err(|e| format!("the client went away: {e:?}"))?;
    }
    sink.close().await?;
    Ok(gateways::joined_js(&sent))
}

/// Waits for queued writes to settle, whatever their outcome.
async fn settle(writes: std::collections::VecDeque<worker::wasm_bindgen_futures::JsFuture>) {
    for write in writes {
        let _ = write.await;
    }
}

/// The headers of every relayed answer.
fn relay_headers(target: &CidPath, content_type: &str, verified: bool) -> ApiResult<Headers> {
    let headers = Headers::new();
    headers.set("content-type", content_type)?;
    headers.set("cache-control", cache_control(verified))?;
    headers.set("x-content-type-options", "nosniff")?;
    headers.set("accept-ranges", "bytes")?;
    headers.set("etag", &format!("\"{}\"", target.to_gateway_path()))?;
    headers.set("x-ipfs-path", &format!("/ipfs/{}", target.to_gateway_path()))?;
    headers.set("x-content-verified", if verified { "true" } else { "false" })?;
    // the API's origin serves this content: whatever it is, it cannot run scripts or load anything there
    headers.set("content-security-policy", SANDBOX_CSP)?;
    if !is_passive(content_type) {
        headers.set("content-disposition", "attachment")?;
    }
    Ok(headers)
}

/// The `Cache-Control` of relayed content: verified content never changes; unverified content (the unverified
/// mode) is kept a minute at most.
#[must_use]
pub fn cache_control(verified: bool) -> &'static str {
    if verified {
        "public, max-age=29030400, immutable"
    } else {
        "public, max-age=60"
    }
}

/// Whole content kept in R2, streamed from there as it is read: what R2 holds was verified before it was written
/// (a relayed block or UnixFS file) or is named by the hash of its bytes (an upload), and is stored with its media
/// type. `None` when R2 does not have it.
async fn answer_from_store(req: &Request, env: &Env, target: &CidPath) -> ApiResult<Option<Response>> {
    let Some(object) = env.bucket("IPFS")?.get(store_key(target)).execute().await? else {
        return Ok(None);
    };
    // every write sets the (sanitized) type; an object without one is served as bytes
    let content_type = object
        .http_metadata()
        .content_type
        .unwrap_or_else(|| "application/octet-stream".to_owned());
    let headers = relay_headers(target, &content_type, true)?;
    headers.set("content-length", &object.size().to_string())?;
    if req.method() == Method::Head {
        return Ok(Some(Response::empty()?.with_headers(headers)));
    }
    let body = object
        .body()
        .map_or(Ok(worker::ResponseBody::Empty), |b| b.response_body())?;
    Ok(Some(Response::from_body(body)?.with_headers(headers)))
}

/// The answer with `body`; to `HEAD`, the same headers with the length `GET` would answer and no body (the runtime
/// sends no `Content-Length` of its own for a `HEAD` answer).
fn answer(req: &Request, status: u16, body: js_sys::Uint8Array, headers: Headers) -> ApiResult<Response> {
    if req.method() == Method::Head {
        headers.set("content-length", &body.length().to_string())?;
        return Ok(Response::empty()?.with_status(status).with_headers(headers));
    }
    let native =
        worker::web_sys::Response::new_with_opt_buffer_source(Some(&body)).map_err(worker::Error::from)?;
    Ok(Response::from(native).with_status(status).with_headers(headers))
}

/// `POST /api/v0/add`: multipart upload (field `file`, or the first file field) stored in R2 under its CID, once
/// its size is spent from the client address's hourly budget (`UPLOAD_BYTES_PER_HOUR`). Answers like Kubo
/// (`{"Name","Hash","Size"}`) and like Pinata (`{"IpfsHash","PinSize","Timestamp"}`).
pub async fn add(mut req: Request, env: &Env, config: &Config) -> ApiResult<Response> {
    let config = config.ipfs()?;
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
    // the declared type (the part's `Content-Type`) is never used: see `upload_type`
    let (name, bytes) = match form.get("file") {
        Some(worker::FormEntry::File(f)) => (f.name(), f.bytes().await?),
        Some(worker::FormEntry::Field(text)) => ("file".to_owned(), text.into_bytes()),
        None => {
            return Err(ApiError::new(
                Code::MissingField,
                "missing multipart field \"file\"",
            ));
        }
    };
    if bytes.len() > config.upload_max_bytes {
        return Err(crate::body::too_large(config.upload_max_bytes));
    }
    crate::ratelimit::spend_upload_budget(&req, env, config.upload_bytes_per_hour, bytes.len()).await?;
    upload_bytes(env, name, bytes).await
}

/// Stores an upload under its CID, with the media type its bytes are sniffed as ([`content::upload_type`]), never
/// the uploader's. Content is addressed by its bytes: when the CID is stored already as an upload, the stored object
/// stays, but an upload stored with another type (by a release that kept the uploader's) is stored again with the
/// sniffed one; the same bytes cached by the relay (evictable) are stored again as an upload, which no cache evicts
/// ([`crate::r2_cache`]).
async fn upload_bytes(env: &Env, name: String, bytes: Vec<u8>) -> ApiResult<Response> {
    let cid = raw_cid(&bytes);
    let size = bytes.len();
    let content_type = upload_type(&bytes).to_owned();
    let bucket = env.bucket("IPFS")?;
    // written unless an upload of these bytes with this type is stored: content the relay cached (evictable) becomes
    // an upload (kept), and an upload stored with another type is typed again
    let stale = match bucket.head(cid.to_string()).await? {
        None => true,
        Some(stored) => {
            !crate::r2_cache::is_upload_object(&stored)?
                || stored.http_metadata().content_type.as_deref() != Some(content_type.as_str())
        }
    };
    if stale {
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
