//! The typed client of one signer's `Relayer` object, and the name of that object.

use alloy_primitives::{Address, B256};
use profile_relayer::api::TransactionStatus;
use worker::Env;

use super::model::{
    DeployJob, DeployOutcome, Envelope, ExecuteJob, ExecuteOutcome, LaneList, LaneStatus, ManagedTx,
    RegisterJob, RegisterOutcome, RelayerOp, RouteAnswer,
};
use crate::{config::RelayerConfig, error::ApiResult};

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

    /// Registers `address` for the API key `key`.
    pub async fn register(&self, address: Address, key: Option<String>) -> ApiResult<RegisterOutcome> {
        self.ask(&RelayerOp::Register(RegisterJob { address, key })).await
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
