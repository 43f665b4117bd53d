//! The configured gateways raced against each other, hedged: the first is asked at once, each next one when the one
//! before it has failed or has gone `IPFS_HEDGE_MS` without serving the content (0: all at once, as LUKSO's relay
//! races its two), so that a healthy first gateway is the only one asked — one upstream fetch per miss instead of
//! one per gateway — and a slow or failing one costs at most the hedge. The first verified answer wins, the others
//! are aborted. A raw
//! block is asked as `application/vnd.ipld.raw` and hashed; anything else (dag-pb / UnixFS, paths) as a CAR
//! ([`car`]: every block hashed, the path and the file proven). A gateway whose answer does not verify is rejected
//! and the race goes on. In the unverified mode (`IPFS_ALLOW_UNVERIFIED`) a gateway that serves no CAR may serve the
//! bytes as they are, but only when no gateway serves verified content.
//!
//! An answer the gateway declares shorter than 16 × `IPFS_STREAM_MIN_BYTES` (4 MiB) — a raw block or a CAR — is
//! read whole by the runtime and verified at once ([`Fetched::Whole`]). A longer one, or a CAR of no declared
//! length whose file is at least `IPFS_STREAM_MIN_BYTES`, may be answered as it is verified ([`Fetched::Stream`]):
//! the race is won by the first gateway whose first bytes verify (a raw block's first pieces, hashed as they come; a
//! UnixFS file's root and first leaves, reached through verified links), and the rest follows as it is verified.
//! What the caller needs whole is always verified whole before it is returned.

use futures_channel::oneshot;
use futures_util::future::{Either, select, select_ok};
use js_sys::Uint8Array;
use profile_relayer::ipfs::CidPath;
use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

use super::{
    car,
    content::{SNIFF_BYTES, content_type_of},
    native::{self, Content},
};
use crate::{
    body::ReadError,
    config::IpfsConfig,
    error::{ApiError, ApiResult, Code},
};
const MAX_GATEWAYS: usize = 6;
/// Blocks a CAR lacks that are fetched alone (HAMT shards, a directory's page), per gateway and request.
const MAX_EXTRA_BLOCKS: usize = 32;
/// The verified bytes a stream has before its answer starts: the media type is sniffed from them.
const PRELUDE_BYTES: u32 = 4096;

/// Why one gateway did not serve the content.
#[derive(Debug)]
struct Failure {
    /// The gateway answered 404, or its verified blocks prove there is no file at the path.
    not_found: bool,
    /// Its verified blocks prove the path names a directory without an `index.html`.
    directory: bool,
    /// What it answered does not verify against the CID (a wrong block, path or size; no CAR).
    unverified: bool,
    detail: String,
}

impl From<String> for Failure {
    fn from(detail: String) -> Self {
        Self {
            not_found: false,
            directory: false,
            unverified: false,
            detail,
        }
    }
}

impl Failure {
    fn unverified(detail: String) -> Self {
        Self {
            unverified: true,
            ..Self::from(detail)
        }
    }
}

/// What one gateway is asked.
#[derive(Debug, Clone)]
struct Ask {
    gateway: String,
    target: CidPath,
    /// A raw block (`raw` codec, no path): fetched as `application/vnd.ipld.raw` and hashed.
    raw_block: bool,
    max_bytes: usize,
    allow_unverified: bool,
    /// Content at least this long may be streamed as it is verified; `None`: only whole.
    stream_min: Option<u64>,
    /// The longest wait for a gateway's next bytes once its answer has started.
    timeout_ms: u64,
}

/// The `Accept` of a CAR request: CARv1, depth-first (a file then streams leaf by leaf; another order works too,
/// with the blocks that come ahead of their turn held), duplicates sent (a block is dropped once used).
const CAR_ACCEPT: &str = "application/vnd.ipld.car; version=1; order=dfs; dups=y";

async fn send(
    url: &str,
    accept: Option<&str>,
    signal: &worker::AbortSignal,
) -> Result<worker::Response, Failure> {
    let headers = Headers::new();
    if let Some(accept) = accept {
        headers
            .set("accept", accept)
            .map_err(|e| Failure::from(e.to_string()))?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let request = Request::new_with_init(url, &init).map_err(|e| Failure::from(e.to_string()))?;
    Fetch::Request(request)
        .send_with_signal(signal)
        .await
        .map_err(|e| Failure::from(e.to_string()))
}

fn status_failure(gateway: &str, response: &worker::Response) -> Failure {
    Failure {
        not_found: response.status_code() == 404,
        ..Failure::from(format!("{gateway}: HTTP {}", response.status_code()))
    }
}

/// A body of at most `max` bytes, into the Worker.
async fn bounded(gateway: &str, response: &mut worker::Response, max: usize) -> Result<Vec<u8>, Failure> {
    crate::body::response_bytes(response, max)
        .await
        .map_err(|e| match e {
            ReadError::TooLarge => Failure::from(format!("{gateway}: over the size limit of {max} bytes")),
            ReadError::Failed(detail) => Failure::from(format!("{gateway}: {detail}")),
        })
}

/// Waits at most `idle_ms` for the next piece of a body.
async fn read_idle(
    reader: &native::Reader,
    idle_ms: u64,
    gateway: &str,
) -> Result<Option<Uint8Array>, Failure> {
    let piece = Box::pin(reader.read());
    let idle = Box::pin(Delay::from(core::time::Duration::from_millis(idle_ms)));
    match select(piece, idle).await {
        Either::Left((read, _)) => read.map_err(|e| Failure::from(format!("{gateway}: {e}"))),
        Either::Right(_) => Err(Failure::from(format!("{gateway}: no bytes for {idle_ms} ms"))),
    }
}

/// One array of the bytes of `pieces`, in the runtime.
fn joined<'a>(pieces: impl IntoIterator<Item = &'a [u8]> + Clone) -> Uint8Array {
    let total: usize = pieces.clone().into_iter().map(<[u8]>::len).sum();
    let out = Uint8Array::new_with_length(u32::try_from(total).unwrap_or(u32::MAX));
    let mut at = 0_u32;
    for piece in pieces {
        let len = u32::try_from(piece.len()).unwrap_or(u32::MAX);
        out.subarray(at, at.saturating_add(len)).copy_from(piece);
        at = at.saturating_add(len);
    }
    out
}

/// One array of the runtime-held `pieces`.
pub(super) fn joined_js(pieces: &[Uint8Array]) -> Uint8Array {
    let total: u32 = pieces.iter().map(Uint8Array::length).fold(0, u32::saturating_add);
    let out = Uint8Array::new_with_length(total);
    let mut at = 0_u32;
    for piece in pieces {
        out.set(piece, at);
        at = at.saturating_add(piece.length());
    }
    out
}

/// What one gateway served: verified content whole, or the start of a verified stream.
pub(super) enum Fetched {
    /// The content, verified whole (or unverified, in the unverified mode).
    Whole(Content),
    /// Content verified as it streams: what is verified so far, and the rest to come ([`Streaming::next`]).
    Stream(Box<Streaming>),
}

/// Content streamed while it is verified: a raw block hashed as it comes (its hash compared at the end), or a UnixFS
/// file whose leaves are verified and reached from the root one by one ([`car::Walk`]). The bytes it gives out are
/// each verified, but the content is proven only when [`Streaming::next`] answers `Ok(None)`: whoever sends them holds
/// back the last piece until then.
pub(super) struct Streaming {
    /// The media type (sniffed from the verified first bytes).
    pub(super) content_type: String,
    /// The content's length: the raw block's `Content-Length`, the UnixFS root's `filesize`.
    pub(super) total: u64,
    ready: Vec<Uint8Array>,
    source: Source,
    /// The winning gateway's fetch, aborted when the stream fails.
    pub(super) controller: Option<AbortController>,
    idle_ms: u64,
}

enum Source {
    Raw {
        reader: native::Reader,
        digest: Option<native::Digest>,
        cid: cid::Cid,
        received: u64,
        gateway: String,
    },
    Car(Box<CarSource>),
}

impl Streaming {
    /// The verified pieces not handed out yet (those read before the answer started).
    pub(super) fn take_ready(&mut self) -> Vec<Uint8Array> {
        core::mem::take(&mut self.ready)
    }

    /// The next verified pieces; `Ok(None)` once the content is proven whole (its hash, or its DAG and size); an
    /// error when it is not what the CID names (the gateway's fetch is then stopped).
    pub(super) async fn next(&mut self) -> Result<Option<Vec<Uint8Array>>, String> {
        let outcome = match &mut self.source {
            Source::Raw {
                reader,
                digest,
                cid,
                received,
                gateway,
            } => raw_next(reader, digest, cid, received, self.total, gateway, self.idle_ms).await,
            Source::Car(car) => match car.step(self.idle_ms).await {
                Ok(Some(pieces)) => Ok(Some(pieces.iter().map(|p| Uint8Array::from(&p[..])).collect())),
                Ok(None) => Ok(None),
                Err(f) => Err(f.detail),
            },
        };
        match &outcome {
            Err(_) => self.stop(),
            Ok(None) => {
                // proven: whatever the gateway still sends is not needed
                if let Source::Car(car) = &mut self.source {
                    car.stop();
                }
            }
            Ok(Some(_)) => {}
        }
        outcome
    }

    /// Stops the gateway's fetch.
    pub(super) fn stop(&mut self) {
        match &mut self.source {
            Source::Raw { reader, .. } => reader.cancel(),
            Source::Car(car) => car.stop(),
        }
        if let Some(controller) = self.controller.take() {
            controller.abort();
        }
    }
}

/// An answer whose declared length is below this many times `IPFS_STREAM_MIN_BYTES` (4 MiB by default) is read whole
/// by the runtime and verified at once — a raw block hashed in one call, a CAR parsed in one piece — which was
/// measured faster than verifying it piece by piece as it arrives (BENCHMARKS.md#ipfs-relay); from there on, it
/// streams as it is verified.
const WHOLE_READ_FACTOR: u64 = 16;

/// The `Content-Length` a gateway declared for its answer.
fn declared_length(response: &worker::Response) -> Option<usize> {
    response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|n| n.trim().parse::<usize>().ok())
}

/// Whether an answer of `length` declared bytes is read whole before it is verified ([`WHOLE_READ_FACTOR`]); the
/// caller also checks `length` against its bound.
fn reads_whole(ask: &Ask, length: usize) -> bool {
    ask.stream_min
        .is_none_or(|min| (length as u64) < min.saturating_mul(WHOLE_READ_FACTOR))
}

/// Pieces of a raw block sent to the client at once (the gateway's pieces, joined): fewer, larger writes.
const RAW_BATCH_BYTES: u32 = 64 * 1024;

/// A raw block's next pieces (joined up to [`RAW_BATCH_BYTES`]), each queued for hashing; at the end of the body, its
/// length and hash checked: `Ok(None)` once proven (`digest` is then spent).
async fn raw_next(
    reader: &native::Reader,
    digest: &mut Option<native::Digest>,
    cid: &cid::Cid,
    received: &mut u64,
    total: u64,
    gateway: &str,
    idle_ms: u64,
) -> Result<Option<Vec<Uint8Array>>, String> {
    let Some(hashing) = digest.as_mut() else {
        return Ok(None);
    };
    let mut batch: Vec<Uint8Array> = Vec::new();
    let mut batch_bytes = 0_u32;
    while batch_bytes < RAW_BATCH_BYTES {
        let Some(piece) = read_idle(reader, idle_ms, gateway).await.map_err(|f| f.detail)? else {
            if *received != total {
                return Err(format!(
                    "{gateway}: {received} bytes where its Content-Length says {total}"
                ));
            }
            let Some(done) = digest.take() else {
                return Ok(None);
            };
            if !done.matches(cid).await? {
                return Err(format!("{gateway}: the bytes do not match the CID"));
            }
            return Ok((!batch.is_empty()).then(|| vec![joined_js(&batch)]));
        };
        *received = received.saturating_add(u64::from(piece.length()));
        if *received > total {
            return Err(format!("{gateway}: more bytes than its Content-Length"));
        }
        hashing.update(&piece);
        batch_bytes = batch_bytes.saturating_add(piece.length());
        batch.push(piece);
    }
    Ok(Some(vec![joined_js(&batch)]))
}

/// A UnixFS file proven from a gateway's CAR as it is read, and blocks the CAR lacks fetched one by one.
struct CarSource {
    gateway: String,
    /// `None` once the CAR has ended.
    reader: Option<native::Reader>,
    car: Option<car::CarReader>,
    walk: car::Walk,
    /// Blocks fetched one by one so far.
    extra: usize,
    signal: worker::AbortSignal,
    max_bytes: usize,
}

fn rejection(gateway: &str, rejection: car::Rejection, max_bytes: usize) -> Failure {
    match rejection {
        car::Rejection::NotFound(detail) => Failure {
            not_found: true,
            ..Failure::from(format!("{gateway}: {detail}"))
        },
        car::Rejection::Directory(detail) => Failure {
            not_found: true,
            directory: true,
            ..Failure::from(format!("{gateway}: {detail}"))
        },
        car::Rejection::TooLarge => {
            Failure::from(format!("{gateway}: over the size limit of {max_bytes} bytes"))
        }
        car::Rejection::Unproven(detail) => Failure::unverified(format!("{gateway}: {detail}")),
    }
}

impl CarSource {
    fn stop(&mut self) {
        if let Some(reader) = self.reader.take() {
            reader.cancel();
        }
    }

    /// Hashes blocks (the runtime's SHA-256) and hands those that match their CID to the walk; one that does not
    /// rejects the CAR.
    async fn verify(&mut self, blocks: Vec<car::Block>, max_bytes: usize) -> Result<(), Failure> {
        let blocks = blocks
            .into_iter()
            .map(|block| {
                let bytes = Uint8Array::from(&block.bytes[..]);
                (block, bytes)
            })
            .collect();
        self.verify_in(blocks, max_bytes).await
    }

    /// [`CarSource::verify`] of blocks whose bytes are also in the runtime, where they are hashed.
    async fn verify_in(
        &mut self,
        blocks: Vec<(car::Block, Uint8Array)>,
        max_bytes: usize,
    ) -> Result<(), Failure> {
        // hashed side by side (a whole CAR's blocks come at once)
        let matches = futures_util::future::join_all(
            blocks
                .iter()
                .map(|(block, bytes)| native::is_block_of(&block.cid, bytes)),
        )
        .await;
        for ((block, _), matches) in blocks.into_iter().zip(matches) {
            if !matches {
                return Err(Failure::unverified(format!(
                    "{}: block {} does not match its CID",
                    self.gateway, block.cid
                )));
            }
            self.walk
                .add(block.cid, block.bytes)
                .map_err(|r| rejection(&self.gateway, r, max_bytes))?;
        }
        Ok(())
    }

    /// A whole CAR (read by the runtime): its blocks verified and handed to the walk at once.
    /// Each block is hashed where it is in the runtime's buffer (not copied out of the Worker).
    async fn take_whole(&mut self, car: &Uint8Array) -> Result<(), Failure> {
        let max_bytes = self.max_bytes;
        let blocks = car::CarReader::read_whole(&car.to_vec().into())
            .map_err(|r| rejection(&self.gateway, r, max_bytes))?;
        let at = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let blocks = blocks
            .into_iter()
            .map(|(block, start)| {
                let bytes = car.subarray(at(start), at(start.saturating_add(block.bytes.len())));
                (block, bytes)
            })
            .collect();
        self.verify_in(blocks, max_bytes).await
    }

    /// The file's next verified bytes; `Ok(None)` when it is proven whole.
    async fn step(&mut self, idle_ms: u64) -> Result<Option<Vec<bytes::Bytes>>, Failure> {
        let max_bytes = self.max_bytes;
        loop {
            let mut out = Vec::new();
            let need = self
                .walk
                .advance(&mut out)
                .map_err(|r| rejection(&self.gateway, r, max_bytes))?;
            if !out.is_empty() {
                return Ok(Some(out));
            }
            let car::Need::Block(cid) = need else {
                return Ok(None);
            };
            if let Some(reader) = &self.reader {
                let blocks = match read_idle(reader, idle_ms, &self.gateway).await? {
                    Some(piece) => self.car.as_mut().map(|c| c.push(&piece.to_vec())),
                    None => {
                        self.reader = None;
                        self.car.take().map(car::CarReader::finish)
                    }
                }
                .unwrap_or(Ok(Vec::new()))
                .map_err(|r| rejection(&self.gateway, r, max_bytes))?;
                self.verify(blocks, max_bytes).await?;
                continue;
            }
            // the CAR has ended without it (a HAMT shard, a directory's page): asked for alone
            if self.extra >= MAX_EXTRA_BLOCKS {
                return Err(Failure::unverified(format!(
                    "{}: block {cid} is missing from the CAR (and {MAX_EXTRA_BLOCKS} others were fetched alone)",
                    self.gateway
                )));
            }
            self.extra = self.extra.saturating_add(1);
            let url = format!("{}/ipfs/{cid}?format=raw", self.gateway);
            let mut response = send(&url, Some("application/vnd.ipld.raw"), &self.signal)
                .await
                .map_err(|f| Failure::from(format!("{}: {}", self.gateway, f.detail)))?;
            if response.status_code() != 200 {
                return Err(Failure::unverified(format!(
                    "{}: block {cid} is missing from the CAR and alone: HTTP {}",
                    self.gateway,
                    response.status_code()
                )));
            }
            let bytes = bounded(&self.gateway, &mut response, car::MAX_BLOCK_BYTES).await?;
            self.verify(
                vec![car::Block {
                    cid,
                    bytes: bytes.into(),
                }],
                max_bytes,
            )
            .await?;
        }
    }
}

async fn fetch_one(ask: Ask, signal: worker::AbortSignal) -> Result<Fetched, Failure> {
    if ask.raw_block {
        fetch_raw_block(&ask, &signal).await
    } else {
        fetch_car(&ask, signal).await
    }
}

/// dag-pb (UnixFS) content and paths: the gateway's CAR, every block verified and the file walked from it
/// ([`car`]). A CAR declared shorter than [`WHOLE_READ_FACTOR`] × `stream_min` is read whole by the runtime and
/// verified at once; any other is verified as it arrives, its file streamed once its first verified bytes are in
/// when `ask.stream_min` allows. A gateway that answers something else serves only in the unverified mode.
async fn fetch_car(ask: &Ask, signal: worker::AbortSignal) -> Result<Fetched, Failure> {
    let gateway = &ask.gateway;
    let path = ask.target.to_gateway_path();
    // the query form wins over `Accept` (spec), both are sent; `entity`: the file (or the path's blocks and the
    // file), not a whole directory tree below it
    let url = format!("{gateway}/ipfs/{path}?format=car&dag-scope=entity&car-order=dfs&car-dups=y");
    let mut response = send(&url, Some(CAR_ACCEPT), &signal)
        .await
        .map_err(|f| Failure::from(format!("{gateway}: {}", f.detail)))?;
    let car_type = response
        .headers()
        .get("content-type")
        .ok()
        .flatten()
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| t.starts_with("application/vnd.ipld.car"));
    if response.status_code() == 200
        && let Some(car_type) = car_type
        && let worker::ResponseBody::Stream(stream) = response.body()
    {
        // with duplicates (`dups=y`) every use of a block is sent: a block is dropped once used
        let dups = car_type.replace(' ', "").contains("dups=y");
        // a CAR of a declared length within bounds: read whole by the runtime (HTTP framing ends it there), then
        // parsed and verified at once; else read as it arrives
        let whole = declared_length(&response)
            .is_some_and(|length| length <= car::max_car_bytes(ask.max_bytes) && reads_whole(ask, length));
        let mut source = CarSource {
            gateway: gateway.clone(),
            reader: (!whole).then(|| native::Reader::new(stream)),
            car: (!whole).then(car::CarReader::new),
            walk: car::Walk::new(ask.target.cid, &ask.target.path, ask.max_bytes, !dups),
            extra: 0,
            signal,
            max_bytes: ask.max_bytes,
        };
        if whole {
            let car = native::read_all(stream)
                .await
                .map_err(|e| Failure::from(format!("{gateway}: {e}")))?;
            source.take_whole(&car).await?;
        }
        let mut pieces: Vec<bytes::Bytes> = Vec::new();
        let mut have = 0_u64;
        while let Some(more) = source.step(ask.timeout_ms).await? {
            have = have.saturating_add(more.iter().map(|p| p.len() as u64).sum());
            pieces.extend(more);
            // a CAR still arriving: its file streams from `stream_min`
            if let (Some(min), Some(size)) = (ask.stream_min, source.walk.size())
                && source.reader.is_some()
                && size >= min
                && have >= u64::from(PRELUDE_BYTES).min(size)
            {
                let head = joined(pieces.iter().map(|p| &p[..]))
                    .subarray(0, PRELUDE_BYTES)
                    .to_vec();
                return Ok(Fetched::Stream(Box::new(Streaming {
                    content_type: car_content_type(&source.walk, &head),
                    total: size,
                    ready: pieces.iter().map(|p| Uint8Array::from(&p[..])).collect(),
                    source: Source::Car(Box::new(source)),
                    controller: None,
                    idle_ms: ask.timeout_ms,
                })));
            }
        }
        source.stop();
        let bytes = joined(pieces.iter().map(|p| &p[..]));
        let head = bytes.subarray(0, PRELUDE_BYTES).to_vec();
        return Ok(Fetched::Whole(Content {
            content_type: car_content_type(&source.walk, &head),
            bytes,
            verified: true,
        }));
    }
    if response.status_code() == 404 {
        return Err(status_failure(gateway, &response));
    }
    if !ask.allow_unverified {
        return Err(Failure::unverified(format!(
            "{gateway}: no CAR (HTTP {}); unverified content is off (IPFS_ALLOW_UNVERIFIED)",
            response.status_code()
        )));
    }
    // the unverified mode: the gateway's bytes as they are (a 200 that is no CAR is the content itself; any other
    // answer is asked again without `format`)
    if response.status_code() != 200 {
        response = send(&format!("{gateway}/ipfs/{path}"), None, &signal)
            .await
            .map_err(|f| Failure::from(format!("{gateway}: {}", f.detail)))?;
        if response.status_code() != 200 {
            return Err(status_failure(gateway, &response));
        }
    }
    let bytes = bounded(gateway, &mut response, ask.max_bytes).await?;
    Ok(Fetched::Whole(Content {
        content_type: content_type_of(
            response.headers().get("content-type").ok().flatten(),
            bytes.get(..SNIFF_BYTES).unwrap_or(&bytes),
        ),
        bytes: Uint8Array::from(bytes.as_slice()),
        verified: false,
    }))
}

/// A UnixFS file's type: a directory's page is HTML; anything else is sniffed.
fn car_content_type(walk: &car::Walk, head: &[u8]) -> String {
    if walk.is_index() {
        "text/html".to_owned()
    } else {
        content_type_of(None, head)
    }
}

async fn fetch_raw_block(ask: &Ask, signal: &worker::AbortSignal) -> Result<Fetched, Failure> {
    let (gateway, max_bytes, cid) = (&ask.gateway, ask.max_bytes, ask.target.cid);
    let url = format!("{gateway}/ipfs/{}", ask.target.to_gateway_path());
    let mut response = send(&url, Some("application/vnd.ipld.raw, */*;q=0.5"), signal)
        .await
        .map_err(|f| Failure::from(format!("{gateway}: {}", f.detail)))?;
    if response.status_code() != 200 {
        return Err(status_failure(gateway, &response));
    }
    let declared = declared_length(&response);
    let header_type = response.headers().get("content-type").ok().flatten();
    if let (Some(length), worker::ResponseBody::Stream(stream)) = (declared, response.body())
        && !reads_whole(ask, length)
        && length <= max_bytes
    {
        return stream_raw_block(ask, native::Reader::new(stream), length as u64, header_type).await;
    }
    let bytes = match declared {
        // a declared length within the limit: HTTP framing ends the body there, so the runtime reads it whole into
        // one native buffer, which is hashed and answered from there (never copied into the Worker)
        Some(length) if length <= max_bytes => match response.body() {
            worker::ResponseBody::Stream(stream) => native::read_all(stream)
                .await
                .map_err(|e| Failure::from(format!("{gateway}: {e}")))?,
            _ => Uint8Array::new_with_length(0),
        },
        // counted while it streams: a gateway cannot make the Worker buffer more than the limit
        _ => Uint8Array::from(bounded(gateway, &mut response, max_bytes).await?.as_slice()),
    };
    if !native::is_block_of(&cid, &bytes).await {
        return Err(Failure::unverified(format!(
            "{gateway}: the bytes do not match the CID"
        )));
    }
    let content_type = content_type_of(header_type, &native::head(&bytes));
    Ok(Fetched::Whole(Content {
        bytes,
        content_type,
        verified: true,
    }))
}

/// A raw block of `length` bytes (its `Content-Length`) hashed as it comes: the first pieces are read (enough to
/// sniff its type), the rest streams ([`Streaming`]). A block that ends within those pieces is verified whole.
async fn stream_raw_block(
    ask: &Ask,
    reader: native::Reader,
    length: u64,
    header_type: Option<String>,
) -> Result<Fetched, Failure> {
    let gateway = &ask.gateway;
    let mut digest = native::Digest::new().map_err(|e| Failure::from(format!("{gateway}: {e}")))?;
    let mut ready: Vec<Uint8Array> = Vec::new();
    let mut received = 0_u64;
    while received < u64::from(PRELUDE_BYTES).min(length) {
        let Some(piece) = read_idle(&reader, ask.timeout_ms, gateway).await? else {
            break;
        };
        received = received.saturating_add(u64::from(piece.length()));
        digest.update(&piece);
        ready.push(piece);
    }
    let head = joined_js(&ready);
    let content_type = content_type_of(header_type, &native::head(&head));
    if received > length {
        return Err(Failure::unverified(format!(
            "{gateway}: more bytes than its Content-Length"
        )));
    }
    let mut stream = Streaming {
        content_type,
        total: length,
        ready,
        source: Source::Raw {
            reader,
            digest: Some(digest),
            cid: ask.target.cid,
            received,
            gateway: gateway.clone(),
        },
        controller: None,
        idle_ms: ask.timeout_ms,
    };
    if received < length {
        return Ok(Fetched::Stream(Box::new(stream)));
    }
    // all of it is in: the end of the body, and the hash, before anything is answered
    match stream.next().await {
        Ok(None) => Ok(Fetched::Whole(Content {
            bytes: joined_js(&stream.take_ready()),
            content_type: stream.content_type,
            verified: true,
        })),
        Ok(Some(_)) => Err(Failure::unverified(format!(
            "{gateway}: more bytes than its Content-Length"
        ))),
        Err(detail) => Err(Failure::unverified(detail)),
    }
}

/// The first verified answer of the configured gateways (see the module's doc); `stream_min`: content at least this
/// long may be answered as a [`Fetched::Stream`] (`None`: always whole).
pub(super) async fn race_gateways(
    config: &IpfsConfig,
    target: &CidPath,
    raw_block: bool,
    stream_min: Option<u64>,
) -> ApiResult<Fetched> {
    let gateways: Vec<String> = config.gateways.iter().take(MAX_GATEWAYS).cloned().collect();
    let controllers: Vec<AbortController> = gateways.iter().map(|_| AbortController::default()).collect();
    let path = target.to_gateway_path();
    // how many gateways answered 404, how many answered what does not verify (select_ok only keeps the last error)
    let not_found = std::rc::Rc::new(core::cell::Cell::new(0_usize));
    let unverified = std::rc::Rc::new(core::cell::Cell::new(0_usize));
    let directory = std::rc::Rc::new(core::cell::Cell::new(false));
    // the unverified mode: the first unverified answer, served only when no gateway serves verified content
    let fallback: std::rc::Rc<core::cell::RefCell<Option<Content>>> = std::rc::Rc::default();
    // the hedge: each attempt but the first waits for the word of the one before (sent when that one has failed or
    // has run `hedge_ms` unserved)
    let hedge = core::time::Duration::from_millis(config.hedge_ms);
    let mut previous: Option<oneshot::Receiver<()>> = None;
    let attempts: Vec<_> = gateways
        .iter()
        .zip(controllers.iter().map(AbortController::signal))
        .enumerate()
        .map(|(index, (g, signal))| {
            let (word, next_turn) = oneshot::channel::<()>();
            let turn = previous.replace(next_turn);
            let (not_found, unverified, fallback, directory) = (
                not_found.clone(),
                unverified.clone(),
                fallback.clone(),
                directory.clone(),
            );
            let attempt = fetch_one(
                Ask {
                    gateway: g.clone(),
                    target: target.clone(),
                    raw_block,
                    max_bytes: config.max_bytes,
                    allow_unverified: config.allow_unverified,
                    stream_min,
                    timeout_ms: config.timeout_ms,
                },
                signal,
            );
            Box::pin(async move {
                if let Some(turn) = turn {
                    // `Canceled` too: the attempt before has ended
                    let _ = turn.await;
                }
                let word = core::cell::Cell::new(Some(word));
                let next_may_start = || {
                    if let Some(word) = word.take() {
                        let _ = word.send(());
                    }
                };
                let hedged = async {
                    if !hedge.is_zero() {
                        Delay::from(hedge).await;
                    }
                    next_may_start();
                };
                let outcome = match select(Box::pin(attempt), Box::pin(hedged)).await {
                    Either::Left((outcome, _)) => outcome,
                    Either::Right(((), attempt)) => attempt.await,
                };
                // a failure lets the next gateway start at once (a success ends the race)
                next_may_start();
                match outcome {
                    Ok(Fetched::Whole(content)) if !content.verified => {
                        let mut kept = fallback.borrow_mut();
                        if kept.is_none() {
                            *kept = Some(content);
                        }
                        Err(Failure::from(
                            "unverified: kept in case no gateway serves verified content".to_owned(),
                        ))
                    }
                    outcome => outcome.map(|fetched| (index, fetched)).inspect_err(|failure| {
                        if failure.not_found {
                            not_found.set(not_found.get().saturating_add(1));
                        }
                        if failure.directory {
                            directory.set(true);
                        }
                        if failure.unverified {
                            worker::console_warn!("ipfs: rejected: {}", failure.detail);
                            unverified.set(unverified.get().saturating_add(1));
                        }
                    }),
                }
            })
        })
        .collect();
    let timeout = Box::pin(Delay::from(core::time::Duration::from_millis(config.timeout_ms)));
    let outcome = select(select_ok(attempts), timeout).await;
    // whatever happened, stop the fetches still in flight, but the one that streams
    let streaming = match &outcome {
        Either::Left((Ok(((index, Fetched::Stream(_)), _)), _)) => Some(*index),
        _ => None,
    };
    let mut kept = None;
    for (i, c) in controllers.into_iter().enumerate() {
        if Some(i) == streaming {
            kept = Some(c);
        } else {
            c.abort();
        }
    }
    match outcome {
        Either::Left((Ok(((_, Fetched::Stream(mut stream)), _rest)), _)) => {
            stream.controller = kept;
            Ok(Fetched::Stream(stream))
        }
        Either::Left((Ok(((_, whole), _rest)), _)) => Ok(whole),
        Either::Left((Err(last), _)) => {
            if let Some(content) = fallback.borrow_mut().take() {
                return Ok(Fetched::Whole(content));
            }
            worker::console_warn!("ipfs {path}: every gateway failed; last: {}", last.detail);
            if not_found.get() == gateways.len() && directory.get() {
                return Err(ApiError::new(
                    Code::ContentNotFound,
                    "the path names a UnixFS directory without an index.html (directory listings are not served)",
                ));
            }
            if not_found.get() == gateways.len() {
                // every gateway says it does not have the content: that is an answer, not a gateway failure
                return Err(ApiError::new(
                    Code::ContentNotFound,
                    "no configured IPFS gateway has this content",
                ));
            }
            if unverified.get() > 0 {
                return Err(ApiError::new(
                    Code::ContentUnverified,
                    format!(
                        "no configured IPFS gateway served content that verifies against the CID ({} rejected: \
                         a wrong block, path or size, or no CAR); nothing was served",
                        unverified.get()
                    ),
                ));
            }
            Err(ApiError::new(
                Code::GatewayError,
                "no configured IPFS gateway served valid content",
            ))
        }
        Either::Right(_) => {
            if let Some(content) = fallback.borrow_mut().take() {
                return Ok(Fetched::Whole(content));
            }
            let mut err = ApiError::new(Code::GatewayTimeout, "the IPFS gateways did not answer in time");
            err.retry_after = Some(30);
            Err(err)
        }
    }
}
