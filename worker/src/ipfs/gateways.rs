//! The configured gateways raced against each other: the first verified answer wins, the others are aborted. A raw
//! block is asked as `application/vnd.ipld.raw` and hashed whole; anything else (dag-pb / UnixFS, paths) as a CAR
//! ([`car`]: every block hashed, the path and the file proven). A gateway whose answer does not verify is rejected
//! and the race goes on. In the unverified mode (`IPFS_ALLOW_UNVERIFIED`) a gateway that serves no CAR may serve the
//! bytes as they are, but only when no gateway serves verified content.

use futures_util::future::{Either, select, select_ok};
use profile_relayer::ipfs::CidPath;
use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

use super::{Content, IpfsConfig, car, content::content_type_of, native};
use crate::{
    body::ReadError,
    error::{ApiError, ApiResult, Code},
};
const MAX_GATEWAYS: usize = 6;

/// Why one gateway did not serve the content.
#[derive(Debug)]
struct Failure {
    /// The gateway answered 404, or its verified blocks prove there is no file at the path.
    not_found: bool,
    /// What it answered does not verify against the CID (a wrong block, path or size; no CAR).
    unverified: bool,
    detail: String,
}

impl From<String> for Failure {
    fn from(detail: String) -> Self {
        Self {
            not_found: false,
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
    /// A raw block (`raw` codec, no path): fetched as `application/vnd.ipld.raw` and hashed whole.
    raw_block: bool,
    max_bytes: usize,
    allow_unverified: bool,
    /// Taken while a CAR is verified: one at a time (a Worker has one thread), so the first CAR in is proven
    /// without the others' hashing and parsing in between, and the race ends before they start.
    verifying: std::rc::Rc<futures_util::lock::Mutex<()>>,
}

/// The `Accept` of a CAR request: CARv1, depth-first, duplicates allowed (the order is not relied upon).
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

/// A body of at most `max` bytes, both as the runtime holds it and copied into the Worker: with a declared length
/// within `max`, read whole by the runtime and copied in once; otherwise counted as it streams.
async fn whole(
    gateway: &str,
    response: &mut worker::Response,
    max: usize,
) -> Result<(js_sys::Uint8Array, Vec<u8>), Failure> {
    let declared = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|n| n.trim().parse::<usize>().ok());
    match (declared, response.body()) {
        (Some(length), worker::ResponseBody::Stream(stream)) if length <= max => native::read_all(stream)
            .await
            .map(|held| {
                let copy = held.to_vec();
                (held, copy)
            })
            .map_err(|e| Failure::from(format!("{gateway}: {e}"))),
        _ => {
            let copy = bounded(gateway, response, max).await?;
            Ok((js_sys::Uint8Array::from(copy.as_slice()), copy))
        }
    }
}

/// The blocks of a CAR, each hashed by the runtime (native SHA-256, all at once) and compared with its CID.
async fn verified_blocks<'a>(
    held: &js_sys::Uint8Array,
    car: &'a [u8],
) -> Result<car::Blocks<'a>, car::Rejection> {
    let sections = car::sections(car)?;
    let checked = futures_util::future::join_all(sections.iter().map(|s| {
        // offsets within the CAR, whose length is a JS array's (`u32`)
        let block = held.subarray(
            u32::try_from(s.block.start).unwrap_or(u32::MAX),
            u32::try_from(s.block.end).unwrap_or(u32::MAX),
        );
        async move { native::is_block_of(&s.cid, &block).await }
    }))
    .await;
    car::Blocks::verified(car, &sections, &checked)
}

async fn fetch_one(ask: Ask, signal: worker::AbortSignal) -> Result<Content, Failure> {
    if ask.raw_block {
        fetch_raw_block(&ask, &signal).await
    } else {
        fetch_car(&ask, &signal).await
    }
}

/// dag-pb (UnixFS) content and paths: the gateway's CAR, every block verified and the file assembled from it
/// ([`car`]). A gateway that answers something else serves only in the unverified mode.
async fn fetch_car(ask: &Ask, signal: &worker::AbortSignal) -> Result<Content, Failure> {
    let gateway = &ask.gateway;
    let path = ask.target.to_gateway_path();
    // the query form wins over `Accept` (spec), both are sent; `entity`: the file (or the path's blocks and the
    // file), not a whole directory tree below it
    let url = format!("{gateway}/ipfs/{path}?format=car&dag-scope=entity");
    let mut response = send(&url, Some(CAR_ACCEPT), signal)
        .await
        .map_err(|f| Failure::from(format!("{gateway}: {}", f.detail)))?;
    let is_car = response
        .headers()
        .get("content-type")
        .ok()
        .flatten()
        .is_some_and(|t| {
            t.trim()
                .to_ascii_lowercase()
                .starts_with("application/vnd.ipld.car")
        });
    if response.status_code() == 200 && is_car {
        let (held, car_bytes) = whole(gateway, &mut response, car::max_car_bytes(ask.max_bytes)).await?;
        let _turn = ask.verifying.lock().await;
        let proven = verified_blocks(&held, &car_bytes)
            .await
            .and_then(|blocks| car::proven_file(&blocks, &ask.target.cid, &ask.target.path, ask.max_bytes));
        return match proven {
            Ok(bytes) => Ok(Content {
                content_type: content_type_of(None, bytes.get(..4096).unwrap_or(&bytes)),
                bytes: js_sys::Uint8Array::from(bytes.as_slice()),
                verified: true,
            }),
            Err(car::Rejection::NotFound(detail)) => Err(Failure {
                not_found: true,
                ..Failure::from(format!("{gateway}: {detail}"))
            }),
            Err(car::Rejection::TooLarge) => Err(Failure::from(format!(
                "{gateway}: over the size limit of {} bytes",
                ask.max_bytes
            ))),
            Err(car::Rejection::Unproven(detail)) => Err(Failure::unverified(format!("{gateway}: {detail}"))),
        };
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
        response = send(&format!("{gateway}/ipfs/{path}"), None, signal)
            .await
            .map_err(|f| Failure::from(format!("{gateway}: {}", f.detail)))?;
        if response.status_code() != 200 {
            return Err(status_failure(gateway, &response));
        }
    }
    let bytes = bounded(gateway, &mut response, ask.max_bytes).await?;
    Ok(Content {
        content_type: content_type_of(
            response.headers().get("content-type").ok().flatten(),
            bytes.get(..4096).unwrap_or(&bytes),
        ),
        bytes: js_sys::Uint8Array::from(bytes.as_slice()),
        verified: false,
    })
}

async fn fetch_raw_block(ask: &Ask, signal: &worker::AbortSignal) -> Result<Content, Failure> {
    let (gateway, max_bytes, cid) = (&ask.gateway, ask.max_bytes, ask.target.cid);
    let url = format!("{gateway}/ipfs/{}", ask.target.to_gateway_path());
    let mut response = send(&url, Some("application/vnd.ipld.raw, */*;q=0.5"), signal)
        .await
        .map_err(|f| Failure::from(format!("{gateway}: {}", f.detail)))?;
    if response.status_code() != 200 {
        return Err(status_failure(gateway, &response));
    }
    let declared = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|n| n.trim().parse::<usize>().ok());
    let bytes = match declared {
        // a declared length within the limit: HTTP framing ends the body there, so the runtime reads it whole into
        // one native buffer, which is hashed and answered from there (never copied into the Worker)
        Some(length) if length <= max_bytes => match response.body() {
            worker::ResponseBody::Stream(stream) => native::read_all(stream)
                .await
                .map_err(|e| Failure::from(format!("{gateway}: {e}")))?,
            _ => js_sys::Uint8Array::new_with_length(0),
        },
        // counted while it streams: a gateway cannot make the Worker buffer more than the limit
        _ => js_sys::Uint8Array::from(bounded(gateway, &mut response, max_bytes).await?.as_slice()),
    };
    if !native::is_block_of(&cid, &bytes).await {
        return Err(Failure::unverified(format!(
            "{gateway}: the bytes do not match the CID"
        )));
    }
    let content_type = content_type_of(
        response.headers().get("content-type").ok().flatten(),
        &native::head(&bytes),
    );
    Ok(Content {
        bytes,
        content_type,
        verified: true,
    })
}

pub(super) async fn race_gateways(
    config: &IpfsConfig,
    target: &CidPath,
    raw_block: bool,
) -> ApiResult<Content> {
    let gateways: Vec<String> = config.gateways.iter().take(MAX_GATEWAYS).cloned().collect();
    let controllers: Vec<AbortController> = gateways.iter().map(|_| AbortController::default()).collect();
    let path = target.to_gateway_path();
    // how many gateways answered 404, how many answered what does not verify (select_ok only keeps the last error)
    let not_found = std::rc::Rc::new(core::cell::Cell::new(0_usize));
    let unverified = std::rc::Rc::new(core::cell::Cell::new(0_usize));
    // the unverified mode: the first unverified answer, served only when no gateway serves verified content
    let fallback: std::rc::Rc<core::cell::RefCell<Option<Content>>> = std::rc::Rc::default();
    let verifying = std::rc::Rc::new(futures_util::lock::Mutex::new(()));
    let attempts: Vec<_> = gateways
        .iter()
        .zip(controllers.iter().map(AbortController::signal))
        .map(|(g, signal)| {
            let (not_found, unverified, fallback) = (not_found.clone(), unverified.clone(), fallback.clone());
            let attempt = fetch_one(
                Ask {
                    gateway: g.clone(),
                    target: target.clone(),
                    raw_block,
                    max_bytes: config.max_bytes,
                    allow_unverified: config.allow_unverified,
                    verifying: verifying.clone(),
                },
                signal,
            );
            Box::pin(async move {
                match attempt.await {
                    Ok(content) if !content.verified => {
                        let mut kept = fallback.borrow_mut();
                        if kept.is_none() {
                            *kept = Some(content);
                        }
                        Err(Failure::from(
                            "unverified: kept in case no gateway serves verified content".to_owned(),
                        ))
                    }
                    outcome => outcome.inspect_err(|failure| {
                        if failure.not_found {
                            not_found.set(not_found.get().saturating_add(1));
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
    // whatever happened, stop the fetches still in flight
    for c in controllers {
        c.abort();
    }
    match outcome {
        Either::Left((Ok((content, _rest)), _)) => Ok(content),
        Either::Left((Err(last), _)) => {
            if let Some(content) = fallback.borrow_mut().take() {
                return Ok(content);
            }
            worker::console_warn!("ipfs {path}: every gateway failed; last: {}", last.detail);
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
                return Ok(content);
            }
            let mut err = ApiError::new(Code::GatewayTimeout, "the IPFS gateways did not answer in time");
            err.retry_after = Some(30);
            Err(err)
        }
    }
}
