//! The indexer's clock: one Durable Object per chain (`INDEXER`, named `chain-<id>`) runs every indexer run of its
//! chain, one at a time. Its alarm follows the chain every `INDEXER_INTERVAL_SECONDS`; the first request an isolate
//! serves starts the alarm when none is set, so a deployment — and the dev stack, which fires no cron — indexes
//! without anyone calling `/admin/indexer/run`. The cron runs every chain through its object too (with an interval
//! of 0 the cron alone follows the chains). The relayer reports the profile of every receipt it gets
//! (`touched`): an alarm due at once indexes those addresses, so a deployed profile or a relayed name change is
//! found in seconds.

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

use std::cell::Cell;

use alloy_primitives::Address;
use futures_util::lock::Mutex;
use profile_relayer::api::admin::RunStats;
use serde::{Deserialize, Serialize};
use worker::{Context, DurableObject, Env, Request, Response, Result, State, Stub, durable_object};

use crate::{
    config::{ChainConfig, Config},
    error::{ApiError, ApiResult},
    plumbing::call_do,
};

/// At most this many reported addresses wait for the next alarm; more are left to the chain's own run (they are
/// found from the chain's logs either way).
pub const MAX_TOUCHED: usize = 256;

const TOUCHED: &str = "touched";
const CHAIN: &str = "chainId";

/// What the indexer object is asked to do.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum ClockOp {
    /// Start the alarm unless one is set or the interval is 0 (an isolate's first request, the cron).
    Wake {
        /// The chain the object runs.
        chain_id: u64,
    },
    /// Index these addresses at the next alarm, due at once (the relayer, when a receipt is in).
    Touched {
        /// The chain the object runs.
        chain_id: u64,
        /// The profiles (or assets) a mined transaction touched.
        addresses: Vec<Address>,
    },
    /// One run now, answered with its statistics (`POST /admin/indexer/run`).
    Run {
        /// The chain the object runs.
        chain_id: u64,
    },
}

impl ClockOp {
    fn chain_id(&self) -> u64 {
        match self {
            Self::Wake { chain_id } | Self::Touched { chain_id, .. } | Self::Run { chain_id } => *chain_id,
        }
    }
}

fn stub(env: &Env, chain_id: u64) -> ApiResult<Stub> {
    Ok(env
        .durable_object("INDEXER")?
        .id_from_name(&format!("chain-{chain_id}"))?
        .get_stub()?)
}

/// One run of `chain` in its indexer object (serialized with the alarm's runs).
pub async fn run(env: &Env, chain: &ChainConfig) -> ApiResult<RunStats> {
    call_do(
        &stub(env, chain.chain_id)?,
        "/",
        &ClockOp::Run {
            chain_id: chain.chain_id,
        },
    )
    .await
}

/// Reports addresses a mined transaction touched: indexed by the chain's next alarm, at once. Nothing when the
/// chain is not one this deployment indexes.
pub async fn touched(env: &Env, config: &Config, chain_id: u64, addresses: Vec<Address>) -> ApiResult<()> {
    if !config.chains()?.iter().any(|c| c.chain_id == chain_id) {
        return Ok(());
    }
    let op = ClockOp::Touched { chain_id, addresses };
    call_do::<_, serde_json::Value>(&stub(env, chain_id)?, "/", &op)
        .await
        .map(drop)
}

/// Wakes every configured chain's indexer object (its alarm started unless one is set).
pub async fn wake_all(env: &Env, config: &Config) -> ApiResult<()> {
    for chain in config.chains()? {
        let op = ClockOp::Wake {
            chain_id: chain.chain_id,
        };
        call_do::<_, serde_json::Value>(&stub(env, chain.chain_id)?, "/", &op).await?;
    }
    Ok(())
}

thread_local! {
    static WOKEN: Cell<bool> = const { Cell::new(false) };
}

/// The first request an isolate serves wakes the indexer objects, after its answer (`wait_until`): a deployment
/// indexes from its first request on, and the dev stack — where no cron fires — exactly as production does.
pub fn wake_once(env: &Env, config: &Config, ctx: &Context) {
    if WOKEN.with(|w| w.replace(true)) {
        return;
    }
    let (env, config) = (env.clone(), config.clone());
    ctx.wait_until(async move {
        if let Err(e) = wake_all(&env, &config).await {
            worker::console_warn!("indexer wake: {} {}", e.code, e.message);
            WOKEN.with(|w| w.set(false));
        }
    });
}

/// The Durable Object.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct Indexer {
    state: State,
    env: Env,
    /// The configuration, parsed when the object is constructed (vars change only with a new deployment).
    config: Config,
    /// One run at a time: the alarm's and the admin route's.
    running: Mutex<()>,
}

impl DurableObject for Indexer {
    fn new(state: State, env: Env) -> Self {
        let config = Config::from_env(&env);
        crate::analytics::bind(&env, || config.analytics_log.value().unwrap_or(false));
        Self {
            state,
            config,
            env,
            running: Mutex::new(()),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let answer = match req.json::<ClockOp>().await {
            Ok(op) => self.apply(op).await,
            Err(e) => Err(ApiError::internal(e)),
        };
        Ok(answer
            .and_then(|a| Response::from_json(&a).map_err(ApiError::from))
            .unwrap_or_else(ApiError::into_response))
    }

    async fn alarm(&self) -> Result<Response> {
        let next = match self.tick().await {
            Ok(next) => next,
            Err(e) => {
                worker::console_warn!("indexer alarm: {} {}", e.code, e.message);
                // the chain's node may be down: try again, no sooner than the interval (at least a minute)
                Some(self.interval().unwrap_or(0).max(60))
            }
        };
        if let Some(seconds) = next {
            self.state
                .storage()
                .set_alarm(std::time::Duration::from_secs(seconds))
                .await?;
        }
        Response::ok("")
    }
}

impl Indexer {
    async fn apply(&self, op: ClockOp) -> ApiResult<serde_json::Value> {
        let storage = self.state.storage();
        storage.put(CHAIN, op.chain_id()).await?;
        match op {
            ClockOp::Wake { .. } => {
                if self.interval()? > 0 && storage.get_alarm().await?.is_none() {
                    storage.set_alarm(0).await?;
                }
                Ok(serde_json::json!({}))
            }
            ClockOp::Touched { addresses, .. } => {
                let mut waiting: Vec<Address> = storage.get(TOUCHED).await.ok().flatten().unwrap_or_default();
                for address in addresses {
                    if waiting.len() < MAX_TOUCHED && !waiting.contains(&address) {
                        waiting.push(address);
                    }
                }
                storage.put(TOUCHED, &waiting).await?;
                storage.set_alarm(0).await?;
                Ok(serde_json::json!({}))
            }
            ClockOp::Run { .. } => {
                let chain = self.chain().await?;
                let _run = self.running.lock().await;
                Ok(
                    serde_json::to_value(super::run(&self.env, &self.config, &chain).await?)
                        .map_err(ApiError::internal)?,
                )
            }
        }
    }

    async fn chain(&self) -> ApiResult<ChainConfig> {
        let chain_id: u64 = self
            .state
            .storage()
            .get(CHAIN)
            .await
            .ok()
            .flatten()
            .ok_or_else(|| ApiError::internal("indexer object without a chain"))?;
        self.config.chain(&chain_id.to_string())
    }

    fn interval(&self) -> ApiResult<u64> {
        self.config.indexer_interval.value()
    }

    /// The addresses reported since the last alarm, then the chain's run (unless the interval is 0); the seconds
    /// until the next alarm (`None`: none until woken or reported to).
    async fn tick(&self) -> ApiResult<Option<u64>> {
        let chain = self.chain().await?;
        let storage = self.state.storage();
        // reported addresses are indexed outside the run lock: one whose metadata hangs must not hold up the chain
        let waiting: Vec<Address> = storage.get(TOUCHED).await.ok().flatten().unwrap_or_default();
        if !waiting.is_empty() {
            storage.delete(TOUCHED).await?;
            for address in waiting {
                if let Err(e) = super::index_now(&self.env, &self.config, &chain, address).await {
                    // the chain's run finds it from its logs; a lookup reads it through
                    worker::console_warn!(
                        "indexing {address} on {}: {} {}",
                        chain.chain_id,
                        e.code,
                        e.message
                    );
                }
            }
        }
        let interval = self.interval()?;
        if interval > 0 {
            let _run = self.running.lock().await;
            let stats = super::run(&self.env, &self.config, &chain).await?;
            worker::console_log!(
                "{}",
                serde_json::json!({"event": "indexer.run", "chainId": chain.chain_id, "stats": stats})
            );
        }
        let reported_meanwhile = storage
            .get::<Vec<Address>>(TOUCHED)
            .await
            .ok()
            .flatten()
            .is_some_and(|w| !w.is_empty());
        Ok(if reported_meanwhile {
            Some(0)
        } else if interval > 0 {
            Some(interval)
        } else {
            None
        })
    }
}
