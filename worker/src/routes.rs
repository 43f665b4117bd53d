//! HTTP routes: the table ([`table`]) drives dispatch; the handlers live in their modules. Handlers only convert,
//! check and do I/O: parsing and encodings live in the core crate.

mod admin;
mod algolia;
mod console;
mod metrics;
mod openapi;
mod profiles;
mod table;
mod webhooks;

use profile_relayer::{
    api::{ProfileStatus, admin::Health},
    hex::parse_address,
};
use worker::{Context, Env, Request, Response};

use table::{Handler, Matched, ROUTES, allowed_methods};

use crate::plumbing::json_response;

use crate::{
    auth::{self, Scope},
    config::Config,
    error::{ApiError, ApiResult, Code},
    relayer::pool,
    store,
};

/// Dispatches a request: the route of [`ROUTES`] (or, when enabled, [`table::TEST_ROUTES`]) matching its method and
/// path, else 405 with `Allow` when the path has routes for other methods, else 404. `config` is the request's
/// configuration, parsed once by the entry.
pub async fn handle(req: Request, env: &Env, config: &Config, ctx: &Context) -> ApiResult<Response> {
    let path = req.path();
    // empty segments (`/api//execute`, as a client joining a base URL that ends in `/` may send) are ignored
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let method = req.method();
    // workers-rs reads a method it does not know (QUERY, …) as GET: such a request matches no route
    if req.inner().method() != method.as_ref() {
        return no_route(&req.inner().method(), &path, &segments);
    }
    let found = match table::find(ROUTES, method.as_ref(), &segments) {
        Some(found) => Some(found),
        None if config.panic_test_route.value()? => {
            table::find(table::TEST_ROUTES, method.as_ref(), &segments)
        }
        None => None,
    };
    let Some(found) = found else {
        return no_route(method.as_ref(), &path, &segments);
    };
    crate::reqlog::note_route(found.route.pattern);
    dispatch(&found, req, env, config, ctx, &path).await
}

/// Calls the handler of a matched route with its parameters, after the checks the route makes first (rate limits,
/// admin or API key authentication), with the request's configuration.
async fn dispatch(
    found: &Matched<'_>,
    req: Request,
    env: &Env,
    config: &Config,
    ctx: &Context,
    path: &str,
) -> ApiResult<Response> {
    match found.route.handler {
        Handler::Health => health(config),
        Handler::Ready => crate::ready::ready(&req, env, config).await,
        Handler::OpenApi => openapi::openapi(&req, config),
        Handler::Deploy => profiles::deploy(req, env, config).await,
        Handler::Register => profiles::register(req, env, config).await,
        Handler::Status => status(&req, env, config, found.param("address")?).await,
        Handler::Execute => {
            limit_relay(&req, env, config).await?;
            crate::execute::execute(req, env, config).await
        }
        Handler::Quota => {
            limit_relay(&req, env, config).await?;
            crate::execute::quota_route(req, env, config).await
        }
        Handler::Transaction => {
            limit_relay(&req, env, config).await?;
            profiles::transaction(env, config, found.param("hash")?).await
        }
        Handler::CreateKey => admin::create_key(req, env, config).await,
        Handler::ListKeys => admin::list_keys(&req, env, config).await,
        Handler::RevokeKey => admin::revoke_key(&req, env, config, found.param("id")?).await,
        Handler::Ipfs => {
            // OpenAPI clients send a `/` inside the `{cid}` parameter as `%2F`: it separates path segments (as on
            // IPFS gateways, which decode the URL path)
            let target = path.get("/ipfs/".len()..).unwrap_or_default();
            crate::ipfs::relay(&req, env, config, ctx, &decode_slashes(target)).await
        }
        Handler::Image => {
            // as for /ipfs: a `%2F` inside the `{cid}` parameter separates path segments
            let target = path.get("/image/".len()..).unwrap_or_default();
            crate::image::route(&req, env, config, &decode_slashes(target)).await
        }
        Handler::Add => {
            auth::authenticate_upload(&req, env, config).await?;
            crate::ipfs::add(req, env, config).await
        }
        Handler::LookupAddress => {
            let (chain, address) = (found.param("chainId")?, found.param("address")?);
            crate::lookup::address(&req, env, config, chain, address).await
        }
        Handler::LookupToken => {
            let (chain, address) = (found.param("chainId")?, found.param("address")?);
            crate::lookup::token(&req, env, config, chain, address, found.param("tokenId")?).await
        }
        Handler::Stats => crate::lookup::stats(&req, env, config, found.param("chainId")?).await,
        Handler::IndexerStatus => {
            crate::lookup::indexer_status(&req, env, config, found.param("chainId")?).await
        }
        Handler::Search => crate::lookup::search_route(&req, env, config, found.param("chainId")?).await,
        Handler::AlgoliaQueries => algolia::answer(
            &crate::lookup::origin(&req)?,
            algolia::queries_route(req, env, config).await,
        ),
        Handler::AlgoliaQuery => {
            let index = found.param("indexName")?;
            let origin = crate::lookup::origin(&req)?;
            algolia::answer(&origin, algolia::query_route(req, env, config, index).await)
        }
        Handler::AlgoliaBrowse => {
            let index = found.param("indexName")?;
            let origin = crate::lookup::origin(&req)?;
            algolia::answer(&origin, algolia::browse_route(req, env, config, index).await)
        }
        Handler::AlgoliaGet => algolia::answer(
            &crate::lookup::origin(&req)?,
            algolia::get_route(&req, env, config, found.param("indexName")?).await,
        ),
        Handler::RunIndexer => {
            auth::authenticate_admin(&req, env, config).await?;
            admin::run_indexer(&req, env, config).await
        }
        Handler::RelayerStatus => admin::relayer_status(&req, env, config).await,
        Handler::DrainSigner => admin::drain_signer(&req, env, config, found.param("address")?, true).await,
        Handler::ActivateSigner => {
            admin::drain_signer(&req, env, config, found.param("address")?, false).await
        }
        Handler::CancelTransaction => {
            admin::manage_transaction(&req, env, config, found.param("hash")?, true).await
        }
        Handler::ReplaceTransaction => {
            admin::manage_transaction(&req, env, config, found.param("hash")?, false).await
        }
        Handler::PendingTransactions => admin::pending_transactions(&req, env, config).await,
        Handler::Metrics => metrics::metrics(&req, env, config).await,
        Handler::UpdateKey => admin::update_key(req, env, config, found.param("id")?).await,
        Handler::Usage => admin::usage(&req, env, config).await,
        Handler::Console => console::page(),
        Handler::ConsoleAsset => console::asset(found.param("file")?),
        Handler::SetWebhook => webhooks::set(req, env, config, found.param("id").ok()).await,
        Handler::RemoveWebhook => webhooks::remove(&req, env, config, found.param("id").ok()).await,
        Handler::WebhookDeliveries => webhooks::deliveries(&req, env, config, found.param("id").ok()).await,
        Handler::Panic => {
            auth::authenticate_admin(&req, env, config).await?;
            admin::deliberate_panic()
        }
    }
}

/// The public rate limit of the relay routes (per client).
async fn limit_relay(req: &Request, env: &Env, config: &Config) -> ApiResult<()> {
    crate::ratelimit::limit_client(req, env, config.limits.public.value()?, "relay requests").await
}

fn decode_slashes(target: &str) -> String {
    target.replace("%2F", "/").replace("%2f", "/")
}

/// 405 with `Allow` when the path has routes for other methods, else 404.
fn no_route(method: &str, path: &str, segments: &[&str]) -> ApiResult<Response> {
    let Some(allow) = allowed_methods(segments) else {
        return Err(ApiError::not_found(format!("no route {path}")));
    };
    let mut res = ApiError::new(
        Code::MethodNotAllowed,
        format!("{method} is not allowed on {path} (allowed: {allow})"),
    )
    .into_response();
    res.headers_mut().set("allow", &allow)?;
    Ok(res)
}

/// `GET /health`: the relayer's chain and every chain the lookup API and the indexer serve.
fn health(config: &Config) -> ApiResult<Response> {
    let chain_id = config.relayer()?.chain_id;
    let chains: Vec<u64> = config.chains()?.iter().map(|c| c.chain_id).collect();
    json_response(200, &Health::ok(chain_id, chains))
}

async fn status(req: &Request, env: &Env, config: &Config, address: &str) -> ApiResult<Response> {
    let config = config.relayer()?;
    auth::authenticate(req, env, Scope::Register, Some(&config.shares)).await?;
    let address = parse_address("address", address)?;
    let deployed = !config.rpc().code(address).await?.is_empty();
    let kv = env.kv("PROFILES")?;
    let record = store::profile(&kv, address).await?;
    let pending = pool::pending(env, config, address).await?;
    if !deployed && record.is_none() && pending.is_none() {
        return Err(ApiError::new(
            Code::ProfileNotFound,
            format!("{address} is neither deployed nor registered"),
        ));
    }
    let now = config.now();
    let quota = match &record {
        Some(r) => Some(store::quota(&kv, address, now, config.profile_quota(r.registered_at, now)).await?),
        None => None,
    };
    json_response(
        200,
        &ProfileStatus {
            universal_profile_address: address,
            deployed,
            registered: record.is_some(),
            pending_transaction: pending,
            deployment_transaction: record.as_ref().and_then(|r| r.deployment_transaction),
            registered_at: record.as_ref().map(|r| r.registered_at),
            quota,
        },
    )
}
