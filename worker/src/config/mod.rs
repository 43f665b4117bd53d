//! Deployment configuration from `wrangler.toml` vars and secrets, parsed once per request (at the dispatcher, the
//! cron handler and each Durable Object) into a [`Config`] that is passed down. Every variable and its default is
//! listed once, in [`vars::VARS`]. A missing or malformed value fails what needs it with `CONFIGURATION_ERROR`
//! (naming the variable, never its value) instead of signing for a wrong chain: each part of the configuration is a
//! [`Setting`], so a malformed IPFS variable fails the IPFS routes, not the relayer's.

mod chains;
mod ipfs;
pub mod vars;

use alloy_primitives::B256;
use profile_relayer::{
    genuine::{Accepted, parse_code_hashes},
    hex::parse_address,
    networks::{Lsp23Constants, chain_id_hex, parse_chain_id},
};
use worker::Env;

pub use self::{
    chains::{ChainConfig, default_confirmations},
    ipfs::IpfsConfig,
};
use self::{
    chains::{ChainDefaults, parse_chains},
    vars::Vars,
};
use crate::{
    error::{ApiError, ApiResult, Code},
    rpc::{Rpc, RpcBounds},
    signer::Signer,
};

/// One part of the configuration as parsed: its value, or the `CONFIGURATION_ERROR` every use answers.
#[derive(Debug, Clone)]
pub struct Setting<T>(ApiResult<T>);

impl<T> Setting<T> {
    /// The value, or its configuration error.
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` naming the variable.
    pub fn get(&self) -> ApiResult<&T> {
        self.0.as_ref().map_err(Clone::clone)
    }
}

impl<T: Copy> Setting<T> {
    /// The value (a copy), or its configuration error.
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` naming the variable.
    pub fn value(&self) -> ApiResult<T> {
        self.get().copied()
    }
}

impl<T> From<ApiResult<T>> for Setting<T> {
    fn from(r: ApiResult<T>) -> Self {
        Self(r)
    }
}

/// A secret's value: never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl core::fmt::Debug for Secret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// The whole configuration of one request (or one Durable Object).
#[derive(Debug, Clone)]
pub struct Config {
    /// The relayer's chain, node, contracts and limits.
    pub relayer: Setting<RelayerConfig>,
    /// Every chain of the lookup API, search and the indexer (`CHAINS`).
    pub chains: Setting<Vec<ChainConfig>>,
    /// The IPFS relay and uploads.
    pub ipfs: Setting<IpfsConfig>,
    /// What an indexer run may do.
    pub indexer: Setting<IndexerConfig>,
    /// Algolia, when `ALGOLIA_APP_ID` is set.
    pub algolia: Setting<Option<AlgoliaConfig>>,
    /// Per-client rate limits (0 turns one off).
    pub limits: Limits,
    /// Secret `RELAYER_PRIVATE_KEY` (also in [`RelayerConfig`], which parses it).
    pub relayer_key: Option<Secret>,
    /// Secret `RELAYER_PRIVATE_KEYS` (also in [`RelayerConfig`], which parses it).
    pub relayer_keys: Option<Secret>,
    /// Secret `ADMIN_TOKEN`.
    pub admin_token: Option<Secret>,
    /// Secret `UPLOAD_JWT_SECRET`: enables the wallet's upload tokens.
    pub upload_jwt_secret: Option<Secret>,
    /// `UPLOAD_JWT_ISSUERS`.
    pub upload_jwt_issuers: Setting<Vec<String>>,
    /// `UPLOAD_JWT_SKEW_SECONDS`.
    pub upload_jwt_skew: Setting<u32>,
    /// `MAX_FEE_PER_GAS`, wei.
    pub max_fee_per_gas: Setting<u128>,
    /// `TX_RECORD_DAYS`.
    pub tx_record_days: Setting<u64>,
    /// `IMAGE_CACHE_MAX_BYTES`.
    pub image_cache_max_bytes: Setting<u64>,
    /// `LOOKUP_CACHE_SECONDS`.
    pub lookup_cache_seconds: Setting<u64>,
    /// `LOOKUP_MISS_SECONDS`.
    pub lookup_miss_seconds: Setting<u64>,
    /// `MIN_RELAYER_BALANCE`, wei.
    pub min_relayer_balance: Setting<u128>,
    /// `WEBHOOK_ALLOW_HTTP`: plain `http://` webhooks to 127.0.0.1 / localhost (local development only).
    pub webhook_allow_http: Setting<bool>,
    /// `WEBHOOK_TIMEOUT_SECONDS`: the timeout of one delivery attempt.
    pub webhook_timeout: Setting<u64>,
    /// `LOW_BALANCE_ALERT_WEI` (default `MIN_RELAYER_BALANCE`): below it, the operator webhook is alerted.
    pub low_balance_alert: Setting<u128>,
    /// `READY_MAX_INDEXER_LAG`, blocks.
    pub ready_max_indexer_lag: Setting<u64>,
    /// `INDEXER_INTERVAL_SECONDS`: seconds between two runs of a chain's indexer object (its alarm); 0: only the
    /// cron follows the chains.
    pub indexer_interval: Setting<u64>,
    /// `CLOCK_OFFSET_SECONDS` (tests only).
    pub clock_offset: Setting<i64>,
    /// `PANIC_TEST_ROUTE` (tests only).
    pub panic_test_route: Setting<bool>,
    /// `ANALYTICS_LOG` (tests only): every Analytics Engine data point also logged.
    pub analytics_log: Setting<bool>,
}

/// Requests per client and minute (0 turns a limit off).
#[derive(Debug, Clone)]
pub struct Limits {
    /// `PUBLIC_RATE_LIMIT_PER_MINUTE`: the key-less relay routes.
    pub public: Setting<u32>,
    /// `LOOKUP_RATE_LIMIT_PER_MINUTE`: lookups and searches that are not cache hits.
    pub lookup: Setting<u32>,
    /// `IPFS_MISS_RATE_LIMIT_PER_MINUTE`: `/ipfs` and `/image` requests for content not stored here.
    pub ipfs_miss: Setting<u32>,
    /// `UPLOAD_JWT_RATE_LIMIT_PER_MINUTE`: uploads with an upload token.
    pub upload_jwt: Setting<u32>,
    /// `READY_RATE_LIMIT_PER_MINUTE`: `/ready`.
    pub ready: Setting<u32>,
    /// `ADMIN_FAILURES_PER_MINUTE`: wrong admin tokens.
    pub admin_failures: Setting<u32>,
}

/// What an indexer run may do, and how it reads metadata.
#[derive(Debug, Clone)]
pub struct IndexerConfig {
    /// `INDEXER_MAX_WINDOW`: the largest `eth_getLogs` window, in blocks.
    pub max_window: u64,
    /// `INDEXER_TARGET_LOGS`: the logs a window aims at.
    pub target_logs: usize,
    /// `INDEXER_RETRY_SECONDS`: the retry backoff base.
    pub retry_seconds: u64,
    /// `INDEXER_MAX_SECONDS`.
    pub max_seconds: u64,
    /// `INDEXER_MAX_SUBREQUESTS`.
    pub max_subrequests: u32,
    /// `INDEXER_MAX_ROWS`.
    pub max_rows: u32,
    /// `INDEXER_CONCURRENCY` (1 to 32).
    pub concurrency: usize,
    /// The IPFS configuration with `max_bytes` lowered to `METADATA_MAX_BYTES`.
    pub ipfs: IpfsConfig,
    /// `METADATA_TIMEOUT_SECONDS` (default `IPFS_TIMEOUT_SECONDS`) in ms.
    pub metadata_timeout_ms: u64,
    /// `METADATA_ALLOW_HTTP`.
    pub allow_http: bool,
    /// `PUBLIC_BASE_URL`, without a trailing `/` (empty when unset).
    pub public_base_url: String,
}

/// Algolia's application and admin key (`ALGOLIA_APP_ID`, `ALGOLIA_HOST`, secret `ALGOLIA_ADMIN_KEY`).
#[derive(Debug, Clone)]
pub struct AlgoliaConfig {
    pub app_id: String,
    pub host: String,
    pub admin_key: Secret,
    /// `ALGOLIA_MAX_RECORD_BYTES`.
    pub max_record_bytes: usize,
}

impl Config {
    /// Reads and parses every variable and secret once.
    pub fn from_env(env: &Env) -> Self {
        Self::parse(&Vars::read(env))
    }

    /// Parses the values read.
    pub fn parse(v: &Vars) -> Self {
        let secret = |name: &str| v.get(name).map(|s| Secret(s.to_owned()));
        let ipfs = ipfs::parse(v);
        Self {
            relayer: RelayerConfig::parse(v).into(),
            chains: chains(v).into(),
            indexer: ipfs.clone().and_then(|ipfs| indexer(v, ipfs)).into(),
            ipfs: ipfs.into(),
            algolia: algolia(v).into(),
            limits: Limits {
                public: v.number("PUBLIC_RATE_LIMIT_PER_MINUTE").into(),
                lookup: v.number("LOOKUP_RATE_LIMIT_PER_MINUTE").into(),
                ipfs_miss: v.number("IPFS_MISS_RATE_LIMIT_PER_MINUTE").into(),
                upload_jwt: v.number("UPLOAD_JWT_RATE_LIMIT_PER_MINUTE").into(),
                ready: v.number("READY_RATE_LIMIT_PER_MINUTE").into(),
                admin_failures: v.number("ADMIN_FAILURES_PER_MINUTE").into(),
            },
            relayer_key: secret("RELAYER_PRIVATE_KEY"),
            relayer_keys: secret("RELAYER_PRIVATE_KEYS"),
            admin_token: secret("ADMIN_TOKEN"),
            upload_jwt_secret: secret("UPLOAD_JWT_SECRET"),
            upload_jwt_issuers: v.list("UPLOAD_JWT_ISSUERS").into(),
            upload_jwt_skew: v.number("UPLOAD_JWT_SKEW_SECONDS").into(),
            max_fee_per_gas: v.number("MAX_FEE_PER_GAS").into(),
            tx_record_days: v.number("TX_RECORD_DAYS").into(),
            image_cache_max_bytes: v.number("IMAGE_CACHE_MAX_BYTES").into(),
            lookup_cache_seconds: v.number("LOOKUP_CACHE_SECONDS").into(),
            lookup_miss_seconds: v.number("LOOKUP_MISS_SECONDS").into(),
            min_relayer_balance: v.number("MIN_RELAYER_BALANCE").into(),
            webhook_allow_http: v.flag("WEBHOOK_ALLOW_HTTP").into(),
            webhook_timeout: v.number("WEBHOOK_TIMEOUT_SECONDS").into(),
            low_balance_alert: v
                .optional_number("LOW_BALANCE_ALERT_WEI")
                .and_then(|n| n.map_or_else(|| v.number("MIN_RELAYER_BALANCE"), Ok))
                .into(),
            ready_max_indexer_lag: v.number("READY_MAX_INDEXER_LAG").into(),
            indexer_interval: v.number("INDEXER_INTERVAL_SECONDS").into(),
            clock_offset: v.number("CLOCK_OFFSET_SECONDS").into(),
            panic_test_route: v.flag("PANIC_TEST_ROUTE").into(),
            analytics_log: v.flag("ANALYTICS_LOG").into(),
        }
    }

    /// The relayer's configuration.
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR`.
    pub fn relayer(&self) -> ApiResult<&RelayerConfig> {
        self.relayer.get()
    }

    /// Every chain this deployment serves, in the order configured (the first is the default of what has no
    /// chain).
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` for a malformed `CHAINS`, `CHAIN_ID`, `RPC_URL` or number var.
    pub fn chains(&self) -> ApiResult<&[ChainConfig]> {
        self.chains.get().map(Vec::as_slice)
    }

    /// The configured chain a path's `:chainId` names (decimal or hex): 400 `UNKNOWN_CHAIN` when it is malformed
    /// or not served here.
    ///
    /// # Errors
    /// 400 `UNKNOWN_CHAIN`; `CONFIGURATION_ERROR`.
    pub fn chain(&self, chain_id: &str) -> ApiResult<ChainConfig> {
        chain(self.chains()?, chain_id)
    }

    /// The index names of every served chain.
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR`.
    pub fn all_index_names(&self) -> ApiResult<Vec<String>> {
        Ok(self
            .chains()?
            .iter()
            .flat_map(|c| [c.profiles_index(), c.assets_index()])
            .collect())
    }

    /// The IPFS configuration.
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR`.
    pub fn ipfs(&self) -> ApiResult<&IpfsConfig> {
        self.ipfs.get()
    }

    /// Unix seconds now, as metering sees it (`CLOCK_OFFSET_SECONDS` lets tests move into the next month).
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` for a malformed `CLOCK_OFFSET_SECONDS`.
    pub fn now(&self) -> ApiResult<u64> {
        let real = crate::plumbing::now();
        Ok(real.saturating_add_signed(self.clock_offset.value()?))
    }
}

/// The relayer's configuration.
#[derive(Debug, Clone)]
pub struct RelayerConfig {
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
    /// A newly registered profile's monthly quota for its first `WARMUP_DAYS` (`WARMUP_GAS_QUOTA`; `None`: no
    /// warm-up): gas in seconds since registration.
    pub warmup: Option<(u64, u64)>,
    /// Largest LSP25 payload relayed by `/api/execute` (`MAX_EXECUTE_PAYLOAD_BYTES`).
    pub max_execute_payload_bytes: usize,
    /// How old an LSP15 quota signature's timestamp may be (`QUOTA_SIGNATURE_WINDOW_SECONDS`).
    pub quota_signature_window: u64,
    /// Seconds added to the clock for metering and signature windows (`CLOCK_OFFSET_SECONDS`, tests only).
    pub clock_offset: i64,
    /// How long a gas reservation holds when never settled nor released (`RESERVATION_TTL_SECONDS`).
    pub reservation_ttl: u64,
    /// The fair shares of the caps ([`crate::shares`]).
    pub shares: Shares,
    /// Size of RPC answers and gas of calls (`RPC_MAX_RESPONSE_BYTES`, `RPC_CALL_GAS_CAP`).
    pub rpc_bounds: RpcBounds,
    /// The code of the profiles this relayer serves: LUKSO's releases plus `UNIVERSAL_PROFILE_IMPLEMENTATIONS` /
    /// `KEY_MANAGER_IMPLEMENTATIONS` (see [`crate::genuine`]).
    pub accepted_code: Accepted,
    /// Secret `RELAYER_PRIVATE_KEY`, parsed when used ([`RelayerConfig::signers`]).
    pub relayer_key: Option<Secret>,
    /// Secret `RELAYER_PRIVATE_KEYS` (the signer pool), parsed when used ([`RelayerConfig::signers`]).
    pub relayer_keys: Option<Secret>,
}

/// The fair-share settings, applied by [`crate::shares`]: `FAIR_SHARE_PERCENT`, `KEY_SHARE_PERCENT`,
/// `TRUSTED_RESERVE_PERCENT`, `TRUSTED_API_KEYS`, `MAX_REGISTRATIONS_PER_KEY_PER_DAY`,
/// `MAX_REGISTRATIONS_PER_CLIENT_PER_DAY`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shares {
    /// A profile's, a controller's and a client address's part of a cap, in percent (1–100).
    pub fair_percent: u8,
    /// An untrusted API key's part of the daily ceiling, in percent (1–100).
    pub key_percent: u8,
    /// The part of the daily ceiling kept for trusted keys, in percent (0–99).
    pub trusted_reserve_percent: u8,
    /// The ids of the keys the operator trusts.
    pub trusted_keys: Vec<String>,
    /// New registrations per UTC day with one untrusted key.
    pub registrations_per_key: u64,
    /// New registrations per UTC day from one client address.
    pub registrations_per_client: u64,
}

impl Default for Shares {
    /// The documented defaults.
    fn default() -> Self {
        Self {
            fair_percent: 10,
            key_percent: 25,
            trusted_reserve_percent: 20,
            trusted_keys: Vec::new(),
            registrations_per_key: 500,
            registrations_per_client: 20,
        }
    }
}

/// The bounds of every RPC answer and call: `RPC_MAX_RESPONSE_BYTES`, `RPC_CALL_GAS_CAP` (`eth_call`) and
/// `MAX_TRANSACTION_GAS` (`eth_estimateGas`).
fn rpc_bounds(v: &Vars) -> ApiResult<RpcBounds> {
    Ok(RpcBounds {
        max_response_bytes: v.number("RPC_MAX_RESPONSE_BYTES")?,
        call_gas_cap: v.number("RPC_CALL_GAS_CAP")?,
        estimate_gas_cap: v.number("MAX_TRANSACTION_GAS")?,
    })
}

/// A percentage from `min` to `max`.
fn percent(v: &Vars, name: &str, (min, max): (u8, u8)) -> ApiResult<u8> {
    v.number::<u8>(name)
        .ok()
        .filter(|p| (min..=max).contains(p))
        .ok_or_else(|| ApiError::config(format!("{name} must be a whole percentage from {min} to {max}")))
}

/// The fair shares: `FAIR_SHARE_PERCENT`, `KEY_SHARE_PERCENT`, `TRUSTED_RESERVE_PERCENT`, `TRUSTED_API_KEYS`,
/// `MAX_REGISTRATIONS_PER_KEY_PER_DAY`, `MAX_REGISTRATIONS_PER_CLIENT_PER_DAY`.
fn shares(v: &Vars) -> ApiResult<Shares> {
    Ok(Shares {
        fair_percent: percent(v, "FAIR_SHARE_PERCENT", (1, 100))?,
        key_percent: percent(v, "KEY_SHARE_PERCENT", (1, 100))?,
        trusted_reserve_percent: percent(v, "TRUSTED_RESERVE_PERCENT", (0, 99))?,
        trusted_keys: v.list("TRUSTED_API_KEYS")?,
        registrations_per_key: v.number("MAX_REGISTRATIONS_PER_KEY_PER_DAY")?,
        registrations_per_client: v.number("MAX_REGISTRATIONS_PER_CLIENT_PER_DAY")?,
    })
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

fn address(v: &Vars, name: &str, default: alloy_primitives::Address) -> ApiResult<alloy_primitives::Address> {
    match v.text(name) {
        None => Ok(default),
        Some(text) => {
            parse_address(name, text).map_err(|_| ApiError::config(format!("{name} must be an address")))
        }
    }
}

/// `CHAIN_ID`, `None` when unset.
fn chain_id(v: &Vars) -> ApiResult<Option<u64>> {
    v.text("CHAIN_ID")
        .map(|id| {
            parse_chain_id(id)
                .map_err(|_| ApiError::config("CHAIN_ID must be a chain id (decimal or 0x-hex)"))
        })
        .transpose()
}

impl RelayerConfig {
    /// Parses the relayer's vars.
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` for a missing `CHAIN_ID` / `RPC_URL` or a malformed value.
    pub fn parse(v: &Vars) -> ApiResult<Self> {
        let chain_id = chain_id(v)?.ok_or_else(|| ApiError::config("CHAIN_ID is not set"))?;
        let rpc_url = v
            .get("RPC_URL")
            .ok_or_else(|| ApiError::config("RPC_URL is not set"))?
            .to_owned();
        if !(rpc_url.starts_with("http://") || rpc_url.starts_with("https://")) {
            return Err(ApiError::config("RPC_URL must be an http(s) URL"));
        }
        let d = Lsp23Constants::V0_14_0;
        Ok(Self {
            chain_id,
            rpc_url,
            constants: Lsp23Constants {
                factory: address(v, "LSP23_FACTORY", d.factory)?,
                universal_profile_init: address(v, "UNIVERSAL_PROFILE_INIT", d.universal_profile_init)?,
                key_manager_init: address(v, "KEY_MANAGER_INIT", d.key_manager_init)?,
                post_deployment_module: address(v, "POST_DEPLOYMENT_MODULE", d.post_deployment_module)?,
                universal_receiver_delegate: address(
                    v,
                    "UNIVERSAL_RECEIVER_DELEGATE",
                    d.universal_receiver_delegate,
                )?,
            },
            deploy_wait_ms: v.number::<u64>("DEPLOY_WAIT_SECONDS")? * 1000,
            replace_after_ms: v.number::<u64>("REPLACE_AFTER_SECONDS")? * 1000,
            rpc_timeout_ms: v.number::<u64>("RPC_TIMEOUT_SECONDS")? * 1000,
            max_body_bytes: v.number("MAX_BODY_BYTES")?,
            default_rate_limit: v.number("DEFAULT_RATE_LIMIT_PER_MINUTE")?,
            max_deploy_data_bytes: v.number("MAX_DEPLOY_DATA_BYTES")?,
            max_transaction_gas: v.number("MAX_TRANSACTION_GAS")?,
            max_gas_per_day: v.number("MAX_GAS_PER_DAY")?,
            default_key_gas_budget: v.number("DEFAULT_KEY_GAS_BUDGET_PER_MONTH")?,
            monthly_gas_quota: v.number("MONTHLY_GAS_QUOTA")?,
            warmup: v
                .optional_number::<u64>("WARMUP_GAS_QUOTA")?
                .map(|gas| Ok::<_, ApiError>((gas, v.number::<u64>("WARMUP_DAYS")?.saturating_mul(86_400))))
                .transpose()?,
            max_execute_payload_bytes: v.number("MAX_EXECUTE_PAYLOAD_BYTES")?,
            quota_signature_window: v.number("QUOTA_SIGNATURE_WINDOW_SECONDS")?,
            clock_offset: v.number("CLOCK_OFFSET_SECONDS")?,
            reservation_ttl: v.number("RESERVATION_TTL_SECONDS")?,
            shares: shares(v)?,
            rpc_bounds: rpc_bounds(v)?,
            accepted_code: Accepted {
                universal_profiles: code_hashes(
                    "UNIVERSAL_PROFILE_IMPLEMENTATIONS",
                    v.get("UNIVERSAL_PROFILE_IMPLEMENTATIONS"),
                )?,
                key_managers: code_hashes(
                    "KEY_MANAGER_IMPLEMENTATIONS",
                    v.get("KEY_MANAGER_IMPLEMENTATIONS"),
                )?,
            },
            relayer_key: v.get("RELAYER_PRIVATE_KEY").map(|s| Secret(s.to_owned())),
            relayer_keys: v.get("RELAYER_PRIVATE_KEYS").map(|s| Secret(s.to_owned())),
        })
    }

    /// The monthly quota of a profile registered at `registered_at` (unix seconds; 0 when unknown): the
    /// warm-up quota (`WARMUP_GAS_QUOTA`, when lower) during its first `WARMUP_DAYS`, else `MONTHLY_GAS_QUOTA`.
    pub const fn profile_quota(&self, registered_at: u64, now: u64) -> u64 {
        match self.warmup {
            Some((gas, seconds))
                if registered_at > 0
                    && now.saturating_sub(registered_at) < seconds
                    && gas < self.monthly_gas_quota =>
            {
                gas
            }
            _ => self.monthly_gas_quota,
        }
    }

    /// Unix seconds now, as metering sees it (`CLOCK_OFFSET_SECONDS` lets tests move into the next month).
    pub fn now(&self) -> u64 {
        let real = crate::plumbing::now();
        real.saturating_add_signed(self.clock_offset)
    }

    /// The RPC client.
    pub fn rpc(&self) -> Rpc {
        Rpc::new(&self.rpc_url, self.rpc_timeout_ms, self.rpc_bounds)
    }

    /// The first signer of the pool ([`Self::signers`]).
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` when no key is set or one is not a valid secp256k1 key.
    pub fn signer(&self) -> ApiResult<Signer> {
        self.signers()?
            .into_iter()
            .next()
            .map(|s| s.signer)
            .ok_or_else(|| ApiError::config("no relayer key is set"))
    }

    /// The signer pool: the key of `RELAYER_PRIVATE_KEY` (first, marked `legacy`: it keeps the Relayer object of
    /// the single-key deployments) then those of `RELAYER_PRIVATE_KEYS`, each address once.
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` naming the secret (and the position of a malformed key, never its value) when neither
    /// is set, a key is malformed, or there are more than [`MAX_SIGNERS`].
    pub fn signers(&self) -> ApiResult<Vec<PoolSigner>> {
        parse_signer_keys(
            self.relayer_key.as_ref().map(Secret::expose),
            self.relayer_keys.as_ref().map(Secret::expose),
        )
        .map_err(ApiError::config)
    }
}

/// Most keys in the pool: every request asks each signer's Relayer object where it goes.
pub const MAX_SIGNERS: usize = 16;

/// One signer of the pool.
#[derive(Debug, Clone)]
pub struct PoolSigner {
    /// The key.
    pub signer: Signer,
    /// Whether it is the key of `RELAYER_PRIVATE_KEY` (its lane is the Relayer object named by the chain alone,
    /// as before the pool).
    pub legacy: bool,
}

/// Parses the pool's keys: `single` (`RELAYER_PRIVATE_KEY`) and `list` (`RELAYER_PRIVATE_KEYS`: keys separated
/// by commas, each 32-byte hex with or without `0x`, blanks around them ignored, empty entries skipped). A key in
/// both counts once (as the legacy one). Errors name the secret and the position, never a key.
///
/// # Errors
/// When neither gives a key, a key is malformed, or there are more than [`MAX_SIGNERS`].
pub fn parse_signer_keys(single: Option<&str>, list: Option<&str>) -> Result<Vec<PoolSigner>, String> {
    let mut pool: Vec<PoolSigner> = Vec::new();
    let mut add = |signer: Signer, legacy: bool| {
        if !pool.iter().any(|p| p.signer.address() == signer.address()) {
            pool.push(PoolSigner { signer, legacy });
        }
    };
    if let Some(key) = single.map(str::trim).filter(|k| !k.is_empty()) {
        let signer = Signer::from_hex(key)
            .ok_or_else(|| "RELAYER_PRIVATE_KEY is not a valid private key".to_owned())?;
        add(signer, true);
    }
    if let Some(list) = list {
        for (i, key) in list.split(',').map(str::trim).enumerate() {
            if key.is_empty() {
                continue;
            }
            let signer = Signer::from_hex(key).ok_or_else(|| {
                format!(
                    "RELAYER_PRIVATE_KEYS: key {} is not a valid private key (comma-separated 32-byte hex keys)",
                    i + 1
                )
            })?;
            add(signer, false);
        }
    }
    if pool.is_empty() {
        return Err("neither RELAYER_PRIVATE_KEY nor RELAYER_PRIVATE_KEYS is set".to_owned());
    }
    if pool.len() > MAX_SIGNERS {
        return Err(format!(
            "RELAYER_PRIVATE_KEYS holds {} keys; at most {MAX_SIGNERS}",
            pool.len()
        ));
    }
    Ok(pool)
}

/// The chains of `CHAINS`, or the relayer's.
fn chains(v: &Vars) -> ApiResult<Vec<ChainConfig>> {
    let defaults = ChainDefaults {
        relayer_chain: chain_id(v)?,
        relayer_rpc: v.text("RPC_URL").map(str::to_owned),
        index_prefix: v.number::<String>("INDEX_PREFIX")?,
        rpc_timeout_ms: v.number::<u64>("RPC_TIMEOUT_SECONDS")?.saturating_mul(1000),
        rpc_bounds: rpc_bounds(v)?,
        start_block: v.number("INDEXER_START_BLOCK")?,
        confirmations: v.optional_number("INDEXER_CONFIRMATIONS")?,
        max_blocks: v.number("INDEXER_MAX_BLOCKS")?,
    };
    let value = v
        .get("CHAINS")
        .map(|text| {
            serde_json::from_str(text).map_err(|_| ApiError::config("CHAINS must be a JSON array of chains"))
        })
        .transpose()?;
    parse_chains(value.as_ref(), &defaults).map_err(ApiError::config)
}

fn chain(chains: &[ChainConfig], chain_id: &str) -> ApiResult<ChainConfig> {
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

fn indexer(v: &Vars, mut ipfs: IpfsConfig) -> ApiResult<IndexerConfig> {
    ipfs.max_bytes = ipfs.max_bytes.min(v.number("METADATA_MAX_BYTES")?);
    let metadata_timeout_ms = v
        .optional_number::<u64>("METADATA_TIMEOUT_SECONDS")?
        .map_or(ipfs.timeout_ms, |s| s * 1000);
    Ok(IndexerConfig {
        max_window: v.number("INDEXER_MAX_WINDOW")?,
        target_logs: v.number("INDEXER_TARGET_LOGS")?,
        retry_seconds: v.number("INDEXER_RETRY_SECONDS")?,
        max_seconds: v.number("INDEXER_MAX_SECONDS")?,
        max_subrequests: v.number("INDEXER_MAX_SUBREQUESTS")?,
        max_rows: v.number("INDEXER_MAX_ROWS")?,
        concurrency: v.number::<usize>("INDEXER_CONCURRENCY")?.clamp(1, 32),
        ipfs,
        metadata_timeout_ms,
        allow_http: v.flag("METADATA_ALLOW_HTTP")?,
        public_base_url: v
            .text("PUBLIC_BASE_URL")
            .map(|u| u.trim_end_matches('/').to_owned())
            .unwrap_or_default(),
    })
}

/// Configured when `ALGOLIA_APP_ID` and the `ALGOLIA_ADMIN_KEY` secret are set. `ALGOLIA_HOST` overrides
/// `https://<app id>.algolia.net` (tests point it at a local server).
fn algolia(v: &Vars) -> ApiResult<Option<AlgoliaConfig>> {
    let Some(app_id) = v.get("ALGOLIA_APP_ID") else {
        return Ok(None);
    };
    if v.get("PUBLIC_BASE_URL").is_none() {
        // records carry image URLs on this deployment: Algolia's clients put them in `<img src>` as they are
        return Err(ApiError::config(
            "ALGOLIA_APP_ID is set but PUBLIC_BASE_URL is not: records pushed to Algolia need absolute image URLs",
        ));
    }
    let admin_key = v
        .get("ALGOLIA_ADMIN_KEY")
        .map(|s| Secret(s.to_owned()))
        .ok_or_else(|| ApiError::config("ALGOLIA_APP_ID is set but the ALGOLIA_ADMIN_KEY secret is not"))?;
    Ok(Some(AlgoliaConfig {
        host: v
            .get("ALGOLIA_HOST")
            .map_or_else(|| format!("https://{app_id}.algolia.net"), str::to_owned),
        app_id: app_id.to_owned(),
        admin_key,
        max_record_bytes: v.number("ALGOLIA_MAX_RECORD_BYTES")?,
    }))
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

    #[test]
    fn a_malformed_variable_fails_only_what_reads_it() {
        let config = Config::parse(&Vars::of(&[
            ("CHAIN_ID", "42"),
            ("RPC_URL", "https://rpc.example"),
            ("IPFS_TIMEOUT_SECONDS", "soon"),
            ("LOOKUP_CACHE_SECONDS", "-1"),
            ("RELAYER_PRIVATE_KEY", "0x01"),
        ]));
        let relayer = config.relayer().unwrap();
        assert_eq!((relayer.chain_id, relayer.deploy_wait_ms), (42, 20_000));
        assert_eq!(config.chains().unwrap()[0].index_prefix, "dev_local");
        assert_eq!(
            config.ipfs().unwrap_err().message,
            "IPFS_TIMEOUT_SECONDS must be a number"
        );
        // the indexer fetches metadata with the IPFS settings: it fails with them
        assert_eq!(
            config.indexer.get().unwrap_err().message,
            "IPFS_TIMEOUT_SECONDS must be a number"
        );
        // no silent fallback to the default
        assert_eq!(
            config.lookup_cache_seconds.value().unwrap_err().message,
            "LOOKUP_CACHE_SECONDS must be a number"
        );
        assert_eq!(config.limits.lookup.value(), Ok(300));
        assert!(
            format!("{config:?}").contains("Secret(…)"),
            "secrets are not printed"
        );
        assert!(!format!("{config:?}").contains("0x01\""));
        assert_eq!(
            config.relayer().unwrap().signer().unwrap_err().code,
            "CONFIGURATION_ERROR"
        );
    }

    #[test]
    fn the_signer_pool_is_parsed_once_per_address_and_never_echoes_a_key() {
        let k1 = "0x0101010101010101010101010101010101010101010101010101010101010101";
        let k2 = "0202020202020202020202020202020202020202020202020202020202020202";
        let k3 = "0x0303030303030303030303030303030303030303030303030303030303030303";
        let addr = |k: &str| Signer::from_hex(k).unwrap().address();
        // the single key alone: a pool of one, the legacy lane
        let one = parse_signer_keys(Some(k1), None).unwrap();
        assert_eq!(one.len(), 1);
        assert!(one[0].legacy);
        assert_eq!(one[0].signer.address(), addr(k1));
        // a list with blanks, a trailing comma and a duplicate of the single key
        let list = format!(" {k2} ,{k1},, {k3},");
        let pool = parse_signer_keys(Some(k1), Some(&list)).unwrap();
        let got: Vec<_> = pool.iter().map(|p| (p.signer.address(), p.legacy)).collect();
        assert_eq!(got, vec![(addr(k1), true), (addr(k2), false), (addr(k3), false)]);
        // the list alone: no legacy lane
        let pool = parse_signer_keys(None, Some(&format!("{k2},{k2}"))).unwrap();
        assert_eq!(pool.len(), 1);
        assert!(!pool[0].legacy);
        // a malformed key is named by position, never echoed
        let err = parse_signer_keys(None, Some(&format!("{k2},0x1234abcd"))).unwrap_err();
        assert!(err.contains("key 2"), "{err}");
        assert!(!err.contains("1234abcd") && !err.contains(&k2[4..]), "{err}");
        assert!(parse_signer_keys(Some("0x00"), None).is_err());
        assert!(parse_signer_keys(None, Some(" , ")).is_err());
        assert!(parse_signer_keys(None, None).is_err());
        // bounded
        let many: Vec<String> = (1..=17u8).map(|b| format!("{b:02x}").repeat(32)).collect();
        let err = parse_signer_keys(None, Some(&many.join(","))).unwrap_err();
        assert!(err.contains("at most 16"), "{err}");
        assert_eq!(
            parse_signer_keys(None, Some(&many[..16].join(",")))
                .unwrap()
                .len(),
            16
        );
        // through the configuration: the pool, the first signer
        let config = RelayerConfig::parse(&Vars::of(&[
            ("CHAIN_ID", "42"),
            ("RPC_URL", "https://rpc.example"),
            ("RELAYER_PRIVATE_KEYS", &format!("{k3},{k2}")),
        ]))
        .unwrap();
        assert_eq!(config.signer().unwrap().address(), addr(k3));
        assert_eq!(config.signers().unwrap().len(), 2);
        assert!(!format!("{config:?}").contains(&k3[4..]));
    }

    #[test]
    fn fair_shares_and_the_warm_up_quota() {
        fn parse(extra: &[(&'static str, &'static str)]) -> ApiResult<RelayerConfig> {
            let mut vars = vec![("CHAIN_ID", "42"), ("RPC_URL", "https://rpc.example")];
            vars.extend_from_slice(extra);
            RelayerConfig::parse(&Vars::of(&vars))
        }
        let defaults = parse(&[]).unwrap();
        assert_eq!(defaults.shares, Shares::default());
        assert_eq!(defaults.warmup, None);
        assert_eq!(defaults.profile_quota(1_000, 1_000), 20_000_000);
        let set = parse(&[
            ("FAIR_SHARE_PERCENT", "5"),
            ("TRUSTED_API_KEYS", "a, b"),
            ("TRUSTED_RESERVE_PERCENT", "0"),
        ])
        .unwrap();
        assert_eq!(
            (set.shares.fair_percent, set.shares.trusted_keys),
            (5, vec!["a".to_owned(), "b".to_owned()])
        );
        for (name, bad) in [
            ("FAIR_SHARE_PERCENT", "0"),
            ("FAIR_SHARE_PERCENT", "101"),
            ("KEY_SHARE_PERCENT", "x"),
            ("TRUSTED_RESERVE_PERCENT", "100"),
        ] {
            let err = parse(&[(name, bad)]).unwrap_err();
            assert!(err.message.starts_with(name), "{}", err.message);
        }
        // the warm-up: lower for WARMUP_DAYS after registration, never higher than the monthly quota
        let warm = parse(&[("WARMUP_GAS_QUOTA", "500000"), ("WARMUP_DAYS", "2")]).unwrap();
        let day = 86_400;
        assert_eq!(warm.profile_quota(10 * day, 10 * day), 500_000);
        assert_eq!(warm.profile_quota(10 * day, 12 * day - 1), 500_000);
        assert_eq!(warm.profile_quota(10 * day, 12 * day), 20_000_000);
        // a registration time not known (0), or a clock behind it
        assert_eq!(warm.profile_quota(0, day), 20_000_000);
        assert_eq!(warm.profile_quota(10 * day, 9 * day), 500_000);
        let high = parse(&[("WARMUP_GAS_QUOTA", "90000000")]).unwrap();
        assert_eq!(high.profile_quota(day, day), 20_000_000);
        assert!(parse(&[("WARMUP_GAS_QUOTA", "lots")]).is_err());
    }

    #[test]
    fn without_the_relayer_vars_other_parts_still_parse() {
        let config = Config::parse(&Vars::of(&[(
            "CHAINS",
            r#"[{"chainId":4201,"rpcUrl":"https://rpc.example","indexPrefix":"t"}]"#,
        )]));
        assert_eq!(config.relayer().unwrap_err().message, "CHAIN_ID is not set");
        assert_eq!(config.chain("0x1069").unwrap().index_prefix, "t");
        assert_eq!(config.chain("42").unwrap_err().code, "UNKNOWN_CHAIN");
        assert_eq!(
            config.all_index_names().unwrap(),
            ["t_universal_profiles", "t_assets"]
        );
        assert_eq!(config.ipfs().unwrap().timeout_ms, 15_000);
        let indexer = config.indexer.get().unwrap();
        assert_eq!(
            (indexer.metadata_timeout_ms, indexer.ipfs.max_bytes),
            (15_000, 2 * 1024 * 1024)
        );
        assert!(config.algolia.get().unwrap().is_none());
    }
}
