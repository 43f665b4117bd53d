//! The indexer: follows the chain from a checkpoint (D1), `INDEXER_CONFIRMATIONS` blocks behind the head.
//! Candidates come from logs — LSP23 `DeployedERC1167Proxies` (profiles), ERC725Y `DataChanged` (profiles and
//! assets, including their creation) and LSP7/LSP8 `Transfer` (assets and LSP8 token ids) — read with adaptive
//! `eth_getLogs` windows ([`discovery`]). Each candidate is classified by ERC165 and its data read in one JSON-RPC
//! batch ([`chain`]), its metadata fetched with bounded parallelism ([`metadata`]), and written ([`writer`]).
//!
//! Nothing one contract does can stop the indexer: a contract whose calls revert, time out, answer nothing or
//! garbage, or that claims every interface, is recorded in `index_errors` and skipped. Work per run is bounded
//! (`INDEXER_MAX_SECONDS`, `INDEXER_MAX_SUBREQUESTS`, `INDEXER_MAX_ROWS`); the cursor (block, item within the block)
//! is written with every chunk of records, so a run that stops or dies half-way loses nothing already written and
//! the next run continues where it stopped.

mod chain;
mod discovery;
mod metadata;
mod writer;

use std::cell::Cell;

use alloy_primitives::{Address, B256};
use serde::Serialize;
use worker::{Date, Env};

pub use self::{chain::Kind, writer::checkpoint};
use crate::{
    config::{Config, number, var},
    error::{ApiError, ApiResult, Code},
    ipfs::IpfsConfig,
    rpc::Rpc,
    search,
};

/// The result of one run.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStats {
    /// First block processed.
    pub from_block: u64,
    /// Last block completely processed (`fromBlock - 1` when nothing was completed).
    pub to_block: u64,
    /// The chain head.
    pub head_block: u64,
    /// Records written.
    pub indexed: u64,
    /// Candidates recorded as unindexable (`index_errors`).
    pub errors: u64,
    /// Retries processed.
    pub retried: u64,
    /// `eth_getLogs` windows read.
    pub windows: u64,
    /// The window size the next run starts with.
    pub window: u64,
    /// Subrequests spent (RPC requests, metadata fetches, D1 batches).
    pub subrequests: u32,
    /// Why the run stopped before the head, if it did (`time`, `subrequests`, `rows`).
    pub stopped: Option<&'static str>,
}

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

    fn from_env(env: &Env) -> ApiResult<Self> {
        Ok(Self {
            deadline_ms: now_ms().saturating_add(number::<u64>(env, "INDEXER_MAX_SECONDS", 40)? * 1000),
            max_subrequests: number(env, "INDEXER_MAX_SUBREQUESTS", 900)?,
            subrequests: Cell::new(0),
            max_rows: number(env, "INDEXER_MAX_ROWS", 2000)?,
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

    /// Subrequests still available.
    fn left(&self) -> u32 {
        self.max_subrequests.saturating_sub(self.subrequests.get())
    }
}

/// Everything a run needs.
pub(crate) struct Ctx<'a> {
    pub(crate) env: &'a Env,
    /// Whether plain `http://` metadata URLs are fetched (`METADATA_ALLOW_HTTP`, local development only).
    pub(crate) allow_http: bool,
    pub(crate) config: Config,
    /// IPFS configuration with `max_bytes` lowered to `METADATA_MAX_BYTES`.
    pub(crate) ipfs: IpfsConfig,
    /// Timeout of one metadata fetch, redirects and body included.
    pub(crate) metadata_timeout_ms: u64,
    pub(crate) rpc: Rpc,
    pub(crate) profiles: String,
    pub(crate) assets: String,
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
    fn new(env: &'a Env, budget: Budget) -> ApiResult<Self> {
        let config = Config::from_env(env)?;
        let rpc = config.rpc();
        let (profiles, assets) = search::index_names(env);
        let mut ipfs = IpfsConfig::from_env(env)?;
        let metadata_max = number::<usize>(env, "METADATA_MAX_BYTES", 2 * 1024 * 1024)?;
        ipfs.max_bytes = ipfs.max_bytes.min(metadata_max);
        let metadata_timeout_ms =
            number::<u64>(env, "METADATA_TIMEOUT_SECONDS", ipfs.timeout_ms / 1000)? * 1000;
        Ok(Self {
            allow_http: var(env, "METADATA_ALLOW_HTTP").is_some_and(|v| v.trim() == "true"),
            env,
            ipfs,
            metadata_timeout_ms,
            config,
            rpc,
            profiles,
            assets,
            budget,
            concurrency: number::<usize>(env, "INDEXER_CONCURRENCY", 6)?.clamp(1, 32),
        })
    }
}

/// Reads the address from chain and indexes it now (the lookup route's read-through). `Ok(None)` when it is
/// neither a profile nor an asset; `422 UNINDEXABLE_CONTRACT` when it misbehaves (nothing is written then).
pub async fn index_now(env: &Env, address: Address) -> ApiResult<Option<Kind>> {
    let ctx = Ctx::new(env, Budget::unlimited())?;
    let head = ctx.rpc.block_number().await?;
    let outcome = writer::process_address(&ctx, address, head).await?;
    let kind = outcome.kind();
    if let writer::Outcome::Error { error, .. } = &outcome {
        return Err(unindexable(&error.code, &error.message));
    }
    writer::write(&ctx, vec![outcome], None).await?;
    Ok(kind)
}

/// The answer for a contract the indexer refuses.
pub fn unindexable(code: &str, message: &str) -> ApiError {
    ApiError::new(
        Code::UnindexableContract,
        format!("the contract cannot be indexed ({code}): {message}"),
    )
}

/// Indexes one existing token now (read-through of the token route). `Ok(false)` when the collection has no such
/// token (`tokenOwnerOf` reverts): nothing is written then.
pub async fn index_token_now(env: &Env, address: Address, token_id: B256) -> ApiResult<bool> {
    let ctx = Ctx::new(env, Budget::unlimited())?;
    let head = ctx.rpc.block_number().await?;
    match writer::process_token(&ctx, address, token_id, head).await? {
        writer::Outcome::Skip => Ok(false),
        writer::Outcome::Error { error, .. } => Err(unindexable(&error.code, &error.message)),
        outcome => {
            writer::write(&ctx, vec![outcome], None).await?;
            Ok(true)
        }
    }
}

/// The recorded error of an address or token (`index_errors`), as `(code, message)`.
pub async fn recorded_error(env: &Env, object_id: &str) -> ApiResult<Option<(String, String)>> {
    writer::recorded_error(env, object_id).await
}

/// Number of recorded unindexable candidates.
pub async fn error_count(env: &Env) -> ApiResult<u64> {
    writer::error_count(env).await
}

/// One indexer run: due retries, then block windows until the head or the budget.
pub async fn run(env: &Env) -> ApiResult<RunStats> {
    let ctx = Ctx::new(env, Budget::from_env(env)?)?;
    ctx.budget.spend(1);
    let head = ctx.rpc.block_number().await?;
    let mut stats = RunStats {
        head_block: head,
        ..RunStats::default()
    };
    writer::retries(&ctx, head, &mut stats).await?;
    let result = discovery::follow(&ctx, head, &mut stats).await;
    stats.subrequests = ctx.budget.subrequests.get();
    result.map(|()| stats)
}
