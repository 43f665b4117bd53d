//! Lookup API (every configured chain; `:chainId` decimal or hex): `/v1/:chainId/address/:address[/:tokenId]`,
//! `/v1/:chainId/stats` (the incumbent's array), `/v1/:chainId/indexer` (the indexer's position), `/v1/:chainId/search`, and the
//! Algolia-compatible `POST /1/indexes/:indexName/query`. Reads the search index; an address not indexed yet is
//! read from chain and indexed on demand — only what exists on chain is ever written (a token id is checked with
//! `tokenOwnerOf` first). Address answers go through the Cache API with `ETag`. Every answer that is not a cache
//! hit costs one token of the client IP's bucket (`LOOKUP_RATE_LIMIT_PER_MINUTE`, keyed by `CF-Connecting-IP`;
//! `0` turns the limit off): anonymous traffic cannot fill the index or burn the RPC quota.

use alloy_primitives::{Address, B256, keccak256};
use profile_relayer::{
    api::{
        SearchBoth,
        records::{IndexStats, IndexerStatus, NotIndexed, Refusal},
    },
    hex::parse_address,
    lsp8::{TokenIdFormat, encode_token_id},
};
use serde_json::Value;
use worker::{Cache, Env, Request, Response};

pub(crate) mod misses;

use self::misses::{remember_miss, remembered_miss};
use crate::{
    config::{ChainConfig, Config},
    error::{ApiError, ApiResult, Code},
    indexer::{self, Indexed, Kind, TokenIndexed},
    search::{
        engine,
        store::{self, Kept},
    },
};

/// Takes one token from the client IP's lookup bucket (`LOOKUP_RATE_LIMIT_PER_MINUTE`, 0 turns it off).
pub(crate) async fn limit_ip(req: &Request, env: &Env, config: &Config) -> ApiResult<()> {
    crate::ratelimit::limit_client(req, env, config.limits.lookup.value()?, "lookups").await
}

/// Takes `more` tokens at once from the same bucket as [`limit_ip`]: a request that does the work of several
/// lookups (a multi-query's further queries, a large page). Allowed while a token is left; the rest is charged as
/// a debt the client waits out.
pub(crate) async fn limit_ip_more(req: &Request, env: &Env, config: &Config, more: u32) -> ApiResult<()> {
    let limit = config.limits.lookup.value()?;
    crate::ratelimit::limit_client_in(
        req,
        env,
        crate::ratelimit::IP_BUCKET,
        limit,
        "lookups",
        crate::ratelimit::Taking::Several(more),
    )
    .await
}

/// The record fields holding an image URL.
const URL_FIELDS: [&str; 4] = ["profileImageUrl", "backgroundImageUrl", "iconUrl", "imageUrl"];

/// Makes the relative image URLs of records in `value` (`/image/…`, written by an indexer without
/// `PUBLIC_BASE_URL`) absolute with `origin`, the origin the client called: the incumbent's clients load them as
/// they are. Walks objects and arrays (records, hits, results).
pub fn absolute_urls(value: &mut Value, origin: &str) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(url) if URL_FIELDS.contains(&key.as_str()) && url.starts_with('/') => {
                        *url = format!("{origin}{url}");
                    }
                    Value::Object(_) | Value::Array(_) => absolute_urls(v, origin),
                    _ => {}
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| absolute_urls(v, origin)),
        _ => {}
    }
}

/// The origin the client called (`https://host[:port]`).
pub fn origin(req: &Request) -> ApiResult<String> {
    Ok(req.url()?.origin().ascii_serialization())
}

async fn cached(
    req: &Request,
    config: &Config,
    build: impl core::future::Future<Output = ApiResult<Value>>,
) -> ApiResult<Response> {
    let seconds = config.lookup_cache_seconds.value()?;
    let cache = Cache::default();
    let url = req.url()?.to_string();
    if seconds > 0
        && let Some(mut hit) = cache.get(url.as_str(), false).await?
    {
        // responses from the cache have immutable headers: copy into a fresh response
        let headers = hit.headers().clone();
        let fresh = Response::from_bytes(hit.bytes().await?)?.with_headers(headers);
        return not_modified(req, fresh);
    }
    let mut value = build.await?;
    absolute_urls(&mut value, &origin(req)?);
    let body = serde_json::to_string(&value).map_err(ApiError::internal)?;
    let hash = keccak256(body.as_bytes());
    let etag = format!(
        "\"{}\"",
        alloy_primitives::hex::encode(hash.get(..8).unwrap_or_default())
    );
    let mut response = Response::ok(body)?;
    let headers = response.headers_mut();
    headers.set("content-type", "application/json")?;
    headers.set("cache-control", &format!("public, max-age={seconds}"))?;
    headers.set("etag", &etag)?;
    if seconds > 0 {
        cache.put(url.as_str(), response.cloned()?).await?;
    }
    not_modified(req, response)
}

fn not_modified(req: &Request, response: Response) -> ApiResult<Response> {
    let etag = response.headers().get("etag")?;
    if etag.is_some() && req.headers().get("if-none-match")? == etag {
        let headers = response.headers().clone();
        return Ok(Response::empty()?.with_status(304).with_headers(headers));
    }
    Ok(response)
}

/// `GET /v1/:chainId/address/:address`: the profile or asset record; for an address that holds neither, 200
/// with `LSPStandard` `EOA` / `UnknownContract` (remembered for `LOOKUP_MISS_SECONDS`).
pub async fn address(
    req: &Request,
    env: &Env,
    config: &Config,
    chain_id: &str,
    address: &str,
) -> ApiResult<Response> {
    let chain = config.chain(chain_id)?;
    let address = parse_address("address", address)?;
    cached(req, config, async {
        limit_ip(req, env, config).await?;
        let (profiles, assets) = chain.index_names();
        let id = address.to_checksum(None);
        for index in [&profiles, &assets] {
            if let Some(record) = store::get(env, index, &id).await? {
                return with_tokens(env, &assets, record).await;
            }
        }
        if let Some(refusal) = indexer::recorded_error(env, chain.chain_id, &id).await? {
            // answered like any unknown contract (the incumbent's clients throw on an error here), with the reason
            let answer = NotIndexed::refused(address, chain.chain_id, refusal, indexer::now());
            return serde_json::to_value(answer).map_err(ApiError::internal);
        }
        if let Some(miss) = remembered_miss(env, config, chain.chain_id, &id).await? {
            return serde_json::to_value(miss).map_err(ApiError::internal);
        }
        match indexer::index_now(env, config, &chain, address).await? {
            Indexed::Lsp(Kind::Profile) => store::get(env, &profiles, &id)
                .await?
                .map(|kept| kept.json)
                .ok_or_else(|| ApiError::internal("record vanished")),
            Indexed::Lsp(_) => {
                let record = store::get(env, &assets, &id)
                    .await?
                    .ok_or_else(|| ApiError::internal("record vanished"))?;
                with_tokens(env, &assets, record).await
            }
            Indexed::Nothing { contract } => {
                let now = indexer::now();
                let answer = NotIndexed::new(address, chain.chain_id, contract, now);
                remember_miss(env, config, &answer, now).await?;
                serde_json::to_value(answer).map_err(ApiError::internal)
            }
            Indexed::Refused(refusal) => {
                // remembered as an unknown contract: repeating the lookup costs no RPC (the reason is not kept)
                let now = indexer::now();
                let answer = NotIndexed::refused(address, chain.chain_id, refusal, now);
                remember_miss(env, config, &answer, now).await?;
                serde_json::to_value(answer).map_err(ApiError::internal)
            }
        }
    })
    .await
}

/// A record's JSON; an LSP8 collection's with its first 100 indexed tokens (`AssetRecord::tokens`).
async fn with_tokens(env: &Env, assets: &str, record: Kept) -> ApiResult<Value> {
    let is_collection = record.is_collection();
    let mut json = record.json;
    if is_collection && let Some(fields) = json.as_object_mut() {
        let tokens = store::tokens_of(env, assets, &record.address, 100).await?;
        fields.insert(
            "tokens".into(),
            serde_json::to_value(tokens).map_err(ApiError::internal)?,
        );
    }
    Ok(json)
}

/// `GET /v1/:chainId/address/:address/:tokenId`; the token id may be bytes32 hex or written in the collection's
/// LSP8TokenIdFormat (a number, a string, an address…).
pub async fn token(
    req: &Request,
    env: &Env,
    config: &Config,
    chain_id: &str,
    address: &str,
    token: &str,
) -> ApiResult<Response> {
    let chain = config.chain(chain_id)?;
    let address = parse_address("address", address)?;
    let token = urlencoding_decode(token);
    cached(req, config, async {
        limit_ip(req, env, config).await?;
        let assets = chain.assets_index();
        let record = store::get(env, &assets, &address.to_checksum(None)).await?;
        if record.is_none()
            && let Some(refusal) =
                indexer::recorded_error(env, chain.chain_id, &address.to_checksum(None)).await?
        {
            return Err(not_a_collection(address, Some(&refusal)));
        }
        let collection = match record {
            Some(c) => Some(c),
            None => match indexer::index_now(env, config, &chain, address).await? {
                Indexed::Lsp(Kind::Lsp8) => store::get(env, &assets, &address.to_checksum(None)).await?,
                Indexed::Refused(refusal) => return Err(not_a_collection(address, Some(&refusal))),
                _ => return Err(not_a_collection(address, None)),
            },
        };
        let Some(collection) = collection.filter(Kept::is_collection) else {
            return Err(not_a_collection(address, None));
        };
        let format = collection.token_id_format().unwrap_or(TokenIdFormat::Number);
        let token_id: B256 = if token.len() == 66 && token.starts_with("0x") {
            profile_relayer::hex::parse_fixed::<32>("tokenId", &token)?
        } else {
            encode_token_id(format, &token)?
        };
        let object_id = format!("{}:{token_id}", address.to_checksum(None));
        if let Some(record) = store::get(env, &assets, &object_id).await? {
            return Ok(record.json);
        }
        let refused = |r: &Refusal| {
            ApiError::new(
                Code::TokenNotFound,
                format!(
                    "token {token_id} of {address} cannot be indexed ({}): {}",
                    r.code, r.message
                ),
            )
        };
        if let Some(refusal) = indexer::recorded_error(env, chain.chain_id, &object_id).await? {
            return Err(refused(&refusal));
        }
        match indexer::index_token_now(env, config, &chain, address, token_id).await? {
            TokenIndexed::Indexed => {}
            TokenIndexed::Refused(refusal) => return Err(refused(&refusal)),
            TokenIndexed::Missing => {
                return Err(ApiError::new(
                    Code::TokenNotFound,
                    format!("{address} has no token {token_id}"),
                ));
            }
        }
        store::get(env, &assets, &object_id)
            .await?
            .map(|kept| kept.json)
            .ok_or_else(|| ApiError::internal("token record vanished"))
    })
    .await
}

/// 404 for a token of an address that is no LSP8 collection the indexer can read (with the reason when it refused
/// the contract).
fn not_a_collection(address: Address, refusal: Option<&Refusal>) -> ApiError {
    let why = refusal.map_or_else(String::new, |r| format!(" (refused: {}: {})", r.code, r.message));
    ApiError::new(
        Code::NotFound,
        format!("{address} is not an LSP8 collection{why}"),
    )
}

fn urlencoding_decode(s: &str) -> String {
    // percent-decoding of a path segment is the URL parser's job: reuse the runtime's
    js_sys::decode_uri_component(s)
        .map(String::from)
        .unwrap_or_else(|_| s.to_owned())
}

/// Entries per index, assets first then profiles: the array LUKSO's wallet destructures
/// (`const [, profiles] = await fetch(…/stats)`).
async fn index_stats(env: &Env, chain: &ChainConfig) -> ApiResult<Vec<IndexStats>> {
    let (profiles, assets) = chain.index_names();
    let counts = store::counts(env, [&profiles, &assets]).await?;
    let entry = |name: String| IndexStats {
        entries: counts.iter().find(|(n, _)| *n == name).map_or(0, |(_, c)| *c),
        name,
    };
    Ok(vec![entry(assets), entry(profiles)])
}

/// `GET /v1/:chainId/stats`: `[{name, entries}]` for the assets, then the profiles index.
pub async fn stats(req: &Request, env: &Env, config: &Config, chain_id: &str) -> ApiResult<Response> {
    let chain = config.chain(chain_id)?;
    limit_ip(req, env, config).await?;
    Ok(Response::from_json(&index_stats(env, &chain).await?)?)
}

/// `GET /v1/:chainId/indexer`: where the indexer stands (entries, unindexable candidates, last indexed block,
/// head, lag).
pub async fn indexer_status(
    req: &Request,
    env: &Env,
    config: &Config,
    chain_id: &str,
) -> ApiResult<Response> {
    let chain = config.chain(chain_id)?;
    limit_ip(req, env, config).await?;
    Ok(Response::from_json(&indexer_status_of(env, &chain).await?)?)
}

/// Where the indexer of `config`'s chain stands (`GET /v1/:chainId/indexer`, `GET /admin/metrics`).
pub async fn indexer_status_of(env: &Env, config: &ChainConfig) -> ApiResult<IndexerStatus> {
    let head = config.rpc().block_number().await.ok();
    let next = indexer::checkpoint(env, config.chain_id).await?;
    let last = next.map(|n| n.saturating_sub(1));
    Ok(IndexerStatus {
        chain_id: config.chain_id,
        indexes: index_stats(env, config).await?,
        unindexable: indexer::error_count(env, config.chain_id).await?,
        last_indexed_block: last,
        head_block: head,
        lag: head.map(|h| last.map_or(h, |l| h.saturating_sub(l))),
    })
}

/// `GET /v1/:chainId/search?q=…&page=…&hitsPerPage=…`: profiles and assets.
pub async fn search_route(req: &Request, env: &Env, config: &Config, chain_id: &str) -> ApiResult<Response> {
    let chain = config.chain(chain_id)?;
    limit_ip(req, env, config).await?;
    let url = req.url()?;
    let param = |k: &str| {
        url.query_pairs()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.into_owned())
    };
    let q = param("q").unwrap_or_default();
    let page = match param("page") {
        Some(p) => bounded("page", p.parse().ok(), MAX_PAGE)?,
        None => 0,
    };
    let per = match param("hitsPerPage") {
        Some(p) => bounded("hitsPerPage", p.parse().ok(), MAX_HITS_PER_PAGE)?,
        None => 20,
    };
    let (profiles, assets) = chain.index_names();
    let p = engine::simple(env, &profiles, &q, page, per).await?;
    let a = engine::simple(env, &assets, &q, page, per).await?;
    let mut value = serde_json::to_value(SearchBoth {
        profiles: p,
        assets: a,
    })
    .map_err(|e| ApiError::internal(e.to_string()))?;
    absolute_urls(&mut value, &origin(req)?);
    Ok(Response::from_json(&value)?)
}

/// Largest `page` of the search routes.
const MAX_PAGE: u64 = 1000;
/// Largest `hitsPerPage` accepted (Algolia's limit); answers hold at most 100 hits.
const MAX_HITS_PER_PAGE: u64 = 1000;

/// A search number: an integer from 0 to `max`, else 400 `INVALID_PARAMETER`.
fn bounded(name: &str, value: Option<u64>, max: u64) -> ApiResult<u64> {
    value.filter(|v| *v <= max).ok_or_else(|| {
        ApiError::new(
            Code::InvalidParameter,
            format!("{name} must be an integer from 0 to {max}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn relative_image_urls_become_absolute_everywhere_in_an_answer() {
        let mut v = json!({
            "results": [{ "hits": [{ "profileImageUrl": "/image/bafy", "iconUrl": "https://x/y.png", "name": "/a" }] }],
            "imageUrl": "/ipfs/bafy/1.png",
            "backgroundImageUrl": "",
        });
        absolute_urls(&mut v, "https://api.example.org");
        assert_eq!(
            v["results"][0]["hits"][0]["profileImageUrl"],
            "https://api.example.org/image/bafy"
        );
        assert_eq!(v["results"][0]["hits"][0]["iconUrl"], "https://x/y.png");
        assert_eq!(v["results"][0]["hits"][0]["name"], "/a");
        assert_eq!(v["imageUrl"], "https://api.example.org/ipfs/bafy/1.png");
        assert_eq!(v["backgroundImageUrl"], "");
    }
}
