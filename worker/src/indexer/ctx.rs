//! What a run works with: its budget (time, subrequests, rows), its chain, RPC client, IPFS and metadata limits.

use std::cell::Cell;

use worker::Env;

use crate::{
    config::{AlgoliaConfig, ChainConfig, Config, IndexerConfig, IpfsConfig, Setting},
    error::ApiResult,
    rpc::Rpc,
};

/// What one run may spend; checked before each chunk of work.
#[derive(Debug)]
pub(crate) struct Budget {
    deadline_ms: u64,
    max_subrequests: u32,
    pub(crate) subrequests: Cell<u32>,
    max_rows: u32,
    rows: Cell<u32>,
}

impl Budget {
    pub(crate) fn unlimited() -> Self {
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
    pub(crate) fn share(
        settings: &IndexerConfig,
        deadline_ms: u64,
        subrequests: u32,
        shares: u32,
    ) -> ApiResult<Self> {
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

    pub(crate) fn add_rows(&self, n: u32) {
        self.rows.set(self.rows.get().saturating_add(n));
    }

    /// Why no more work may start (`None` while `needed` more subrequests fit).
    pub(crate) fn exhausted(&self, needed: u32) -> Option<&'static str> {
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
    pub(crate) fn left(&self) -> u32 {
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

pub(crate) use crate::plumbing::{now, now_ms};

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        env: &'a Env,
        settings: &'a Config,
        config: &ChainConfig,
        budget: Budget,
    ) -> ApiResult<Self> {
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
