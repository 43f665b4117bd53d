//! profile-relayer's Cloudflare Worker, one service per network: the relayer (deploy and register Universal
//! Profiles, LSP15 gasless relay calls, gas metering, API keys, rate limits), the lookup and search API for every
//! configured chain (D1 + FTS5, Algolia-compatible), the IPFS relay, image resizing and uploads, the indexer (cron)
//! and the operator routes (`/ready`, `/admin/*`). Encodings, validation and prediction come from the core crate;
//! this crate converts, checks and does I/O (JSON-RPC, KV, D1, R2, Durable Objects). The module map is
//! ARCHITECTURE.md.

mod algolia;
mod auth;
mod body;
mod config;
mod d1;
mod error;
mod execute;
mod genuine;
mod image;
mod indexer;
mod ipfs;
mod lookup;
mod meter;
mod panic_guard;
mod plumbing;
mod r2_cache;
mod ratelimit;
mod ready;
mod relayer;
mod routes;
mod rpc;
mod search;
mod signer;
mod store;
mod txlog;
mod upload_token;
#[cfg(test)]
mod wire;

pub use meter::Meter;
pub use ratelimit::RateLimiter;
pub use relayer::Relayer;
use worker::{Context, Env, Request, Response, Result, ScheduleContext, ScheduledEvent, event};

/// Worker entry point: every error becomes a JSON error body, never a panic. Browser dApps call the API from
/// other origins: preflights are answered and every response carries the CORS headers (no cookies are used, the
/// API key travels in `Authorization`).
#[event(fetch)]
pub async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    panic_guard::install();
    let id = panic_guard::request_id(&req);
    panic_guard::Tracked::new(id, serve(req, env, ctx)).await
}

async fn serve(req: Request, env: Env, ctx: Context) -> Result<Response> {
    if req.method() == worker::Method::Options {
        // 200, not 204: workerd leaves an unread request body of a 204 answer on the connection
        let mut res = Response::empty()?.with_status(200);
        cors(&mut res);
        let _ = res.headers_mut().set("access-control-max-age", "86400");
        return Ok(res);
    }
    let mut res = routes::handle(req, &env, &ctx)
        .await
        .unwrap_or_else(error::ApiError::into_response);
    cors(&mut res);
    Ok(res)
}

fn cors(res: &mut Response) {
    let headers = res.headers_mut();
    for (name, value) in [
        ("access-control-allow-origin", "*"),
        ("access-control-allow-methods", "GET, POST, DELETE, OPTIONS"),
        (
            "access-control-allow-headers",
            "authorization, content-type, range, if-none-match, x-algolia-api-key, x-algolia-application-id",
        ),
        (
            "access-control-expose-headers",
            "retry-after, etag, content-range, x-content-verified, x-verified",
        ),
    ] {
        // a response with immutable headers keeps its own; never turn that into an error
        let _ = headers.set(name, value);
    }
}

/// Cron trigger: one indexer run of every configured chain (each a bounded block range plus due retries, within
/// its share of the budget); one chain failing does not stop the others.
#[event(scheduled)]
pub async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    match indexer::run_all(&env).await {
        Ok(runs) => {
            for (chain_id, result) in runs {
                match result {
                    Ok(stats) => worker::console_log!(
                        "indexer {chain_id}: {}",
                        serde_json::to_string(&stats).unwrap_or_default()
                    ),
                    Err(e) => worker::console_error!("indexer {chain_id}: {} {}", e.code, e.message),
                }
            }
        }
        Err(e) => worker::console_error!("indexer: {} {}", e.code, e.message),
    }
}
