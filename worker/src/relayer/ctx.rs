//! What the flows work with. [`Object`]: the parts of the Durable Object the shell lends for one request or alarm —
//! its bindings, configuration, lane storage, send lock and what it remembers of the chain ([`Memory`]). [`Ctx`]:
//! one round's context — the chain's configuration, the RPC, the lane's key, the fee cap — with the bookkeeping
//! every flow shares: the meters (settle, release), the transaction log, the chain reads of a round.

use std::cell::Cell;

use alloy_primitives::{Address, B256};
use futures_util::lock::Mutex;
use profile_relayer::api::{TransactionState, TransactionStatus};
use worker::Env;

use super::model::{LaneStatus, MinedFacts};
use super::policy;
use super::store::LaneStore;
use crate::{
    config::{Config, PoolSigner, RelayerConfig, default_confirmations},
    error::{ApiError, ApiResult, Code},
    meter::{Charge, release_all, settle_all},
    rpc::{Receipt, Rpc},
    signer::Signer,
    txlog,
};

pub(super) use crate::plumbing::now_ms;

/// What the object remembers of the chain between requests (lost with the object: re-read then).
#[derive(Debug, Default)]
pub(super) struct Memory {
    /// The next nonce to assign; `None` until the lane is reconciled with the chain (after construction, and again
    /// after the node was unreachable: it may come back as another node).
    pub(super) next_nonce: Cell<Option<u64>>,
    /// The node's chain id was checked against `CHAIN_ID`.
    pub(super) chain_checked: Cell<bool>,
}

/// The parts of the object a flow uses.
#[derive(Debug, Clone, Copy)]
pub(super) struct Object<'a> {
    pub(super) env: &'a Env,
    /// The configuration, parsed when the object is constructed (vars change only with a new deployment).
    pub(super) config: &'a Config,
    pub(super) store: &'a LaneStore,
    /// Serializes nonce → sign → store → send, and every later change to a sent transaction.
    pub(super) send_lock: &'a Mutex<()>,
    pub(super) memory: &'a Memory,
}

impl<'a> Object<'a> {
    /// The context of a round: the chain's configuration and RPC, the lane's key and the fee cap.
    pub(super) fn ctx(self) -> ApiResult<Ctx<'a>> {
        let config = self.config.relayer()?.clone();
        let rpc = config.rpc();
        let signer = self.lane_signer(&config)?.signer;
        let max_fee_per_gas = self.config.max_fee_per_gas.value()?;
        Ok(Ctx {
            obj: self,
            config,
            rpc,
            signer,
            max_fee_per_gas,
        })
    }

    /// The key of this lane's signer ([`LaneStore::signer`]); a lane from before the pool (the legacy object) that
    /// an alarm wakes before any request is the legacy key's.
    fn lane_signer(self, config: &RelayerConfig) -> ApiResult<PoolSigner> {
        let pool = config.signers()?;
        let address = self.store.signer()?;
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

    /// After the node was unreachable it may come back as another node (restart, failover): re-read the chain id
    /// and reconcile the lane again.
    pub(super) fn note_error(self, e: &ApiError) {
        if e.is(Code::RpcUnavailable) {
            self.memory.next_nonce.set(None);
            self.memory.chain_checked.set(false);
        }
    }

    /// Whether the lane has pending work for `profile` (a deploy of it or a relay call of it).
    pub(super) fn holds(self, profile: Address) -> ApiResult<bool> {
        Ok(policy::holds(&self.store.lane()?, profile))
    }

    /// Refuses new work for `profile` while draining ([`policy::refuse_if_draining`]).
    pub(super) fn refuse_if_draining(self, profile: Address) -> ApiResult<()> {
        if !self.store.draining()? {
            return Ok(());
        }
        policy::refuse_if_draining(true, self.holds(profile)?)
    }

    /// The lane as the operator sees it.
    pub(super) fn status(self) -> ApiResult<LaneStatus> {
        Ok(policy::lane_status(
            &self.store.lane()?,
            now_ms(),
            self.memory.next_nonce.get(),
            self.store.draining()?,
        ))
    }

    /// Releases `charge` on each of its meters (nothing was sent, or the job was given up).
    pub(super) async fn release(self, charge: Option<&Charge>) {
        if let Some(charge) = charge {
            release_all(self.env, charge).await;
        }
    }
}

/// Everything a round needs.
#[derive(Debug)]
pub(super) struct Ctx<'a> {
    pub(super) obj: Object<'a>,
    pub(super) config: RelayerConfig,
    pub(super) rpc: Rpc,
    pub(super) signer: Signer,
    pub(super) max_fee_per_gas: u128,
}

impl<'a> Ctx<'a> {
    /// The lane's storage.
    pub(super) const fn store(&self) -> &'a LaneStore {
        self.obj.store
    }

    /// The node must be on `CHAIN_ID` before anything is signed (checked once, again after it was unreachable).
    pub(super) async fn check_chain(&self) -> ApiResult<()> {
        if self.obj.memory.chain_checked.get() {
            return Ok(());
        }
        let chain_id = self.rpc.chain_id().await?;
        if chain_id != self.config.chain_id {
            return Err(ApiError::config(format!(
                "CHAIN_ID is {} but the RPC node is on chain {chain_id}; refusing to sign",
                self.config.chain_id
            )));
        }
        self.obj.memory.chain_checked.set(true);
        Ok(())
    }

    /// The confirmations a transaction of this relayer's chain needs before it is charged.
    pub(super) fn confirmations(&self) -> u64 {
        let chain_id = self.config.chain_id;
        self.obj
            .config
            .chain(&chain_id.to_string())
            .map_or_else(|_| default_confirmations(chain_id), |c| c.confirmations)
    }

    /// Settles `charge` on each of its meters to `gas_used`; the first meter's charge is returned.
    pub(super) async fn settle(&self, charge: Option<&Charge>, gas_used: u64) -> ApiResult<Option<u64>> {
        match charge {
            Some(charge) => settle_all(self.obj.env, charge, gas_used, self.config.now()).await,
            None => Ok(None),
        }
    }

    /// Releases `charge` on each of its meters.
    pub(super) async fn release(&self, charge: Option<&Charge>) {
        self.obj.release(charge).await;
    }

    fn keep_ms(&self) -> ApiResult<u64> {
        Ok(self.obj.config.tx_record_days.value()?.saturating_mul(86_400_000))
    }

    /// Writes `record`, whose status was `previous` (as the caller read it; `None` for a new record); `charge`
    /// names the API key that asked for it (its webhook gets the change).
    pub(super) fn log_put(
        &self,
        record: &TransactionStatus,
        previous: Option<TransactionState>,
        charge: Option<&Charge>,
    ) -> ApiResult<()> {
        let origin = txlog::Origin {
            chain_id: self.config.chain_id,
            key_id: charge.and_then(Charge::key_id),
        };
        txlog::put(
            &self.store().sql()?,
            record,
            previous,
            origin,
            now_ms(),
            self.keep_ms()?,
        )
    }

    /// Changes the record of `hash`.
    pub(super) fn log_update(
        &self,
        hash: B256,
        change: impl FnOnce(&mut TransactionStatus),
    ) -> ApiResult<()> {
        let origin = txlog::Origin {
            chain_id: self.config.chain_id,
            key_id: None,
        };
        txlog::update(
            &self.store().sql()?,
            hash,
            origin,
            now_ms(),
            self.keep_ms()?,
            change,
        )
    }

    /// The receipt facts of whichever of `hashes` is recorded as mined or reverted.
    pub(super) fn mined_facts(&self, hashes: &[B256]) -> ApiResult<Option<(B256, MinedFacts)>> {
        let sql = self.store().sql()?;
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

    /// Whether the node knows any of `hashes` (newest first: usually the first answer decides).
    pub(super) async fn any_known(&self, hashes: &[B256]) -> ApiResult<bool> {
        for hash in hashes.iter().rev() {
            if self.rpc.transaction_known(*hash).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The receipt of whichever of `hashes` is mined (newest first: usually the first answer decides), with its
    /// hash.
    pub(super) async fn mined_receipt(&self, hashes: &[B256]) -> ApiResult<Option<(B256, Receipt)>> {
        for hash in hashes.iter().rev() {
            if let Some(receipt) = self.rpc.receipt(*hash).await? {
                return Ok(Some((*hash, receipt)));
            }
        }
        Ok(None)
    }
}
