//! HTTP routes. Handlers only convert, check and do I/O: parsing and encodings live in the core crate.

use alloy_primitives::{Address, B256};
use profile_relayer::{
    api::{DeployRequest, DeployResponse, RegisterRequest, RegisterResponse},
    hex::parse_address,
    lsp23::{generate_salt, predict_addresses, profile_data_from_controllers},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};
use worker::{Date, Env, Headers, Method, Request, RequestInit, Response, Stub};

use crate::{
    auth::{self, ApiKeyRecord, Scope},
    config::Config,
    error::{ApiError, ApiResult},
    ratelimit::{Hit, Verdict},
    relayer::{DeployJob, DeployOutcome, RegisterJob, RegisterOutcome},
    store,
};

/// Every route: method and path pattern. The OpenAPI document must list exactly these (checked by a test).
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/health"),
    ("GET", "/openapi.json"),
    ("POST", "/api/universal-profile"),
    ("POST", "/api/universal-profile/register"),
    ("POST", "/api/users"),
    ("GET", "/api/universal-profile/{address}"),
    ("POST", "/admin/api-keys"),
    ("GET", "/admin/api-keys"),
    ("DELETE", "/admin/api-keys/{id}"),
    ("GET", "/ipfs/{cid}"),
    ("POST", "/api/v0/add"),
    ("GET", "/v1/{chainId}/address/{address}"),
    ("GET", "/v1/{chainId}/address/{address}/{tokenId}"),
    ("GET", "/v1/{chainId}/stats"),
    ("GET", "/v1/{chainId}/search"),
    ("POST", "/1/indexes/{indexName}/query"),
    ("POST", "/admin/indexer/run"),
];

/// The OpenAPI 3.1 document.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Dispatches a request.
pub async fn handle(req: Request, env: &Env) -> ApiResult<Response> {
    let path = req.path();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let method = req.method();
    match (method.clone(), segments.as_slice()) {
        (Method::Get, ["health"]) => health(env).await,
        (Method::Get, ["openapi.json"]) => Ok(Response::ok(OPENAPI)?.with_headers(json_headers()?)),
        (Method::Post, ["api", "universal-profile"]) => deploy(req, env).await,
        (Method::Post, ["api", "universal-profile", "register"] | ["api", "users"]) => {
            register(req, env).await
        }
        (Method::Get, ["api", "universal-profile", address]) => status(&req, env, address).await,
        (Method::Post, ["admin", "api-keys"]) => create_key(req, env).await,
        (Method::Get, ["admin", "api-keys"]) => list_keys(&req, env).await,
        (Method::Delete, ["admin", "api-keys", id]) => revoke_key(&req, env, id).await,
        (Method::Get, ["ipfs", _, ..]) => crate::ipfs::relay(&req, env, &path["/ipfs/".len()..]).await,
        (Method::Get, ["v1", chain, "address", address]) => {
            crate::lookup::address(&req, env, chain, address).await
        }
        (Method::Get, ["v1", chain, "address", address, token]) => {
            crate::lookup::token(&req, env, chain, address, token).await
        }
        (Method::Get, ["v1", chain, "stats"]) => crate::lookup::stats(&req, env, chain).await,
        (Method::Get, ["v1", chain, "search"]) => crate::lookup::search_route(&req, env, chain).await,
        (Method::Post, ["1", "indexes", index, "query"]) => {
            let index = (*index).to_owned();
            crate::lookup::algolia_query(req, env, &index).await
        }
        (Method::Post, ["admin", "indexer", "run"]) => {
            auth::authenticate_admin(&req, env)?;
            json_response(200, &crate::indexer::run(env).await?)
        }
        (Method::Post, ["api", "v0", "add"]) => {
            let key = auth::authenticate(&req, env, None).await?;
            rate_limit(env, &key).await?;
            crate::ipfs::add(req, env).await
        }
        _ => {
            let known = ROUTES.iter().any(|(_, pattern)| matches(pattern, &segments));
            if known {
                Err(ApiError::new(
                    405,
                    "METHOD_NOT_ALLOWED",
                    format!("{method} is not allowed on {path}"),
                ))
            } else {
                Err(ApiError::not_found(format!("no route {path}")))
            }
        }
    }
}

fn matches(pattern: &str, segments: &[&str]) -> bool {
    let parts: Vec<&str> = pattern.trim_matches('/').split('/').collect();
    if pattern == "/ipfs/{cid}" {
        // the CID may be followed by a path
        return segments.first() == Some(&"ipfs") && segments.len() >= 2;
    }
    parts.len() == segments.len()
        && parts
            .iter()
            .zip(segments)
            .all(|(p, s)| p.starts_with('{') || p == s)
}

fn json_headers() -> ApiResult<Headers> {
    let h = Headers::new();
    h.set("content-type", "application/json")?;
    Ok(h)
}

fn json_response<T: Serialize>(status: u16, body: &T) -> ApiResult<Response> {
    Ok(Response::from_json(body)?.with_status(status))
}

fn now() -> u64 {
    Date::now().as_millis() / 1000
}

async fn health(env: &Env) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    json_response(200, &json!({ "status": "ok", "chainId": config.chain_id }))
}

/// Reads a JSON body: `application/json`, at most `max` bytes, UTF-8.
async fn read_body(mut req: Request, max: usize) -> ApiResult<String> {
    let content_type = req.headers().get("content-type")?.unwrap_or_default();
    if !content_type.to_ascii_lowercase().starts_with("application/json") {
        return Err(ApiError::bad_request(
            "UNSUPPORTED_CONTENT_TYPE",
            "the body must be JSON with `Content-Type: application/json`",
        ));
    }
    let too_large =
        || ApiError::bad_request("BODY_TOO_LARGE", format!("the body is larger than {max} bytes"));
    if let Some(len) = req.headers().get("content-length")?
        && len.trim().parse::<usize>().map_or(true, |n| n > max)
    {
        return Err(too_large());
    }
    let bytes = req.bytes().await?;
    if bytes.len() > max {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| ApiError::bad_request("INVALID_JSON", "the body is not UTF-8"))
}

async fn rate_limit(env: &Env, key: &ApiKeyRecord) -> ApiResult<()> {
    let stub = env
        .durable_object("RATE_LIMITER")?
        .id_from_name(&key.id)?
        .get_stub()?;
    let hit = Hit {
        limit: key.rate_limit_per_minute,
        now_ms: Date::now().as_millis() as f64,
    };
    let verdict: Verdict = call_do(&stub, "/hit", &hit).await?;
    if verdict.allowed {
        return Ok(());
    }
    let mut err = ApiError::new(
        429,
        "RATE_LIMITED",
        format!(
            "this API key allows {} requests per minute",
            key.rate_limit_per_minute
        ),
    );
    err.retry_after = Some(verdict.retry_after);
    Err(err)
}

/// POSTs `body` to a Durable Object and decodes its answer, passing its error bodies through.
async fn call_do<B: Serialize, T: DeserializeOwned>(stub: &Stub, path: &str, body: &B) -> ApiResult<T> {
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(json_headers()?)
        .with_body(Some(
            serde_json::to_string(body).map_err(ApiError::internal)?.into(),
        ));
    let request = Request::new_with_init(&format!("https://do{path}"), &init)?;
    let mut response = stub.fetch_with_request(request).await?;
    let status = response.status_code();
    if status >= 400 {
        let retry_after = response
            .headers()
            .get("retry-after")?
            .and_then(|v| v.parse().ok());
        let body: profile_relayer::api::ErrorBody = response.json().await?;
        let mut err = ApiError::new(status, &body.error.code, body.error.message);
        err.retry_after = retry_after;
        return Err(err);
    }
    Ok(response.json().await?)
}

fn relayer(env: &Env, config: &Config) -> ApiResult<Stub> {
    Ok(env
        .durable_object("RELAYER")?
        .id_from_name(&format!("chain-{}", config.chain_id))?
        .get_stub()?)
}

async fn deploy(req: Request, env: &Env) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    let key = auth::authenticate(&req, env, Some(Scope::Deploy)).await?;
    rate_limit(env, &key).await?;
    let body = read_body(req, config.max_body_bytes).await?;
    let (salt, calldata) = match DeployRequest::from_json(&body)? {
        DeployRequest::Controllers {
            controllers,
            lsp3_profile,
        } => {
            let data =
                profile_data_from_controllers(&controllers, lsp3_profile.as_deref(), &config.constants)?;
            (generate_salt()?, data.to_post_deployment_calldata()?)
        }
        DeployRequest::Salt {
            salt,
            post_deployment_calldata,
        } => (salt, post_deployment_calldata),
    };
    let prediction = predict_addresses(salt, &calldata, &config.constants)?;
    let stub = relayer(env, &config)?;
    let outcome: DeployOutcome = call_do(
        &stub,
        "/deploy",
        &DeployJob {
            salt,
            post_deployment_call_data: calldata.into(),
            universal_profile: prediction.universal_profile,
            key_manager: prediction.key_manager,
        },
    )
    .await?;
    if outcome.deployed && outcome.transaction_hash.is_none() {
        // it existed already: make sure it is registered, send nothing
        let _: RegisterOutcome = call_do(
            &stub,
            "/register",
            &RegisterJob {
                address: prediction.universal_profile,
            },
        )
        .await?;
    }
    let response = DeployResponse {
        universal_profile_address: prediction.universal_profile,
        key_manager_address: prediction.key_manager,
        transaction_hash: outcome.transaction_hash,
    };
    json_response(if outcome.deployed { 200 } else { 202 }, &response)
}

/// ERC165 `supportsInterface(LSP0)` through `eth_call`.
async fn is_universal_profile(config: &Config, address: Address) -> ApiResult<bool> {
    const SUPPORTS_INTERFACE: [u8; 4] = [0x01, 0xff, 0xc9, 0xa7];
    const LSP0: [u8; 4] = [0x24, 0x87, 0x1b, 0x3d];
    let mut data = SUPPORTS_INTERFACE.to_vec();
    data.extend_from_slice(&LSP0);
    data.extend_from_slice(&[0u8; 28]);
    match config.rpc().eth_call(address, &data).await {
        Ok(out) => Ok(out.len() == 32 && out[31] == 1 && out[..31].iter().all(|b| *b == 0)),
        // a revert: the contract has no ERC165
        Err(crate::rpc::RpcError::Node { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

async fn register(req: Request, env: &Env) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    let key = auth::authenticate(&req, env, Some(Scope::Register)).await?;
    rate_limit(env, &key).await?;
    let body = read_body(req, config.max_body_bytes).await?;
    let address = RegisterRequest::from_json(&body)?.universal_profile_address;
    if config.rpc().code(address).await?.is_empty() {
        return Err(ApiError::new(
            404,
            "PROFILE_NOT_FOUND",
            format!("no contract at {address}"),
        ));
    }
    if !is_universal_profile(&config, address).await? {
        return Err(ApiError::bad_request(
            "NOT_A_UNIVERSAL_PROFILE",
            format!("{address} does not support the LSP0 interface (0x24871b3d)"),
        ));
    }
    let outcome: RegisterOutcome =
        call_do(&relayer(env, &config)?, "/register", &RegisterJob { address }).await?;
    json_response(
        200,
        &RegisterResponse {
            universal_profile_address: address,
            newly_registered: outcome.newly_registered,
            quota: outcome.quota,
        },
    )
}

async fn status(req: &Request, env: &Env, address: &str) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    let key = auth::authenticate(req, env, None).await?;
    rate_limit(env, &key).await?;
    let address = parse_address("address", address)?;
    let deployed = !config.rpc().code(address).await?.is_empty();
    let kv = env.kv("PROFILES")?;
    let record = store::profile(&kv, address).await?;
    let pending: Option<B256> =
        call_do(&relayer(env, &config)?, "/pending", &RegisterJob { address }).await?;
    if !deployed && record.is_none() && pending.is_none() {
        return Err(ApiError::new(
            404,
            "PROFILE_NOT_FOUND",
            format!("{address} is neither deployed nor registered"),
        ));
    }
    let quota = match &record {
        Some(_) => Some(store::quota(&kv, address, now()).await?),
        None => None,
    };
    json_response(
        200,
        &json!({
            "universalProfileAddress": address.to_checksum(None),
            "deployed": deployed,
            "registered": record.is_some(),
            "pendingTransaction": pending,
            "deploymentTransaction": record.as_ref().and_then(|r| r.deployment_transaction),
            "registeredAt": record.as_ref().map(|r| r.registered_at),
            "quota": quota,
        }),
    )
}

fn admin_body(body: &str) -> ApiResult<Map<String, Value>> {
    let value: Value =
        serde_json::from_str(body).map_err(|e| ApiError::bad_request("INVALID_JSON", e.to_string()))?;
    let Value::Object(obj) = value else {
        return Err(ApiError::bad_request(
            "INVALID_JSON",
            "the body must be a JSON object",
        ));
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !["name", "scopes", "rateLimitPerMinute"].contains(&k.as_str()))
    {
        return Err(ApiError::bad_request(
            "UNKNOWN_FIELD",
            format!("unknown field {k:?}"),
        ));
    }
    Ok(obj)
}

async fn create_key(req: Request, env: &Env) -> ApiResult<Response> {
    auth::authenticate_admin(&req, env)?;
    let config = Config::from_env(env)?;
    let obj = admin_body(&read_body(req, config.max_body_bytes).await?)?;
    let field_type =
        |f: &str, t: &str| ApiError::bad_request("INVALID_FIELD_TYPE", format!("{f} must be {t}"));
    let name = match obj.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= 100 => s.trim().to_owned(),
        Some(_) => return Err(field_type("name", "a non-empty string of at most 100 characters")),
        None => return Err(ApiError::bad_request("MISSING_FIELD", "missing field \"name\"")),
    };
    let scopes: Vec<Scope> = match obj.get("scopes") {
        None => vec![Scope::Deploy, Scope::Register],
        Some(v) => serde_json::from_value(v.clone())
            .ok()
            .filter(|s: &Vec<Scope>| !s.is_empty())
            .ok_or_else(|| field_type("scopes", "a non-empty array of \"deploy\" / \"register\""))?,
    };
    let rate_limit_per_minute = match obj.get("rateLimitPerMinute") {
        None => config.default_rate_limit,
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=1_000_000).contains(n))
            .map(|n| n as u32)
            .ok_or_else(|| field_type("rateLimitPerMinute", "an integer from 1 to 1000000"))?,
    };
    let (secret, id) = auth::generate_key()?;
    let record = ApiKeyRecord {
        id: id.clone(),
        name,
        scopes,
        rate_limit_per_minute,
        created_at: now(),
        revoked_at: None,
    };
    let kv = env.kv("API_KEYS")?;
    let hash = auth::hash_secret(&secret);
    store_key(&kv, &hash, &record).await?;
    let mut body = serde_json::to_value(&record).map_err(ApiError::internal)?;
    body["apiKey"] = Value::String(secret);
    json_response(201, &body)
}

/// Writes a key record under `key:<hash>` (for authentication) and `id:<id>` → hash with the record as metadata
/// (for listing and revoking).
async fn store_key(kv: &worker::kv::KvStore, hash: &str, record: &ApiKeyRecord) -> ApiResult<()> {
    kv.put(&format!("key:{hash}"), record)
        .map_err(ApiError::internal)?
        .execute()
        .await
        .map_err(ApiError::internal)?;
    kv.put(&format!("id:{}", record.id), hash)
        .map_err(ApiError::internal)?
        .metadata(record)
        .map_err(ApiError::internal)?
        .execute()
        .await
        .map_err(ApiError::internal)
}

async fn list_keys(req: &Request, env: &Env) -> ApiResult<Response> {
    auth::authenticate_admin(req, env)?;
    let kv = env.kv("API_KEYS")?;
    let mut keys = Vec::new();
    let mut cursor = None;
    loop {
        let mut list = kv.list().prefix("id:".to_owned());
        if let Some(c) = cursor.take() {
            list = list.cursor(c);
        }
        let page = list.execute().await.map_err(ApiError::internal)?;
        keys.extend(page.keys.into_iter().filter_map(|k| k.metadata));
        match page.cursor {
            Some(c) if !page.list_complete => cursor = Some(c),
            _ => break,
        }
    }
    json_response(200, &json!({ "apiKeys": keys }))
}

async fn revoke_key(req: &Request, env: &Env, id: &str) -> ApiResult<Response> {
    auth::authenticate_admin(req, env)?;
    let kv = env.kv("API_KEYS")?;
    let not_found = || ApiError::new(404, "API_KEY_NOT_FOUND", format!("no API key with id {id}"));
    if id.len() != 16 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(not_found());
    }
    let hash: String = kv
        .get(&format!("id:{id}"))
        .text()
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(not_found)?;
    let mut record: ApiKeyRecord = kv
        .get(&format!("key:{hash}"))
        .json()
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(not_found)?;
    if record.revoked_at.is_none() {
        record.revoked_at = Some(now());
        store_key(&kv, &hash, &record).await?;
    }
    json_response(200, &record)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn openapi_lists_exactly_the_routes() {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap();
        assert_eq!(doc["openapi"].as_str().unwrap().get(..3), Some("3.1"));
        let mut documented: Vec<(String, String)> = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                documented.push((method.to_uppercase(), path.clone()));
            }
        }
        documented.sort();
        let mut routes: Vec<(String, String)> = ROUTES
            .iter()
            .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
            .collect();
        routes.sort();
        assert_eq!(documented, routes);
    }

    #[test]
    fn patterns() {
        assert!(matches(
            "/api/universal-profile/{address}",
            &["api", "universal-profile", "0x1"]
        ));
        assert!(!matches(
            "/api/universal-profile/{address}",
            &["api", "universal-profile"]
        ));
    }
}
