//! The `Relayer` Durable Object, one per signer of the pool and chain ([`lane_name`]; which one a request goes to
//! is [`pool`]'s choice). It is the only place that
//! - assigns nonces and sends transactions for its signer's key (the nonce lane): an async lock (the send lock,
//!   held here and lent to the flows) serializes nonce → sign → store → send, and every later change to a sent
//!   transaction (re-broadcast, fee bump, re-send); waiting for receipts happens outside the lock, so concurrent
//!   deploys pipeline,
//! - writes profile registrations and quota usage to KV (single writer: no lost updates).
//!
//! The lane is a SQLite table of the DO, one row per nonce: what the transaction is for ([`model::Job`]), its
//! latest signed bytes and every hash signed for that nonce. A transaction is stored before it is broadcast, so a
//! crash between the two is recovered by broadcasting the stored bytes. Each round (the deploy request while it
//! waits, and an alarm every 2 s while the lane is not empty) reads the chain and [`policy::next_step`] decides:
//! mined → finish the job; unknown to the node with its nonce unused → broadcast the stored bytes again; nonce used
//! by another transaction → dropped, the job is sent again with a fresh nonce; not mined after
//! `REPLACE_AFTER_SECONDS` → fees raised by at least 10%, never above `MAX_FEE_PER_GAS`. The first time the lane is
//! used after the DO is constructed it is reconciled with the chain ([`policy::plan_gaps`]): stored transactions
//! the node lost are broadcast again and nonce holes with nothing stored are filled with 0-value self-transfers,
//! so later nonces can be mined.
//!
//! This file is the shell: construction, `fetch` (the op match below) and `alarm`. Where each flow lives:
//! - deploy: `deploy.rs`; relay call (execute): `execute.rs`; register: `profiles.rs`; the operator's cancel and
//!   replace: `manage.rs`, re-signing at a nonce (also a round's fee bump): `resign.rs`;
//! - a round of a lane transaction and the alarm's pass: `rounds.rs`, a mined job finished: `finish.rs`, a dropped
//!   job sent again: `resend.rs`, a request waiting for its job: `wait.rs`;
//! - sending a new transaction (reserve → nonce → sign → store → send): `send.rs`; reconciling the lane with the
//!   chain (rebroadcast, nonce holes): `sync.rs`; confirmation depth and reorganizations: `confirm.rs`.
//!
//! The flows are functions over [`ctx`] (the parts of the object a flow uses, a round's context and the shared
//! bookkeeping), the lane's storage ([`store::LaneStore`]), the data types ([`model`]) and the pure decisions
//! ([`policy`], table-tested). Imports run one way: shell → flows → ctx → {policy, store, model}; `client.rs` is
//! the typed client other modules use, `pool.rs` the choice of a lane.

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

mod client;
mod confirm;
mod ctx;
mod deploy;
mod execute;
mod finish;
mod manage;
mod model;
mod policy;
pub mod pool;
mod profiles;
mod resend;
mod resign;
mod rounds;
mod send;
mod store;
mod sync;
mod wait;

use std::cell::Cell;

use futures_util::lock::Mutex;
use worker::{DurableObject, Env, Request, Response, Result, State, durable_object};

pub use self::client::RelayerClient;
#[cfg(test)]
use self::client::lane_name;
use self::ctx::{Memory, Object};
use self::model::RelayerOp;
pub use self::model::{DeployJob, ExecuteJob, LaneStatus, RegisterOutcome, RouteAnswer};
use self::model::{Envelope, Job, Resign};
use self::policy::ALARM_MS;
pub use self::policy::execute_id;
use self::store::LaneStore;
use crate::{
    config::Config,
    error::{ApiError, ApiResult},
    txlog,
};

/// A JSON answer.
fn json<T: serde::Serialize>(value: &T) -> ApiResult<Response> {
    Ok(Response::from_json(value)?)
}

/// The Durable Object.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct Relayer {
    state: State,
    env: Env,
    /// The configuration, parsed when the object is constructed (vars change only with a new deployment).
    config: Config,
    /// Serializes nonce → sign → store → send, and every later change to a sent transaction.
    send_lock: Mutex<()>,
    store: LaneStore,
    memory: Memory,
    started: Cell<bool>,
}

impl DurableObject for Relayer {
    fn new(state: State, env: Env) -> Self {
        let config = Config::from_env(&env);
        crate::analytics::bind(&env, || config.analytics_log.value().unwrap_or(false));
        Self {
            store: LaneStore::new(&state),
            state,
            config,
            env,
            send_lock: Mutex::new(()),
            memory: Memory::default(),
            started: Cell::new(false),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        self.first_use().await;
        let res = self.handle(req).await.unwrap_or_else(ApiError::into_response);
        // the transaction events of this request to their webhooks (what is left: by the alarm)
        if crate::webhooks::outbox::flush(&self.env, &self.state).await
            && let Err(e) = self.store.ensure_alarm(ALARM_MS).await
        {
            worker::console_warn!("relayer alarm for the webhook outbox: {} {}", e.code, e.message);
        }
        Ok(res)
    }

    async fn alarm(&self) -> Result<Response> {
        self.started.set(true);
        if let Err(e) = rounds::track_all(self.object()).await {
            self.object().note_error(&e);
            worker::console_warn!("relayer alarm: {} {}", e.code, e.message);
        }
        let outbox_left = crate::webhooks::outbox::flush(&self.env, &self.state).await;
        // while transactions are pending, or mined and not yet confirmations-deep (`confirm`), or events wait
        let watching = self.store.watching().unwrap_or(true);
        if outbox_left || watching || self.store.lane().map(|l| !l.is_empty()).unwrap_or(true) {
            self.state.storage().set_alarm(ALARM_MS).await?;
        }
        Response::ok("")
    }
}

impl Relayer {
    /// The parts of the object the flows use.
    const fn object(&self) -> Object<'_> {
        Object {
            env: &self.env,
            config: &self.config,
            store: &self.store,
            send_lock: &self.send_lock,
            memory: &self.memory,
        }
    }

    /// The op match: each operation to its flow.
    async fn handle(&self, mut req: Request) -> ApiResult<Response> {
        let Envelope { signer, op } = req.json().await.map_err(ApiError::internal)?;
        self.store.bind(signer)?;
        let obj = self.object();
        match op {
            RelayerOp::Deploy(job) => json(&deploy::deploy(obj, job).await?),
            RelayerOp::Register(job) => {
                json(&profiles::register(obj, job.address, job.key.as_deref()).await?)
            }
            RelayerOp::Execute(job) => {
                let result = execute::execute(obj, job).await;
                if let Err(e) = &result {
                    obj.note_error(e);
                }
                json(&result?)
            }
            RelayerOp::Status => json(&obj.status()?),
            RelayerOp::List { limit } => {
                let rows = self.store.lane_first(limit.saturating_add(1))?;
                json(&policy::lane_list(rows, signer, limit))
            }
            RelayerOp::Transaction { hash } => json(&txlog::get(&self.store.sql()?, hash)?),
            RelayerOp::Pending { address } => {
                let pending = self.store.find_job(&Job::Deploy {
                    universal_profile: address,
                })?;
                json(&pending.and_then(|p| p.hashes.last().copied()))
            }
            RelayerOp::Route { profile } => json(&RouteAnswer {
                draining: self.store.draining()?,
                holds: obj.holds(profile)?,
            }),
            RelayerOp::Drain { draining } => {
                self.store.set_draining(draining)?;
                json(&obj.status()?)
            }
            RelayerOp::Cancel { hash } => json(&manage::manage(obj, hash, Resign::Cancel).await?),
            RelayerOp::Replace { hash } => json(&manage::manage(obj, hash, Resign::Replace).await?),
        }
    }

    /// The first request after construction: when transactions are stored, make sure an alarm comes soon; it
    /// reconciles the lane with the chain (a deploy does it itself, under the lock).
    async fn first_use(&self) {
        if self.started.replace(true) {
            return;
        }
        let result = match self.store.lane() {
            Ok(lane) if !lane.is_empty() || self.store.watching().unwrap_or(true) => {
                self.store.ensure_alarm(1).await
            }
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            worker::console_warn!("relayer start-up: {} {}", e.code, e.message);
        }
    }
}
