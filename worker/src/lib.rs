//! profile-relayer's Cloudflare Worker. This first cut only answers `GET /health`; the relayer, lookup and IPFS
//! routes build on it.

use profile_relayer::{api::ErrorBody, networks::Network};
use worker::{Context, Env, Request, Response, Result, Router, event};

/// Worker entry point.
#[event(fetch)]
pub async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    Router::new()
        .get("/health", |_, ctx| {
            let chain_id = ctx.var("CHAIN_ID").map(|v| v.to_string()).unwrap_or_default();
            let network = chain_id
                .parse()
                .ok()
                .and_then(|id| Network::from_chain_id(id).ok())
                .map(Network::name);
            Response::from_json(
                &serde_json::json!({ "status": "ok", "chainId": chain_id, "network": network }),
            )
        })
        .or_else_any_method("/*path", |_, _| {
            Ok(Response::from_json(&ErrorBody::new("NOT_FOUND", "no such route"))?.with_status(404))
        })
        .run(req, env)
        .await
}
