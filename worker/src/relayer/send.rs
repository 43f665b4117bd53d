//! Sending a new lane transaction: reserve its gas on the meters, assign the nonce, sign, store, broadcast — all
//! under the send lock ([`send_new`]); [`store_and_send`] is the step every new signed transaction goes through.

use alloy_primitives::{Address, B256, Bytes};
use profile_relayer::api::TransactionState;

use super::ctx::{Ctx, now_ms};
use super::model::{Job, PendingTx, SendPlan};
use super::policy;
use crate::{
    error::{ApiError, ApiResult},
    meter::{Charge, Subject, reserve_all},
    rpc::{RpcError, SendOutcome},
    signer::TxRequest,
    txlog,
};

/// A signed transaction stored and broadcast, and the node's answer.
pub(super) type Sent = (PendingTx, core::result::Result<B256, RpcError>);

/// Signs `request`, stores it (removing the row `replaces` in the same write) and then broadcasts it; when the
/// node definitively refuses it (nonce taken, rejected) the write is undone. An unanswered broadcast keeps the
/// row: the next round broadcasts it again if the node does not have it. Caller holds `send_lock`.
pub(super) async fn store_and_send(
    cx: &Ctx<'_>,
    job: Job,
    request: &TxRequest,
    (dropped, replaces): (Vec<B256>, Option<u64>),
    charge: Option<Charge>,
) -> ApiResult<Sent> {
    let store = cx.store();
    let (raw, hash) = cx.signer.sign(request).map_err(ApiError::internal)?;
    let previous = match replaces {
        Some(n) => store.get(n)?,
        None => None,
    };
    let now = now_ms();
    let tx = PendingTx {
        job,
        nonce: request.nonce,
        raw: raw.into(),
        hashes: vec![hash],
        fees_checked_ms: now,
        dropped,
        charge,
        // a job sent again keeps the age of its first send
        sent_ms: previous
            .as_ref()
            .map(|p| p.sent_ms)
            .filter(|ms| *ms > 0)
            .unwrap_or(now),
        cancelled_from: None,
    };
    if let Some((kind, profile)) = tx.job.described() {
        cx.log_put(&txlog::pending(hash, kind, profile), None, tx.charge.as_ref())?;
    }
    let overwritten = store.get(tx.nonce)?;
    // stored before it is broadcast: a crash in between is recovered from the stored bytes
    store.write(replaces, Some(&tx))?;
    let result = cx.rpc.send_raw(&tx.raw).await;
    if matches!(
        SendOutcome::of(&result),
        SendOutcome::NonceTaken | SendOutcome::Rejected
    ) {
        cx.log_update(hash, |r| r.status = TransactionState::Dropped)?;
        store.write(Some(tx.nonce), overwritten.as_ref())?;
        if let Some(p) = &previous {
            store.write(None, Some(p))?;
        }
    }
    Ok((tx, result))
}

/// Estimates gas, prices, signs, stores and sends a transaction for `job` at the next nonce. Caller holds
/// `send_lock` and has synced the lane.
pub(super) async fn send_new(
    cx: &Ctx<'_>,
    job: Job,
    to: Address,
    input: Bytes,
    plan: SendPlan,
) -> ApiResult<PendingTx> {
    let fresh = plan.replaces.is_none();
    let mut created = Vec::new();
    let result = reserve_and_send(cx, job, to, input, &plan, &mut created).await;
    if result.is_err()
        && fresh
        && let Some(charge) = &plan.charge
    {
        // nothing was sent for this new job: what was reserved for it is released
        cx.release(Some(&Charge {
            id: charge.id.clone(),
            meters: created,
        }))
        .await;
    }
    result
}

/// The steps of [`send_new`]; `created`: the meters a reservation was made on.
async fn reserve_and_send(
    cx: &Ctx<'_>,
    job: Job,
    to: Address,
    input: Bytes,
    plan: &SendPlan,
    created: &mut Vec<Subject>,
) -> ApiResult<PendingTx> {
    let from = cx.signer.address();
    let gas_limit = match plan.gas_limit {
        Some(limit) => limit,
        None => {
            let gas = cx
                .rpc
                .estimate_gas(from, to, &input)
                .await
                .map_err(policy::estimate_error)?;
            crate::signer::gas_limit_for(gas)
        }
    };
    policy::check_gas_limit(gas_limit, cx.config.max_transaction_gas)?;
    if let Some(charge) = &plan.charge
        && !plan.reserve.is_empty()
    {
        *created = reserve_all(
            cx.obj.env,
            &charge.id,
            gas_limit,
            cx.config.now(),
            cx.config.reservation_ttl,
            &plan.reserve,
        )
        .await?;
    }
    let (fees, balance) = futures_util::future::join(cx.rpc.fees(), cx.rpc.balance(from)).await;
    let (base, tip) = fees?;
    let (max_fee, tip) = policy::new_fees(base, tip, cx.max_fee_per_gas)?;
    policy::check_balance(balance?, gas_limit, max_fee)?;
    let request = TxRequest {
        chain_id: cx.config.chain_id,
        nonce: 0,
        gas_limit,
        max_fee_per_gas: max_fee,
        max_priority_fee_per_gas: tip,
        to,
        input,
    };
    send_at_next_nonce(cx, job, request, plan).await
}

/// Sends `request` at the next nonce, re-reading the chain when the node says the nonce is taken (three tries).
async fn send_at_next_nonce(
    cx: &Ctx<'_>,
    job: Job,
    request: TxRequest,
    plan: &SendPlan,
) -> ApiResult<PendingTx> {
    let next_nonce = &cx.obj.memory.next_nonce;
    for attempt in 0..3 {
        let mut nonce = match next_nonce.get() {
            Some(n) => n,
            None => resync_nonce(cx).await?,
        };
        if cx.store().get(nonce)?.is_some() {
            // never overwrite a stored transaction: the cached nonce is behind the lane
            nonce = resync_nonce(cx).await?;
        }
        let request = TxRequest {
            nonce,
            ..request.clone()
        };
        let row = (plan.dropped.clone(), plan.replaces);
        let (tx, result) = store_and_send(cx, job.clone(), &request, row, plan.charge.clone()).await?;
        match (SendOutcome::of(&result), result) {
            (SendOutcome::Accepted | SendOutcome::AlreadyKnown, _) => {
                next_nonce.set(Some(nonce + 1));
                return Ok(tx);
            }
            (SendOutcome::Unknown, result) => {
                next_nonce.set(Some(nonce + 1));
                worker::console_warn!(
                    "nonce {nonce}: no answer to the broadcast ({:?}); stored, broadcast again by the next round",
                    result.err()
                );
                return Ok(tx);
            }
            (SendOutcome::NonceTaken, result) if attempt < 2 => {
                // the chain is the source of truth: re-read it
                next_nonce.set(None);
                worker::console_warn!("nonce {nonce} taken ({:?}); re-reading the chain", result.err());
            }
            (_, result) => return Err(refused(result)),
        }
    }
    Err(ApiError::internal("nonce retries exhausted"))
}

/// The error of a broadcast the node refused.
pub(super) fn refused(result: core::result::Result<B256, RpcError>) -> ApiError {
    result
        .err()
        .map_or_else(|| ApiError::internal("rejected without an error"), ApiError::from)
}

/// The next nonce after a nonce error: the node's pending nonce, above every stored one. Caller holds `send_lock`.
pub(super) async fn resync_nonce(cx: &Ctx<'_>) -> ApiResult<u64> {
    let pending = cx.rpc.pending_nonce(cx.signer.address()).await?;
    let next = policy::resync_nonce(pending, &cx.store().lane()?);
    cx.obj.memory.next_nonce.set(Some(next));
    Ok(next)
}
