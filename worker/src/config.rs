//! Deployment configuration from `wrangler.toml` vars and secrets. Missing or malformed values fail the request
//! with `CONFIGURATION_ERROR` (naming the variable, never its value) instead of signing for a wrong chain.

use profile_relayer::{
    hex::parse_address,
    networks::{Lsp23Constants, chain_id_hex, parse_chain_id},
};
use serde_json::Value;
use worker::Env;

use crate::{
    error::{ApiError, ApiResult, Code},
    rpc::Rpc,
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
}

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
            max_transaction_gas: number(env, "MAX_TRANSACTION_GAS", 10_000_000u64)?,
            max_gas_per_day: number(env, "MAX_GAS_PER_DAY", 500_000_000u64)?,
            default_key_gas_budget: number(env, "DEFAULT_KEY_GAS_BUDGET_PER_MONTH", 100_000_000u64)?,
            monthly_gas_quota: number(env, "MONTHLY_GAS_QUOTA", profile_relayer::api::MONTHLY_GAS_QUOTA)?,
            max_execute_payload_bytes: number(env, "MAX_EXECUTE_PAYLOAD_BYTES", 16 * 1024usize)?,
            quota_signature_window: number(env, "QUOTA_SIGNATURE_WINDOW_SECONDS", 300u64)?,
            clock_offset: number(env, "CLOCK_OFFSET_SECONDS", 0i64)?,
        })
    }

    /// Unix seconds now, as metering sees it (`CLOCK_OFFSET_SECONDS` lets tests move into the next month).
    pub fn now(&self) -> u64 {
        let real = worker::Date::now().as_millis() / 1000;
        real.saturating_add_signed(self.clock_offset)
    }

    /// The RPC client.
    pub fn rpc(&self) -> Rpc {
        Rpc::new(&self.rpc_url, self.rpc_timeout_ms)
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

/// One chain this deployment serves with the lookup API, search and the indexer (`CHAINS`; by default the
/// relayer's `CHAIN_ID` / `RPC_URL` with `INDEX_PREFIX` and the `INDEXER_*` vars).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainConfig {
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// JSON-RPC endpoint (never logged or echoed: it may hold an API key).
    pub rpc_url: String,
    /// Timeout of one RPC call (`RPC_TIMEOUT_SECONDS`).
    pub rpc_timeout_ms: u64,
    /// Prefix of the chain's index names (`<prefix>_universal_profiles`, `<prefix>_assets`); unique per chain.
    pub index_prefix: String,
    /// Block the indexer starts from when the chain has no checkpoint yet.
    pub start_block: u64,
    /// Blocks the indexer stays behind the head.
    pub confirmations: u64,
    /// The first `eth_getLogs` window, in blocks.
    pub max_blocks: u64,
}

impl ChainConfig {
    /// The RPC client.
    pub fn rpc(&self) -> Rpc {
        Rpc::new(&self.rpc_url, self.rpc_timeout_ms)
    }

    /// The profiles index.
    pub fn profiles_index(&self) -> String {
        format!("{}_universal_profiles", self.index_prefix)
    }

    /// The assets index.
    pub fn assets_index(&self) -> String {
        format!("{}_assets", self.index_prefix)
    }

    /// `(profiles, assets)`.
    pub fn index_names(&self) -> (String, String) {
        (self.profiles_index(), self.assets_index())
    }

    /// The name retries of unindexable candidates are queued under (`retries.index_name`).
    pub fn errors_queue(&self) -> String {
        format!("{}_errors", self.index_prefix)
    }
}

/// What a `CHAINS` entry leaves out: the deployment-wide vars.
#[derive(Debug, Clone)]
pub struct ChainDefaults {
    /// `CHAIN_ID`, the relayer's chain.
    pub relayer_chain: Option<u64>,
    /// `RPC_URL`, the relayer's node.
    pub relayer_rpc: Option<String>,
    /// `INDEX_PREFIX` (`dev_local` when unset).
    pub index_prefix: String,
    /// `RPC_TIMEOUT_SECONDS` in ms.
    pub rpc_timeout_ms: u64,
    /// `INDEXER_START_BLOCK`.
    pub start_block: u64,
    /// `INDEXER_CONFIRMATIONS`.
    pub confirmations: u64,
    /// `INDEXER_MAX_BLOCKS`.
    pub max_blocks: u64,
}

/// Most chains one deployment serves.
pub const MAX_CHAINS: usize = 16;

const CHAIN_FIELDS: [&str; 6] = [
    "chainId",
    "rpcUrl",
    "indexPrefix",
    "startBlock",
    "confirmations",
    "maxBlocks",
];

fn is_http_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

/// The chains of `CHAINS` (a JSON array of `{"chainId", "rpcUrl", "indexPrefix", "startBlock"?,
/// "confirmations"?, "maxBlocks"?}`; `chainId` a number or a decimal / `0x`-hex string; `rpcUrl` may be left out
/// for the relayer's own chain), or, when `CHAINS` is unset, the relayer's one chain. Errors name the entry and
/// field, never a value (an RPC URL may carry an API key).
///
/// # Errors
/// A message for `CONFIGURATION_ERROR`.
pub fn parse_chains(value: Option<&Value>, d: &ChainDefaults) -> Result<Vec<ChainConfig>, String> {
    let Some(value) = value else {
        let chain_id = d.relayer_chain.ok_or("CHAIN_ID is not set")?;
        let rpc_url = d.relayer_rpc.clone().ok_or("RPC_URL is not set")?;
        if !is_http_url(&rpc_url) {
            return Err("RPC_URL must be an http(s) URL".into());
        }
        return Ok(vec![ChainConfig {
            chain_id,
            rpc_url,
            rpc_timeout_ms: d.rpc_timeout_ms,
            index_prefix: d.index_prefix.clone(),
            start_block: d.start_block,
            confirmations: d.confirmations,
            max_blocks: d.max_blocks.max(1),
        }]);
    };
    let Value::Array(entries) = value else {
        return Err("CHAINS must be a JSON array of chains".into());
    };
    if entries.is_empty() || entries.len() > MAX_CHAINS {
        return Err(format!("CHAINS must list 1 to {MAX_CHAINS} chains"));
    }
    let mut chains: Vec<ChainConfig> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let at = |field: &str| format!("CHAINS[{i}].{field}");
        let Value::Object(fields) = entry else {
            return Err(format!("CHAINS[{i}] must be an object"));
        };
        if let Some(unknown) = fields.keys().find(|k| !CHAIN_FIELDS.contains(&k.as_str())) {
            return Err(format!(
                "CHAINS[{i}] has an unknown field {unknown:?} (known: {})",
                CHAIN_FIELDS.join(", ")
            ));
        }
        let chain_id = match fields.get("chainId") {
            Some(Value::String(s)) => parse_chain_id(s).ok(),
            Some(n @ Value::Number(_)) => crate::routes::integer(n).filter(|n| *n > 0),
            _ => None,
        }
        .ok_or_else(|| {
            format!(
                "{} must be a chain id (a number, or a decimal or 0x-hex string)",
                at("chainId")
            )
        })?;
        let rpc_url = match fields.get("rpcUrl") {
            Some(Value::String(url)) => url.trim().to_owned(),
            None if Some(chain_id) == d.relayer_chain => d.relayer_rpc.clone().ok_or("RPC_URL is not set")?,
            None => return Err(format!("{} is missing", at("rpcUrl"))),
            Some(_) => return Err(format!("{} must be a string", at("rpcUrl"))),
        };
        if !is_http_url(&rpc_url) {
            return Err(format!("{} must be an http(s) URL", at("rpcUrl")));
        }
        let index_prefix = match fields.get("indexPrefix") {
            Some(Value::String(p))
                if (1..=64).contains(&p.len())
                    && p.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
            {
                p.clone()
            }
            None => return Err(format!("{} is missing", at("indexPrefix"))),
            Some(_) => {
                return Err(format!(
                    "{} must be 1 to 64 letters, digits, `_` or `-`",
                    at("indexPrefix")
                ));
            }
        };
        let number = |field: &str, default: u64| match fields.get(field) {
            None => Ok(default),
            Some(v) => crate::routes::integer(v)
                .ok_or_else(|| format!("{} must be a non-negative integer", at(field))),
        };
        let chain = ChainConfig {
            chain_id,
            rpc_url,
            rpc_timeout_ms: d.rpc_timeout_ms,
            index_prefix,
            start_block: number("startBlock", d.start_block)?,
            confirmations: number("confirmations", d.confirmations)?,
            max_blocks: number("maxBlocks", d.max_blocks)?.max(1),
        };
        if chains.iter().any(|c| c.chain_id == chain.chain_id) {
            return Err(format!(
                "{}: chain {} is listed twice",
                at("chainId"),
                chain.chain_id
            ));
        }
        if chains.iter().any(|c| c.index_prefix == chain.index_prefix) {
            // two chains in one index would mix their records
            return Err(format!(
                "{}: two chains share the prefix {:?}",
                at("indexPrefix"),
                chain.index_prefix
            ));
        }
        chains.push(chain);
    }
    Ok(chains)
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
    use serde_json::json;

    use super::*;

    fn defaults() -> ChainDefaults {
        ChainDefaults {
            relayer_chain: Some(42),
            relayer_rpc: Some("https://rpc.mainnet.example".into()),
            index_prefix: "prod_mainnet".into(),
            rpc_timeout_ms: 10_000,
            start_block: 7,
            confirmations: 12,
            max_blocks: 2000,
        }
    }

    #[test]
    fn unset_is_the_relayer_chain() {
        let chains = parse_chains(None, &defaults()).unwrap();
        assert_eq!(chains.len(), 1);
        let c = &chains[0];
        assert_eq!(
            (c.chain_id, c.rpc_url.as_str(), c.index_prefix.as_str()),
            (42, "https://rpc.mainnet.example", "prod_mainnet")
        );
        assert_eq!((c.start_block, c.confirmations, c.max_blocks), (7, 12, 2000));
        assert_eq!(
            c.index_names(),
            (
                "prod_mainnet_universal_profiles".into(),
                "prod_mainnet_assets".into()
            )
        );
        let mut d = defaults();
        d.relayer_chain = None;
        assert_eq!(parse_chains(None, &d).unwrap_err(), "CHAIN_ID is not set");
    }

    #[test]
    fn two_chains_with_their_own_settings() {
        let value = json!([
            { "chainId": 42, "indexPrefix": "prod_mainnet" },
            { "chainId": "0x1069", "rpcUrl": "https://rpc.testnet.example/key", "indexPrefix": "prod_testnet",
              "startBlock": 100, "confirmations": 2.0, "maxBlocks": 0 },
        ]);
        let chains = parse_chains(Some(&value), &defaults()).unwrap();
        assert_eq!(chains[0].rpc_url, "https://rpc.mainnet.example");
        assert_eq!(chains[0].confirmations, 12);
        let t = &chains[1];
        assert_eq!(
            (t.chain_id, t.start_block, t.confirmations, t.max_blocks),
            (4201, 100, 2, 1)
        );
        assert_eq!(t.errors_queue(), "prod_testnet_errors");
    }

    #[test]
    fn malformed_chains_are_refused_without_echoing_values() {
        let secret = "https://user:SECRET@rpc.example";
        let cases = [
            (json!({}), "JSON array"),
            (json!([]), "1 to 16"),
            (json!([1]), "CHAINS[0] must be an object"),
            (
                json!([{ "chainId": 1, "rpcUrl": secret, "indexPrefix": "a", "rpcURL": 1 }]),
                "unknown field \"rpcURL\"",
            ),
            (
                json!([{ "chainId": "0x", "rpcUrl": secret, "indexPrefix": "a" }]),
                "CHAINS[0].chainId",
            ),
            (
                json!([{ "chainId": -1, "rpcUrl": secret, "indexPrefix": "a" }]),
                "CHAINS[0].chainId",
            ),
            (
                json!([{ "chainId": 0, "rpcUrl": secret, "indexPrefix": "a" }]),
                "CHAINS[0].chainId",
            ),
            (
                json!([{ "chainId": 1.5, "rpcUrl": secret, "indexPrefix": "a" }]),
                "CHAINS[0].chainId",
            ),
            (
                json!([{ "chainId": 7, "indexPrefix": "a" }]),
                "CHAINS[0].rpcUrl is missing",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": "ftp://SECRET", "indexPrefix": "a" }]),
                "CHAINS[0].rpcUrl must be",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret }]),
                "CHAINS[0].indexPrefix is missing",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret, "indexPrefix": "a b" }]),
                "CHAINS[0].indexPrefix must",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret, "indexPrefix": "a", "startBlock": -1 }]),
                "CHAINS[0].startBlock",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret, "indexPrefix": "a" }, { "chainId": "0x7", "rpcUrl": secret, "indexPrefix": "b" }]),
                "listed twice",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret, "indexPrefix": "a" }, { "chainId": 8, "rpcUrl": secret, "indexPrefix": "a" }]),
                "share the prefix",
            ),
        ];
        for (value, expected) in cases {
            let e = parse_chains(Some(&value), &defaults()).unwrap_err();
            assert!(e.contains(expected), "{value}: {e}");
            assert!(!e.contains("SECRET"), "{e}");
        }
    }
}
