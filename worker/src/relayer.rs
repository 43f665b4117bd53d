//! The `Relayer` Durable Object, one per deployment (network). It is the only place that
//! - assigns nonces and sends transactions for the relayer key (the nonce lane): an async lock serializes
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

use std::{cell::Cell, collections::BTreeSet};

use alloy_primitives::{Address, B256, Bytes, U256};
use futures_util::lock::Mutex;
use profile_relayer::{api::Quota, lsp23::deploy_erc1167_proxies_calldata};
use serde::{Deserialize, Serialize};
use worker::{
    Date, Delay, DurableObject, Env, Request, Response, Result, SqlStorage, SqlStorageValue, State,
    durable_object,
};

use profile_relayer::api::{TransactionKind, TransactionState, TransactionStatus};

use crate::{
    config::{self, Config},
    error::{ApiError, ApiResult},
    execute::{ExecuteJob, ExecuteOutcome, MinedFacts, relayer_subject, reserve_all},
    meter::{MeterClient, MeterOp, Period},
    rpc::{Receipt, Rpc, RpcError, SendOutcome},
    signer::{self, Signer, TxRequest, bumped_fees_capped, initial_fees, initial_fees_capped},
    store::{self, ProfileRecord},
    txlog,
};

/// A deployment to perform.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeployJob {
    /// Salt.
    pub salt: B256,
    /// `postDeploymentCallData`.
    pub post_deployment_call_data: Bytes,
    /// Predicted profile.
    pub universal_profile: Address,
    /// Predicted KeyManager.
    pub key_manager: Address,
    /// The API key that asked (its monthly gas budget pays).
    #[serde(default)]
    pub key_id: Option<String>,
    /// That key's monthly gas budget.
    #[serde(default)]
    pub key_budget: u64,
}

/// What happened to a deployment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeployOutcome {
    /// The transaction (the mined one, or the latest sent while pending); `None` if nothing was sent.
    pub transaction_hash: Option<B256>,
    /// Whether the profile exists on chain now.
    pub deployed: bool,
}

/// A profile to register.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisterJob {
    /// The profile.
    pub address: Address,
}

/// Registration result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisterOutcome {
    /// Whether this call created the registration.
    pub newly_registered: bool,
    /// The profile's quota.
    pub quota: Quota,
}

/// What a lane transaction is for: decides how it is finished when mined and what happens when it is dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum Job {
    /// An LSP23 deployment of this profile (the calldata is in the signed transaction).
    #[serde(rename_all = "camelCase")]
    Deploy { universal_profile: Address },
    /// An LSP25 `executeRelayCall` for this profile; `id` is the signed nonce's ([`ExecuteJob::id`]).
    #[serde(rename_all = "camelCase")]
    Execute { id: B256, profile: Address },
    /// A 0-value transfer to the relayer itself that fills a nonce hole.
    Filler,
}

impl Job {
    /// The kind and profile shown by the transaction status route (`None` for fillers).
    fn described(&self) -> Option<(TransactionKind, Address)> {
        match self {
            Self::Deploy { universal_profile } => Some((TransactionKind::Deploy, *universal_profile)),
            Self::Execute { profile, .. } => Some((TransactionKind::Execute, *profile)),
            Self::Filler => None,
        }
    }
}

/// Who pays for a lane transaction: the reservation `id` made on each meter subject, settled to the receipt's
/// `gasUsed` when mined (reverted or not) and released when the transaction is given up unsent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Charge {
    id: String,
    meters: Vec<String>,
}

/// How `send_new` sends: a known gas limit (else estimated) and the reservations to make before signing.
#[derive(Debug, Default)]
struct SendPlan {
    gas_limit: Option<u64>,
    charge: Option<Charge>,
    /// Subjects to reserve the gas limit on before signing: (subject, period, limit, refusal code).
    reserve: Vec<(String, Period, u64, &'static str)>,
    /// Earlier hashes of the job that were dropped.
    dropped: Vec<B256>,
    /// The lane row this send replaces (a dropped job sent again), removed in the same write.
    replaces: Option<u64>,
}

/// A stored, not yet mined transaction of the lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PendingTx {
    job: Job,
    nonce: u64,
    /// The latest signed transaction for this nonce (EIP-2718 bytes): what is broadcast, and what a fee bump
    /// re-signs with higher fees.
    raw: Bytes,
    /// Every hash signed for this nonce, oldest first; the last is `raw`'s.
    hashes: Vec<B256>,
    /// When the fees were last set, or a bump last refused (ms since the epoch).
    fees_checked_ms: u64,
    /// Earlier transactions for this job, at other nonces, that were dropped (their nonce went to another one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dropped: Vec<B256>,
    /// Who pays, when metered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    charge: Option<Charge>,
}

impl PendingTx {
    /// The latest hash, for logs.
    fn latest_hash(&self) -> String {
        self.hashes
            .last()
            .map_or_else(|| "-".to_owned(), ToString::to_string)
    }
}

/// Chain facts about one lane transaction, read in this order: the receipts of its hashes, the account's latest
/// nonce, whether the node knows any of its hashes (pool or chain). A transaction mined after its receipts were read
/// is then still known, so it is never taken for dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Facts {
    /// A hash of this nonce with a receipt.
    mined: Option<B256>,
    /// How many transactions of the relayer are mined (`eth_getTransactionCount(…, "latest")`).
    latest_nonce: u64,
    /// Whether `eth_getTransactionByHash` finds any of its hashes.
    known: bool,
}

/// What to do with a lane transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Finish the job.
    Mined(B256),
    /// Nothing now.
    Wait,
    /// The node lost it and its nonce is unused: broadcast the stored bytes again.
    Rebroadcast,
    /// Not mined in time: replace it with higher fees.
    BumpFees,
    /// Its nonce went to another transaction and none of its hashes is known: send the job again, fresh nonce.
    Dropped,
}

/// The decision of a round for the transaction at `nonce`; `bump_due`: `REPLACE_AFTER_SECONDS` have passed since
/// its fees were last set.
const fn next_step(nonce: u64, facts: Facts, bump_due: bool) -> Step {
    if let Some(hash) = facts.mined {
        return Step::Mined(hash);
    }
    if facts.latest_nonce > nonce {
        // the nonce is used, and not by one of ours (no receipt). A hash the node still knows was mined after the
        // receipts were read, or is about to be evicted: look again next round.
        return if facts.known { Step::Wait } else { Step::Dropped };
    }
    if !facts.known {
        Step::Rebroadcast
    } else if bump_due {
        Step::BumpFees
    } else {
        Step::Wait
    }
}

/// At most this many holes are filled in one reconciliation (a stored nonce far above the chain's means the chain
/// was reset or the key used elsewhere: not something to paper over with thousands of transfers).
const MAX_HOLES: usize = 64;

/// The result of reconciling the stored lane with the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
struct GapPlan {
    /// Nonces to fill with self-transfers, ascending.
    holes: Vec<u64>,
    /// The next nonce to assign once the holes are filled.
    next_nonce: u64,
}

/// Nonce holes at start-up. `stored`: nonces of the stored transactions; `latest`: the relayer's mined transaction
/// count; `pending`: the node's next nonce counting its pool (read after the stored transactions were re-broadcast,
/// so nonces below it are occupied). A hole is a nonce between `max(latest, pending)` and the highest stored nonce
/// with nothing stored: nothing will ever be mined at it, so every later nonce would wait forever.
fn plan_gaps(stored: &[u64], latest: u64, pending: u64) -> GapPlan {
    let live: BTreeSet<u64> = stored.iter().copied().filter(|n| *n >= latest).collect();
    let floor = pending.max(latest);
    match live.last().copied() {
        None => GapPlan {
            holes: Vec::new(),
            next_nonce: floor,
        },
        Some(top) => GapPlan {
            holes: (floor..top)
                .filter(|n| !live.contains(n))
                .take(MAX_HOLES)
                .collect(),
            next_nonce: floor.max(top.saturating_add(1)),
        },
    }
}

/// `MAX_FEE_PER_GAS` when unset: 100 gwei, about a hundred times what LUKSO usually asks (around 1 gwei). A
/// deployment uses ~0.5–0.6 M gas, so one costs at most ~0.06 LYX. A network asking more is congested or under
/// attack: deploys answer `503 FEE_TOO_HIGH` until it calms down instead of draining the relayer, and pending
/// transactions wait at the cap instead of being bumped further.
const DEFAULT_MAX_FEE_PER_GAS: u128 = 100_000_000_000;
/// How long a `FEE_TOO_HIGH` client should wait.
const FEE_RETRY_AFTER_SECONDS: u64 = 60;
const ALARM_MS: i64 = 2_000;
/// Gas of a plain transfer to an account without code.
const TRANSFER_GAS: u64 = 21_000;

/// The Durable Object.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct Relayer {
    state: State,
    env: Env,
    send_lock: Mutex<()>,
    /// The next nonce to assign; `None` until the lane is reconciled with the chain (after construction, and again
    /// after the node was unreachable: it may come back as another node).
    next_nonce: Cell<Option<u64>>,
    chain_checked: Cell<bool>,
    schema_ready: Cell<bool>,
    started: Cell<bool>,
}

/// How waiting for a lane transaction ended.
#[derive(Debug)]
enum Waited {
    /// Mined with this hash (the job finished).
    Mined(B256),
    /// No longer in the lane (finished by another round, or given up); the last copy seen.
    Gone(PendingTx),
    /// Still pending when the wait ended; the latest copy.
    Pending(PendingTx),
}

/// What one round did to a lane transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    /// Mined (and the job finished) with this hash.
    Mined(B256),
    /// Still pending (possibly re-broadcast, replaced or re-sent under another nonce).
    Pending,
    /// No longer in the lane, without a hash of its own being mined.
    Gone,
}

/// Everything a round needs.
struct Ctx {
    config: Config,
    rpc: Rpc,
    signer: Signer,
    max_fee_per_gas: u128,
}

#[derive(Deserialize)]
struct Row {
    record: String,
}

fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// How long a waiting request sleeps between receipt checks: short at first (a local or fast chain mines at once),
/// then every 250 ms.
fn poll_interval(started_ms: u64) -> core::time::Duration {
    let waited = now_ms().saturating_sub(started_ms);
    core::time::Duration::from_millis(match waited {
        0..100 => 10,
        100..1_000 => 50,
        _ => 250,
    })
}

fn nonce_value(nonce: u64) -> ApiResult<SqlStorageValue> {
    let n = i64::try_from(nonce).map_err(ApiError::internal)?;
    SqlStorageValue::try_from_i64(n).map_err(ApiError::internal)
}

fn fee_too_high(base: u128, tip: u128, cap: u128) -> ApiError {
    let mut err = ApiError::new(
        503,
        "FEE_TOO_HIGH",
        format!(
            "the network asks {base} wei base fee + {tip} wei tip per gas, above the relayer's limit of {cap} wei; \
             retry later"
        ),
    );
    err.retry_after = Some(FEE_RETRY_AFTER_SECONDS);
    err
}

impl DurableObject for Relayer {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            send_lock: Mutex::new(()),
            next_nonce: Cell::new(None),
            chain_checked: Cell::new(false),
            schema_ready: Cell::new(false),
            started: Cell::new(false),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        self.first_use().await;
        Ok(self.handle(req).await.unwrap_or_else(ApiError::into_response))
    }

    async fn alarm(&self) -> Result<Response> {
        self.started.set(true);
        if let Err(e) = self.track_all().await {
            self.note_error(&e);
            worker::console_warn!("relayer alarm: {} {}", e.code, e.message);
        }
        if self.lane().map(|l| !l.is_empty()).unwrap_or(true) {
            self.state.storage().set_alarm(ALARM_MS).await?;
        }
        Response::ok("")
    }
}

impl Relayer {
    async fn handle(&self, mut req: Request) -> ApiResult<Response> {
        match req.path().as_str() {
            "/deploy" => {
                let job: DeployJob = req.json().await.map_err(ApiError::internal)?;
                Ok(Response::from_json(&self.deploy(job).await?)?)
            }
            "/register" => {
                let job: RegisterJob = req.json().await.map_err(ApiError::internal)?;
                Ok(Response::from_json(&self.register(job.address).await?)?)
            }
            "/execute" => {
                let job: ExecuteJob = req.json().await.map_err(ApiError::internal)?;
                let result = self.execute(job).await;
                if let Err(e) = &result {
                    self.note_error(e);
                }
                Ok(Response::from_json(&result?)?)
            }
            "/transaction" => {
                let hash: B256 = req.json().await.map_err(ApiError::internal)?;
                Ok(Response::from_json(&txlog::get(&self.sql()?, hash)?)?)
            }
            "/pending" => {
                let job: RegisterJob = req.json().await.map_err(ApiError::internal)?;
                let pending = self.find_job(&Job::Deploy {
                    universal_profile: job.address,
                })?;
                Ok(Response::from_json(
                    &pending.and_then(|p| p.hashes.last().copied()),
                )?)
            }
            _ => Err(ApiError::not_found("no such relayer operation")),
        }
    }

    /// The first request after construction: when transactions are stored, make sure an alarm comes soon; it
    /// reconciles the lane with the chain (a deploy does it itself, under the lock).
    async fn first_use(&self) {
        if self.started.replace(true) {
            return;
        }
        let result = match self.lane() {
            Ok(lane) if !lane.is_empty() => self.ensure_alarm(1).await,
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
        let config = Config::from_env(&self.env)?;
        let rpc = config.rpc();
        let signer = Config::signer(&self.env)?;
        let max_fee_per_gas = config::number(&self.env, "MAX_FEE_PER_GAS", DEFAULT_MAX_FEE_PER_GAS)?;
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
        if e.code == "RPC_UNAVAILABLE" {
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

    // ---- the lane in DO storage -------------------------------------------------------------------------------

    fn sql(&self) -> ApiResult<SqlStorage> {
        let sql = self.state.storage().sql();
        if !self.schema_ready.get() {
            sql.exec(
                "CREATE TABLE IF NOT EXISTS lane (nonce INTEGER PRIMARY KEY, record TEXT NOT NULL)",
                Vec::new(),
            )?;
            self.schema_ready.set(true);
        }
        Ok(sql)
    }

    fn parse_rows(rows: &[Row]) -> ApiResult<Vec<PendingTx>> {
        rows.iter()
            .map(|r| serde_json::from_str(&r.record).map_err(ApiError::internal))
            .collect()
    }

    /// Every stored transaction, by nonce.
    fn lane(&self) -> ApiResult<Vec<PendingTx>> {
        let rows: Vec<Row> = self
            .sql()?
            .exec("SELECT record FROM lane ORDER BY nonce", Vec::new())?
            .to_array()?;
        Self::parse_rows(&rows)
    }

    /// The stored transaction at `nonce`, read from storage (not from a caller's copy).
    fn lane_get(&self, nonce: u64) -> ApiResult<Option<PendingTx>> {
        let rows: Vec<Row> = self
            .sql()?
            .exec(
                "SELECT record FROM lane WHERE nonce = ?",
                vec![nonce_value(nonce)?],
            )?
            .to_array()?;
        Ok(Self::parse_rows(&rows)?.into_iter().next())
    }

    /// Removes the row at `remove` and stores `put`, in one write (synchronous statements, no await between them).
    fn lane_write(&self, remove: Option<u64>, put: Option<&PendingTx>) -> ApiResult<()> {
        let sql = self.sql()?;
        if let Some(nonce) = remove {
            sql.exec("DELETE FROM lane WHERE nonce = ?", vec![nonce_value(nonce)?])?;
        }
        if let Some(tx) = put {
            let record = serde_json::to_string(tx).map_err(ApiError::internal)?;
            sql.exec(
                "INSERT OR REPLACE INTO lane (nonce, record) VALUES (?, ?)",
                vec![nonce_value(tx.nonce)?, record.into()],
            )?;
        }
        Ok(())
    }

    fn find_job(&self, job: &Job) -> ApiResult<Option<PendingTx>> {
        Ok(self.lane()?.into_iter().find(|p| &p.job == job))
    }

    // ---- sending ----------------------------------------------------------------------------------------------

    /// Reconciles the lane with the chain when the next nonce is not known (first use after construction, or the
    /// node was unreachable): stored transactions the node does not know are broadcast again from their stored bytes,
    /// holes are filled with self-transfers ([`plan_gaps`]), and the next nonce is set. Caller holds `send_lock`.
    async fn sync_lane(&self, ctx: &Ctx) -> ApiResult<()> {
        if self.next_nonce.get().is_some() {
            return Ok(());
        }
        let from = ctx.signer.address();
        let latest = ctx.rpc.latest_nonce(from).await?;
        let lane = self.lane()?;
        for tx in lane.iter().filter(|t| t.nonce >= latest) {
            if !any_known(&ctx.rpc, &tx.hashes).await? {
                let result = ctx.rpc.send_raw(&tx.raw).await;
                log_rebroadcast(tx, &result);
                if let (SendOutcome::Unknown, Err(e)) = (SendOutcome::of(&result), result) {
                    return Err(e.into());
                }
            }
        }
        let pending = ctx.rpc.pending_nonce(from).await?;
        let stored: Vec<u64> = lane.iter().map(|t| t.nonce).collect();
        let plan = plan_gaps(&stored, latest, pending);
        for &hole in &plan.holes {
            self.fill_hole(ctx, hole).await?;
        }
        if !plan.holes.is_empty() || plan.next_nonce != pending {
            worker::console_log!(
                "nonce lane reconciled: chain at {latest} (pending {pending}), {} stored, holes filled {:?}, next {}",
                lane.len(),
                plan.holes,
                plan.next_nonce
            );
        }
        self.next_nonce.set(Some(plan.next_nonce));
        Ok(())
    }

    /// Fills the hole at `nonce` with a 0-value transfer to the relayer itself. Caller holds `send_lock`.
    async fn fill_hole(&self, ctx: &Ctx, nonce: u64) -> ApiResult<()> {
        let (base, tip) = ctx.rpc.fees().await?;
        let (max_fee, tip) = initial_fees_capped(base, tip, ctx.max_fee_per_gas)
            .ok_or_else(|| fee_too_high(base, tip, ctx.max_fee_per_gas))?;
        let request = TxRequest {
            chain_id: ctx.config.chain_id,
            nonce,
            gas_limit: TRANSFER_GAS,
            max_fee_per_gas: max_fee,
            max_priority_fee_per_gas: tip,
            to: ctx.signer.address(),
            input: Bytes::new(),
        };
        let (tx, result) = self
            .store_and_send(ctx, Job::Filler, &request, Vec::new(), None, None)
            .await?;
        match SendOutcome::of(&result) {
            SendOutcome::Accepted | SendOutcome::AlreadyKnown | SendOutcome::Unknown => {
                worker::console_warn!(
                    "nonce hole {nonce} filled with a self-transfer {}",
                    tx.latest_hash()
                );
                Ok(())
            }
            // something occupies the nonce after all: nothing to fill
            SendOutcome::NonceTaken => Ok(()),
            SendOutcome::Rejected => Err(result
                .err()
                .map_or_else(|| ApiError::internal("rejected without an error"), ApiError::from)),
        }
    }

    /// Signs `request`, stores it (removing the row `replaces` in the same write) and then broadcasts it; when the
    /// node definitively refuses it (nonce taken, rejected) the write is undone. An unanswered broadcast keeps the
    /// row: the next round broadcasts it again if the node does not have it. Caller holds `send_lock`.
    async fn store_and_send(
        &self,
        ctx: &Ctx,
        job: Job,
        request: &TxRequest,
        dropped: Vec<B256>,
        replaces: Option<u64>,
        charge: Option<Charge>,
    ) -> ApiResult<(PendingTx, core::result::Result<B256, RpcError>)> {
        let (raw, hash) = ctx.signer.sign(request).map_err(ApiError::internal)?;
        let tx = PendingTx {
            job,
            nonce: request.nonce,
            raw: raw.into(),
            hashes: vec![hash],
            fees_checked_ms: now_ms(),
            dropped,
            charge,
        };
        if let Some((kind, profile)) = tx.job.described() {
            self.log_put(ctx, &txlog::pending(hash, kind, profile))?;
        }
        let previous = match replaces {
            Some(n) => self.lane_get(n)?,
            None => None,
        };
        let overwritten = self.lane_get(tx.nonce)?;
        // stored before it is broadcast: a crash in between is recovered from the stored bytes
        self.lane_write(replaces, Some(&tx))?;
        let result = ctx.rpc.send_raw(&tx.raw).await;
        if matches!(
            SendOutcome::of(&result),
            SendOutcome::NonceTaken | SendOutcome::Rejected
        ) {
            self.log_update(ctx, hash, |r| r.status = TransactionState::Dropped)?;
            self.lane_write(Some(tx.nonce), overwritten.as_ref())?;
            if let Some(p) = &previous {
                self.lane_write(None, Some(p))?;
            }
        }
        Ok((tx, result))
    }

    /// Estimates gas, prices, signs, stores and sends a transaction for `job` at the next nonce. Caller holds
    /// `send_lock` and has synced the lane.
    async fn send_new(
        &self,
        ctx: &Ctx,
        job: Job,
        to: Address,
        input: Bytes,
        plan: SendPlan,
    ) -> ApiResult<PendingTx> {
        let charge = plan.charge.clone();
        let fresh = plan.replaces.is_none();
        let result = self.send_new_inner(ctx, job, to, input, plan).await;
        if result.is_err() && fresh {
            // nothing was sent for this new job: what was reserved for it is released
            self.release(charge.as_ref()).await;
        }
        result
    }

    async fn send_new_inner(
        &self,
        ctx: &Ctx,
        job: Job,
        to: Address,
        input: Bytes,
        plan: SendPlan,
    ) -> ApiResult<PendingTx> {
        let (dropped, replaces) = (plan.dropped.clone(), plan.replaces);
        let from = ctx.signer.address();
        let gas_limit = match plan.gas_limit {
            Some(limit) => limit,
            None => {
                let gas = ctx
                    .rpc
                    .estimate_gas(from, to, &input)
                    .await
                    .map_err(|e| match e {
                        RpcError::Node { message, .. } => ApiError::new(
                            502,
                            "DEPLOYMENT_WOULD_REVERT",
                            format!("the factory call would revert: {message}"),
                        ),
                        other => other.into(),
                    })?;
                gas.saturating_add(gas / 5).saturating_add(20_000)
            }
        };
        if gas_limit > ctx.config.max_transaction_gas {
            return Err(ApiError::bad_request(
                "GAS_LIMIT_TOO_HIGH",
                format!(
                    "the transaction needs {gas_limit} gas; this relayer sends at most {} (MAX_TRANSACTION_GAS)",
                    ctx.config.max_transaction_gas
                ),
            ));
        }
        if let Some(charge) = &plan.charge
            && !plan.reserve.is_empty()
        {
            reserve_all(&self.env, &charge.id, gas_limit, ctx.config.now(), &plan.reserve).await?;
        }
        let (fees, balance) = futures_util::future::join(ctx.rpc.fees(), ctx.rpc.balance(from)).await;
        let (base, tip) = fees?;
        let (max_fee, tip) = initial_fees_capped(base, tip, ctx.max_fee_per_gas)
            .ok_or_else(|| fee_too_high(base, tip, ctx.max_fee_per_gas))?;
        let balance = balance?;
        if balance < U256::from(gas_limit) * U256::from(max_fee) {
            let mut err = ApiError::new(
                503,
                "INSUFFICIENT_FUNDS",
                "the relayer's balance cannot pay for this deployment",
            );
            err.retry_after = Some(60);
            return Err(err);
        }
        for attempt in 0..3 {
            let mut nonce = match self.next_nonce.get() {
                Some(n) => n,
                None => self.resync_nonce(ctx).await?,
            };
            if self.lane_get(nonce)?.is_some() {
                // never overwrite a stored transaction: the cached nonce is behind the lane
                nonce = self.resync_nonce(ctx).await?;
            }
            let request = TxRequest {
                chain_id: ctx.config.chain_id,
                nonce,
                gas_limit,
                max_fee_per_gas: max_fee,
                max_priority_fee_per_gas: tip,
                to,
                input: input.clone(),
            };
            let (tx, result) = self
                .store_and_send(
                    ctx,
                    job.clone(),
                    &request,
                    dropped.clone(),
                    replaces,
                    plan.charge.clone(),
                )
                .await?;
            match (SendOutcome::of(&result), result) {
                (SendOutcome::Accepted | SendOutcome::AlreadyKnown, _) => {
                    self.next_nonce.set(Some(nonce + 1));
                    return Ok(tx);
                }
                (SendOutcome::Unknown, result) => {
                    self.next_nonce.set(Some(nonce + 1));
                    worker::console_warn!(
                        "nonce {nonce}: no answer to the broadcast ({:?}); stored, broadcast again by the next round",
                        result.err()
                    );
                    return Ok(tx);
                }
                (SendOutcome::NonceTaken, result) if attempt < 2 => {
                    // the chain is the source of truth: re-read it
                    self.next_nonce.set(None);
                    worker::console_warn!("nonce {nonce} taken ({:?}); re-reading the chain", result.err());
                }
                (_, result) => {
                    return Err(result
                        .err()
                        .map_or_else(|| ApiError::internal("rejected without an error"), ApiError::from));
                }
            }
        }
        Err(ApiError::internal("nonce retries exhausted"))
    }

    /// The next nonce after a nonce error: the node's pending nonce, above every stored one. Caller holds `send_lock`.
    async fn resync_nonce(&self, ctx: &Ctx) -> ApiResult<u64> {
        let pending = ctx.rpc.pending_nonce(ctx.signer.address()).await?;
        let above_stored = self
            .lane()?
            .iter()
            .map(|p| p.nonce.saturating_add(1))
            .max()
            .unwrap_or(0);
        let next = pending.max(above_stored);
        self.next_nonce.set(Some(next));
        Ok(next)
    }

    // ---- rounds -----------------------------------------------------------------------------------------------

    /// Reads the chain for `tx` (the caller's copy) and acts on [`next_step`]. Every change happens under
    /// `send_lock` on the copy reloaded from storage, and only if that copy still is the one decided on.
    async fn round(&self, ctx: &Ctx, tx: &PendingTx) -> ApiResult<Round> {
        let mut mined = None;
        for hash in tx.hashes.iter().rev() {
            if let Some(receipt) = ctx.rpc.receipt(*hash).await? {
                mined = Some((*hash, receipt));
                break;
            }
        }
        let facts = match &mined {
            Some((hash, _)) => Facts {
                mined: Some(*hash),
                latest_nonce: 0,
                known: true,
            },
            None => {
                let latest_nonce = ctx.rpc.latest_nonce(ctx.signer.address()).await?;
                Facts {
                    mined: None,
                    latest_nonce,
                    known: any_known(&ctx.rpc, &tx.hashes).await?,
                }
            }
        };
        let bump_due = now_ms().saturating_sub(tx.fees_checked_ms) >= ctx.config.replace_after_ms;
        match next_step(tx.nonce, facts, bump_due) {
            Step::Mined(hash) => {
                let receipt = mined
                    .map(|(_, r)| r)
                    .ok_or_else(|| ApiError::internal("mined without a receipt"))?;
                self.finish(ctx, tx, hash, &receipt).await?;
                Ok(Round::Mined(hash))
            }
            Step::Wait => Ok(Round::Pending),
            Step::Rebroadcast => self.rebroadcast(ctx, tx).await,
            Step::BumpFees => self.bump_fees(ctx, tx).await,
            Step::Dropped => self.dropped(ctx, tx).await,
        }
    }

    /// Removes the mined transaction from the lane and finishes its job.
    async fn finish(&self, ctx: &Ctx, tx: &PendingTx, hash: B256, receipt: &Receipt) -> ApiResult<()> {
        let reverted = receipt.status.is_zero();
        let gas_used = u64::try_from(receipt.gas_used).unwrap_or(u64::MAX);
        // charged before the row goes: a failed settlement is retried by the next round (settling is idempotent)
        let charged = self.settle(tx.charge.as_ref(), gas_used).await?;
        // its nonce is used: whatever version is stored is done
        if self.lane_get(tx.nonce)?.is_some_and(|s| s.job == tx.job) {
            self.lane_write(Some(tx.nonce), None)?;
        }
        let block = u64::try_from(receipt.block_number).ok();
        for other in tx.hashes.iter().filter(|h| **h != hash) {
            self.log_update(ctx, *other, |r| {
                r.status = TransactionState::Replaced;
                r.replaced_by = Some(hash);
            })?;
        }
        if let Some((kind, profile)) = tx.job.described() {
            let mut record =
                txlog::get(&self.sql()?, hash)?.unwrap_or_else(|| txlog::pending(hash, kind, profile));
            record.status = if reverted {
                TransactionState::Reverted
            } else {
                TransactionState::Mined
            };
            record.block_number = block;
            record.gas_used = Some(gas_used);
            record.charged = charged.or(record.charged);
            self.log_put(ctx, &record)?;
        }
        match tx.job {
            Job::Filler | Job::Execute { .. } => Ok(()),
            Job::Deploy { universal_profile } => {
                if reverted {
                    return Err(ApiError::new(
                        502,
                        "DEPLOYMENT_REVERTED",
                        format!("transaction {hash} reverted"),
                    ));
                }
                if ctx.rpc.code(universal_profile).await?.is_empty() {
                    return Err(ApiError::new(
                        502,
                        "DEPLOYMENT_MISMATCH",
                        format!("transaction {hash} was mined but no contract is at the predicted address"),
                    ));
                }
                self.record(universal_profile, Some(hash)).await?;
                Ok(())
            }
        }
    }

    /// The stored copy of `tx`, read under `send_lock`, when it is still the one a round decided on; otherwise what
    /// that round saw: gone from the lane, or changed meanwhile by another round (still pending).
    fn still_stored(&self, tx: &PendingTx) -> ApiResult<Result<PendingTx, Round>> {
        Ok(match self.lane_get(tx.nonce)? {
            None => Err(Round::Gone),
            Some(stored) if stored.hashes != tx.hashes => Err(Round::Pending),
            Some(stored) => Ok(stored),
        })
    }

    /// The node lost the transaction and its nonce is unused: broadcast the stored bytes again.
    async fn rebroadcast(&self, ctx: &Ctx, tx: &PendingTx) -> ApiResult<Round> {
        let _guard = self.send_lock.lock().await;
        let stored = match self.still_stored(tx)? {
            Ok(stored) => stored,
            Err(round) => return Ok(round),
        };
        let result = ctx.rpc.send_raw(&stored.raw).await;
        log_rebroadcast(&stored, &result);
        match (SendOutcome::of(&result), result) {
            (SendOutcome::Unknown, Err(e)) => Err(e.into()),
            _ => Ok(Round::Pending),
        }
    }

    /// Replaces the transaction with higher fees, from the stored copy, under the cap.
    async fn bump_fees(&self, ctx: &Ctx, tx: &PendingTx) -> ApiResult<Round> {
        let _guard = self.send_lock.lock().await;
        let stored = match self.still_stored(tx)? {
            Ok(stored) => stored,
            Err(round) => return Ok(round),
        };
        if now_ms().saturating_sub(stored.fees_checked_ms) < ctx.config.replace_after_ms {
            // another round replaced it meanwhile
            return Ok(Round::Pending);
        }
        let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
        let previous = (request.max_fee_per_gas, request.max_priority_fee_per_gas);
        let (base, tip) = ctx.rpc.fees().await?;
        let Some((max_fee, tip)) = bumped_fees_capped(previous, initial_fees(base, tip), ctx.max_fee_per_gas)
        else {
            worker::console_warn!(
                "nonce {}: a fee bump from max fee {} wei would exceed MAX_FEE_PER_GAS ({} wei); not sent, \
                 waiting at the current fees",
                stored.nonce,
                previous.0,
                ctx.max_fee_per_gas
            );
            let waiting = PendingTx {
                fees_checked_ms: now_ms(),
                ..stored
            };
            self.lane_write(None, Some(&waiting))?;
            return Ok(Round::Pending);
        };
        let replacement = TxRequest {
            max_fee_per_gas: max_fee,
            max_priority_fee_per_gas: tip,
            ..request
        };
        let (raw, hash) = ctx.signer.sign(&replacement).map_err(ApiError::internal)?;
        let mut next = stored.clone();
        next.raw = raw.into();
        next.hashes.push(hash);
        next.fees_checked_ms = now_ms();
        // stored before it is broadcast
        self.lane_write(None, Some(&next))?;
        let previous_hash = stored.hashes.last().copied();
        if let Some((kind, profile)) = next.job.described() {
            self.log_put(ctx, &txlog::pending(hash, kind, profile))?;
            if let Some(old) = previous_hash {
                self.log_update(ctx, old, |r| {
                    r.status = TransactionState::Replaced;
                    r.replaced_by = Some(hash);
                })?;
            }
        }
        let result = ctx.rpc.send_raw(&next.raw).await;
        match (SendOutcome::of(&result), result) {
            (SendOutcome::Accepted | SendOutcome::AlreadyKnown, _) => {
                worker::console_log!(
                    "replaced nonce {} with {hash} (max fee {max_fee}, tip {tip})",
                    next.nonce
                );
                Ok(Round::Pending)
            }
            (SendOutcome::Unknown, result) => Err(result.err().map_or_else(
                || ApiError::internal("no answer without an error"),
                ApiError::from,
            )),
            (_, result) => {
                // not taken (mined meanwhile, or outbid): back to the stored copy; the next round sees why
                worker::console_warn!("replacement of nonce {} refused: {:?}", next.nonce, result.err());
                self.log_update(ctx, hash, |r| r.status = TransactionState::Dropped)?;
                if let Some(old) = previous_hash {
                    self.log_update(ctx, old, |r| {
                        r.status = TransactionState::Pending;
                        r.replaced_by = None;
                    })?;
                }
                let kept = PendingTx {
                    fees_checked_ms: now_ms(),
                    ..stored
                };
                self.lane_write(None, Some(&kept))?;
                Ok(Round::Pending)
            }
        }
    }

    /// The nonce went to another transaction: the job is sent again with a fresh nonce (or is done).
    async fn dropped(&self, ctx: &Ctx, tx: &PendingTx) -> ApiResult<Round> {
        let _guard = self.send_lock.lock().await;
        let stored = match self.still_stored(tx)? {
            Ok(stored) => stored,
            Err(round) => return Ok(round),
        };
        worker::console_warn!(
            "nonce {} was used by another transaction: {:?} dropped",
            stored.nonce,
            stored.hashes
        );
        for h in &stored.hashes {
            self.log_update(ctx, *h, |r| r.status = TransactionState::Dropped)?;
        }
        match stored.job {
            Job::Execute { profile, .. } => {
                // sent again only if the call still succeeds (its relay nonce may have been used meanwhile)
                let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
                if ctx
                    .rpc
                    .estimate_gas(ctx.signer.address(), request.to, &request.input)
                    .await
                    .is_err()
                {
                    self.lane_write(Some(stored.nonce), None)?;
                    self.release(stored.charge.as_ref()).await;
                    worker::console_warn!(
                        "{profile}: dropped relay call no longer succeeds; given up, quota released"
                    );
                    return Ok(Round::Gone);
                }
                self.sync_lane(ctx).await?;
                let mut dropped = stored.dropped.clone();
                dropped.extend(stored.hashes.iter().copied());
                let plan = SendPlan {
                    gas_limit: Some(request.gas_limit),
                    charge: stored.charge.clone(),
                    dropped,
                    replaces: Some(stored.nonce),
                    ..SendPlan::default()
                };
                self.send_new(ctx, stored.job.clone(), request.to, request.input, plan)
                    .await?;
                Ok(Round::Pending)
            }
            // the hole it was to fill is filled
            Job::Filler => {
                self.lane_write(Some(stored.nonce), None)?;
                Ok(Round::Gone)
            }
            Job::Deploy { universal_profile } => {
                if !ctx.rpc.code(universal_profile).await?.is_empty() {
                    // deployed by another transaction with the same salt: nothing to send
                    self.lane_write(Some(stored.nonce), None)?;
                    self.record(universal_profile, None).await?;
                    return Ok(Round::Gone);
                }
                self.sync_lane(ctx).await?;
                let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
                let mut dropped = stored.dropped.clone();
                dropped.extend(stored.hashes.iter().copied());
                let plan = SendPlan {
                    charge: stored.charge.clone(),
                    dropped,
                    replaces: Some(stored.nonce),
                    ..SendPlan::default()
                };
                match self
                    .send_new(ctx, stored.job.clone(), request.to, request.input, plan)
                    .await
                {
                    Ok(sent) => {
                        worker::console_warn!(
                            "{universal_profile}: deployment sent again at nonce {} as {}",
                            sent.nonce,
                            sent.latest_hash()
                        );
                        Ok(Round::Pending)
                    }
                    Err(e) if e.code == "DEPLOYMENT_WOULD_REVERT" => {
                        self.lane_write(Some(stored.nonce), None)?;
                        Err(e)
                    }
                    // kept as it is: the next round tries again
                    Err(e) => Err(e),
                }
            }
        }
    }

    async fn track_all(&self) -> ApiResult<()> {
        let ctx = self.ctx()?;
        self.check_chain(&ctx).await?;
        {
            let _guard = self.send_lock.lock().await;
            // holes can also appear while running (the key used elsewhere, a node that lost part of its pool):
            // every alarm reconciles, not only the first use
            self.next_nonce.set(None);
            if let Err(e) = self.sync_lane(&ctx).await {
                // the rounds below still finish mined transactions; the next send reconciles again
                self.note_error(&e);
                worker::console_warn!("reconciling the nonce lane: {} {}", e.code, e.message);
            }
        }
        for tx in self.lane()? {
            if let Err(e) = self.round(&ctx, &tx).await {
                self.note_error(&e);
                worker::console_warn!(
                    "tracking nonce {} ({:?}): {} {}",
                    tx.nonce,
                    tx.job,
                    e.code,
                    e.message
                );
            }
        }
        Ok(())
    }

    // ---- metering and the transaction log ----------------------------------------------------------------------

    /// Settles `charge` on each of its meters to `gas_used`; the first meter's charge is returned.
    async fn settle(&self, charge: Option<&Charge>, gas_used: u64) -> ApiResult<Option<u64>> {
        let Some(charge) = charge else {
            return Ok(None);
        };
        let op = MeterOp::Settle {
            id: charge.id.clone(),
            gas_used,
        };
        let meters = charge
            .meters
            .iter()
            .map(|subject| MeterClient::new(&self.env, subject))
            .collect::<ApiResult<Vec<_>>>()?;
        let answers = futures_util::future::join_all(meters.iter().map(|m| m.send(&op))).await;
        let mut charged = None;
        for answer in answers {
            charged = charged.or(answer?.charged);
        }
        Ok(charged)
    }

    /// Releases `charge` on each of its meters (nothing was sent, or the job was given up).
    async fn release(&self, charge: Option<&Charge>) {
        let Some(charge) = charge else { return };
        for subject in &charge.meters {
            let released = match MeterClient::new(&self.env, subject) {
                Ok(meter) => meter
                    .send(&MeterOp::Release {
                        id: charge.id.clone(),
                    })
                    .await
                    .map(|_| ()),
                Err(e) => Err(e),
            };
            if let Err(e) = released {
                worker::console_error!("releasing {} on {subject}: {} {}", charge.id, e.code, e.message);
            }
        }
    }

    fn keep_ms(&self) -> ApiResult<u64> {
        Ok(
            config::number(&self.env, "TX_RECORD_DAYS", txlog::DEFAULT_RECORD_DAYS)?
                .saturating_mul(86_400_000),
        )
    }

    fn log_put(&self, _ctx: &Ctx, record: &TransactionStatus) -> ApiResult<()> {
        txlog::put(&self.sql()?, record, now_ms(), self.keep_ms()?)
    }

    fn log_update(
        &self,
        _ctx: &Ctx,
        hash: B256,
        change: impl FnOnce(&mut TransactionStatus),
    ) -> ApiResult<()> {
        txlog::update(&self.sql()?, hash, now_ms(), self.keep_ms()?, change)
    }

    /// The receipt facts of whichever of `hashes` is recorded as mined or reverted.
    fn mined_facts(&self, hashes: &[B256]) -> ApiResult<Option<(B256, MinedFacts)>> {
        let sql = self.sql()?;
        for hash in hashes.iter().rev() {
            if let Some(r) = txlog::get(&sql, *hash)?
                && matches!(r.status, TransactionState::Mined | TransactionState::Reverted)
            {
                return Ok(Some((
                    *hash,
                    MinedFacts {
                        success: r.status == TransactionState::Mined,
                        gas_used: r.gas_used.unwrap_or(0),
                        block_number: r.block_number.unwrap_or(0),
                    },
                )));
            }
        }
        Ok(None)
    }

    // ---- relay calls ------------------------------------------------------------------------------------------

    /// Sends a checked, reserved relay call through the lane (once per signed nonce) and waits for its receipt up
    /// to `DEPLOY_WAIT_SECONDS`.
    async fn execute(&self, job: ExecuteJob) -> ApiResult<ExecuteOutcome> {
        let charge = Charge {
            id: job.id.to_string(),
            meters: job.meters.clone(),
        };
        let ctx = match self.ctx() {
            Ok(ctx) => ctx,
            Err(e) => {
                self.release(Some(&charge)).await;
                return Err(e);
            }
        };
        if let Err(e) = self.check_chain(&ctx).await {
            self.release(Some(&charge)).await;
            return Err(e);
        }
        let wanted = Job::Execute {
            id: job.id,
            profile: job.profile,
        };
        let tx = {
            let _guard = self.send_lock.lock().await;
            if let Err(e) = self.sync_lane(&ctx).await {
                self.release(Some(&charge)).await;
                return Err(e);
            }
            match self.find_job(&wanted)? {
                Some(existing) => {
                    // the same signed nonce again: answered with the same transaction, never sent twice
                    let (request, _) = signer::decode(&existing.raw).map_err(ApiError::internal)?;
                    if request.input != job.calldata {
                        return Err(ApiError::bad_request(
                            "INVALID_RELAY_NONCE",
                            "another relay call with this signer and nonce is pending",
                        ));
                    }
                    existing
                }
                None => {
                    let plan = SendPlan {
                        gas_limit: Some(job.gas_limit),
                        charge: Some(charge),
                        ..SendPlan::default()
                    };
                    let tx = self
                        .send_new(&ctx, wanted.clone(), job.key_manager, job.calldata.clone(), plan)
                        .await?;
                    self.ensure_alarm(ALARM_MS).await?;
                    tx
                }
            }
        };
        match self.wait(&ctx, &wanted, tx).await? {
            Waited::Mined(hash) => Ok(ExecuteOutcome {
                transaction_hash: hash,
                mined: self.mined_facts(&[hash])?.map(|(_, f)| f),
            }),
            Waited::Gone(last) => {
                // finished by another round (the alarm), or given up
                let mut hashes = last.dropped.clone();
                hashes.extend(last.hashes.iter().copied());
                let found = self.mined_facts(&hashes)?;
                let latest = last
                    .hashes
                    .last()
                    .copied()
                    .ok_or_else(|| ApiError::internal("no hash"))?;
                Ok(ExecuteOutcome {
                    transaction_hash: found.map_or(latest, |(h, _)| h),
                    mined: found.map(|(_, f)| f),
                })
            }
            Waited::Pending(last) => Ok(ExecuteOutcome {
                transaction_hash: last
                    .hashes
                    .last()
                    .copied()
                    .ok_or_else(|| ApiError::internal("no hash"))?,
                mined: None,
            }),
        }
    }

    // ---- deploy and register ----------------------------------------------------------------------------------

    async fn deploy(&self, job: DeployJob) -> ApiResult<DeployOutcome> {
        let result = self.deploy_inner(job).await;
        if let Err(e) = &result {
            self.note_error(e);
        }
        result
    }

    async fn deploy_inner(&self, job: DeployJob) -> ApiResult<DeployOutcome> {
        let ctx = self.ctx()?;
        self.check_chain(&ctx).await?;
        let input =
            deploy_erc1167_proxies_calldata(job.salt, &job.post_deployment_call_data, &ctx.config.constants)?;
        let profile = job.universal_profile;
        let wanted = Job::Deploy {
            universal_profile: profile,
        };

        let tx = {
            let _guard = self.send_lock.lock().await;
            self.sync_lane(&ctx).await?;
            // under the lock: a concurrent request for the same profile waits for the first one's transaction
            match self.find_job(&wanted)? {
                Some(p) => p,
                None => {
                    if !ctx.rpc.code(profile).await?.is_empty() {
                        return Ok(DeployOutcome {
                            transaction_hash: None,
                            deployed: true,
                        });
                    }
                    let charge_id = format!("deploy:{profile:#x}");
                    let mut reserve = vec![(
                        relayer_subject(ctx.config.chain_id),
                        Period::Day,
                        ctx.config.max_gas_per_day,
                        "DAILY_GAS_CEILING",
                    )];
                    if let Some(key) = &job.key_id {
                        reserve.insert(
                            0,
                            (
                                format!("key:{key}"),
                                Period::Month,
                                job.key_budget,
                                "GAS_BUDGET_EXCEEDED",
                            ),
                        );
                    }
                    let plan = SendPlan {
                        charge: Some(Charge {
                            id: charge_id,
                            meters: reserve.iter().map(|(m, ..)| m.clone()).collect(),
                        }),
                        reserve,
                        ..SendPlan::default()
                    };
                    let tx = self
                        .send_new(
                            &ctx,
                            wanted.clone(),
                            ctx.config.constants.factory,
                            input.into(),
                            plan,
                        )
                        .await?;
                    self.ensure_alarm(ALARM_MS).await?;
                    tx
                }
            }
        };

        match self.wait(&ctx, &wanted, tx).await? {
            Waited::Mined(hash) => Ok(DeployOutcome {
                transaction_hash: Some(hash),
                deployed: true,
            }),
            Waited::Gone(last) => {
                // finished by another round (the alarm), or deployed by someone else
                let deployed = !ctx.rpc.code(profile).await?.is_empty();
                let recorded = store::profile(&self.env.kv("PROFILES")?, profile)
                    .await?
                    .and_then(|r| r.deployment_transaction);
                Ok(DeployOutcome {
                    transaction_hash: if deployed {
                        recorded
                    } else {
                        last.hashes.last().copied()
                    },
                    deployed,
                })
            }
            Waited::Pending(last) => Ok(DeployOutcome {
                transaction_hash: last.hashes.last().copied(),
                deployed: false,
            }),
        }
    }

    /// Follows the lane transaction of `wanted` (replaced, or sent again under another nonce) through rounds until
    /// it is mined, leaves the lane some other way, or `DEPLOY_WAIT_SECONDS` pass.
    async fn wait(&self, ctx: &Ctx, wanted: &Job, mut tx: PendingTx) -> ApiResult<Waited> {
        let started_ms = now_ms();
        let deadline = started_ms + ctx.config.deploy_wait_ms;
        loop {
            if let Round::Mined(hash) = self.round(ctx, &tx).await? {
                return Ok(Waited::Mined(hash));
            }
            match self.find_job(wanted)? {
                Some(current) => tx = current,
                None => return Ok(Waited::Gone(tx)),
            }
            if now_ms() >= deadline {
                return Ok(Waited::Pending(tx));
            }
            Delay::from(poll_interval(started_ms)).await;
        }
    }

    async fn record(&self, address: Address, deployment: Option<B256>) -> ApiResult<bool> {
        let kv = self.env.kv("PROFILES")?;
        match store::profile(&kv, address).await? {
            Some(mut existing) => {
                if existing.deployment_transaction.is_none() && deployment.is_some() {
                    existing.deployment_transaction = deployment;
                    store::put_profile(&kv, &existing).await?;
                }
                Ok(false)
            }
            None => {
                let record = ProfileRecord {
                    address,
                    registered_at: now_ms() / 1000,
                    deployment_transaction: deployment,
                };
                store::put_profile(&kv, &record).await?;
                Ok(true)
            }
        }
    }

    async fn register(&self, address: Address) -> ApiResult<RegisterOutcome> {
        let newly_registered = self.record(address, None).await?;
        let kv = self.env.kv("PROFILES")?;
        let config = Config::from_env(&self.env)?;
        let quota = store::quota(&kv, address, config.now(), config.monthly_gas_quota).await?;
        Ok(RegisterOutcome {
            newly_registered,
            quota,
        })
    }
}

/// Whether the node knows any of `hashes` (newest first: usually the first answer decides).
async fn any_known(rpc: &Rpc, hashes: &[B256]) -> ApiResult<bool> {
    for hash in hashes.iter().rev() {
        if rpc.transaction_known(*hash).await? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn log_rebroadcast(tx: &PendingTx, result: &core::result::Result<B256, RpcError>) {
    match SendOutcome::of(result) {
        SendOutcome::Accepted => worker::console_warn!(
            "nonce {}: the node did not know {}; broadcast again from the stored copy",
            tx.nonce,
            tx.latest_hash()
        ),
        SendOutcome::AlreadyKnown => {}
        outcome => worker::console_warn!(
            "nonce {}: broadcasting the stored copy again: {outcome:?} {:?}",
            tx.nonce,
            result.as_ref().err()
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const H1: B256 = B256::repeat_byte(1);

    fn facts(mined: Option<B256>, latest_nonce: u64, known: bool) -> Facts {
        Facts {
            mined,
            latest_nonce,
            known,
        }
    }

    #[test]
    fn a_mined_hash_wins() {
        for latest in [4, 5, 6] {
            for (known, due) in [(true, true), (false, false)] {
                assert_eq!(next_step(5, facts(Some(H1), latest, known), due), Step::Mined(H1));
            }
        }
    }

    #[test]
    fn a_used_nonce_without_our_hashes_is_dropped() {
        assert_eq!(next_step(5, facts(None, 6, false), false), Step::Dropped);
        assert_eq!(next_step(5, facts(None, 9, false), true), Step::Dropped);
        // still known: mined after the receipts were read, or about to be evicted; look again
        assert_eq!(next_step(5, facts(None, 6, true), true), Step::Wait);
    }

    #[test]
    fn an_unused_nonce_is_rebroadcast_bumped_or_waited_on() {
        // the node lost it (or it was never sent): broadcast the stored bytes, whether a bump is due or not
        assert_eq!(next_step(5, facts(None, 5, false), false), Step::Rebroadcast);
        assert_eq!(next_step(7, facts(None, 5, false), true), Step::Rebroadcast);
        assert_eq!(next_step(5, facts(None, 5, true), true), Step::BumpFees);
        assert_eq!(next_step(5, facts(None, 5, true), false), Step::Wait);
    }

    #[test]
    fn holes_between_the_chain_and_the_highest_stored_nonce_are_filled() {
        // stored 5 and 7, chain at 5, the pool holds 5 (so pending is 6): 6 is a hole
        assert_eq!(
            plan_gaps(&[5, 7], 5, 6),
            GapPlan {
                holes: vec![6],
                next_nonce: 8
            }
        );
        // the pool holds something at 6 (pending 8): no hole
        assert_eq!(
            plan_gaps(&[5, 7], 5, 8),
            GapPlan {
                holes: vec![],
                next_nonce: 8
            }
        );
        // several holes, the node knows none of the stored transactions yet
        assert_eq!(
            plan_gaps(&[3, 6], 3, 3),
            GapPlan {
                holes: vec![4, 5],
                next_nonce: 7
            }
        );
        // nothing stored: the node's pending nonce
        assert_eq!(
            plan_gaps(&[], 5, 9),
            GapPlan {
                holes: vec![],
                next_nonce: 9
            }
        );
        // stored transactions whose nonce is mined (dropped, or mined and not finished yet) do not count
        assert_eq!(
            plan_gaps(&[1, 2], 5, 5),
            GapPlan {
                holes: vec![],
                next_nonce: 5
            }
        );
        // a stored nonce far ahead of the chain: a bounded number of holes per reconciliation
        let far = plan_gaps(&[1_000_000], 0, 0);
        assert_eq!(far.holes.len(), MAX_HOLES);
        assert_eq!(far.holes.first(), Some(&0));
        assert_eq!(far.next_nonce, 1_000_001);
        // contiguous lane, nothing missing
        assert_eq!(
            plan_gaps(&[5, 6, 7], 5, 8),
            GapPlan {
                holes: vec![],
                next_nonce: 8
            }
        );
    }

    #[test]
    fn pending_records_round_trip_with_a_kind() {
        let tx = PendingTx {
            job: Job::Deploy {
                universal_profile: Address::repeat_byte(0xaa),
            },
            nonce: 7,
            raw: Bytes::from_static(&[2, 1]),
            charge: None,
            hashes: vec![H1],
            fees_checked_ms: 1,
            dropped: vec![],
        };
        let json = serde_json::to_value(&tx).unwrap();
        assert_eq!(json["job"]["kind"], "deploy");
        assert_eq!(
            json["job"]["universalProfile"],
            "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        );
        assert_eq!(serde_json::from_value::<PendingTx>(json).unwrap(), tx);
        let filler = serde_json::to_value(Job::Filler).unwrap();
        assert_eq!(filler["kind"], "filler");
    }
}
