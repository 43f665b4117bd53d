//! The admin routes: API keys (create, list, revoke), an indexer run, and the panic of the panic guard's test.

use futures_util::future::join4;
use profile_relayer::api::month_start;
use profile_relayer::api::{
    ErrorDetail,
    admin::{ApiKeyList, ChainRun, CreatedApiKey, MonthView, PendingView, PeriodView, RelayerView},
};
use serde_json::{Map, Value};
use worker::{Env, Request, Response};

use crate::plumbing::{integer, json_response, now, read_body};
use crate::{
    auth::{self, ApiKeyRecord, Scope},
    config::Config,
    error::{ApiError, ApiResult, Code},
    meter::{MeterClient, MeterOp, Subject},
    relayer::RelayerClient,
    store,
};

pub(super) async fn relayer_status(req: &Request, env: &Env, config: &Config) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    json_response(200, &relayer_view(env, config).await?)
}

/// The relayer's state (`GET /admin/relayer`, `GET /admin/metrics`).
pub(super) async fn relayer_view(env: &Env, config: &Config) -> ApiResult<RelayerView> {
    let config = config.relayer()?;
    let signer = config.signer()?.address();
    let now = config.now();
    let since = month_start(now);
    let meter = MeterClient::new(env, &Subject::Relayer(config.chain_id))?;
    let rpc = config.rpc();
    let relayer = RelayerClient::new(env, config)?;
    let (balance, today, month, lane) = join4(
        rpc.balance(signer),
        meter.usage(config.max_gas_per_day, now),
        meter.send(&MeterOp::Periods { from: since }),
        relayer.status(),
    )
    .await;
    let (today, lane) = (today?, lane?);
    let view = RelayerView {
        chain_id: config.chain_id,
        signer,
        balance: balance.ok().map(|b| b.to_string()),
        today: PeriodView {
            gas_used: today.used,
            gas_reserved: today.reserved,
            ceiling: today.limit,
            remaining: today.remaining,
            reset_at: today.reset_at,
        },
        month: MonthView {
            gas_used: month?
                .periods
                .values()
                .fold(0u64, |sum, used| sum.saturating_add(*used)),
            since,
        },
        pending: PendingView {
            count: lane.pending,
            oldest_age_seconds: lane.oldest_pending_age_seconds,
        },
    };
    Ok(view)
}

/// The end-to-end test of the panic guard (`worker/src/panic_guard.rs`) needs a panic: only with the var
/// `PANIC_TEST_ROUTE=true` (never set in the deployments) and the admin token.
#[allow(clippy::panic)]
pub(super) fn deliberate_panic() -> ApiResult<Response> {
    panic!("deliberate panic (PANIC_TEST_ROUTE)")
}

/// `POST /admin/indexer/run[?chainId=]`: one run of the chain named (decimal or hex), or of every configured chain
/// as the cron does. Without a chain the answer is the first chain's run (today's shape for a one-chain deployment,
/// or its error) with `chains`: every chain's run or `{chainId, error}`.
pub(super) async fn run_indexer(req: &Request, env: &Env, config: &Config) -> ApiResult<Response> {
    let url = req.url()?;
    if let Some((_, chain_id)) = url.query_pairs().find(|(k, _)| k == "chainId") {
        let chain = config.chain(&chain_id)?;
        return json_response(200, &crate::indexer::clock::run(env, &chain).await?);
    }
    let mut chains = Vec::new();
    let mut first_error = None;
    for (i, chain) in config.chains()?.iter().enumerate() {
        let chain_id = chain.chain_id;
        match crate::indexer::clock::run(env, chain).await {
            Ok(stats) => chains.push(ChainRun::Ran(stats)),
            Err(e) => {
                chains.push(ChainRun::Failed {
                    chain_id,
                    error: ErrorDetail {
                        code: e.code.to_string(),
                        message: e.message.clone(),
                    },
                });
                if i == 0 {
                    first_error = Some(e);
                }
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let mut body = match chains.first() {
        Some(ChainRun::Ran(stats)) => stats.clone(),
        // the first chain's error was answered above
        Some(ChainRun::Failed { .. }) | None => return Err(ApiError::config("no chain is configured")),
    };
    body.chains = Some(chains);
    json_response(200, &body)
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

pub(super) async fn create_key(req: Request, env: &Env, config: &Config) -> ApiResult<Response> {
    auth::authenticate_admin(&req, env, config).await?;
    let config = config.relayer()?;
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
        // stored in D1, which holds safe integers (a larger one was a 500)
        Some(v) => Some(
            integer(v)
                .filter(|n| *n <= profile_relayer::json_shape::MAX_SAFE_INTEGER)
                .ok_or_else(|| {
                    field_type("gasBudgetPerMonth", "a non-negative integer (gas) up to 2^53 - 1")
                })?,
        ),
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
        gas_used_this_month: None,
        gas_reserved_this_month: None,
        gas_remaining_this_month: None,
        webhook_url: None,
    };
    let kv = env.kv("API_KEYS")?;
    let hash = auth::hash_secret(&secret);
    store_key(&kv, &hash, &record).await?;
    json_response(201, &CreatedApiKey::new(record, secret))
}

/// Writes a key record under `key:<hash>` (for authentication) and `id:<id>` → hash with the record as metadata
/// (for listing and revoking).
pub(super) async fn store_key(kv: &worker::kv::KvStore, hash: &str, record: &ApiKeyRecord) -> ApiResult<()> {
    kv.put(&store::api_key_key(hash), record)
        .map_err(ApiError::internal)?
        .execute()
        .await
        .map_err(ApiError::internal)?;
    kv.put(&store::api_key_id_key(&record.id), hash)
        .map_err(ApiError::internal)?
        .metadata(record)
        .map_err(ApiError::internal)?
        .execute()
        .await
        .map_err(ApiError::internal)
}

pub(super) async fn list_keys(req: &Request, env: &Env, config: &Config) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let kv = env.kv("API_KEYS")?;
    let mut keys = Vec::new();
    let mut cursor = None;
    loop {
        let mut list = kv.list().prefix("id:".to_owned());
        if let Some(c) = cursor.take() {
            list = list.cursor(c);
        }
        let page = list.execute().await.map_err(ApiError::internal)?;
        for metadata in page.keys.into_iter().filter_map(|k| k.metadata) {
            keys.push(serde_json::from_value::<ApiKeyRecord>(metadata).map_err(ApiError::internal)?);
        }
        match page.cursor {
            Some(c) if !page.list_complete => cursor = Some(c),
            _ => break,
        }
    }
    // each key's deploy gas this month, from its meter (the authoritative counter)
    let config = config.relayer()?;
    let now = config.now();
    let mut listed = Vec::with_capacity(keys.len());
    for mut key in keys {
        let budget = key.gas_budget_per_month.unwrap_or(config.default_key_gas_budget);
        let u = MeterClient::new(env, &Subject::Key(key.id.clone()))?
            .usage(budget, now)
            .await?;
        key.gas_budget_per_month = Some(budget);
        key.gas_used_this_month = Some(u.used);
        key.gas_reserved_this_month = Some(u.reserved);
        key.gas_remaining_this_month = Some(u.remaining);
        listed.push(key);
    }
    json_response(200, &ApiKeyList { api_keys: listed })
}

pub(super) async fn revoke_key(req: &Request, env: &Env, config: &Config, id: &str) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let kv = env.kv("API_KEYS")?;
    let not_found = || ApiError::new(Code::ApiKeyNotFound, format!("no API key with id {id}"));
    if id.len() != 16 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(not_found());
    }
    let hash: String = kv
        .get(&store::api_key_id_key(id))
        .text()
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(not_found)?;
    let mut record: ApiKeyRecord = kv
        .get(&store::api_key_key(&hash))
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
