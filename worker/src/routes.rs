//! HTTP routes. Handlers only convert, check and do I/O: parsing and encodings live in the core crate.

use alloy_primitives::{Address, B256};
use profile_relayer::{
    api::{DeployRequest, DeployResponse, ProfileStatus, RegisterRequest, RegisterResponse},
    hex::parse_address,
    lsp23::{generate_salt, predict_addresses, profile_data_from_controllers},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};
use worker::{Context, Date, Env, Headers, Method, Request, RequestInit, Response, Stub};

use crate::{
    auth::{self, ApiKeyRecord, Scope},
    config::Config,
    error::{ApiError, ApiResult, Code},
    meter::{MeterClient, MeterOp, Period},
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
    ("POST", "/api/execute"),
    ("POST", "/api/quota"),
    ("GET", "/api/transaction/{hash}"),
    ("POST", "/admin/api-keys"),
    ("GET", "/admin/api-keys"),
    ("DELETE", "/admin/api-keys/{id}"),
    ("GET", "/ipfs/{cid}"),
    ("HEAD", "/ipfs/{cid}"),
    ("GET", "/image/{cid}"),
    ("HEAD", "/image/{cid}"),
    ("POST", "/api/v0/add"),
    ("GET", "/v1/{chainId}/address/{address}"),
    ("GET", "/v1/{chainId}/address/{address}/{tokenId}"),
    ("GET", "/v1/{chainId}/stats"),
    ("GET", "/v1/{chainId}/indexer"),
    ("GET", "/v1/{chainId}/search"),
    ("POST", "/1/indexes/{indexName}/query"),
    ("GET", "/1/indexes/{indexName}"),
    ("POST", "/1/indexes/{indexName}/browse"),
    ("POST", "/1/indexes/*/queries"),
    ("POST", "/admin/indexer/run"),
];

/// The OpenAPI 3.1 document.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Dispatches a request.
pub async fn handle(req: Request, env: &Env, ctx: &Context) -> ApiResult<Response> {
    let path = req.path();
    // empty segments (`/api//execute`, as a client joining a base URL that ends in `/` may send) are ignored
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let method = req.method();
    // workers-rs reads a method it does not know (QUERY, …) as GET: such a request matches no route
    if req.inner().method() != method.as_ref() {
        return no_route(&req.inner().method(), &path, &segments);
    }
    match (method.clone(), segments.as_slice()) {
        (Method::Get, ["health"]) => health(env).await,
        (Method::Get, ["openapi.json"]) => openapi(&req, env),
        (Method::Post, ["api", "universal-profile"]) => deploy(req, env).await,
        (Method::Post, ["api", "universal-profile", "register"] | ["api", "users"]) => {
            register(req, env).await
        }
        // `register` is a route of its own, never an address
        (Method::Get, ["api", "universal-profile", address]) if *address != "register" => {
            status(&req, env, address).await
        }
        (Method::Post, ["api", "execute"]) => {
            auth::limit_client(&req, env, "PUBLIC_RATE_LIMIT_PER_MINUTE", 120, "relay requests").await?;
            crate::execute::execute(req, env).await
        }
        (Method::Post, ["api", "quota"]) => {
            auth::limit_client(&req, env, "PUBLIC_RATE_LIMIT_PER_MINUTE", 120, "relay requests").await?;
            crate::execute::quota_route(req, env).await
        }
        (Method::Get, ["api", "transaction", hash]) => {
            auth::limit_client(&req, env, "PUBLIC_RATE_LIMIT_PER_MINUTE", 120, "relay requests").await?;
            transaction(env, hash).await
        }
        (Method::Post, ["admin", "api-keys"]) => create_key(req, env).await,
        (Method::Get, ["admin", "api-keys"]) => list_keys(&req, env).await,
        (Method::Delete, ["admin", "api-keys", id]) => revoke_key(&req, env, id).await,
        (Method::Get | Method::Head, ["ipfs", _, ..]) => {
            // OpenAPI clients send a `/` inside the `{cid}` parameter as `%2F`: it separates path segments (as on
            // IPFS gateways, which decode the URL path)
            let target = path.get("/ipfs/".len()..).unwrap_or_default();
            crate::ipfs::relay(&req, env, ctx, &target.replace("%2F", "/").replace("%2f", "/")).await
        }
        (Method::Get | Method::Head, ["image", _, ..]) => {
            // as for /ipfs: a `%2F` inside the `{cid}` parameter separates path segments
            let target = path.get("/image/".len()..).unwrap_or_default();
            crate::image::route(&req, env, &target.replace("%2F", "/").replace("%2f", "/")).await
        }
        (Method::Get, ["v1", chain, "address", address]) => {
            crate::lookup::address(&req, env, chain, address).await
        }
        (Method::Get, ["v1", chain, "address", address, token]) => {
            crate::lookup::token(&req, env, chain, address, token).await
        }
        (Method::Get, ["v1", chain, "stats"]) => crate::lookup::stats(&req, env, chain).await,
        (Method::Get, ["v1", chain, "indexer"]) => crate::lookup::indexer_status(&req, env, chain).await,
        (Method::Get, ["v1", chain, "search"]) => crate::lookup::search_route(&req, env, chain).await,
        (Method::Post, ["1", "indexes", "*" | "%2A" | "%2a", "queries"]) => crate::algolia::answer(
            &crate::lookup::origin(&req)?,
            crate::algolia::queries_route(req, env).await,
        ),
        (Method::Post, ["1", "indexes", index, "query"]) => {
            let index = (*index).to_owned();
            crate::algolia::answer(
                &crate::lookup::origin(&req)?,
                crate::algolia::query_route(req, env, &index).await,
            )
        }
        (Method::Post, ["1", "indexes", index, "browse"]) => {
            let index = (*index).to_owned();
            crate::algolia::answer(
                &crate::lookup::origin(&req)?,
                crate::algolia::browse_route(req, env, &index).await,
            )
        }
        (Method::Get, ["1", "indexes", index]) => crate::algolia::answer(
            &crate::lookup::origin(&req)?,
            crate::algolia::get_route(&req, env, index).await,
        ),
        (Method::Post, ["admin", "panic"])
            if crate::config::var(env, "PANIC_TEST_ROUTE").as_deref() == Some("true") =>
        {
            auth::authenticate_admin(&req, env).await?;
            deliberate_panic()
        }
        (Method::Post, ["admin", "indexer", "run"]) => {
            auth::authenticate_admin(&req, env).await?;
            run_indexer(&req, env).await
        }
        (Method::Post, ["api", "v0", "add"]) => {
            auth::authenticate(&req, env, Scope::Upload).await?;
            crate::ipfs::add(req, env).await
        }
        _ => no_route(method.as_ref(), &path, &segments),
    }
}

/// The end-to-end test of the panic guard (`worker/src/panic_guard.rs`) needs a panic: only with the var
/// `PANIC_TEST_ROUTE=true` (never set in the deployments) and the admin token.
#[allow(clippy::panic)]
fn deliberate_panic() -> ApiResult<Response> {
    panic!("deliberate panic (PANIC_TEST_ROUTE)")
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

/// The `Allow` value of a path: the methods of the routes matching it, and OPTIONS (the CORS preflight); routes
/// without parameters take precedence (`/api/universal-profile/register` is no `{address}`). `None` when no route
/// matches.
fn allowed_methods(segments: &[&str]) -> Option<String> {
    let matching: Vec<&(&str, &str)> = ROUTES
        .iter()
        .filter(|(_, pattern)| matches(pattern, segments))
        .collect();
    let literal = matching.iter().any(|(_, pattern)| !pattern.contains('{'));
    let mut methods: Vec<&str> = matching
        .iter()
        .filter(|(_, pattern)| !literal || !pattern.contains('{'))
        .map(|(method, _)| *method)
        .collect();
    if methods.is_empty() {
        return None;
    }
    methods.push("OPTIONS");
    methods.sort_unstable();
    methods.dedup();
    Some(methods.join(", "))
}

/// `POST /admin/indexer/run[?chainId=]`: one run of the chain named (decimal or hex), or of every configured chain
/// as the cron does. Without a chain the answer is the first chain's run (today's shape for a one-chain deployment,
/// or its error) with `chains`: every chain's run or `{chainId, error}`.
async fn run_indexer(req: &Request, env: &Env) -> ApiResult<Response> {
    let url = req.url()?;
    if let Some((_, chain_id)) = url.query_pairs().find(|(k, _)| k == "chainId") {
        let chain = crate::config::chain(env, &chain_id)?;
        return json_response(200, &crate::indexer::run(env, &chain).await?);
    }
    let mut chains = Vec::new();
    let mut first_error = None;
    for (i, (chain_id, result)) in crate::indexer::run_all(env).await?.into_iter().enumerate() {
        match result {
            Ok(stats) => chains.push(serde_json::to_value(&stats).map_err(ApiError::internal)?),
            Err(e) => {
                chains
                    .push(json!({ "chainId": chain_id, "error": { "code": e.code, "message": e.message } }));
                if i == 0 {
                    first_error = Some(e);
                }
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let mut body = chains
        .first()
        .cloned()
        .ok_or_else(|| ApiError::config("no chain is configured"))?;
    if let Some(fields) = body.as_object_mut() {
        fields.insert("chains".into(), Value::Array(chains));
    }
    json_response(200, &body)
}

/// `GET /openapi.json`: the document narrowed to this deployment (see [`served_openapi`]).
fn openapi(req: &Request, env: &Env) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    let url = req.url()?;
    let origin = url.origin().ascii_serialization();
    let chains = crate::config::chains(env)?;
    let ids: Vec<u64> = chains.iter().map(|c| c.chain_id).collect();
    let names = crate::config::all_index_names(env)?;
    let doc = served_openapi(
        &origin,
        &ids,
        &names,
        config.constants.universal_receiver_delegate,
    )?;
    json_response(200, &doc)
}

/// [`OPENAPI`] with what depends on the deployment filled in: the server (`origin`), the chain ids (decimal, then
/// hex) and index names it answers, and the universal receiver delegate, which cannot be a controller.
fn served_openapi(
    origin: &str,
    chain_ids: &[u64],
    index_names: &[String],
    receiver_delegate: Address,
) -> ApiResult<Value> {
    let mut doc: Value = serde_json::from_str(OPENAPI).map_err(ApiError::internal)?;
    let checksummed = receiver_delegate.to_checksum(None);
    let digits = checksummed.get(2..).unwrap_or_default();
    let replacements = [
        (
            "/servers",
            json!([{ "url": origin, "description": "this deployment" }]),
        ),
        (
            "/components/schemas/ChainId/enum",
            chain_ids
                .iter()
                .map(|id| json!(id))
                .chain(
                    chain_ids
                        .iter()
                        .map(|id| json!(profile_relayer::networks::chain_id_hex(*id))),
                )
                .collect(),
        ),
        (
            "/components/schemas/IndexName",
            json!({ "type": "string", "enum": index_names }),
        ),
        (
            "/components/schemas/ControllerAddress/allOf/1/not/enum",
            json!([
                Address::ZERO.to_checksum(None),
                checksummed,
                format!("0x{}", digits.to_ascii_lowercase()),
                format!("0x{}", digits.to_ascii_uppercase()),
            ]),
        ),
    ];
    for (pointer, value) in replacements {
        *doc.pointer_mut(pointer)
            .ok_or_else(|| ApiError::internal(format!("openapi.json has no {pointer}")))? = value;
    }
    Ok(doc)
}

fn matches(pattern: &str, segments: &[&str]) -> bool {
    let parts: Vec<&str> = pattern.trim_matches('/').split('/').collect();
    if let Some(prefix) = pattern.strip_suffix("/{cid}") {
        // the CID may be followed by a path (`/ipfs/{cid}`, `/image/{cid}`)
        return segments.first() == Some(&prefix.trim_start_matches('/')) && segments.len() >= 2;
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

/// `GET /health`: the relayer's chain and every chain the lookup API and the indexer serve.
async fn health(env: &Env) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    let chains: Vec<u64> = crate::config::chains(env)?.iter().map(|c| c.chain_id).collect();
    json_response(
        200,
        &json!({ "status": "ok", "chainId": config.chain_id, "chains": chains }),
    )
}

/// Reads a JSON body: `application/json`, at most `max` bytes (counted while it is read), UTF-8.
pub(crate) async fn read_body(mut req: Request, max: usize) -> ApiResult<String> {
    let content_type = req.headers().get("content-type")?.unwrap_or_default();
    if !content_type.to_ascii_lowercase().starts_with("application/json") {
        return Err(ApiError::new(
            Code::UnsupportedContentType,
            "the body must be JSON with `Content-Type: application/json`",
        ));
    }
    let bytes = crate::body::request_bytes(&mut req, max).await?;
    String::from_utf8(bytes).map_err(|_| ApiError::new(Code::InvalidJson, "the body is not UTF-8"))
}

/// POSTs `body` to a Durable Object and decodes its answer, passing its error bodies through.
pub(crate) async fn call_do<B: Serialize, T: DeserializeOwned>(
    stub: &Stub,
    path: &str,
    body: &B,
) -> ApiResult<T> {
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
        let mut err = ApiError::from_wire(status, &body.error.code, body.error.message);
        err.retry_after = retry_after;
        return Err(err);
    }
    Ok(response.json().await?)
}

pub(crate) fn relayer(env: &Env, config: &Config) -> ApiResult<Stub> {
    Ok(env
        .durable_object("RELAYER")?
        .id_from_name(&format!("chain-{}", config.chain_id))?
        .get_stub()?)
}

async fn deploy(req: Request, env: &Env) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    let key = auth::authenticate(&req, env, Scope::Deploy).await?;
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
    if calldata.len() > config.max_deploy_data_bytes {
        return Err(ApiError::new(
            Code::DeployDataTooLarge,
            format!(
                "the profile data is {} bytes; this relayer deploys at most {} (MAX_DEPLOY_DATA_BYTES)",
                calldata.len(),
                config.max_deploy_data_bytes
            ),
        ));
    }
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
            key_budget: key.gas_budget_per_month.unwrap_or(config.default_key_gas_budget),
            key_id: Some(key.id),
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
    let call = profile_relayer::erc165::supports_interface_calldata(profile_relayer::erc165::LSP0);
    match config.rpc().eth_call(address, &call).await {
        Ok(out) => Ok(profile_relayer::erc165::decode_supports_interface(&out)),
        // a revert: the contract has no ERC165
        Err(crate::rpc::RpcError::Node { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

async fn register(req: Request, env: &Env) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    auth::authenticate(&req, env, Scope::Register).await?;
    let body = read_body(req, config.max_body_bytes).await?;
    let address = RegisterRequest::from_json(&body)?.universal_profile_address;
    if config.rpc().code(address).await?.is_empty() {
        return Err(ApiError::new(
            Code::ProfileNotFound,
            format!("no contract at {address}"),
        ));
    }
    if !is_universal_profile(&config, address).await? {
        // a well-formed request naming a contract that is no profile: there is no profile to register (404)
        return Err(ApiError::new(
            Code::NotAUniversalProfile,
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

/// `GET /api/transaction/:hash`: the record of a transaction this relayer sent.
async fn transaction(env: &Env, hash: &str) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    let hash: B256 = profile_relayer::hex::parse_fixed("hash", hash)?;
    let record: Option<profile_relayer::api::TransactionStatus> =
        call_do(&relayer(env, &config)?, "/transaction", &hash).await?;
    let record = record.ok_or_else(|| {
        ApiError::new(
            Code::TransactionNotFound,
            format!("this relayer sent no transaction {hash} (or its record expired)"),
        )
    })?;
    json_response(200, &record)
}

async fn status(req: &Request, env: &Env, address: &str) -> ApiResult<Response> {
    let config = Config::from_env(env)?;
    auth::authenticate(req, env, Scope::Register).await?;
    let address = parse_address("address", address)?;
    let deployed = !config.rpc().code(address).await?.is_empty();
    let kv = env.kv("PROFILES")?;
    let record = store::profile(&kv, address).await?;
    let pending: Option<B256> =
        call_do(&relayer(env, &config)?, "/pending", &RegisterJob { address }).await?;
    if !deployed && record.is_none() && pending.is_none() {
        return Err(ApiError::new(
            Code::ProfileNotFound,
            format!("{address} is neither deployed nor registered"),
        ));
    }
    let quota = match &record {
        Some(_) => Some(store::quota(&kv, address, config.now(), config.monthly_gas_quota).await?),
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

/// A JSON integer: also one written with a zero fraction (`5.0`), which JSON Schema counts as an integer.
pub(crate) fn integer(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..=9_007_199_254_740_991.0).contains(f))
            .map(|f| f as u64)
    })
}

fn admin_body(body: &str) -> ApiResult<Map<String, Value>> {
    let value: Value =
        serde_json::from_str(body).map_err(|e| ApiError::new(Code::InvalidJson, e.to_string()))?;
    let Value::Object(obj) = value else {
        return Err(ApiError::new(Code::InvalidJson, "the body must be a JSON object"));
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !["name", "scopes", "rateLimitPerMinute", "gasBudgetPerMonth"].contains(&k.as_str()))
    {
        return Err(ApiError::new(Code::UnknownField, format!("unknown field {k:?}")));
    }
    Ok(obj)
}

async fn create_key(req: Request, env: &Env) -> ApiResult<Response> {
    auth::authenticate_admin(&req, env).await?;
    let config = Config::from_env(env)?;
    let obj = admin_body(&read_body(req, config.max_body_bytes).await?)?;
    let field_type = |f: &str, t: &str| ApiError::new(Code::InvalidFieldType, format!("{f} must be {t}"));
    let name = match obj.get("name") {
        // at most 100 characters (not bytes), as the document's maxLength counts
        Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= 100 => s.trim().to_owned(),
        Some(_) => return Err(field_type("name", "a non-empty string of at most 100 characters")),
        None => return Err(ApiError::new(Code::MissingField, "missing field \"name\"")),
    };
    let scopes: Vec<Scope> = match obj.get("scopes") {
        None => Scope::ALL.to_vec(),
        Some(v) => serde_json::from_value(v.clone())
            .ok()
            .filter(|s: &Vec<Scope>| !s.is_empty())
            .ok_or_else(|| {
                field_type(
                    "scopes",
                    "a non-empty array of \"deploy\" / \"register\" / \"upload\"",
                )
            })?,
    };
    let rate_limit_per_minute = match obj.get("rateLimitPerMinute") {
        None => config.default_rate_limit,
        Some(v) => integer(v)
            .filter(|n| (1..=1_000_000).contains(n))
            .map(|n| n as u32)
            .ok_or_else(|| field_type("rateLimitPerMinute", "an integer from 1 to 1000000"))?,
    };
    let gas_budget_per_month = match obj.get("gasBudgetPerMonth") {
        None => None,
        Some(v) => {
            Some(integer(v).ok_or_else(|| field_type("gasBudgetPerMonth", "a non-negative integer (gas)"))?)
        }
    };
    let (secret, id) = auth::generate_key()?;
    let record = ApiKeyRecord {
        id: id.clone(),
        name,
        scopes,
        rate_limit_per_minute,
        created_at: now(),
        revoked_at: None,
        gas_budget_per_month,
    };
    let kv = env.kv("API_KEYS")?;
    let hash = auth::hash_secret(&secret);
    store_key(&kv, &hash, &record).await?;
    let mut body = match serde_json::to_value(&record).map_err(ApiError::internal)? {
        Value::Object(fields) => fields,
        _ => return Err(ApiError::internal("a key record is a JSON object")),
    };
    body.insert("apiKey".into(), Value::String(secret));
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
    auth::authenticate_admin(req, env).await?;
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
    // each key's deploy gas this month, from its meter (the authoritative counter)
    let config = Config::from_env(env)?;
    let now = config.now();
    let mut listed = Vec::with_capacity(keys.len());
    for mut key in keys {
        let budget = key
            .get("gasBudgetPerMonth")
            .and_then(Value::as_u64)
            .unwrap_or(config.default_key_gas_budget);
        let id = key
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let usage = MeterClient::new(env, &format!("key:{id}"))?
            .send(&MeterOp::Usage {
                period: Period::Month,
                limit: budget,
                now,
            })
            .await?
            .usage;
        if let (Some(fields), Some(u)) = (key.as_object_mut(), usage) {
            fields.insert("gasBudgetPerMonth".into(), budget.into());
            fields.insert("gasUsedThisMonth".into(), u.used.into());
            fields.insert("gasReservedThisMonth".into(), u.reserved.into());
            fields.insert("gasRemainingThisMonth".into(), u.remaining.into());
        }
        listed.push(key);
    }
    json_response(200, &json!({ "apiKeys": listed }))
}

async fn revoke_key(req: &Request, env: &Env, id: &str) -> ApiResult<Response> {
    auth::authenticate_admin(req, env).await?;
    let kv = env.kv("API_KEYS")?;
    let not_found = || ApiError::new(Code::ApiKeyNotFound, format!("no API key with id {id}"));
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
    // effective on the key's next request, whatever KV still caches
    auth::revoke(env, id).await?;
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
                if method != "parameters" {
                    documented.push((method.to_uppercase(), path.clone()));
                }
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
    fn every_operation_documents_its_statuses() {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                if method == "parameters" {
                    continue;
                }
                let responses = op["responses"].as_object().unwrap();
                assert!(responses.contains_key("500"), "{method} {path}: no 500");
                let secured = op["security"].as_array().is_some_and(|s| !s.is_empty());
                // secured routes answer 401; the LSP15 routes answer it too (signatures, not keys)
                assert!(
                    !secured || responses.contains_key("401"),
                    "{method} {path}: a secured route can answer 401"
                );
                if op["security"][0].get("apiKey").is_some() {
                    assert!(
                        responses.contains_key("429"),
                        "{method} {path}: an API key route can answer 429"
                    );
                }
            }
        }
    }

    #[test]
    fn served_document_is_narrowed_to_the_deployment() {
        let urd = profile_relayer::networks::Lsp23Constants::V0_14_0.universal_receiver_delegate;
        let doc = served_openapi(
            "https://relayer.example",
            &[4201, 42],
            &["p_universal_profiles".into(), "p_assets".into()],
            urd,
        )
        .unwrap();
        assert_eq!(doc["servers"][0]["url"], "https://relayer.example");
        assert_eq!(
            doc["components"]["schemas"]["ChainId"]["enum"],
            json!([4201, 42, "0x1069", "0x2a"])
        );
        assert_eq!(
            doc["components"]["schemas"]["IndexName"]["enum"],
            json!(["p_universal_profiles", "p_assets"])
        );
        let excluded = &doc["components"]["schemas"]["ControllerAddress"]["allOf"][1]["not"]["enum"];
        let checksummed = urd.to_checksum(None);
        assert!(excluded.as_array().unwrap().contains(&json!(checksummed)));
        assert!(
            excluded
                .as_array()
                .unwrap()
                .contains(&json!(checksummed.to_lowercase()))
        );
        assert!(
            excluded
                .as_array()
                .unwrap()
                .contains(&json!(format!("0x{}", "0".repeat(40))))
        );
    }

    #[test]
    fn allow_lists_the_methods_of_the_path() {
        assert_eq!(allowed_methods(&["health"]).as_deref(), Some("GET, OPTIONS"));
        assert_eq!(
            allowed_methods(&["admin", "api-keys"]).as_deref(),
            Some("GET, OPTIONS, POST")
        );
        // `register` is not an `{address}`
        assert_eq!(
            allowed_methods(&["api", "universal-profile", "register"]).as_deref(),
            Some("OPTIONS, POST")
        );
        assert_eq!(
            allowed_methods(&["api", "universal-profile", "0x01"]).as_deref(),
            Some("GET, OPTIONS")
        );
        assert_eq!(
            allowed_methods(&["ipfs", "Qm", "a", "b"]).as_deref(),
            Some("GET, HEAD, OPTIONS")
        );
        assert_eq!(allowed_methods(&["nothing", "here"]), None);
    }

    #[test]
    fn integers_as_json_schema_counts_them() {
        assert_eq!(integer(&json!(5)), Some(5));
        assert_eq!(integer(&json!(5.0)), Some(5));
        assert_eq!(integer(&json!(5.5)), None);
        assert_eq!(integer(&json!(-1)), None);
        assert_eq!(integer(&json!(1e300)), None);
        assert_eq!(integer(&json!("5")), None);
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
