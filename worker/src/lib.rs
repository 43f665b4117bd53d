//! profile-relayer's Cloudflare Worker: the relayer user API (deploy and register Universal Profiles), API keys,
//! quota and rate limits. Encodings, validation and prediction come from the core crate; this crate converts,
//! checks and does I/O (JSON-RPC, KV, Durable Objects).

mod auth;
mod config;
mod error;
mod indexer;
mod ipfs;
mod lookup;
mod ratelimit;
mod relayer;
mod routes;
mod rpc;
mod search;
mod signer;
mod store;

pub use ratelimit::RateLimiter;
pub use relayer::Relayer;
use worker::{Context, Env, Request, Response, Result, ScheduleContext, ScheduledEvent, event};

/// Worker entry point: every error becomes a JSON error body, never a panic.
#[event(fetch)]
pub async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    Ok(routes::handle(req, &env)
        .await
        .unwrap_or_else(error::ApiError::into_response))
}

/// Cron trigger: one indexer run (a bounded block range plus due retries).
#[event(scheduled)]
pub async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    match indexer::run(&env).await {
        Ok(stats) => worker::console_log!("indexer: {}", serde_json::to_string(&stats).unwrap_or_default()),
        Err(e) => worker::console_error!("indexer: {} {}", e.code, e.message),
    }
}
