//! `GET /ready`: whether this deployment can do its work now, check by check — unlike `/health`, which only says
//! the Worker runs. Ready means: the configuration is complete (vars parse, the relayer key and the admin token are
//! set), the D1 database has every migration of this build, every chain's RPC answers with the chain id it is
//! configured for, the relayer's balance is at least `MIN_RELAYER_BALANCE` wei, and every chain's indexer is at most
//! `READY_MAX_INDEXER_LAG` blocks behind. The answer is 200 when every check passes, else 503, with each check's
//! result; it names variables, never their values.
//! Unauthenticated, so limited per client address (`READY_RATE_LIMIT_PER_MINUTE`): each call costs two RPC calls per
//! chain, one for the balance and one D1 read per chain.

use alloy_primitives::U256;
use futures_util::future::join_all;
use serde::Serialize;
use worker::{Env, Request, Response};

use crate::{
    config::{ChainConfig, Config, RelayerConfig},
    error::ApiResult,
    ratelimit,
};

/// One check's result.
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
#[cfg_attr(all(test, not(target_arch = "wasm32")), schemars(rename = "ReadinessCheck"))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked: `config`, `secret:<NAME>`, `d1:migrations`, `chain:<id>:rpc`, `chain:<id>:indexer`,
    /// `relayer:balance`, `relayer:balance:<signer address>`.
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
    /// What was found (never a secret's value).
    pub detail: String,
}

impl Check {
    fn new(name: impl Into<String>, ok: bool, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ok,
            detail: detail.into(),
        }
    }
}

/// The answer of `GET /ready`.
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Readiness {
    /// `ready` or `not ready`.
    #[cfg_attr(all(test, not(target_arch = "wasm32")), schemars(with = "String", extend("enum" = ["ready", "not ready"])))]
    pub status: &'static str,
    /// Every check, in a stable order.
    pub checks: Vec<Check>,
}

impl Readiness {
    /// The readiness of these checks.
    pub fn of(checks: Vec<Check>) -> Self {
        let ready = checks.iter().all(|c| c.ok);
        Self {
            status: if ready { "ready" } else { "not ready" },
            checks,
        }
    }

    /// 200 when ready, 503 otherwise.
    pub fn status_code(&self) -> u16 {
        if self.checks.iter().all(|c| c.ok) {
            200
        } else {
            503
        }
    }
}

fn secret_set(name: &str, secret: Option<&crate::config::Secret>) -> Check {
    let set = secret.is_some_and(|s| !s.expose().trim().is_empty());
    Check::new(format!("secret:{name}"), set, if set { "set" } else { "not set" })
}

async fn rpc_check(chain: &ChainConfig) -> Check {
    let name = format!("chain:{}:rpc", chain.chain_id);
    match chain.rpc().chain_id().await {
        Ok(id) if id == chain.chain_id => Check::new(name, true, format!("answers as chain {id}")),
        Ok(id) => Check::new(name, false, format!("the node is on chain {id}")),
        Err(e) => Check::new(
            name,
            false,
            format!("no answer: {}", crate::error::ApiError::from(e).code),
        ),
    }
}

async fn indexer_check(env: &Env, chain: &ChainConfig, max_lag: u64) -> Check {
    let name = format!("chain:{}:indexer", chain.chain_id);
    let (head, next) = futures_util::future::join(
        chain.rpc().block_number(),
        crate::indexer::checkpoint(env, chain.chain_id),
    )
    .await;
    match (head, next) {
        (Ok(head), Ok(next)) => {
            let lag = head.saturating_sub(next.map_or(0, |n| n.saturating_sub(1)));
            Check::new(
                name,
                lag <= max_lag,
                format!("{lag} blocks behind (at most {max_lag})"),
            )
        }
        (Err(e), _) => Check::new(
            name,
            false,
            format!("no head: {}", crate::error::ApiError::from(e).code),
        ),
        (_, Err(e)) => Check::new(name, false, format!("no checkpoint: {}", e.code)),
    }
}

/// Whether the D1 database has every migration this build reads it with.
async fn migrations_check(env: &Env) -> Check {
    let name = "d1:migrations";
    let missing = match env.d1("DB") {
        Ok(db) => crate::d1::missing_migration(&db).await,
        Err(e) => Err(e.into()),
    };
    match missing {
        Ok(None) => Check::new(name, true, format!("{} applied", crate::d1::MIGRATIONS.len())),
        Ok(Some(m)) => Check::new(name, false, format!("{m} is not applied")),
        Err(e) => Check::new(name, false, format!("no answer: {}", e.code)),
    }
}

/// Every signer's balance against `min`: `relayer:balance` passes when all do, `relayer:balance:<address>` is each
/// signer's (one RPC call per signer, together).
async fn balance_checks(config: &RelayerConfig, min: u128) -> Vec<Check> {
    let name = "relayer:balance";
    let signers = match config.signers() {
        Ok(s) => s,
        Err(_) => return vec![Check::new(name, false, "no relayer key")],
    };
    let rpc = config.rpc();
    let balances = join_all(signers.iter().map(|s| rpc.balance(s.signer.address()))).await;
    let mut each = Vec::with_capacity(signers.len());
    for (signer, balance) in signers.iter().zip(balances) {
        let signer_name = format!("{name}:{:#x}", signer.signer.address());
        each.push(match balance {
            Ok(balance) => Check::new(
                signer_name,
                balance >= U256::from(min),
                format!("{balance} wei (at least {min})"),
            ),
            Err(e) => Check::new(
                signer_name,
                false,
                format!("no answer: {}", crate::error::ApiError::from(e).code),
            ),
        });
    }
    let low = each.iter().filter(|c| !c.ok).count();
    let summary = if low == 0 {
        Check::new(name, true, format!("{} signer(s) at least {min} wei", each.len()))
    } else {
        Check::new(
            name,
            false,
            format!("{low} of {} signer(s) below {min} wei or unanswered", each.len()),
        )
    };
    let mut checks = vec![summary];
    checks.extend(each);
    checks
}

/// `GET /ready`.
pub async fn ready(req: &Request, env: &Env, config: &Config) -> ApiResult<Response> {
    ratelimit::limit_client_in(
        req,
        env,
        "ready",
        config.limits.ready.value()?,
        "readiness checks",
        ratelimit::Taking::EachRequest,
    )
    .await?;
    let mut checks = vec![
        // the pool's keys: the single key's check, or the list's when only the list is set
        if config.relayer_key.is_none() && config.relayer_keys.is_some() {
            secret_set("RELAYER_PRIVATE_KEYS", config.relayer_keys.as_ref())
        } else {
            secret_set("RELAYER_PRIVATE_KEY", config.relayer_key.as_ref())
        },
        secret_set("ADMIN_TOKEN", config.admin_token.as_ref()),
    ];
    let parsed = config
        .relayer()
        .and_then(|c| Ok((c, config.chains()?)))
        .and_then(|parsed| config.algolia.get().map(|_| parsed));
    let limits = config
        .min_relayer_balance
        .value()
        .and_then(|min| Ok((min, config.ready_max_indexer_lag.value()?)));
    let ((config, chains), (min_balance, max_lag)) = match (parsed, limits) {
        (Ok(parsed), Ok(limits)) => {
            checks.insert(0, Check::new("config", true, "complete"));
            (parsed, limits)
        }
        (Err(e), _) | (_, Err(e)) => {
            checks.insert(0, Check::new("config", false, e.message));
            let readiness = Readiness::of(checks);
            return Ok(Response::from_json(&readiness)?.with_status(readiness.status_code()));
        }
    };
    let rpc = join_all(chains.iter().map(rpc_check));
    let indexers = join_all(chains.iter().map(|c| indexer_check(env, c, max_lag)));
    let (rpc, indexers, balance, migrations) = futures_util::future::join4(
        rpc,
        indexers,
        balance_checks(config, min_balance),
        migrations_check(env),
    )
    .await;
    checks.push(migrations);
    checks.extend(rpc);
    checks.extend(balance);
    checks.extend(indexers);
    let readiness = Readiness::of(checks);
    Ok(Response::from_json(&readiness)?.with_status(readiness.status_code()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_only_when_every_check_passes() {
        let ok = Readiness::of(vec![Check::new("a", true, ""), Check::new("b", true, "")]);
        assert_eq!((ok.status, ok.status_code()), ("ready", 200));
        let not = Readiness::of(vec![Check::new("a", true, ""), Check::new("b", false, "")]);
        assert_eq!((not.status, not.status_code()), ("not ready", 503));
        let json = serde_json::to_value(&not).unwrap_or_default();
        assert_eq!(json["checks"][1]["ok"], false);
    }
}
