//! Deployment configuration from `wrangler.toml` vars and secrets. Missing or malformed values fail the request
//! with `CONFIGURATION_ERROR` (naming the variable, never its value) instead of signing for a wrong chain.

mod chains;

use alloy_primitives::B256;
use profile_relayer::{
    genuine::{Accepted, parse_code_hashes},
    hex::parse_address,
    networks::{Lsp23Constants, chain_id_hex, parse_chain_id},
};
use serde_json::Value;
use worker::Env;

pub use self::chains::ChainConfig;
use self::chains::{ChainDefaults, parse_chains};
use crate::{
    error::{ApiError, ApiResult, Code},
    rpc::{Rpc, RpcBounds},
    signer::Signer,
};

/// The parsed configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Chain id the relayer signs for; checked against the node's `eth_chainId`.
    pub chain_id: u64,
    /// JSON-RPC endpoint.
    pub rpc_url: String,
    /// LSP23 contracts (defaults: the canonical LUKSO addresses).
    pub constants: Lsp23Constants,
    /// How long a deploy request waits for its receipt before answering 202.
    pub deploy_wait_ms: u64,
    /// After how long an unmined transaction is replaced with higher fees.
    pub replace_after_ms: u64,
    /// Timeout of one RPC call.
    pub rpc_timeout_ms: u64,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
    /// Requests per minute for keys created without their own limit.
    pub default_rate_limit: u32,
    /// Largest Form 1 `lsp3Profile` / Form 2 `postDeploymentCallData`, in bytes (`MAX_DEPLOY_DATA_BYTES`).
    pub max_deploy_data_bytes: usize,
    /// Largest gas limit of any transaction the relayer sends (`MAX_TRANSACTION_GAS`).
    pub max_transaction_gas: u64,
    /// Relayer-wide gas per UTC day; past it every send pauses with 503 (`MAX_GAS_PER_DAY`).
    pub max_gas_per_day: u64,
    /// Monthly deploy gas of keys created without their own budget (`DEFAULT_KEY_GAS_BUDGET_PER_MONTH`).
    pub default_key_gas_budget: u64,
    /// Gas per registered profile and calendar month for relayed transactions (`MONTHLY_GAS_QUOTA`).
    pub monthly_gas_quota: u64,
    /// Largest LSP25 payload relayed by `/api/execute` (`MAX_EXECUTE_PAYLOAD_BYTES`).
    pub max_execute_payload_bytes: usize,
    /// How old an LSP15 quota signature's timestamp may be (`QUOTA_SIGNATURE_WINDOW_SECONDS`).
    pub quota_signature_window: u64,
    /// Seconds added to the clock for metering and signature windows (`CLOCK_OFFSET_SECONDS`, tests only).
    pub clock_offset: i64,
    /// How long a gas reservation holds when never settled nor released (`RESERVATION_TTL_SECONDS`).
    pub reservation_ttl: u64,
    /// Size of RPC answers and gas of calls (`RPC_MAX_RESPONSE_BYTES`, `RPC_CALL_GAS_CAP`).
    pub rpc_bounds: RpcBounds,
    /// The code of the profiles this relayer serves: LUKSO's releases plus `UNIVERSAL_PROFILE_IMPLEMENTATIONS` /
    /// `KEY_MANAGER_IMPLEMENTATIONS` (see [`crate::genuine`]).
    pub accepted_code: Accepted,
}

/// The bounds of every RPC answer and call: `RPC_MAX_RESPONSE_BYTES`, `RPC_CALL_GAS_CAP` (`eth_call`) and
/// `MAX_TRANSACTION_GAS` (`eth_estimateGas`).
///
/// # Errors
/// `CONFIGURATION_ERROR` when one is not a number.
pub fn rpc_bounds(env: &Env) -> ApiResult<RpcBounds> {
    Ok(RpcBounds {
        max_response_bytes: number(
            env,
            "RPC_MAX_RESPONSE_BYTES",
            RpcBounds::DEFAULT_MAX_RESPONSE_BYTES,
        )?,
        call_gas_cap: number(env, "RPC_CALL_GAS_CAP", RpcBounds::DEFAULT_CALL_GAS_CAP)?,
        estimate_gas_cap: number(env, "MAX_TRANSACTION_GAS", MAX_TRANSACTION_GAS)?,
    })
}

/// Default of `MAX_TRANSACTION_GAS`.
const MAX_TRANSACTION_GAS: u64 = 10_000_000;

/// A var's value, `None` when unset or blank.
pub fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name)
        .ok()
        .map(|v| v.to_string())
        .filter(|v| !v.trim().is_empty())
}

/// A numeric var, `default` when unset; `CONFIGURATION_ERROR` when it is not a number.
pub fn number<T: core::str::FromStr>(env: &Env, name: &str, default: T) -> ApiResult<T> {
    match var(env, name) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| ApiError::config(format!("{name} must be a number"))),
    }
}

/// A `true`/`false` var, `default` when unset; `CONFIGURATION_ERROR` for anything else.
pub fn flag(env: &Env, name: &str, default: bool) -> ApiResult<bool> {
    match var(env, name).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(ApiError::config(format!("{name} must be true or false"))),
    }
}

/// A list of runtime code hashes (comma-separated 32-byte hex), empty when unset; `CONFIGURATION_ERROR` naming
/// `name` when a value is malformed.
fn code_hashes(name: &str, value: Option<&str>) -> ApiResult<Vec<B256>> {
    value.map_or_else(
        || Ok(Vec::new()),
        |v| {
            parse_code_hashes(name, v).map_err(|_| {
                ApiError::config(format!(
                    "{name} must be comma-separated runtime code hashes (32-byte 0x-hex)"
                ))
            })
        },
    )
}

fn address(
    env: &Env,
    name: &str,
    default: alloy_primitives::Address,
) -> ApiResult<alloy_primitives::Address> {
    match var(env, name) {
        None => Ok(default),
        Some(v) => {
            parse_address(name, v.trim()).map_err(|_| ApiError::config(format!("{name} must be an address")))
        }
    }
}

impl Config {
    /// Reads the vars.
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` for a missing `CHAIN_ID` / `RPC_URL` or a malformed value.
    pub fn from_env(env: &Env) -> ApiResult<Self> {
        let chain_id = var(env, "CHAIN_ID").ok_or_else(|| ApiError::config("CHAIN_ID is not set"))?;
        let chain_id = parse_chain_id(chain_id.trim())
            .map_err(|_| ApiError::config("CHAIN_ID must be a chain id (decimal or 0x-hex)"))?;
        let rpc_url = var(env, "RPC_URL").ok_or_else(|| ApiError::config("RPC_URL is not set"))?;
        if !(rpc_url.starts_with("http://") || rpc_url.starts_with("https://")) {
            return Err(ApiError::config("RPC_URL must be an http(s) URL"));
        }
        let d = Lsp23Constants::V0_14_0;
        Ok(Self {
            chain_id,
            rpc_url,
            constants: Lsp23Constants {
                factory: address(env, "LSP23_FACTORY", d.factory)?,
                universal_profile_init: address(env, "UNIVERSAL_PROFILE_INIT", d.universal_profile_init)?,
                key_manager_init: address(env, "KEY_MANAGER_INIT", d.key_manager_init)?,
                post_deployment_module: address(env, "POST_DEPLOYMENT_MODULE", d.post_deployment_module)?,
                universal_receiver_delegate: address(
                    env,
                    "UNIVERSAL_RECEIVER_DELEGATE",
                    d.universal_receiver_delegate,
                )?,
            },
            deploy_wait_ms: number(env, "DEPLOY_WAIT_SECONDS", 20u64)? * 1000,
            replace_after_ms: number(env, "REPLACE_AFTER_SECONDS", 30u64)? * 1000,
            rpc_timeout_ms: number(env, "RPC_TIMEOUT_SECONDS", 10u64)? * 1000,
            max_body_bytes: number(env, "MAX_BODY_BYTES", 64 * 1024usize)?,
            default_rate_limit: number(env, "DEFAULT_RATE_LIMIT_PER_MINUTE", 60u32)?,
            max_deploy_data_bytes: number(env, "MAX_DEPLOY_DATA_BYTES", 16 * 1024usize)?,
            max_transaction_gas: number(env, "MAX_TRANSACTION_GAS", MAX_TRANSACTION_GAS)?,
            max_gas_per_day: number(env, "MAX_GAS_PER_DAY", 500_000_000u64)?,
            default_key_gas_budget: number(env, "DEFAULT_KEY_GAS_BUDGET_PER_MONTH", 100_000_000u64)?,
            monthly_gas_quota: number(env, "MONTHLY_GAS_QUOTA", profile_relayer::api::MONTHLY_GAS_QUOTA)?,
            max_execute_payload_bytes: number(env, "MAX_EXECUTE_PAYLOAD_BYTES", 16 * 1024usize)?,
            quota_signature_window: number(env, "QUOTA_SIGNATURE_WINDOW_SECONDS", 300u64)?,
            clock_offset: number(env, "CLOCK_OFFSET_SECONDS", 0i64)?,
            reservation_ttl: number(
                env,
                "RESERVATION_TTL_SECONDS",
                crate::meter::DEFAULT_RESERVATION_TTL_SECONDS,
            )?,
            rpc_bounds: rpc_bounds(env)?,
            accepted_code: Accepted {
                universal_profiles: code_hashes(
                    "UNIVERSAL_PROFILE_IMPLEMENTATIONS",
                    var(env, "UNIVERSAL_PROFILE_IMPLEMENTATIONS").as_deref(),
                )?,
                key_managers: code_hashes(
                    "KEY_MANAGER_IMPLEMENTATIONS",
                    var(env, "KEY_MANAGER_IMPLEMENTATIONS").as_deref(),
                )?,
            },
        })
    }

    /// Unix seconds now, as metering sees it (`CLOCK_OFFSET_SECONDS` lets tests move into the next month).
    pub fn now(&self) -> u64 {
        let real = worker::Date::now().as_millis() / 1000;
        real.saturating_add_signed(self.clock_offset)
    }

    /// The RPC client.
    pub fn rpc(&self) -> Rpc {
        Rpc::new(&self.rpc_url, self.rpc_timeout_ms, self.rpc_bounds)
    }

    /// The relayer key (secret `RELAYER_PRIVATE_KEY`).
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` when it is missing or not a valid secp256k1 key.
    pub fn signer(env: &Env) -> ApiResult<Signer> {
        let secret = env
            .secret("RELAYER_PRIVATE_KEY")
            .map_err(|_| ApiError::config("the RELAYER_PRIVATE_KEY secret is not set"))?
            .to_string();
        Signer::from_hex(secret.trim())
            .ok_or_else(|| ApiError::config("RELAYER_PRIVATE_KEY is not a valid private key"))
    }
}

/// The `CHAINS` var: a JSON string (`wrangler --var`, dashboard) or a TOML/JSON array in `[vars]` (which reaches
/// the Worker as an object). `None` when unset or blank.
fn chains_var(env: &Env) -> ApiResult<Option<Value>> {
    if let Some(text) = var(env, "CHAINS") {
        return serde_json::from_str(&text)
            .map(Some)
            .map_err(|_| ApiError::config("CHAINS must be a JSON array of chains"));
    }
    Ok(env.object_var::<Value>("CHAINS").ok().filter(|v| match v {
        Value::Null => false,
        Value::String(s) => !s.trim().is_empty(),
        _ => true,
    }))
}

/// Every chain this deployment serves, in the order configured (the first is the default of what has no chain).
///
/// # Errors
/// `CONFIGURATION_ERROR` for a malformed `CHAINS`, `CHAIN_ID`, `RPC_URL` or number var.
pub fn chains(env: &Env) -> ApiResult<Vec<ChainConfig>> {
    let relayer_chain = match var(env, "CHAIN_ID") {
        None => None,
        Some(v) => Some(
            parse_chain_id(v.trim())
                .map_err(|_| ApiError::config("CHAIN_ID must be a chain id (decimal or 0x-hex)"))?,
        ),
    };
    let defaults = ChainDefaults {
        relayer_chain,
        relayer_rpc: var(env, "RPC_URL").map(|v| v.trim().to_owned()),
        index_prefix: var(env, "INDEX_PREFIX")
            .map_or_else(|| "dev_local".to_owned(), |v| v.trim().to_owned()),
        rpc_timeout_ms: number(env, "RPC_TIMEOUT_SECONDS", 10u64)?.saturating_mul(1000),
        rpc_bounds: rpc_bounds(env)?,
        start_block: number(env, "INDEXER_START_BLOCK", 0)?,
        confirmations: number(env, "INDEXER_CONFIRMATIONS", 0)?,
        max_blocks: number(env, "INDEXER_MAX_BLOCKS", 2000)?,
    };
    parse_chains(chains_var(env)?.as_ref(), &defaults).map_err(ApiError::config)
}

/// The configured chain a path's `:chainId` names (decimal or hex): 400 `UNKNOWN_CHAIN` when it is malformed or
/// not served here.
///
/// # Errors
/// 400 `UNKNOWN_CHAIN`; `CONFIGURATION_ERROR`.
pub fn chain(env: &Env, chain_id: &str) -> ApiResult<ChainConfig> {
    let chains = chains(env)?;
    let served = || {
        chains
            .iter()
            .map(|c| c.chain_id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let id = parse_chain_id(chain_id).map_err(|e| {
        ApiError::new(
            Code::UnknownChain,
            format!("{e} (this deployment serves chains {})", served()),
        )
    })?;
    chains.iter().find(|c| c.chain_id == id).cloned().ok_or_else(|| {
        ApiError::new(
            Code::UnknownChain,
            format!(
                "this deployment serves chains {}, not {id} ({})",
                served(),
                chain_id_hex(id)
            ),
        )
    })
}

/// The index names of every served chain.
///
/// # Errors
/// `CONFIGURATION_ERROR`.
pub fn all_index_names(env: &Env) -> ApiResult<Vec<String>> {
    Ok(chains(env)?
        .iter()
        .flat_map(|c| [c.profiles_index(), c.assets_index()])
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_hash_lists() {
        let a = "0x2af8ec25ad65b8586b875c079d434e9384dc506c878bb322b928c36e8f3442e5";
        let b = "0x6efe22543daba59d72ec70ba3a77047cd8928d8b241c1842ad948d75942ec2a4";
        assert_eq!(code_hashes("X", None), Ok(vec![]));
        let both = code_hashes("X", Some(&format!("{a}, {b}"))).unwrap();
        assert_eq!(both.iter().map(ToString::to_string).collect::<Vec<_>>(), [a, b]);
        let err = code_hashes("KEY_MANAGER_IMPLEMENTATIONS", Some("0x1234")).unwrap_err();
        assert_eq!(err.code, "CONFIGURATION_ERROR");
        assert!(
            err.message.starts_with("KEY_MANAGER_IMPLEMENTATIONS "),
            "{}",
            err.message
        );
        assert!(!err.message.contains("0x1234"), "the value is not echoed");
    }
}
