//! The operator's hands on a pending transaction (admin routes): `replace` re-signs its job at the same nonce with
//! higher fees; `cancel` signs a 0-value transfer to the signer itself at that nonce, fees bumped so the node takes
//! it as a replacement. Both happen under the send lock on the stored copy, are stored before they are broadcast, and
//! are undone when the node refuses them (a refusal sends nothing that stays): `resign.rs`, shared with the rounds'
//! fee bumps. The transaction log follows: the replaced hash is `replaced` (by the new one) or, for a cancel,
//! `dropped`.

use alloy_primitives::B256;

use super::ctx::{Ctx, Object};
use super::model::{ManagedTx, PendingTx, Resign};
use super::policy;
use super::resign::record_resigned;
use crate::{
    error::{ApiError, ApiResult, Code},
    rpc::SendOutcome,
    signer, txlog,
};

fn not_pending(hash: B256, why: &str) -> ApiError {
    ApiError::new(
        Code::TransactionNotPending,
        format!("{hash} is not pending ({why}); nothing was sent"),
    )
}

/// `POST /admin/relayer/transactions/:hash/replace` (`Resign::Replace`) and `…/cancel` (`Resign::Cancel`).
pub(super) async fn manage(obj: Object<'_>, hash: B256, change: Resign) -> ApiResult<ManagedTx> {
    let cx = obj.ctx()?;
    cx.check_chain().await?;
    let _guard = obj.send_lock.lock().await;
    let stored = pending_with(&cx, hash)?;
    if stored.cancelled_from.is_some() && change == Resign::Cancel {
        return Err(not_pending(hash, "it is cancelled already"));
    }
    check_unmined(&cx, &stored, hash).await?;
    let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
    let previous = (request.max_fee_per_gas, request.max_priority_fee_per_gas);
    let (base, tip) = cx.rpc.fees().await?;
    let fees = policy::bumped_fees(previous, base, tip, cx.max_fee_per_gas)
        .ok_or_else(|| policy::fee_too_high(base, tip, cx.max_fee_per_gas))?;
    let replacement = change.request(request, fees, cx.signer.address(), cx.config.chain_id);
    let old = stored
        .hashes
        .last()
        .copied()
        .ok_or_else(|| ApiError::internal("a stored transaction without a hash"))?;
    let resigned = record_resigned(&cx, stored, &replacement, change).await?;
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

/// The stored transaction one of whose hashes is `hash`; `TRANSACTION_NOT_PENDING` when the lane sent it and
/// it left the lane, `TRANSACTION_NOT_FOUND` when this lane never sent it.
fn pending_with(cx: &Ctx<'_>, hash: B256) -> ApiResult<PendingTx> {
    if let Some(tx) = cx.store().find_hash(hash)? {
        return Ok(tx);
    }
    if txlog::get(&cx.store().sql()?, hash)?.is_some() {
        return Err(not_pending(hash, "it left the lane"));
    }
    Err(ApiError::new(
        Code::TransactionNotFound,
        format!("this signer has no pending transaction {hash}"),
    ))
}

/// `TRANSACTION_NOT_PENDING` when a hash of `stored` is mined or its nonce is used.
async fn check_unmined(cx: &Ctx<'_>, stored: &PendingTx, hash: B256) -> ApiResult<()> {
    for h in &stored.hashes {
        if cx.rpc.receipt(*h).await?.is_some() {
            return Err(not_pending(hash, "it is mined"));
        }
    }
    if cx.rpc.latest_nonce(cx.signer.address()).await? > stored.nonce {
        return Err(not_pending(hash, "its nonce is used"));
    }
    Ok(())
}
