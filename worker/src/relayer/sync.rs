//! Reconciling the lane with the chain when the next nonce is not known (first use after construction, after the
//! node was unreachable, and at every alarm): stored transactions the node lost are broadcast again from their
//! stored bytes, nonce holes with nothing stored are filled with 0-value self-transfers ([`super::policy::plan_gaps`]),
//! and the next nonce is set.

use alloy_primitives::{B256, Bytes};

use super::ctx::{Ctx, now_ms};
use super::model::{Job, PendingTx};
use super::policy::{self, TRANSFER_GAS};
use super::send::{refused, store_and_send};
use crate::{
    error::ApiResult,
    meter::{Limit, Subject, UNLIMITED, reserve_all},
    rpc::{RpcError, SendOutcome},
    signer::TxRequest,
};

/// Logs a broadcast of a stored copy that the node did not simply know already.
pub(super) fn log_rebroadcast(tx: &PendingTx, result: &core::result::Result<B256, RpcError>) {
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

/// Reconciles the lane with the chain unless the next nonce is known. Caller holds `send_lock`.
pub(super) async fn sync_lane(cx: &Ctx<'_>) -> ApiResult<()> {
    if cx.obj.memory.next_nonce.get().is_some() {
        return Ok(());
    }
    let from = cx.signer.address();
    let latest = cx.rpc.latest_nonce(from).await?;
    let lane = cx.store().lane()?;
    for tx in lane.iter().filter(|t| t.nonce >= latest) {
        if !cx.any_known(&tx.hashes).await? {
            let result = cx.rpc.send_raw(&tx.raw).await;
            log_rebroadcast(tx, &result);
            if let (SendOutcome::Unknown, Err(e)) = (SendOutcome::of(&result), result) {
                return Err(e.into());
            }
        }
    }
    let pending = cx.rpc.pending_nonce(from).await?;
    let stored: Vec<u64> = lane.iter().map(|t| t.nonce).collect();
    let plan = policy::plan_gaps(&stored, latest, pending);
    for &hole in &plan.holes {
        fill_hole(cx, hole).await?;
    }
    if !plan.holes.is_empty() || plan.next_nonce != pending {
        worker::console_log!(
            "nonce lane reconciled: chain at {latest} (pending {pending}), {} stored, holes filled {:?}, next {}",
            lane.len(),
            plan.holes,
            plan.next_nonce
        );
    }
    cx.obj.memory.next_nonce.set(Some(plan.next_nonce));
    Ok(())
}

/// Fills the hole at `nonce` with a 0-value transfer to the relayer itself. Caller holds `send_lock`.
async fn fill_hole(cx: &Ctx<'_>, nonce: u64) -> ApiResult<()> {
    let (base, tip) = cx.rpc.fees().await?;
    let (max_fee, tip) = policy::new_fees(base, tip, cx.max_fee_per_gas)?;
    let request = TxRequest {
        chain_id: cx.config.chain_id,
        nonce,
        gas_limit: TRANSFER_GAS,
        max_fee_per_gas: max_fee,
        max_priority_fee_per_gas: tip,
        to: cx.signer.address(),
        input: Bytes::new(),
    };
    // the relayer's own gas is counted too: on its daily meter, never refused (a hole must be filled for any
    // later transaction to be mined)
    let chain_id = cx.config.chain_id;
    let charge = policy::filler_charge(chain_id, cx.signer.address(), nonce, now_ms());
    let relayer = Limit {
        subject: Subject::Relayer(chain_id),
        limit: UNLIMITED,
    };
    let (now, ttl) = (cx.config.now(), cx.config.reservation_ttl);
    reserve_all(cx.obj.env, &charge.id, TRANSFER_GAS, now, ttl, &[relayer]).await?;
    let no_row = (Vec::new(), None);
    let (tx, result) = store_and_send(cx, Job::Filler, &request, no_row, Some(charge.clone())).await?;
    match SendOutcome::of(&result) {
        SendOutcome::Accepted | SendOutcome::AlreadyKnown | SendOutcome::Unknown => {
            worker::console_warn!(
                "nonce hole {nonce} filled with a self-transfer {}",
                tx.latest_hash()
            );
            Ok(())
        }
        // something occupies the nonce after all: nothing to fill
        SendOutcome::NonceTaken => {
            cx.release(Some(&charge)).await;
            Ok(())
        }
        SendOutcome::Rejected => {
            cx.release(Some(&charge)).await;
            Err(refused(result))
        }
    }
}
