//! profile-relayer's Cloudflare Worker: the relayer user API (deploy and register Universal Profiles), API keys,
//! quota and rate limits. Encodings, validation and prediction come from the core crate; this crate converts,
//! checks and does I/O (JSON-RPC, KV, Durable Objects).

mod auth;
mod config;
mod error;
mod ipfs;
mod ratelimit;
mod relayer;
mod routes;
mod rpc;
mod signer;
mod store;

pub use ratelimit::RateLimiter;
pub use relayer::Relayer;
use worker::{Context, Env, Request, Response, Result, event};

/// Worker entry point: every error becomes a JSON error body, never a panic.
#[event(fetch)]
pub async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    Ok(routes::handle(req, &env)
        .await
        .unwrap_or_else(error::ApiError::into_response))
}
