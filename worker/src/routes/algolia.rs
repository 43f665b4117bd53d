//! The Algolia-compatible read API over the D1 index: `POST /1/indexes/:index/query`, `GET /1/indexes/:index`,
//! `POST /1/indexes/*/queries` (multi-index), `POST /1/indexes/:index/browse` (cursor), with `filters` /
//! `facetFilters` / `numericFilters`, `facets` and `_highlightResult` shaped as Algolia's clients read them. The
//! `x-algolia-*` credentials (headers or query parameters) are accepted and not checked: the index is public.
//! Thin handlers: the request read and checked (index, body, rate limit); the search is the engine's
//! ([`crate::search::engine`]).

use profile_relayer::api::algolia::{AlgoliaResult, AlgoliaResults};
use serde::Serialize;
use serde_json::{Map, Value};
use worker::{Env, Request, Response};

use crate::{
    config::Config,
    error::{ApiError, ApiResult, Code},
    lookup::{limit_ip, limit_ip_more},
    search::engine::{browse, cursor, params::Params, search},
};

/// Most queries in one multi-index request (Algolia's: it refuses the 51st with "Too many queries in multi query
/// request").
pub const MAX_QUERIES: usize = 50;

/// Charges the client's lookup budget for the work `params` ask beyond the one token every request took on entry
/// ([`Params::cost`]): a heavy call is answered, and its client waits it out before the next (429 with
/// `Retry-After`), instead of being refused what Algolia would answer.
async fn charge(req: &Request, env: &Env, config: &Config, params: &[&Params]) -> ApiResult<()> {
    let cost: u32 = params.iter().map(|p| p.cost()).fold(0, u32::saturating_add);
    limit_ip_more(req, env, config, cost.saturating_sub(1)).await
}

/// 404 `INDEX_NOT_FOUND` unless `index` is one of this deployment's indexes.
fn check_index(config: &Config, index: &str) -> ApiResult<()> {
    let names = config.all_index_names()?;
    if !names.iter().any(|n| n == index) {
        return Err(ApiError::new(
            Code::IndexNotFound,
            format!("no index {index:?} (this deployment has {})", names.join(", ")),
        ));
    }
    Ok(())
}

/// The request body as a JSON object (no body is `{}`). Algolia's browser clients send JSON as `text/plain` (no
/// preflight): the content type is not checked.
async fn body(req: &mut Request, config: &Config) -> ApiResult<Map<String, Value>> {
    let max = config.relayer()?.max_body_bytes;
    let bytes = crate::body::request_bytes(req, max).await?;
    if bytes.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::new(Code::InvalidJson, "the body must be a JSON object")),
        Err(e) => Err(ApiError::new(Code::InvalidJson, e.to_string())),
    }
}

/// The answer of an Algolia route. Errors carry, next to this API's `{"error": {code, message}}`, Algolia's
/// top-level `message` and `status`, which Algolia's clients show.
pub fn answer<T: Serialize>(origin: &str, result: ApiResult<T>) -> ApiResult<Response> {
    match result {
        Ok(answer) => {
            let mut value = serde_json::to_value(&answer).map_err(ApiError::internal)?;
            crate::lookup::absolute_urls(&mut value, origin);
            Ok(Response::from_json(&value)?)
        }
        Err(e) => {
            let body = profile_relayer::api::algolia::AlgoliaError::new(e.code, &e.message, e.status);
            let mut res = Response::from_json(&body)?.with_status(e.status);
            if let Some(secs) = e.retry_after {
                res.headers_mut().set("retry-after", &secs.to_string())?;
            }
            Ok(res)
        }
    }
}

/// `POST /1/indexes/:indexName/query`.
pub async fn query_route(
    mut req: Request,
    env: &Env,
    config: &Config,
    index: &str,
) -> ApiResult<AlgoliaResult> {
    limit_ip(&req, env, config).await?;
    check_index(config, index)?;
    let params = Params::from_body(&body(&mut req, config).await?)?;
    charge(&req, env, config, &[&params]).await?;
    search(env, index, &params).await
}

/// `GET /1/indexes/:indexName?query=…`: the parameters in the URL (`x-algolia-*` ones ignored).
pub async fn get_route(req: &Request, env: &Env, config: &Config, index: &str) -> ApiResult<AlgoliaResult> {
    limit_ip(req, env, config).await?;
    check_index(config, index)?;
    let url = req.url()?;
    let params = Params::from_pairs(
        url.query_pairs()
            .filter(|(k, _)| !k.to_ascii_lowercase().starts_with("x-algolia-")),
    )?;
    charge(req, env, config, &[&params]).await?;
    search(env, index, &params).await
}

/// `POST /1/indexes/*/queries`: `{"requests": [{"indexName", "params" | fields…}]}` → `{"results": […]}`.
pub async fn queries_route(mut req: Request, env: &Env, config: &Config) -> ApiResult<AlgoliaResults> {
    limit_ip(&req, env, config).await?;
    let body = body(&mut req, config).await?;
    let Some(Value::Array(requests)) = body.get("requests") else {
        return Err(ApiError::new(Code::InvalidFieldType, "requests must be an array"));
    };
    if body.get("strategy").is_some_and(|s| !s.is_string()) {
        return Err(ApiError::new(Code::InvalidFieldType, "strategy must be a string"));
    }
    if requests.len() > MAX_QUERIES {
        return Err(ApiError::new(
            Code::TooManyQueries,
            format!(
                "Too many queries in multi query request: {}, at most {MAX_QUERIES}",
                requests.len()
            ),
        ));
    }
    let mut parsed = Vec::with_capacity(requests.len());
    for (i, request) in requests.iter().enumerate() {
        let Value::Object(request) = request else {
            return Err(ApiError::new(
                Code::InvalidFieldType,
                format!("requests[{i}] must be an object"),
            ));
        };
        let Some(Value::String(index)) = request.get("indexName") else {
            return Err(ApiError::new(
                Code::InvalidFieldType,
                format!("requests[{i}].indexName must be a string"),
            ));
        };
        if let Some(kind) = request.get("type").filter(|t| *t != "default") {
            return Err(ApiError::new(
                Code::UnsupportedQueryType,
                format!("requests[{i}].type {kind} is not supported (only \"default\")"),
            ));
        }
        check_index(config, index)?;
        parsed.push((index.clone(), Params::from_body(request)?));
    }
    // one call, the work of several: the client's lookups are charged the cost of every query
    let all: Vec<&Params> = parsed.iter().map(|(_, p)| p).collect();
    charge(&req, env, config, &all).await?;
    let mut results = Vec::with_capacity(parsed.len());
    for (index, params) in &parsed {
        results.push(search(env, index, params).await?);
    }
    Ok(AlgoliaResults { results })
}

/// `POST /1/indexes/:indexName/browse`: every matching record in `objectID` order, `hitsPerPage` (default and
/// most 1000) at a time; the answer's `cursor` (absent on the last page) continues where it stopped, with the
/// parameters of the first call.
pub async fn browse_route(
    mut req: Request,
    env: &Env,
    config: &Config,
    index: &str,
) -> ApiResult<AlgoliaResult> {
    limit_ip(&req, env, config).await?;
    check_index(config, index)?;
    let body = body(&mut req, config).await?;
    let (params, after, page) = match body.get("cursor") {
        // no cursor (an empty one, as a client may send, included): the first page
        None | Some(Value::Null) => (Params::from_body_with(&body, 1000)?, String::new(), 0),
        Some(Value::String(cursor)) if cursor.is_empty() => {
            (Params::from_body_with(&body, 1000)?, String::new(), 0)
        }
        Some(Value::String(cursor)) => cursor::decode_cursor(cursor)?,
        Some(_) => {
            return Err(ApiError::new(Code::InvalidFieldType, "cursor must be a string"));
        }
    };
    charge(&req, env, config, &[&params]).await?;
    browse(env, index, &params, &after, page).await
}
