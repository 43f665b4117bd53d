//! The `Relayer` Durable Object, one per deployment (network). It is the only place that
//! - assigns nonces and sends transactions for the relayer key (an async lock serializes nonce → sign → send;
//!   waiting for receipts happens outside the lock, so concurrent deploys pipeline),
//! - replaces transactions that are not mined in time (fees bumped by at least 10%),
//! - writes profile registrations and quota usage to KV (single writer: no lost updates).
//!
//! In-flight transactions are kept in DO storage under `pending`; an alarm keeps tracking them after the HTTP
//! request that sent them has answered 202.

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

use std::cell::{Cell, RefCell};

use alloy_primitives::{Address, B256, Bytes};
use futures_util::lock::Mutex;
use profile_relayer::{api::Quota, lsp23::deploy_erc1167_proxies_calldata};
use serde::{Deserialize, Serialize};
use worker::{Date, Delay, DurableObject, Env, Request, Response, Result, State, durable_object};

use crate::{
    config::Config,
    error::{ApiError, ApiResult},
    rpc::Rpc,
    signer::{Signer, TxRequest, bumped_fees, initial_fees},
    store::{self, ProfileRecord},
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

/// A sent, not yet mined deployment transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PendingTx {
    universal_profile: Address,
    nonce: u64,
    gas_limit: u64,
    max_fee_per_gas: u128,
    max_priority_fee_per_gas: u128,
    input: Bytes,
    /// Every hash sent for this nonce, oldest first.
    hashes: Vec<B256>,
    last_sent_ms: u64,
}

const PENDING: &str = "pending";
const ALARM_MS: i64 = 2_000;

/// The Durable Object.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct Relayer {
    state: State,
    env: Env,
    send_lock: Mutex<()>,
    next_nonce: Cell<Option<u64>>,
    chain_checked: Cell<bool>,
    pending_cache: RefCell<Option<Vec<PendingTx>>>,
}

fn now_ms() -> u64 {
    Date::now().as_millis()
}

impl DurableObject for Relayer {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            send_lock: Mutex::new(()),
            next_nonce: Cell::new(None),
            chain_checked: Cell::new(false),
            pending_cache: RefCell::new(None),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        Ok(self.handle(req).await.unwrap_or_else(ApiError::into_response))
    }

    async fn alarm(&self) -> Result<Response> {
        if let Err(e) = self.track_all().await {
            worker::console_warn!("relayer alarm: {} {}", e.code, e.message);
        }
        if !self.load_pending().await.unwrap_or_default().is_empty() {
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
            "/pending" => {
                let job: RegisterJob = req.json().await.map_err(ApiError::internal)?;
                let all = self.load_pending().await?;
                let hash = all
                    .iter()
                    .find(|p| p.universal_profile == job.address)
                    .and_then(|p| p.hashes.last());
                Ok(Response::from_json(&hash)?)
            }
            _ => Err(ApiError::not_found("no such relayer operation")),
        }
    }

    fn config(&self) -> ApiResult<(Config, Rpc, Signer)> {
        let config = Config::from_env(&self.env)?;
        let rpc = config.rpc();
        let signer = Config::signer(&self.env)?;
        Ok((config, rpc, signer))
    }

    async fn check_chain(&self, rpc: &Rpc, config: &Config) -> ApiResult<()> {
        if self.chain_checked.get() {
            return Ok(());
        }
        let chain_id = rpc.chain_id().await?;
        if chain_id != config.chain_id {
            return Err(ApiError::config(format!(
                "CHAIN_ID is {} but the RPC node is on chain {chain_id}; refusing to sign",
                config.chain_id
            )));
        }
        self.chain_checked.set(true);
        Ok(())
    }

    async fn load_pending(&self) -> ApiResult<Vec<PendingTx>> {
        if let Some(p) = self.pending_cache.borrow().clone() {
            return Ok(p);
        }
        let stored: Vec<PendingTx> = self.state.storage().get(PENDING).await?.unwrap_or_default();
        *self.pending_cache.borrow_mut() = Some(stored.clone());
        Ok(stored)
    }

    async fn save_pending(&self, pending: Vec<PendingTx>) -> ApiResult<()> {
        self.state.storage().put(PENDING, &pending).await?;
        *self.pending_cache.borrow_mut() = Some(pending);
        Ok(())
    }

    async fn update_pending(&self, tx: &PendingTx) -> ApiResult<()> {
        let mut all = self.load_pending().await?;
        match all
            .iter_mut()
            .find(|p| p.universal_profile == tx.universal_profile)
        {
            Some(slot) => *slot = tx.clone(),
            None => all.push(tx.clone()),
        }
        self.save_pending(all).await
    }

    async fn remove_pending(&self, profile: Address) -> ApiResult<()> {
        let mut all = self.load_pending().await?;
        all.retain(|p| p.universal_profile != profile);
        self.save_pending(all).await
    }

    async fn deploy(&self, job: DeployJob) -> ApiResult<DeployOutcome> {
        let result = self.deploy_inner(job).await;
        if let Err(e) = &result
            && e.code == "RPC_UNAVAILABLE"
        {
            // the node may come back as a different node (restart, failover): re-read nonce and chain id then
            self.next_nonce.set(None);
            self.chain_checked.set(false);
        }
        result
    }

    async fn deploy_inner(&self, job: DeployJob) -> ApiResult<DeployOutcome> {
        let (config, rpc, signer) = self.config()?;
        self.check_chain(&rpc, &config).await?;
        let input =
            deploy_erc1167_proxies_calldata(job.salt, &job.post_deployment_call_data, &config.constants)?;

        let sent = {
            let _guard = self.send_lock.lock().await;
            // under the lock: a concurrent request for the same profile waits for the first one's transaction
            let existing = self
                .load_pending()
                .await?
                .into_iter()
                .find(|p| p.universal_profile == job.universal_profile);
            match existing {
                Some(p) => p,
                None => {
                    if !rpc.code(job.universal_profile).await?.is_empty() {
                        return Ok(DeployOutcome {
                            transaction_hash: None,
                            deployed: true,
                        });
                    }
                    let tx = self
                        .send_new(&rpc, &signer, &config, job.universal_profile, input.into())
                        .await?;
                    self.update_pending(&tx).await?;
                    if self.state.storage().get_alarm().await?.is_none() {
                        self.state.storage().set_alarm(ALARM_MS).await?;
                    }
                    tx
                }
            }
        };

        let deadline = now_ms() + config.deploy_wait_ms;
        let mut tx = sent;
        loop {
            match self.advance(&rpc, &signer, &config, &mut tx).await? {
                Some(mined) => {
                    return Ok(DeployOutcome {
                        transaction_hash: Some(mined),
                        deployed: true,
                    });
                }
                None if now_ms() >= deadline => {
                    return Ok(DeployOutcome {
                        transaction_hash: tx.hashes.last().copied(),
                        deployed: false,
                    });
                }
                None => Delay::from(core::time::Duration::from_millis(200)).await,
            }
        }
    }

    /// Picks a nonce, estimates gas, prices, signs and sends. Caller holds `send_lock`.
    async fn send_new(
        &self,
        rpc: &Rpc,
        signer: &Signer,
        config: &Config,
        profile: Address,
        input: Bytes,
    ) -> ApiResult<PendingTx> {
        let from = signer.address();
        let to = config.constants.factory;
        let gas = rpc.estimate_gas(from, to, &input).await.map_err(|e| match e {
            crate::rpc::RpcError::Node { message, .. } => ApiError::new(
                502,
                "DEPLOYMENT_WOULD_REVERT",
                format!("the factory call would revert: {message}"),
            ),
            other => other.into(),
        })?;
        let gas_limit = gas + gas / 5 + 20_000;
        let (base, tip) = rpc.fees().await?;
        let (max_fee, tip) = initial_fees(base, tip);
        let balance = rpc.balance(from).await?;
        if balance < alloy_primitives::U256::from(gas_limit) * alloy_primitives::U256::from(max_fee) {
            let mut err = ApiError::new(
                503,
                "INSUFFICIENT_FUNDS",
                "the relayer's balance cannot pay for this deployment",
            );
            err.retry_after = Some(60);
            return Err(err);
        }
        for attempt in 0..3 {
            let nonce = match self.next_nonce.get() {
                Some(n) => n,
                None => rpc.pending_nonce(from).await?,
            };
            let request = TxRequest {
                chain_id: config.chain_id,
                nonce,
                gas_limit,
                max_fee_per_gas: max_fee,
                max_priority_fee_per_gas: tip,
                to,
                input: input.clone(),
            };
            let (raw, hash) = signer.sign(&request).map_err(ApiError::internal)?;
            match rpc.send_raw(&raw).await {
                Ok(_) => {
                    self.next_nonce.set(Some(nonce + 1));
                    return Ok(PendingTx {
                        universal_profile: profile,
                        nonce,
                        gas_limit,
                        max_fee_per_gas: max_fee,
                        max_priority_fee_per_gas: tip,
                        input,
                        hashes: vec![hash],
                        last_sent_ms: now_ms(),
                    });
                }
                Err(e) => {
                    // the chain is the source of truth: forget the cached nonce and re-read it
                    self.next_nonce.set(None);
                    if !(e.is_nonce_error() && attempt < 2) {
                        return Err(e.into());
                    }
                    worker::console_warn!("nonce {nonce} rejected ({e:?}); re-reading the chain");
                }
            }
        }
        Err(ApiError::internal("nonce retries exhausted"))
    }

    /// Checks the receipts of `tx`; finalizes it when mined, replaces it when stuck. Returns the mined hash.
    async fn advance(
        &self,
        rpc: &Rpc,
        signer: &Signer,
        config: &Config,
        tx: &mut PendingTx,
    ) -> ApiResult<Option<B256>> {
        for hash in tx.hashes.iter().rev() {
            if let Some(receipt) = rpc.receipt(*hash).await? {
                self.remove_pending(tx.universal_profile).await?;
                if receipt.status.is_zero() {
                    return Err(ApiError::new(
                        502,
                        "DEPLOYMENT_REVERTED",
                        format!("transaction {hash} reverted"),
                    ));
                }
                if rpc.code(tx.universal_profile).await?.is_empty() {
                    return Err(ApiError::new(
                        502,
                        "DEPLOYMENT_MISMATCH",
                        format!("transaction {hash} was mined but no contract is at the predicted address"),
                    ));
                }
                self.record(tx.universal_profile, Some(*hash)).await?;
                return Ok(Some(*hash));
            }
        }
        if now_ms().saturating_sub(tx.last_sent_ms) >= config.replace_after_ms {
            self.replace(rpc, signer, config, tx).await?;
        }
        Ok(None)
    }

    async fn replace(
        &self,
        rpc: &Rpc,
        signer: &Signer,
        config: &Config,
        tx: &mut PendingTx,
    ) -> ApiResult<()> {
        let (base, tip) = rpc.fees().await?;
        let (max_fee, tip) = bumped_fees(
            (tx.max_fee_per_gas, tx.max_priority_fee_per_gas),
            initial_fees(base, tip),
        );
        let request = TxRequest {
            chain_id: config.chain_id,
            nonce: tx.nonce,
            gas_limit: tx.gas_limit,
            max_fee_per_gas: max_fee,
            max_priority_fee_per_gas: tip,
            to: config.constants.factory,
            input: tx.input.clone(),
        };
        let (raw, hash) = signer.sign(&request).map_err(ApiError::internal)?;
        match rpc.send_raw(&raw).await {
            Ok(_) => {
                worker::console_log!(
                    "replaced nonce {} with {hash} (max fee {max_fee}, tip {tip})",
                    tx.nonce
                );
                tx.hashes.push(hash);
                tx.max_fee_per_gas = max_fee;
                tx.max_priority_fee_per_gas = tip;
                tx.last_sent_ms = now_ms();
                self.update_pending(tx).await
            }
            // an earlier transaction with this nonce was mined meanwhile: its receipt shows up next round
            Err(e) if e.is_nonce_error() => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    async fn track_all(&self) -> ApiResult<()> {
        let (config, rpc, signer) = self.config()?;
        for mut tx in self.load_pending().await? {
            if let Err(e) = self.advance(&rpc, &signer, &config, &mut tx).await {
                worker::console_warn!("tracking {}: {} {}", tx.universal_profile, e.code, e.message);
            }
        }
        Ok(())
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
        let quota = store::quota(&kv, address, now_ms() / 1000).await?;
        Ok(RegisterOutcome {
            newly_registered,
            quota,
        })
    }
}
