//! One round of a lane transaction ([`round`]): mined → finish the job (`finish.rs`); lost → re-broadcast the
//! stored bytes; nonce used by another transaction → dropped, the job sent again (`resend.rs`); not mined in time →
//! fees bumped under the cap. And the alarm's pass over the whole lane ([`track_all`]).

use alloy_primitives::B256;
use profile_relayer::api::TransactionState;

use super::confirm::confirm_all;
use super::ctx::{Ctx, Object, now_ms};
use super::finish::{finish, finish_cancelled};
use super::model::{Facts, PendingTx, Resign, Round, Step};
use super::policy;
use super::resend::send_again;
use super::resign::record_resigned;
use super::sync::{log_rebroadcast, sync_lane};
use crate::{
    error::{ApiError, ApiResult},
    rpc::{Receipt, SendOutcome},
    signer,
};

/// Reads the chain for `tx` (the caller's copy) and acts on [`policy::next_step`]. Every change happens under
/// `send_lock` on the copy reloaded from storage, and only if that copy still is the one decided on.
pub(super) async fn round(cx: &Ctx<'_>, tx: &PendingTx) -> ApiResult<Round> {
    let mined = cx.mined_receipt(&tx.hashes).await?;
    let facts = match &mined {
        Some((hash, _)) => Facts {
            mined: Some(*hash),
            latest_nonce: 0,
            known: true,
        },
        None => Facts {
            mined: None,
            latest_nonce: cx.rpc.latest_nonce(cx.signer.address()).await?,
            known: cx.any_known(&tx.hashes).await?,
        },
    };
    let bump_due = policy::bump_due(now_ms(), tx.fees_checked_ms, cx.config.replace_after_ms);
    match policy::next_step(tx.nonce, facts, bump_due) {
        Step::Mined(hash) => mined_round(cx, tx, hash, mined.map(|(_, r)| r)).await,
        Step::Wait => Ok(Round::Pending),
        Step::Rebroadcast => rebroadcast(cx, tx).await,
        Step::BumpFees => bump_fees(cx, tx).await,
        Step::Dropped => dropped(cx, tx).await,
    }
}

/// `hash` of `tx` is mined: its job is finished — or, for a cancelling self-transfer, given up.
async fn mined_round(cx: &Ctx<'_>, tx: &PendingTx, hash: B256, receipt: Option<Receipt>) -> ApiResult<Round> {
    let receipt = receipt.ok_or_else(|| ApiError::internal("mined without a receipt"))?;
    if tx.is_cancel(hash) {
        let gas_used = u64::try_from(receipt.gas_used).unwrap_or(u64::MAX);
        finish_cancelled(cx, tx, gas_used).await?;
        return Ok(Round::Gone);
    }
    finish(cx, tx, hash, &receipt).await?;
    Ok(Round::Mined(hash))
}

/// The stored copy of `tx`, read under `send_lock` ([`policy::still_stored`]).
fn still_stored(cx: &Ctx<'_>, tx: &PendingTx) -> ApiResult<Result<PendingTx, Round>> {
    Ok(policy::still_stored(cx.store().get(tx.nonce)?, tx))
}

/// The node lost the transaction and its nonce is unused: broadcast the stored bytes again.
async fn rebroadcast(cx: &Ctx<'_>, tx: &PendingTx) -> ApiResult<Round> {
    let _guard = cx.obj.send_lock.lock().await;
    let stored = match still_stored(cx, tx)? {
        Ok(stored) => stored,
        Err(round) => return Ok(round),
    };
    let result = cx.rpc.send_raw(&stored.raw).await;
    log_rebroadcast(&stored, &result);
    match (SendOutcome::of(&result), result) {
        (SendOutcome::Unknown, Err(e)) => Err(e.into()),
        _ => Ok(Round::Pending),
    }
}

/// Replaces the transaction with higher fees, from the stored copy, under the cap.
async fn bump_fees(cx: &Ctx<'_>, tx: &PendingTx) -> ApiResult<Round> {
    let _guard = cx.obj.send_lock.lock().await;
    let stored = match still_stored(cx, tx)? {
        Ok(stored) => stored,
        Err(round) => return Ok(round),
    };
    if !policy::bump_due(now_ms(), stored.fees_checked_ms, cx.config.replace_after_ms) {
        // another round replaced it meanwhile
        return Ok(Round::Pending);
    }
    let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
    let previous = (request.max_fee_per_gas, request.max_priority_fee_per_gas);
    let (base, tip) = cx.rpc.fees().await?;
    let Some(fees) = policy::bumped_fees(previous, base, tip, cx.max_fee_per_gas) else {
        worker::console_warn!(
            "nonce {}: a fee bump from max fee {} wei would exceed MAX_FEE_PER_GAS ({} wei); not sent, \
             waiting at the current fees",
            stored.nonce,
            previous.0,
            cx.max_fee_per_gas
        );
        let waiting = PendingTx {
            fees_checked_ms: now_ms(),
            ..stored
        };
        cx.store().write(None, Some(&waiting))?;
        return Ok(Round::Pending);
    };
    let replacement = Resign::Bump.request(request, fees, cx.signer.address(), cx.config.chain_id);
    let resigned = record_resigned(cx, stored, &replacement, Resign::Bump).await?;
    match (resigned.outcome(), resigned.result) {
        (SendOutcome::Accepted | SendOutcome::AlreadyKnown, _) => {
            worker::console_log!(
                "replaced nonce {} with {} (max fee {}, tip {})",
                resigned.nonce,
                resigned.hash,
                fees.0,
                fees.1
            );
            Ok(Round::Pending)
        }
        (SendOutcome::Unknown, result) => Err(result.err().map_or_else(
            || ApiError::internal("no answer without an error"),
            ApiError::from,
        )),
        (_, result) => {
            // not taken (mined meanwhile, or outbid): the stored copy is back; the next round sees why
            worker::console_warn!(
                "replacement of nonce {} refused: {:?}",
                resigned.nonce,
                result.err()
            );
            Ok(Round::Pending)
        }
    }
}

/// The nonce went to another transaction: the job is sent again with a fresh nonce (or is done).
async fn dropped(cx: &Ctx<'_>, tx: &PendingTx) -> ApiResult<Round> {
    let _guard = cx.obj.send_lock.lock().await;
    let stored = match still_stored(cx, tx)? {
        Ok(stored) => stored,
        Err(round) => return Ok(round),
    };
    worker::console_warn!(
        "nonce {} was used by another transaction: {:?} dropped",
        stored.nonce,
        stored.hashes
    );
    for h in &stored.hashes {
        cx.log_update(*h, |r| r.status = TransactionState::Dropped)?;
    }
    if stored.cancelled_from.is_some() {
        // cancelled by the operator: never sent again
        cx.store().write(Some(stored.nonce), None)?;
        cx.release(stored.charge.as_ref()).await;
        return Ok(Round::Gone);
    }
    send_again(cx, &stored, Some(stored.nonce)).await
}

/// The alarm's pass: the watched transactions first (a receipt that disappeared puts its transaction back in the
/// lane, `confirm.rs`), then the lane reconciled with the chain, then a round for every lane transaction.
pub(super) async fn track_all(obj: Object<'_>) -> ApiResult<()> {
    let cx = obj.ctx()?;
    cx.check_chain().await?;
    if let Err(e) = confirm_all(&cx).await {
        obj.note_error(&e);
        worker::console_warn!("confirming mined transactions: {} {}", e.code, e.message);
    }
    {
        let _guard = obj.send_lock.lock().await;
        // holes can also appear while running (the key used elsewhere, a node that lost part of its pool):
        // every alarm reconciles, not only the first use
        obj.memory.next_nonce.set(None);
        if let Err(e) = sync_lane(&cx).await {
            // the rounds below still finish mined transactions; the next send reconciles again
            obj.note_error(&e);
            worker::console_warn!("reconciling the nonce lane: {} {}", e.code, e.message);
        }
    }
    for tx in obj.store.lane()? {
        if let Err(e) = round(&cx, &tx).await {
            obj.note_error(&e);
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
