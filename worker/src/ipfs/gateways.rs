//! The configured gateways raced against each other: the first valid answer wins, the others are aborted.

use cid::Cid;
use futures_util::future::{Either, select, select_ok};
use profile_relayer::ipfs::CidPath;
use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

use super::{Content, IpfsConfig, content::content_type_of, native};
use crate::{
    body::ReadError,
    error::{ApiError, ApiResult, Code},
};
const MAX_GATEWAYS: usize = 6;

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
        // a declared length within the limit: HTTP framing ends the body there, so the runtime reads it whole into
        // one native buffer, which is hashed and answered from there (never copied into the Worker)
        Some(length) if length <= max_bytes => match response.body() {
            worker::ResponseBody::Stream(stream) => native::read_all(stream)
                .await
                .map_err(|e| Failure::from(format!("{gateway}: {e}")))?,
            _ => js_sys::Uint8Array::new_with_length(0),
        },
        // counted while it streams: a gateway cannot make the Worker buffer more than the limit
        _ => js_sys::Uint8Array::from(
            crate::body::response_bytes(&mut response, max_bytes)
                .await
                .map_err(|e| match e {
                    ReadError::TooLarge => {
                        Failure::from(format!("{gateway}: over the size limit of {max_bytes} bytes"))
                    }
                    ReadError::Failed(detail) => Failure::from(format!("{gateway}: {detail}")),
                })?
                .as_slice(),
        ),
    };
    if raw_block && !native::is_block_of(&cid, &bytes).await {
        return Err(Failure::from(format!(
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
        verified: raw_block,
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
