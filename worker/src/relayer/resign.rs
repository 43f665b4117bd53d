//! A pending transaction signed again at its nonce, in place of the stored copy: a round's fee bump
//! (`rounds.rs`) and the operator's replace / cancel (`manage.rs`). The new copy is stored before it is broadcast;
//! the transaction log gets the new hash `pending` and the old one `replaced` by it (a cancel: the old hash
//! `dropped`, its self-transfer has no record); a refusal by the node puts the stored copy and the records back, so
//! nothing it refused stays. No meter is touched here: the job's charge goes with the copy, settled once on the
//! receipt of whichever hash is mined. What is stored and logged is [`Resign`]'s decision (`policy.rs`).

use profile_relayer::api::TransactionState;

use super::ctx::{Ctx, now_ms};
use super::model::{LogPlan, PendingTx, Resign, Resigned};
use crate::{
    error::{ApiError, ApiResult},
    rpc::SendOutcome,
    signer::TxRequest,
    txlog,
};

/// Signs `replacement` in place of `stored` (its nonce), stores it, records it, broadcasts it; a refusal puts
/// `stored` back (see [`Resign`]). Caller holds `send_lock` and read `stored` under it.
pub(super) async fn record_resigned(
    cx: &Ctx<'_>,
    stored: PendingTx,
    replacement: &TxRequest,
    why: Resign,
) -> ApiResult<Resigned> {
    let (raw, hash) = cx.signer.sign(replacement).map_err(ApiError::internal)?;
    let old = stored.hashes.last().copied();
    let next = why.next(&stored, raw.into(), hash, now_ms());
    // stored before it is broadcast
    cx.store().write(None, Some(&next))?;
    let plan = why.log_plan(next.job.described().is_some(), stored.cancelled_from.is_some());
    if let Some(plan) = plan {
        log_resigned(cx, &next, old, plan)?;
    }
    let result = cx.rpc.send_raw(&next.raw).await;
    let resigned = Resigned {
        nonce: next.nonce,
        hash,
        result,
    };
    if matches!(
        resigned.outcome(),
        SendOutcome::NonceTaken | SendOutcome::Rejected
    ) {
        // not taken: back to the stored copy and its records
        cx.store().write(None, Some(&why.kept(stored, now_ms())))?;
        if plan.is_some() {
            cx.log_update(hash, |r| r.status = TransactionState::Dropped)?;
            if let Some(old) = old {
                cx.log_update(old, |r| {
                    r.status = TransactionState::Pending;
                    r.replaced_by = None;
                })?;
            }
        }
    }
    Ok(resigned)
}

/// The records of a re-signed copy `next` (its hash last) in place of the one whose latest hash was `old`.
fn log_resigned(
    cx: &Ctx<'_>,
    next: &PendingTx,
    old: Option<alloy_primitives::B256>,
    plan: LogPlan,
) -> ApiResult<()> {
    let (Some((kind, profile)), Some(&hash)) = (next.job.described(), next.hashes.last()) else {
        return Ok(());
    };
    if plan.new_pending {
        cx.log_put(&txlog::pending(hash, kind, profile), None, next.charge.as_ref())?;
    }
    if let Some(old) = old {
        cx.log_update(old, |r| {
            r.status = plan.old;
            if plan.old == TransactionState::Replaced {
                r.replaced_by = Some(hash);
            }
        })?;
    }
    Ok(())
}
