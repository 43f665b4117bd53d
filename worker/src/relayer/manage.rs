//! The operator's hands on a pending transaction (admin routes): `replace` re-signs its job at the same nonce with
//! higher fees; `cancel` signs a 0-value transfer to the signer itself at that nonce, fees bumped so the node takes
//! it as a replacement. Both happen under the send lock on the stored copy, are stored before they are broadcast, and
//! are undone when the node refuses them (a refusal sends nothing that stays): `resign.rs`, shared with the rounds'
//! fee bumps. The transaction log follows: the replaced hash is `replaced` (by the new one) or, for a cancel,
//! `dropped`.

use alloy_primitives::{B256, Bytes};
use profile_relayer::api::TransactionState;

use crate::{
    error::{ApiError, ApiResult, Code},
    meter::{Charge, Subject},
    rpc::SendOutcome,
    signer::{self, TxRequest, bumped_fees_capped, initial_fees},
    txlog,
};

use super::model::{PendingTx, Resign};
use super::policy::{TRANSFER_GAS, fee_too_high};
use super::{Ctx, ManagedTx, Relayer};

/// How an operator changes a pending transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Replace,
    Cancel,
}

fn not_pending(hash: B256, why: &str) -> ApiError {
    ApiError::new(
        Code::TransactionNotPending,
        format!("{hash} is not pending ({why}); nothing was sent"),
    )
}

impl Relayer {
    /// `POST /admin/relayer/transactions/:hash/replace`.
    pub(super) async fn replace(&self, hash: B256) -> ApiResult<ManagedTx> {
        self.manage(hash, Change::Replace).await
    }

    /// `POST /admin/relayer/transactions/:hash/cancel`.
    pub(super) async fn cancel(&self, hash: B256) -> ApiResult<ManagedTx> {
        self.manage(hash, Change::Cancel).await
    }

    /// The stored transaction one of whose hashes is `hash`; `TRANSACTION_NOT_PENDING` when the lane sent it and
    /// it left the lane, `TRANSACTION_NOT_FOUND` when this lane never sent it.
    fn pending_with(&self, hash: B256) -> ApiResult<PendingTx> {
        if let Some(tx) = self.lane()?.into_iter().find(|t| t.hashes.contains(&hash)) {
            return Ok(tx);
        }
        if txlog::get(&self.sql()?, hash)?.is_some() {
            return Err(not_pending(hash, "it left the lane"));
        }
        Err(ApiError::new(
            Code::TransactionNotFound,
            format!("this signer has no pending transaction {hash}"),
        ))
    }

    async fn manage(&self, hash: B256, change: Change) -> ApiResult<ManagedTx> {
        let ctx = self.ctx()?;
        self.check_chain(&ctx).await?;
        let _guard = self.send_lock.lock().await;
        let stored = self.pending_with(hash)?;
        if stored.cancelled_from.is_some() && change == Change::Cancel {
            return Err(not_pending(hash, "it is cancelled already"));
        }
        for h in &stored.hashes {
            if ctx.rpc.receipt(*h).await?.is_some() {
                return Err(not_pending(hash, "it is mined"));
            }
        }
        if ctx.rpc.latest_nonce(ctx.signer.address()).await? > stored.nonce {
            return Err(not_pending(hash, "its nonce is used"));
        }
        let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
        let previous = (request.max_fee_per_gas, request.max_priority_fee_per_gas);
        let (base, tip) = ctx.rpc.fees().await?;
        let (max_fee, tip) = bumped_fees_capped(previous, initial_fees(base, tip), ctx.max_fee_per_gas)
            .ok_or_else(|| fee_too_high(base, tip, ctx.max_fee_per_gas))?;
        let replacement = match change {
            Change::Replace => TxRequest {
                max_fee_per_gas: max_fee,
                max_priority_fee_per_gas: tip,
                ..request
            },
            Change::Cancel => TxRequest {
                chain_id: ctx.config.chain_id,
                nonce: stored.nonce,
                gas_limit: TRANSFER_GAS,
                max_fee_per_gas: max_fee,
                max_priority_fee_per_gas: tip,
                to: ctx.signer.address(),
                input: Bytes::new(),
            },
        };
        let old = stored
            .hashes
            .last()
            .copied()
            .ok_or_else(|| ApiError::internal("a stored transaction without a hash"))?;
        let why = match change {
            Change::Replace => Resign::Replace,
            Change::Cancel => Resign::Cancel,
        };
        let resigned = self.record_resigned(&ctx, stored, &replacement, why).await?;
        match resigned.outcome() {
            SendOutcome::Accepted | SendOutcome::AlreadyKnown | SendOutcome::Unknown => {
                worker::console_log!(
                    "{}",
                    serde_json::json!({"event": "adminTransaction", "action": format!("{change:?}"),
                        "nonce": resigned.nonce, "replaced": old, "transactionHash": resigned.hash})
                );
                Ok(ManagedTx {
                    nonce: resigned.nonce,
                    replaced: old,
                    transaction_hash: resigned.hash,
                })
            }
            SendOutcome::NonceTaken | SendOutcome::Rejected => {
                // not taken: the stored copy and its records are back
                let message = resigned
                    .result
                    .err()
                    .map_or_else(String::new, |e| format!("{e:?}"));
                Err(not_pending(
                    old,
                    &format!("the node refused the replacement: {message}"),
                ))
            }
        }
    }

    /// A cancelling transfer was mined at `tx`'s nonce: the job is given up. Its gas is the relayer's (settled on
    /// the relayer's daily meter), the reservations of the profile or key are released, the row goes.
    pub(super) async fn finish_cancelled(&self, ctx: &Ctx, tx: &PendingTx, gas_used: u64) -> ApiResult<()> {
        if let Some(charge) = &tx.charge {
            let (relayer, others): (Vec<Subject>, Vec<Subject>) = charge
                .meters
                .iter()
                .cloned()
                .partition(|s| matches!(s, Subject::Relayer(_)));
            crate::meter::settle_all(
                &self.env,
                &Charge {
                    id: charge.id.clone(),
                    meters: relayer,
                },
                gas_used,
                ctx.config.now(),
            )
            .await?;
            self.release(Some(&Charge {
                id: charge.id.clone(),
                meters: others,
            }))
            .await;
        }
        if self.lane_get(tx.nonce)?.is_some_and(|s| s.job == tx.job) {
            self.lane_write(Some(tx.nonce), None)?;
        }
        for h in &tx.hashes {
            self.log_update(ctx, *h, |r| {
                if r.status == TransactionState::Pending {
                    r.status = TransactionState::Dropped;
                }
            })?;
        }
        worker::console_warn!(
            "nonce {}: cancelled by the operator, {gas_used} gas for the self-transfer",
            tx.nonce
        );
        Ok(())
    }
}
