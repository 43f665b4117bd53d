//! The `Relayer` Durable Object, one per signer of the pool and chain ([`lane_name`]; which one a request goes to
//! is [`pool`]'s choice). It is the only place that
//! - assigns nonces and sends transactions for its signer's key (the nonce lane): an async lock serializes
//!   nonce → sign → store → send, and every later change to a sent transaction (re-broadcast, fee bump, re-send);
//!   waiting for receipts happens outside the lock, so concurrent deploys pipeline,
//! - writes profile registrations and quota usage to KV (single writer: no lost updates).
//!
//! The lane is a SQLite table of the DO, one row per nonce: what the transaction is for ([`Job`]), its latest signed
//! bytes and every hash signed for that nonce. A transaction is stored before it is broadcast, so a crash between the
//! two is recovered by broadcasting the stored bytes. Each round (the deploy request while it waits, and an alarm
//! every 2 s while the lane is not empty) reads the chain and [`next_step`] decides: mined → finish the job; unknown to
//! the node with its nonce unused → broadcast the stored bytes again; nonce used by another transaction → dropped,
//! the job is sent again with a fresh nonce; not mined after `REPLACE_AFTER_SECONDS` → fees raised by at least 10%,
//! never above `MAX_FEE_PER_GAS` ([`bumped_fees_capped`]). The first time the lane is used after the DO is constructed
//! it is reconciled with the chain ([`plan_gaps`]): stored transactions the node lost are broadcast again and nonce
//! holes with nothing stored are filled with 0-value self-transfers, so later nonces can be mined.

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

mod confirm;
mod jobs;
mod lane;
mod manage;
mod model;
mod policy;
pub mod pool;
mod resign;
mod rounds;
mod send;
mod wait;

use std::cell::Cell;

use alloy_primitives::{Address, B256};
use futures_util::lock::Mutex;
use profile_relayer::api::TransactionStatus;
use profile_relayer::api::admin::{PendingKind, PendingTransaction};
use worker::{Date, DurableObject, Env, Request, Response, Result, State, durable_object};

use self::model::{Envelope, Job};
pub use self::model::{
    DeployJob, DeployOutcome, ExecuteJob, ExecuteOutcome, LaneList, LaneStatus, ManagedTx, RegisterJob,
    RegisterOutcome, RelayerOp, RouteAnswer,
};
use self::policy::ALARM_MS;
pub use self::policy::execute_id;
use crate::{
    config::{Config, RelayerConfig},
    error::{ApiError, ApiResult, Code},
    rpc::Rpc,
    signer::Signer,
    txlog,
};

/// The Durable Object.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct Relayer {
    state: State,
    env: Env,
    /// The configuration, parsed when the object is constructed (vars change only with a new deployment).
    config: Config,
    send_lock: Mutex<()>,
    /// The next nonce to assign; `None` until the lane is reconciled with the chain (after construction, and again
    /// after the node was unreachable: it may come back as another node).
    next_nonce: Cell<Option<u64>>,
    chain_checked: Cell<bool>,
    schema_ready: Cell<bool>,
    started: Cell<bool>,
    /// The signer of this lane, once known (from a request, or stored).
    signer: Cell<Option<Address>>,
}

/// The name of the `Relayer` object of a signer: the chain alone for the legacy key (`RELAYER_PRIVATE_KEY`, the
/// one object of the deployments before the pool, so its pending transactions carry on), else chain and address.
pub fn lane_name(chain_id: u64, signer: Address, legacy: bool) -> String {
    if legacy {
        format!("chain-{chain_id}")
    } else {
        format!("chain-{chain_id}-{signer:#x}")
    }
}

/// A typed client of one signer's `Relayer` object (its nonce lane).
#[derive(Debug)]
pub struct RelayerClient {
    stub: worker::Stub,
    signer: Address,
}

impl RelayerClient {
    /// The Relayer object of `signer` on `config`'s chain ([`lane_name`]).
    pub fn new(env: &Env, config: &RelayerConfig, signer: Address, legacy: bool) -> ApiResult<Self> {
        Ok(Self {
            stub: env
                .durable_object("RELAYER")?
                .id_from_name(&lane_name(config.chain_id, signer, legacy))?
                .get_stub()?,
            signer,
        })
    }

    /// The signer of this lane.
    pub const fn address(&self) -> Address {
        self.signer
    }

    async fn ask<T: serde::de::DeserializeOwned>(&self, op: &RelayerOp) -> ApiResult<T> {
        let envelope = Envelope {
            signer: self.signer,
            op: op.clone(),
        };
        crate::plumbing::call_do(&self.stub, "/", &envelope).await
    }

    /// Where a profile's work may go.
    pub async fn route(&self, profile: Address) -> ApiResult<RouteAnswer> {
        self.ask(&RelayerOp::Route { profile }).await
    }

    /// Drains the signer, or makes it active again.
    pub async fn drain(&self, draining: bool) -> ApiResult<LaneStatus> {
        self.ask(&RelayerOp::Drain { draining }).await
    }

    /// Cancels the pending transaction `hash`.
    pub async fn cancel(&self, hash: B256) -> ApiResult<ManagedTx> {
        self.ask(&RelayerOp::Cancel { hash }).await
    }

    /// Replaces the pending transaction `hash` with higher fees.
    pub async fn replace(&self, hash: B256) -> ApiResult<ManagedTx> {
        self.ask(&RelayerOp::Replace { hash }).await
    }

    /// Deploys (or finds deployed) the profile of `job`.
    pub async fn deploy(&self, job: DeployJob) -> ApiResult<DeployOutcome> {
        self.ask(&RelayerOp::Deploy(job)).await
    }

    /// Registers `address`.
    pub async fn register(&self, address: Address) -> ApiResult<RegisterOutcome> {
        self.ask(&RelayerOp::Register(RegisterJob { address })).await
    }

    /// Sends a checked relay call through the lane.
    pub async fn execute(&self, job: ExecuteJob) -> ApiResult<ExecuteOutcome> {
        self.ask(&RelayerOp::Execute(job)).await
    }

    /// The lane's state.
    pub async fn status(&self) -> ApiResult<LaneStatus> {
        self.ask(&RelayerOp::Status).await
    }

    /// The lane's pending transactions, at most `limit`.
    pub async fn list(&self, limit: u64) -> ApiResult<LaneList> {
        self.ask(&RelayerOp::List { limit }).await
    }

    /// The record of the transaction `hash`.
    pub async fn transaction(&self, hash: B256) -> ApiResult<Option<TransactionStatus>> {
        self.ask(&RelayerOp::Transaction { hash }).await
    }

    /// The latest hash of `address`'s pending deployment.
    pub async fn pending(&self, address: Address) -> ApiResult<Option<B256>> {
        self.ask(&RelayerOp::Pending { address }).await
    }
}

/// Everything a round needs.
struct Ctx {
    config: RelayerConfig,
    rpc: Rpc,
    signer: Signer,
    max_fee_per_gas: u128,
}

fn now_ms() -> u64 {
    Date::now().as_millis()
}

impl DurableObject for Relayer {
    fn new(state: State, env: Env) -> Self {
        let config = Config::from_env(&env);
        crate::analytics::bind(&env, || config.analytics_log.value().unwrap_or(false));
        Self {
            state,
            config,
            env,
            send_lock: Mutex::new(()),
            next_nonce: Cell::new(None),
            chain_checked: Cell::new(false),
            schema_ready: Cell::new(false),
            started: Cell::new(false),
            signer: Cell::new(None),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        self.first_use().await;
        let res = self.handle(req).await.unwrap_or_else(ApiError::into_response);
        // the transaction events of this request to their webhooks (what is left: by the alarm)
        if crate::webhooks::outbox::flush(&self.env, &self.state).await
            && let Err(e) = self.ensure_alarm(ALARM_MS).await
        {
            worker::console_warn!("relayer alarm for the webhook outbox: {} {}", e.code, e.message);
        }
        Ok(res)
    }

    async fn alarm(&self) -> Result<Response> {
        self.started.set(true);
        if let Err(e) = self.track_all().await {
            self.note_error(&e);
            worker::console_warn!("relayer alarm: {} {}", e.code, e.message);
        }
        let outbox_left = crate::webhooks::outbox::flush(&self.env, &self.state).await;
        // while transactions are pending, or mined and not yet confirmations-deep (`confirm`), or events wait
        let watching = self.watching().unwrap_or(true);
        if outbox_left || watching || self.lane().map(|l| !l.is_empty()).unwrap_or(true) {
            self.state.storage().set_alarm(ALARM_MS).await?;
        }
        Response::ok("")
    }
}

impl Relayer {
    async fn handle(&self, mut req: Request) -> ApiResult<Response> {
        let Envelope { signer, op } = req.json().await.map_err(ApiError::internal)?;
        self.bind(signer)?;
        match op {
            RelayerOp::Deploy(job) => Ok(Response::from_json(&self.deploy(job).await?)?),
            RelayerOp::Register(job) => Ok(Response::from_json(&self.register(job.address).await?)?),
            RelayerOp::Execute(job) => {
                let result = self.execute(job).await;
                if let Err(e) = &result {
                    self.note_error(e);
                }
                Ok(Response::from_json(&result?)?)
            }
            RelayerOp::Status => Ok(Response::from_json(&self.status()?)?),
            RelayerOp::List { limit } => Ok(Response::from_json(&self.list(signer, limit)?)?),
            RelayerOp::Transaction { hash } => Ok(Response::from_json(&txlog::get(&self.sql()?, hash)?)?),
            RelayerOp::Pending { address } => {
                let pending = self.find_job(&Job::Deploy {
                    universal_profile: address,
                })?;
                Ok(Response::from_json(
                    &pending.and_then(|p| p.hashes.last().copied()),
                )?)
            }
            RelayerOp::Route { profile } => Ok(Response::from_json(&RouteAnswer {
                draining: self.draining()?,
                holds: self.holds(profile)?,
            })?),
            RelayerOp::Drain { draining } => {
                self.set_draining(draining)?;
                Ok(Response::from_json(&self.status()?)?)
            }
            RelayerOp::Cancel { hash } => Ok(Response::from_json(&self.cancel(hash).await?)?),
            RelayerOp::Replace { hash } => Ok(Response::from_json(&self.replace(hash).await?)?),
        }
    }

    /// Records the signer of this lane (the first request tells it; later ones must agree).
    fn bind(&self, signer: Address) -> ApiResult<()> {
        if self.signer.get() == Some(signer) {
            return Ok(());
        }
        match self.meta_get("signer")? {
            Some(stored) if stored != signer.to_string() => {
                return Err(ApiError::internal(format!(
                    "lane of {stored} asked for signer {signer}"
                )));
            }
            Some(_) => {}
            None => self.meta_put("signer", &signer.to_string())?,
        }
        self.signer.set(Some(signer));
        Ok(())
    }

    /// The signer of this lane: bound by a request, or stored; a lane from before the pool (the legacy object)
    /// that an alarm wakes before any request is the legacy key's.
    fn lane_signer(&self, config: &RelayerConfig) -> ApiResult<crate::config::PoolSigner> {
        let pool = config.signers()?;
        let address = match self.signer.get() {
            Some(a) => Some(a),
            None => self.meta_get("signer")?.and_then(|s| s.parse::<Address>().ok()),
        };
        let found = match address {
            Some(a) => pool.into_iter().find(|p| p.signer.address() == a),
            None => pool.into_iter().find(|p| p.legacy),
        };
        found.ok_or_else(|| {
            ApiError::config(format!(
                "the key of signer {} is no longer in RELAYER_PRIVATE_KEY(S); its lane cannot sign",
                address.map_or_else(|| "(legacy)".to_owned(), |a| a.to_string())
            ))
        })
    }

    /// Whether the lane has pending work for `profile` (a deploy of it or a relay call of it).
    fn holds(&self, profile: Address) -> ApiResult<bool> {
        Ok(self.lane()?.iter().any(|tx| match tx.job {
            Job::Deploy { universal_profile } => universal_profile == profile,
            Job::Execute { profile: p, .. } => p == profile,
            Job::Filler => false,
        }))
    }

    /// Whether the signer is drained (no new work).
    fn draining(&self) -> ApiResult<bool> {
        Ok(self.meta_get("draining")?.as_deref() == Some("1"))
    }

    fn set_draining(&self, draining: bool) -> ApiResult<()> {
        self.meta_put("draining", if draining { "1" } else { "0" })
    }

    /// Refuses new work for `profile` while draining (the pool routes around a drained signer; this closes the
    /// race with a drain that lands between the routing and the send).
    fn refuse_if_draining(&self, profile: Address) -> ApiResult<()> {
        if self.draining()? && !self.holds(profile)? {
            let mut err = ApiError::new(
                Code::NoActiveSigner,
                "this signer is draining; retry (new work goes to another signer)",
            );
            err.retry_after = Some(1);
            return Err(err);
        }
        Ok(())
    }

    /// The lane as the operator sees it: how many transactions are pending and since when.
    fn status(&self) -> ApiResult<LaneStatus> {
        let lane = self.lane()?;
        let oldest = lane.iter().map(|tx| tx.sent_ms).filter(|ms| *ms > 0).min();
        Ok(LaneStatus {
            pending: u64::try_from(lane.len()).unwrap_or(u64::MAX),
            oldest_pending_age_seconds: oldest.map(|ms| now_ms().saturating_sub(ms) / 1000),
            next_nonce: self.next_nonce.get(),
            draining: self.draining()?,
        })
    }

    /// The lane's pending transactions as the operator sees them: the `limit` lowest nonces.
    fn list(&self, signer: Address, limit: u64) -> ApiResult<LaneList> {
        let mut rows = self.lane_first(limit.saturating_add(1))?;
        let truncated = u64::try_from(rows.len()).unwrap_or(u64::MAX) > limit;
        rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        let transactions = rows
            .into_iter()
            .filter_map(|tx| {
                let hash = *tx.hashes.last()?;
                let (kind, profile) = match tx.job {
                    Job::Deploy { universal_profile } => (PendingKind::Deploy, Some(universal_profile)),
                    Job::Execute { profile, .. } => (PendingKind::Execute, Some(profile)),
                    Job::Filler => (PendingKind::Filler, None),
                };
                Some(PendingTransaction {
                    hash,
                    signer,
                    nonce: tx.nonce,
                    kind,
                    profile,
                    first_sent_at: (tx.sent_ms > 0).then_some(tx.sent_ms / 1000),
                    fee_bumps: u64::try_from(tx.hashes.len().saturating_sub(1)).unwrap_or(u64::MAX),
                    cancelled: tx.cancelled_from.is_some(),
                })
            })
            .collect();
        Ok(LaneList {
            transactions,
            truncated,
        })
    }

    /// The first request after construction: when transactions are stored, make sure an alarm comes soon; it
    /// reconciles the lane with the chain (a deploy does it itself, under the lock).
    async fn first_use(&self) {
        if self.started.replace(true) {
            return;
        }
        let result = match self.lane() {
            Ok(lane) if !lane.is_empty() || self.watching().unwrap_or(true) => self.ensure_alarm(1).await,
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            worker::console_warn!("relayer start-up: {} {}", e.code, e.message);
        }
    }

    async fn ensure_alarm(&self, offset_ms: i64) -> ApiResult<()> {
        if self.state.storage().get_alarm().await?.is_none() {
            self.state.storage().set_alarm(offset_ms).await?;
        }
        Ok(())
    }

    fn ctx(&self) -> ApiResult<Ctx> {
        let config = self.config.relayer()?.clone();
        let rpc = config.rpc();
        let signer = self.lane_signer(&config)?.signer;
        let max_fee_per_gas = self.config.max_fee_per_gas.value()?;
        Ok(Ctx {
            config,
            rpc,
            signer,
            max_fee_per_gas,
        })
    }

    /// After the node was unreachable it may come back as another node (restart, failover): re-read the chain id
    /// and reconcile the lane again.
    fn note_error(&self, e: &ApiError) {
        if e.is(Code::RpcUnavailable) {
            self.next_nonce.set(None);
            self.chain_checked.set(false);
        }
    }

    async fn check_chain(&self, ctx: &Ctx) -> ApiResult<()> {
        if self.chain_checked.get() {
            return Ok(());
        }
        let chain_id = ctx.rpc.chain_id().await?;
        if chain_id != ctx.config.chain_id {
            return Err(ApiError::config(format!(
                "CHAIN_ID is {} but the RPC node is on chain {chain_id}; refusing to sign",
                ctx.config.chain_id
            )));
        }
        self.chain_checked.set(true);
        Ok(())
    }
}
