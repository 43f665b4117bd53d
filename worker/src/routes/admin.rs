//! The admin routes: API keys (create, list, revoke), an indexer run, and the panic of the panic guard's test.

use alloy_primitives::{Address, B256, U256};
use futures_util::future::{join, join_all, join3};
use profile_relayer::api::month_start;
use profile_relayer::api::{
    ErrorDetail,
    admin::{
        ApiKeyList, ChainRun, CreatedApiKey, DayUsage, KeyUsage, ManagedTransaction, MonthView,
        PendingTransactionList, PendingView, PeriodView, RelayerView, SignerView, UsageView,
    },
};
use profile_relayer::hex::parse_address;
use serde_json::{Map, Value};
use worker::{Env, Request, Response};

use crate::plumbing::{integer, json_response, now, query_integer, read_body};
use crate::{
    auth::{self, ApiKeyRecord, ApiKeys, Scope, StoredKey},
    config::{Config, RelayerConfig},
    error::{ApiError, ApiResult, Code},
    meter::{MeterClient, MeterOp, Period, Subject},
    relayer::{LaneStatus, pool},
};

pub(super) async fn relayer_status(req: &Request, env: &Env, config: &Config) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    json_response(200, &relayer_view(env, config).await?)
}

/// The relayer's state (`GET /admin/relayer`, `GET /admin/metrics`).
pub(super) async fn relayer_view(env: &Env, config: &Config) -> ApiResult<RelayerView> {
    let config = config.relayer()?;
    let first = config.signer()?.address();
    let now = config.now();
    let since = month_start(now);
    let meter = MeterClient::new(env, &Subject::Relayer(config.chain_id))?;
    let (signers, today, month) = join3(
        signer_views(env, config),
        meter.usage(config.max_gas_per_day, now),
        meter.send(&MeterOp::Periods { from: since }),
    )
    .await;
    let (signers, today) = (signers?, today?);
    let mut pending = PendingView {
        count: 0,
        oldest_age_seconds: None,
    };
    for view in &signers {
        // every lane must answer: a sum that silently misses one would understate what is in flight
        let lane = view
            .pending
            .ok_or_else(|| ApiError::internal(format!("the lane of {} did not answer", view.address)))?;
        pending.count = pending.count.saturating_add(lane.count);
        pending.oldest_age_seconds = pending.oldest_age_seconds.max(lane.oldest_age_seconds);
    }
    let view = RelayerView {
        chain_id: config.chain_id,
        signer: first,
        balance: signers
            .iter()
            .find(|s| s.address == first)
            .and_then(|s| s.balance.clone()),
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
        pending,
        signers,
    };
    Ok(view)
}

/// Every signer: balance (from the node) and lane (from its Relayer object), asked together.
pub(super) async fn signer_views(env: &Env, config: &RelayerConfig) -> ApiResult<Vec<SignerView>> {
    let rpc = config.rpc();
    let lanes = pool::statuses(env, config).await?;
    let balances = join_all(lanes.iter().map(|(l, _)| rpc.balance(l.address()))).await;
    Ok(lanes
        .into_iter()
        .zip(balances)
        .map(|((lane, status), balance)| signer_view(lane.address(), balance.ok(), status.ok()))
        .collect())
}

fn signer_view(address: Address, balance: Option<U256>, lane: Option<LaneStatus>) -> SignerView {
    SignerView {
        address,
        balance: balance.map(|b| b.to_string()),
        pending: lane.map(|l| PendingView {
            count: l.pending,
            oldest_age_seconds: l.oldest_pending_age_seconds,
        }),
        state: if lane.is_some_and(|l| l.draining) {
            "draining"
        } else {
            "active"
        }
        .to_owned(),
    }
}

/// `POST /admin/relayer/signers/:address/drain` (`draining`) and `…/activate`: the signer takes no new work (its
/// pending transactions finish, fee bumps and re-sends go on), or takes work again. Answers the signer.
pub(super) async fn drain_signer(
    req: &Request,
    env: &Env,
    config: &Config,
    address: &str,
    draining: bool,
) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let config = config.relayer()?;
    let address = parse_address("address", address)?;
    let lane = pool::lane_of(env, config, address)?;
    let (status, balance) = join(lane.drain(draining), config.rpc().balance(address)).await;
    let status = status?;
    worker::console_log!(
        "{}",
        serde_json::json!({"event": "signer", "signer": address, "draining": draining, "pending": status.pending})
    );
    json_response(200, &signer_view(address, balance.ok(), Some(status)))
}

/// `POST /admin/relayer/transactions/:hash/cancel` (`cancel`) and `…/replace`: a pending transaction replaced at
/// its nonce by a 0-value self-transfer, or by its own job with higher fees.
pub(super) async fn manage_transaction(
    req: &Request,
    env: &Env,
    config: &Config,
    hash: &str,
    cancel: bool,
) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let config = config.relayer()?;
    let hash: B256 = profile_relayer::hex::parse_fixed("hash", hash)?;
    let lane = pool::lane_with(env, config, hash).await?;
    let done = if cancel {
        lane.cancel(hash).await?
    } else {
        lane.replace(hash).await?
    };
    json_response(
        200,
        &ManagedTransaction {
            signer: lane.address(),
            nonce: done.nonce,
            replaced: done.replaced,
            transaction_hash: done.transaction_hash,
        },
    )
}

/// At most this many pending transactions per signer in `GET /admin/relayer/transactions`.
const PENDING_LIST_LIMIT: u64 = 100;

/// `GET /admin/relayer/transactions?state=pending`: every signer's pending transactions (the lowest nonces of each,
/// at most [`PENDING_LIST_LIMIT`]; `truncated` when a lane holds more).
pub(super) async fn pending_transactions(req: &Request, env: &Env, config: &Config) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let url = req.url()?;
    if url.query_pairs().any(|(k, v)| k == "state" && v != "pending") {
        return Err(ApiError::new(
            Code::InvalidParameter,
            "state: only pending transactions are listed (state=pending)",
        ));
    }
    let (transactions, truncated) =
        pool::pending_transactions(env, config.relayer()?, PENDING_LIST_LIMIT).await?;
    json_response(
        200,
        &PendingTransactionList {
            transactions,
            limit_per_signer: PENDING_LIST_LIMIT,
            truncated,
        },
    )
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

fn field_type(f: &str, t: &str) -> ApiError {
    ApiError::new(Code::InvalidFieldType, format!("{f} must be {t}"))
}

/// `name`: at most 100 characters (not bytes), as the document's maxLength counts.
fn name_field(v: &Value) -> ApiResult<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() && s.chars().count() <= 100 => Ok(s.trim().to_owned()),
        _ => Err(field_type("name", "a non-empty string of at most 100 characters")),
    }
}

fn scopes_field(v: &Value) -> ApiResult<Vec<Scope>> {
    serde_json::from_value(v.clone())
        .ok()
        .filter(|s: &Vec<Scope>| !s.is_empty())
        .ok_or_else(|| {
            field_type(
                "scopes",
                "a non-empty array of \"deploy\" / \"register\" / \"upload\"",
            )
        })
}

fn rate_limit_field(v: &Value) -> ApiResult<u32> {
    integer(v)
        .filter(|n| (1..=1_000_000).contains(n))
        .map(|n| n as u32)
        .ok_or_else(|| field_type("rateLimitPerMinute", "an integer from 1 to 1000000"))
}

/// Stored in D1, which holds safe integers (a larger one was a 500).
fn budget_field(v: &Value) -> ApiResult<u64> {
    integer(v)
        .filter(|n| *n <= profile_relayer::json_shape::MAX_SAFE_INTEGER)
        .ok_or_else(|| field_type("gasBudgetPerMonth", "a non-negative integer (gas) up to 2^53 - 1"))
}

pub(super) async fn create_key(req: Request, env: &Env, config: &Config) -> ApiResult<Response> {
    auth::authenticate_admin(&req, env, config).await?;
    let config = config.relayer()?;
    let obj = admin_body(&read_body(req, config.max_body_bytes).await?)?;
    let name = match obj.get("name") {
        Some(v) => name_field(v)?,
        None => return Err(ApiError::new(Code::MissingField, "missing field \"name\"")),
    };
    let scopes: Vec<Scope> = match obj.get("scopes") {
        None => Scope::ALL.to_vec(),
        Some(v) => scopes_field(v)?,
    };
    let rate_limit_per_minute = match obj.get("rateLimitPerMinute") {
        None => config.default_rate_limit,
        Some(v) => rate_limit_field(v)?,
    };
    let gas_budget_per_month = obj.get("gasBudgetPerMonth").map(budget_field).transpose()?;
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
    let key = StoredKey {
        hash: auth::hash_secret(&secret),
        record,
    };
    ApiKeys::of(env)?.put(&key).await?;
    json_response(201, &CreatedApiKey::new(key.record, secret))
}

pub(super) async fn list_keys(req: &Request, env: &Env, config: &Config) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    json_response(
        200,
        &ApiKeyList {
            api_keys: keys_with_usage(env, config).await?,
        },
    )
}

/// Every stored key (revoked ones too) with this month's deploy gas from its meter (the authoritative counter).
async fn keys_with_usage(env: &Env, config: &Config) -> ApiResult<Vec<ApiKeyRecord>> {
    let keys = ApiKeys::of(env)?.list().await?;
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
    Ok(listed)
}

/// The most days `GET /admin/usage` answers (the relayer's meter keeps 400).
pub const MAX_USAGE_DAYS: u64 = 90;
/// The days `GET /admin/usage` answers without `?days=`.
const DEFAULT_USAGE_DAYS: u64 = 30;

/// `GET /admin/usage?days=N`: the relayer's settled gas per UTC day (its daily meter's periods) and each key's
/// deploy gas this month (the operator console's charts).
pub(super) async fn usage(req: &Request, env: &Env, config: &Config) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let url = req.url()?;
    let days = query_integer(&url, "days", 1..=MAX_USAGE_DAYS, DEFAULT_USAGE_DAYS)?;
    let relayer = config.relayer()?;
    let now = relayer.now();
    let first = Period::Day
        .start(now)
        .saturating_sub((days - 1).saturating_mul(86_400));
    let periods = MeterClient::new(env, &Subject::Relayer(relayer.chain_id))?
        .send(&MeterOp::Periods { from: first })
        .await?
        .periods;
    let keys = keys_with_usage(env, config)
        .await?
        .into_iter()
        .map(|k| KeyUsage {
            gas_used: k.gas_used_this_month.unwrap_or(0),
            gas_budget: k.gas_budget_per_month.unwrap_or(0),
            revoked: k.revoked_at.is_some(),
            id: k.id,
            name: k.name,
        })
        .collect();
    json_response(
        200,
        &UsageView {
            chain_id: relayer.chain_id,
            days: DayUsage::series(&periods, days, now),
            keys,
        },
    )
}

pub(super) async fn revoke_key(req: &Request, env: &Env, config: &Config, id: &str) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let record = ApiKeys::of(env)?.revoke(env, id, now()).await?;
    json_response(200, &record)
}

/// `PATCH /admin/api-keys/{id}`: changes a key's `name`, `scopes`, `rateLimitPerMinute` or `gasBudgetPerMonth`
/// (`null`: back to `DEFAULT_KEY_GAS_BUDGET_PER_MONTH`); the fields absent stay. Answers the stored record. A revoked
/// key is not changed (403 `API_KEY_REVOKED`).
pub(super) async fn update_key(req: Request, env: &Env, config: &Config, id: &str) -> ApiResult<Response> {
    auth::authenticate_admin(&req, env, config).await?;
    let obj = admin_body(&read_body(req, config.relayer()?.max_body_bytes).await?)?;
    if obj.is_empty() {
        return Err(ApiError::new(
            Code::MissingField,
            "name, scopes, rateLimitPerMinute or gasBudgetPerMonth is needed",
        ));
    }
    // every field is checked before anything is written
    let name = obj.get("name").map(name_field).transpose()?;
    let scopes = obj.get("scopes").map(scopes_field).transpose()?;
    let rate_limit = obj.get("rateLimitPerMinute").map(rate_limit_field).transpose()?;
    let budget = match obj.get("gasBudgetPerMonth") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(v) => Some(Some(budget_field(v)?)),
    };
    let record = ApiKeys::of(env)?
        .update(id, "its record is kept, not changed", |record| {
            if let Some(name) = name {
                record.name = name;
            }
            if let Some(scopes) = scopes {
                record.scopes = scopes;
            }
            if let Some(rate_limit) = rate_limit {
                record.rate_limit_per_minute = rate_limit;
            }
            if let Some(budget) = budget {
                record.gas_budget_per_month = budget;
            }
        })
        .await?;
    json_response(200, &record)
}
