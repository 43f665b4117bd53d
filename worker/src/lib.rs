//! profile-relayer's Cloudflare Worker, one service per network: the relayer (deploy and register Universal
//! Profiles, LSP15 gasless relay calls, gas metering, API keys, rate limits), the lookup and search API for every
//! configured chain (D1 + FTS5, Algolia-compatible), the IPFS relay, image resizing and uploads, the indexer (cron)
//! and the operator routes (`/ready`, `/admin/*`). Encodings, validation and prediction come from the core crate;
//! this crate converts, checks and does I/O (JSON-RPC, KV, D1, R2, Durable Objects). The module map is
//! ARCHITECTURE.md.

mod analytics;
mod auth;
mod body;
mod config;
mod d1;
mod destination;
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
mod reqlog;
mod routes;
mod rpc;
mod search;
mod shares;
mod signer;
mod store;
mod txlog;
mod webhooks;
#[cfg(test)]
mod wire;

pub use indexer::clock::Indexer;
pub use meter::Meter;
pub use ratelimit::RateLimiter;
pub use relayer::Relayer;
pub use webhooks::Webhooks;
use worker::{Context, Env, Request, Response, Result, ScheduleContext, ScheduledEvent, event};

/// Worker entry point: every error becomes a JSON error body, never a panic. Browser dApps call the API from
/// other origins: preflights are answered and every response carries the CORS headers (no cookies are used, the
/// API key travels in `Authorization`).
#[event(fetch)]
pub async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    panic_guard::install();
    analytics::bind(&env, || {
        config::Config::from_env(&env)
            .analytics_log
            .value()
            .unwrap_or(false)
    });
    let id = panic_guard::request_id(&req);
    panic_guard::Tracked::new(id, serve(req, env, ctx)).await
}

async fn serve(req: Request, env: Env, ctx: Context) -> Result<Response> {
    let log = reqlog::RequestLog::start(&req);
    let (mut res, code) = if req.method() == worker::Method::Options {
        // 200, not 204: workerd leaves an unread request body of a 204 answer on the connection
        let mut res = Response::empty()?.with_status(200);
        let _ = res.headers_mut().set("access-control-max-age", "86400");
        (res, None)
    } else {
        let config = config::Config::from_env(&env);
        indexer::clock::wake_once(&env, &config, &ctx);
        match routes::handle(req, &env, &config, &ctx).await {
            Ok(res) => (res, None),
            Err(e) => {
                let code = e.code.to_string();
                (e.into_response(), Some(code))
            }
        }
    };
    cors(&mut res);
    let _ = res.headers_mut().set("x-request-id", log.id());
    let line = log.finish(res.status_code(), code.as_deref());
    analytics::record(&analytics::Point::request(
        &line.method,
        line.route,
        line.status,
        line.duration_ms,
        code.as_deref(),
    ));
    Ok(res)
}

fn cors(res: &mut Response) {
    let headers = res.headers_mut();
    for (name, value) in [
        ("access-control-allow-origin", "*"),
        (
            "access-control-allow-methods",
            "GET, POST, PATCH, DELETE, OPTIONS",
        ),
        (
            "access-control-allow-headers",
            "authorization, content-type, range, if-none-match, prefer, x-algolia-api-key, x-algolia-application-id",
        ),
        (
            "access-control-expose-headers",
            "retry-after, etag, content-range, preference-applied, x-content-verified, x-verified, x-request-id",
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
    // every chain's run in its indexer object (one run at a time with the object's alarm), then the alarms started
    let config = config::Config::from_env(&env);
    let chains = match config.chains() {
        Ok(chains) => chains,
        Err(e) => return worker::console_error!("indexer: {} {}", e.code, e.message),
    };
    for chain in chains {
        match indexer::clock::run(&env, chain).await {
            Ok(stats) => worker::console_log!(
                "indexer {}: {}",
                chain.chain_id,
                serde_json::to_string(&stats).unwrap_or_default()
            ),
            Err(e) => worker::console_error!("indexer {}: {} {}", chain.chain_id, e.code, e.message),
        }
    }
    if let Err(e) = indexer::clock::wake_all(&env, &config).await {
        worker::console_error!("indexer wake: {} {}", e.code, e.message);
    }
    // the relayer's balance against LOW_BALANCE_ALERT_WEI: the operator's webhook is alerted once per crossing
    if let Err(e) = webhooks::check_balance(&env, &config).await {
        worker::console_warn!("balance check: {} {}", e.code, e.message);
    }
}
