//! The indexer: follows the chain from a checkpoint (D1), `INDEXER_CONFIRMATIONS` blocks behind the head.
//! Candidates come from logs — LSP23 `DeployedERC1167Proxies` (profiles), ERC725Y `DataChanged` (profiles and
//! assets, including their creation) and LSP7/LSP8 `Transfer` (assets and LSP8 token ids) — read with adaptive
//! `eth_getLogs` windows ([`discovery`]). Each candidate is classified by ERC165 and its data read in one JSON-RPC
//! batch ([`chain`]), its metadata fetched with bounded parallelism ([`metadata`]), and written ([`writer`]).
//!
//! Nothing one contract does can stop the indexer: a contract whose calls revert, time out, answer nothing or
//! garbage, or that claims every interface, is recorded in `unindexable` and skipped. Work per run is bounded
//! (`INDEXER_MAX_SECONDS`, `INDEXER_MAX_SUBREQUESTS`, `INDEXER_MAX_ROWS`); the cursor (block, item within the block)
//! is written with every chunk of records, so a run that stops or dies half-way loses nothing already written and
//! the next run continues where it stopped.

mod answers;
mod caps;
mod chain;
mod discovery;
mod metadata;
mod records;
pub(crate) mod writer;

use std::cell::Cell;

use alloy_primitives::{Address, B256};
use profile_relayer::api::records::Refusal;
use worker::{Date, Env};

pub use self::{answers::Kind, writer::checkpoint};
use crate::{
    config::{AlgoliaConfig, ChainConfig, Config, IndexerConfig, Setting},
    error::{ApiError, ApiResult, Code},
    ipfs::IpfsConfig,
    rpc::Rpc,
};
/// The result of one run.
pub use profile_relayer::api::admin::RunStats;

/// What one run may spend; checked before each chunk of work.
#[derive(Debug)]
pub(crate) struct Budget {
    deadline_ms: u64,
    max_subrequests: u32,
    subrequests: Cell<u32>,
    max_rows: u32,
    rows: Cell<u32>,
}

impl Budget {
    fn unlimited() -> Self {
        Self {
            deadline_ms: u64::MAX,
            max_subrequests: u32::MAX,
            subrequests: Cell::new(0),
            max_rows: u32::MAX,
            rows: Cell::new(0),
        }
    }

    /// A run's share of the invocation's budget: `INDEXER_MAX_SECONDS` (ending at `deadline_ms`),
    /// `INDEXER_MAX_SUBREQUESTS` and `INDEXER_MAX_ROWS` divided by `shares`.
    fn share(settings: &IndexerConfig, deadline_ms: u64, subrequests: u32, shares: u32) -> ApiResult<Self> {
        let shares = shares.max(1);
        let time_left = deadline_ms.saturating_sub(now_ms());
        Ok(Self {
            deadline_ms: now_ms().saturating_add(time_left / u64::from(shares)),
            max_subrequests: subrequests / shares,
            subrequests: Cell::new(0),
            max_rows: settings.max_rows / shares,
            rows: Cell::new(0),
        })
    }

    /// Counts `n` subrequests.
    pub(crate) fn spend(&self, n: u32) {
        self.subrequests.set(self.subrequests.get().saturating_add(n));
    }

    fn add_rows(&self, n: u32) {
        self.rows.set(self.rows.get().saturating_add(n));
    }

    /// Why no more work may start (`None` while `needed` more subrequests fit).
    fn exhausted(&self, needed: u32) -> Option<&'static str> {
        if now_ms() >= self.deadline_ms {
            Some("time")
        } else if self.subrequests.get().saturating_add(needed) > self.max_subrequests {
            Some("subrequests")
        } else if self.rows.get() >= self.max_rows {
            Some("rows")
        } else {
            None
        }
    }

    /// Whether `n` more subrequests fit, in time (what an item-wise write checks; rows are not counted then).
    pub(crate) fn can_spend(&self, n: u32) -> bool {
        now_ms() < self.deadline_ms && self.subrequests.get().saturating_add(n) <= self.max_subrequests
    }

    /// Subrequests still available.
    fn left(&self) -> u32 {
        self.max_subrequests.saturating_sub(self.subrequests.get())
    }
}

/// Everything a run needs.
pub(crate) struct Ctx<'a> {
    pub(crate) env: &'a Env,
    /// The indexer's vars (`INDEXER_*`, `METADATA_*`).
    pub(crate) settings: &'a IndexerConfig,
    /// Algolia, when configured.
    pub(crate) algolia: &'a Setting<Option<AlgoliaConfig>>,
    /// Whether plain `http://` metadata URLs are fetched (`METADATA_ALLOW_HTTP`, local development only).
    pub(crate) allow_http: bool,
    /// The chain indexed.
    pub(crate) config: ChainConfig,
    /// IPFS configuration with `max_bytes` lowered to `METADATA_MAX_BYTES`.
    pub(crate) ipfs: IpfsConfig,
    /// Timeout of one metadata fetch, redirects and body included.
    pub(crate) metadata_timeout_ms: u64,
    pub(crate) rpc: Rpc,
    pub(crate) profiles: String,
    pub(crate) assets: String,
    /// `PUBLIC_BASE_URL`: image URLs in records are made absolute with it (relative when unset).
    pub(crate) public_base_url: String,
    pub(crate) budget: Budget,
    /// Candidates processed at the same time.
    pub(crate) concurrency: usize,
}

pub(crate) fn now_ms() -> u64 {
    Date::now().as_millis()
}

pub(crate) fn now() -> u64 {
    now_ms() / 1000
}

impl<'a> Ctx<'a> {
    fn new(env: &'a Env, settings: &'a Config, config: &ChainConfig, budget: Budget) -> ApiResult<Self> {
        let algolia = &settings.algolia;
        let settings = settings.indexer.get()?;
        let config = config.clone();
        let rpc = config.rpc();
        let (profiles, assets) = config.index_names();
        Ok(Self {
            allow_http: settings.allow_http,
            env,
            settings,
            algolia,
            ipfs: settings.ipfs.clone(),
            metadata_timeout_ms: settings.metadata_timeout_ms,
            config,
            rpc,
            profiles,
            assets,
            public_base_url: settings.public_base_url.clone(),
            budget,
            concurrency: settings.concurrency,
        })
    }
}

/// What reading an address on demand found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Indexed {
    /// A profile or asset, indexed now.
    Lsp(Kind),
    /// Neither a profile nor an asset (`contract`: the address has code). Nothing is written.
    Nothing { contract: bool },
    /// A contract that misbehaved when read, and how. Nothing is written.
    Refused(Refusal),
}

/// What reading one token on demand found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenIndexed {
    /// The token exists and is indexed now.
    Indexed,
    /// The collection has no such token (`tokenOwnerOf` reverts). Nothing is written.
    Missing,
    /// The token's data misbehaved when read, and how. Nothing is written.
    Refused(Refusal),
}

/// A contract's misbehaviour as an answer; a failure that may pass (timeout, node error) is an error instead, so
/// that it is neither answered nor remembered as the contract's doing.
fn refusal(error: &answers::ItemError) -> ApiResult<Refusal> {
    if error.retryable {
        return Err(ApiError::new(
            Code::RpcError,
            format!("reading the contract failed ({}): {}", error.code, error.message),
        ));
    }
    Ok(Refusal {
        code: error.code.clone(),
        message: error.message.clone(),
    })
}

/// Reads the address from chain and indexes it now (the lookup route's read-through). A contract that misbehaves
/// is [`Indexed::Refused`] (nothing is written then).
pub async fn index_now(
    env: &Env,
    config: &Config,
    chain: &ChainConfig,
    address: Address,
) -> ApiResult<Indexed> {
    let ctx = Ctx::new(env, config, chain, Budget::unlimited())?;
    let head = ctx.rpc.block_number().await?;
    let outcome = writer::process_address(&ctx, address, head).await?;
    let kind = outcome.kind();
    match &outcome {
        writer::Outcome::Error { error, .. } => return Ok(Indexed::Refused(refusal(error)?)),
        writer::Outcome::NotIndexed { contract } => return Ok(Indexed::Nothing { contract: *contract }),
        _ => {}
    }
    if let Some((_, error)) = writer::write(&ctx, vec![outcome], None).await?.into_iter().next() {
        return Ok(Indexed::Refused(Refusal {
            code: error.code,
            message: error.message,
        }));
    }
    Ok(kind.map_or(Indexed::Nothing { contract: true }, Indexed::Lsp))
}

/// Indexes one existing token now (read-through of the token route).
pub async fn index_token_now(
    env: &Env,
    config: &Config,
    chain: &ChainConfig,
    address: Address,
    token_id: B256,
) -> ApiResult<TokenIndexed> {
    let ctx = Ctx::new(env, config, chain, Budget::unlimited())?;
    let head = ctx.rpc.block_number().await?;
    match writer::process_token(&ctx, address, token_id, head).await? {
        writer::Outcome::Skip => Ok(TokenIndexed::Missing),
        writer::Outcome::Error { error, .. } => Ok(TokenIndexed::Refused(refusal(&error)?)),
        outcome => match writer::write(&ctx, vec![outcome], None).await?.into_iter().next() {
            Some((_, error)) => Ok(TokenIndexed::Refused(Refusal {
                code: error.code,
                message: error.message,
            })),
            None => Ok(TokenIndexed::Indexed),
        },
    }
}

/// The recorded error of an address or token on a chain (`unindexable`).
pub async fn recorded_error(env: &Env, chain_id: u64, object_id: &str) -> ApiResult<Option<Refusal>> {
    Ok(writer::recorded_error(env, chain_id, object_id)
        .await?
        .map(|(code, message)| Refusal { code, message }))
}

/// Number of recorded unindexable candidates of a chain.
pub async fn error_count(env: &Env, chain_id: u64) -> ApiResult<u64> {
    writer::error_count(env, chain_id).await
}

/// The invocation's budget (`INDEXER_MAX_SECONDS`, `INDEXER_MAX_SUBREQUESTS`), shared by the chains it indexes.
fn invocation_budget(settings: &IndexerConfig) -> (u64, u32) {
    (
        now_ms().saturating_add(settings.max_seconds.saturating_mul(1000)),
        settings.max_subrequests,
    )
}

/// One indexer run of one chain with the whole invocation budget: due retries, then block windows until the
/// head or the budget.
pub async fn run(env: &Env, config: &Config, chain: &ChainConfig) -> ApiResult<RunStats> {
    let settings = config.indexer.get()?;
    let (deadline, subrequests) = invocation_budget(settings);
    run_with(
        env,
        config,
        chain,
        Budget::share(settings, deadline, subrequests, 1)?,
    )
    .await
}

/// One run of every configured chain (the cron), in order, as `(chain id, result)`: each chain gets an equal share
/// of what the chains before it left of the invocation's budget, and one chain failing (its node down, …) does not
/// stop the others.
///
/// # Errors
/// `CONFIGURATION_ERROR` only: a chain's own failure is its result.
pub async fn run_all(env: &Env, config: &Config) -> ApiResult<Vec<(u64, ApiResult<RunStats>)>> {
    let chains = config.chains()?;
    let settings = config.indexer.get()?;
    let (deadline, mut subrequests) = invocation_budget(settings);
    let mut runs = Vec::with_capacity(chains.len());
    let count = chains.len();
    for (i, chain) in chains.iter().enumerate() {
        let shares = u32::try_from(count.saturating_sub(i)).unwrap_or(u32::MAX).max(1);
        let budget = Budget::share(settings, deadline, subrequests, shares)?;
        let result = run_with(env, config, chain, budget).await;
        subrequests = subrequests.saturating_sub(match &result {
            Ok(stats) => stats.subrequests,
            // a failed run spent an unknown part of its share: count all of it
            Err(_) => subrequests / shares,
        });
        runs.push((chain.chain_id, result));
    }
    Ok(runs)
}

async fn run_with(env: &Env, config: &Config, chain: &ChainConfig, budget: Budget) -> ApiResult<RunStats> {
    let ctx = Ctx::new(env, config, chain, budget)?;
    ctx.budget.spend(1);
    let head = ctx.rpc.block_number().await?;
    let mut stats = RunStats {
        chain_id: chain.chain_id,
        head_block: head,
        ..RunStats::default()
    };
    writer::retries(&ctx, head, &mut stats).await?;
    let result = discovery::follow(&ctx, head, &mut stats).await;
    stats.subrequests = ctx.budget.subrequests.get();
    result.map(|()| stats)
}
