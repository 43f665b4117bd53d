//! A mined lane transaction's job finished: the row goes, the records follow the receipt, the meters are settled
//! (at once, or once the receipt is deep enough: `confirm.rs`), the indexer is told, a deployment is checked and
//! registered. A mined cancel gives the job up.

use alloy_primitives::B256;
use profile_relayer::api::TransactionState;

use super::confirm::watch;
use super::ctx::Ctx;
use super::model::{Job, PendingTx};
use super::policy;
use super::profiles::record;
use crate::{
    error::{ApiError, ApiResult, Code},
    meter::Charge,
    rpc::Receipt,
    txlog,
};

/// Removes the mined transaction from the lane and finishes its job.
pub(super) async fn finish(cx: &Ctx<'_>, tx: &PendingTx, hash: B256, receipt: &Receipt) -> ApiResult<()> {
    let reverted = receipt.status.is_zero();
    let gas_used = u64::try_from(receipt.gas_used).unwrap_or(u64::MAX);
    // watched until confirmations-deep and charged then (`confirm`); with no depth asked, charged before the row
    // goes: a failed settlement is retried by the next round (settling is idempotent)
    let charged = if watch(cx, tx, hash, receipt).await? {
        None
    } else {
        cx.settle(tx.charge.as_ref(), gas_used).await?
    };
    // its nonce is used: whatever version is stored is done
    cx.store().remove_job(tx)?;
    log_finished(cx, tx, hash, receipt, charged)?;
    if let (Some(profile), false) = (tx.job.profile(), reverted) {
        // indexed in seconds, not at the indexer's next pass over the chain
        let touched =
            crate::indexer::clock::touched(cx.obj.env, cx.obj.config, cx.config.chain_id, vec![profile]);
        if let Err(e) = touched.await {
            worker::console_warn!("reporting {profile} to the indexer: {} {}", e.code, e.message);
        }
    }
    match tx.job {
        Job::Filler | Job::Execute { .. } => Ok(()),
        Job::Deploy { universal_profile } => {
            if reverted {
                return Err(ApiError::new(
                    Code::DeploymentReverted,
                    format!("transaction {hash} reverted"),
                ));
            }
            if cx.rpc.code(universal_profile).await?.is_empty() {
                return Err(ApiError::new(
                    Code::DeploymentMismatch,
                    format!("transaction {hash} was mined but no contract is at the predicted address"),
                ));
            }
            let key = tx.charge.as_ref().and_then(Charge::key_id);
            record(cx.obj, universal_profile, Some(hash), key).await?;
            Ok(())
        }
    }
}

/// The records of a finished job: the other hashes `replaced` by `hash`, and `hash` mined (or reverted) with its
/// block, gas and what was `charged`.
fn log_finished(
    cx: &Ctx<'_>,
    tx: &PendingTx,
    hash: B256,
    receipt: &Receipt,
    charged: Option<u64>,
) -> ApiResult<()> {
    for other in tx.hashes.iter().filter(|h| **h != hash) {
        cx.log_update(*other, |r| {
            r.status = TransactionState::Replaced;
            r.replaced_by = Some(hash);
        })?;
    }
    let Some((kind, profile)) = tx.job.described() else {
        return Ok(());
    };
    let previous = txlog::get(&cx.store().sql()?, hash)?;
    let mut record = previous
        .clone()
        .unwrap_or_else(|| txlog::pending(hash, kind, profile));
    record.status = policy::mined_state(receipt);
    record.block_number = u64::try_from(receipt.block_number).ok();
    record.gas_used = Some(u64::try_from(receipt.gas_used).unwrap_or(u64::MAX));
    record.charged = charged.or(record.charged);
    cx.log_put(&record, previous.map(|r| r.status), tx.charge.as_ref())
}

/// A cancelling transfer was mined at `tx`'s nonce: the job is given up. Its gas is the relayer's (settled on
/// the relayer's daily meter), the reservations of the profile or key are released, the row goes.
pub(super) async fn finish_cancelled(cx: &Ctx<'_>, tx: &PendingTx, gas_used: u64) -> ApiResult<()> {
    if let Some(charge) = &tx.charge {
        let (relayer, others) = policy::split_cancelled(charge);
        crate::meter::settle_all(cx.obj.env, &relayer, gas_used, cx.config.now()).await?;
        cx.release(Some(&others)).await;
    }
    cx.store().remove_job(tx)?;
    for h in &tx.hashes {
        cx.log_update(*h, |r| {
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
