//! One round of a lane transaction: mined → finish the job; lost → re-broadcast the stored bytes; nonce used by
//! another transaction → dropped, the job sent again; not mined in time → fees bumped under the cap.

use alloy_primitives::B256;
use worker::Result;

use profile_relayer::api::TransactionState;

use crate::{
    error::{ApiError, ApiResult, Code},
    rpc::{Receipt, Rpc, RpcError, SendOutcome},
    signer::{self, TxRequest, bumped_fees_capped, initial_fees},
    txlog,
};

use super::model::{Facts, Job, PendingTx, Resign, Round, SendPlan, Step};
use super::policy::next_step;
use super::{Ctx, Relayer, now_ms};

/// Whether the node knows any of `hashes` (newest first: usually the first answer decides).
pub(super) async fn any_known(rpc: &Rpc, hashes: &[B256]) -> ApiResult<bool> {
    for hash in hashes.iter().rev() {
        if rpc.transaction_known(*hash).await? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The receipt of whichever of `hashes` is mined (newest first: usually the first answer decides), with its hash.
pub(super) async fn mined_receipt(rpc: &Rpc, hashes: &[B256]) -> ApiResult<Option<(B256, Receipt)>> {
    for hash in hashes.iter().rev() {
        if let Some(receipt) = rpc.receipt(*hash).await? {
            return Ok(Some((*hash, receipt)));
        }
    }
    Ok(None)
}

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

impl Relayer {
    /// Reads the chain for `tx` (the caller's copy) and acts on [`next_step`]. Every change happens under
    /// `send_lock` on the copy reloaded from storage, and only if that copy still is the one decided on.
    pub(super) async fn round(&self, ctx: &Ctx, tx: &PendingTx) -> ApiResult<Round> {
        let mined = mined_receipt(&ctx.rpc, &tx.hashes).await?;
        let facts = match &mined {
            Some((hash, _)) => Facts {
                mined: Some(*hash),
                latest_nonce: 0,
                known: true,
            },
            None => {
                let latest_nonce = ctx.rpc.latest_nonce(ctx.signer.address()).await?;
                Facts {
                    mined: None,
                    latest_nonce,
                    known: any_known(&ctx.rpc, &tx.hashes).await?,
                }
            }
        };
        let bump_due = now_ms().saturating_sub(tx.fees_checked_ms) >= ctx.config.replace_after_ms;
        match next_step(tx.nonce, facts, bump_due) {
            Step::Mined(hash) => {
                let receipt = mined
                    .map(|(_, r)| r)
                    .ok_or_else(|| ApiError::internal("mined without a receipt"))?;
                if tx.is_cancel(hash) {
                    let gas_used = u64::try_from(receipt.gas_used).unwrap_or(u64::MAX);
                    self.finish_cancelled(ctx, tx, gas_used).await?;
                    return Ok(Round::Gone);
                }
                self.finish(ctx, tx, hash, &receipt).await?;
                Ok(Round::Mined(hash))
            }
            Step::Wait => Ok(Round::Pending),
            Step::Rebroadcast => self.rebroadcast(ctx, tx).await,
            Step::BumpFees => self.bump_fees(ctx, tx).await,
            Step::Dropped => self.dropped(ctx, tx).await,
        }
    }

    /// Removes the mined transaction from the lane and finishes its job.
    pub(super) async fn finish(
        &self,
        ctx: &Ctx,
        tx: &PendingTx,
        hash: B256,
        receipt: &Receipt,
    ) -> ApiResult<()> {
        let reverted = receipt.status.is_zero();
        let gas_used = u64::try_from(receipt.gas_used).unwrap_or(u64::MAX);
        // watched until confirmations-deep and charged then (`confirm`); with no depth asked, charged before the row
        // goes: a failed settlement is retried by the next round (settling is idempotent)
        let charged = if self.watch(ctx, tx, hash, receipt).await? {
            None
        } else {
            self.settle(ctx, tx.charge.as_ref(), gas_used).await?
        };
        // its nonce is used: whatever version is stored is done
        if self.lane_get(tx.nonce)?.is_some_and(|s| s.job == tx.job) {
            self.lane_write(Some(tx.nonce), None)?;
        }
        let block = u64::try_from(receipt.block_number).ok();
        for other in tx.hashes.iter().filter(|h| **h != hash) {
            self.log_update(ctx, *other, |r| {
                r.status = TransactionState::Replaced;
                r.replaced_by = Some(hash);
            })?;
        }
        if let Some((kind, profile)) = tx.job.described() {
            let previous = txlog::get(&self.sql()?, hash)?;
            let mut record = previous
                .clone()
                .unwrap_or_else(|| txlog::pending(hash, kind, profile));
            record.status = if reverted {
                TransactionState::Reverted
            } else {
                TransactionState::Mined
            };
            record.block_number = block;
            record.gas_used = Some(gas_used);
            record.charged = charged.or(record.charged);
            self.log_put(ctx, &record, previous.map(|r| r.status), tx.charge.as_ref())?;
            if !reverted {
                // indexed in seconds, not at the indexer's next pass over the chain
                if let Err(e) = crate::indexer::clock::touched(
                    &self.env,
                    &self.config,
                    ctx.config.chain_id,
                    vec![profile],
                )
                .await
                {
                    worker::console_warn!("reporting {profile} to the indexer: {} {}", e.code, e.message);
                }
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
                if ctx.rpc.code(universal_profile).await?.is_empty() {
                    return Err(ApiError::new(
                        Code::DeploymentMismatch,
                        format!("transaction {hash} was mined but no contract is at the predicted address"),
                    ));
                }
                self.record(universal_profile, Some(hash)).await?;
                Ok(())
            }
        }
    }

    /// The stored copy of `tx`, read under `send_lock`, when it is still the one a round decided on; otherwise what
    /// that round saw: gone from the lane, or changed meanwhile by another round (still pending).
    pub(super) fn still_stored(&self, tx: &PendingTx) -> ApiResult<Result<PendingTx, Round>> {
        Ok(match self.lane_get(tx.nonce)? {
            None => Err(Round::Gone),
            Some(stored) if stored.hashes != tx.hashes => Err(Round::Pending),
            Some(stored) => Ok(stored),
        })
    }

    /// The node lost the transaction and its nonce is unused: broadcast the stored bytes again.
    pub(super) async fn rebroadcast(&self, ctx: &Ctx, tx: &PendingTx) -> ApiResult<Round> {
        let _guard = self.send_lock.lock().await;
        let stored = match self.still_stored(tx)? {
            Ok(stored) => stored,
            Err(round) => return Ok(round),
        };
        let result = ctx.rpc.send_raw(&stored.raw).await;
        log_rebroadcast(&stored, &result);
        match (SendOutcome::of(&result), result) {
            (SendOutcome::Unknown, Err(e)) => Err(e.into()),
            _ => Ok(Round::Pending),
        }
    }

    /// Replaces the transaction with higher fees, from the stored copy, under the cap.
    pub(super) async fn bump_fees(&self, ctx: &Ctx, tx: &PendingTx) -> ApiResult<Round> {
        let _guard = self.send_lock.lock().await;
        let stored = match self.still_stored(tx)? {
            Ok(stored) => stored,
            Err(round) => return Ok(round),
        };
        if now_ms().saturating_sub(stored.fees_checked_ms) < ctx.config.replace_after_ms {
            // another round replaced it meanwhile
            return Ok(Round::Pending);
        }
        let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
        let previous = (request.max_fee_per_gas, request.max_priority_fee_per_gas);
        let (base, tip) = ctx.rpc.fees().await?;
        let Some((max_fee, tip)) = bumped_fees_capped(previous, initial_fees(base, tip), ctx.max_fee_per_gas)
        else {
            worker::console_warn!(
                "nonce {}: a fee bump from max fee {} wei would exceed MAX_FEE_PER_GAS ({} wei); not sent, \
                 waiting at the current fees",
                stored.nonce,
                previous.0,
                ctx.max_fee_per_gas
            );
            let waiting = PendingTx {
                fees_checked_ms: now_ms(),
                ..stored
            };
            self.lane_write(None, Some(&waiting))?;
            return Ok(Round::Pending);
        };
        let replacement = TxRequest {
            max_fee_per_gas: max_fee,
            max_priority_fee_per_gas: tip,
            ..request
        };
        let resigned = self
            .record_resigned(ctx, stored, &replacement, Resign::Bump)
            .await?;
        match (resigned.outcome(), resigned.result) {
            (SendOutcome::Accepted | SendOutcome::AlreadyKnown, _) => {
                worker::console_log!(
                    "replaced nonce {} with {} (max fee {max_fee}, tip {tip})",
                    resigned.nonce,
                    resigned.hash
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
    pub(super) async fn dropped(&self, ctx: &Ctx, tx: &PendingTx) -> ApiResult<Round> {
        let _guard = self.send_lock.lock().await;
        let stored = match self.still_stored(tx)? {
            Ok(stored) => stored,
            Err(round) => return Ok(round),
        };
        worker::console_warn!(
            "nonce {} was used by another transaction: {:?} dropped",
            stored.nonce,
            stored.hashes
        );
        for h in &stored.hashes {
            self.log_update(ctx, *h, |r| r.status = TransactionState::Dropped)?;
        }
        if stored.cancelled_from.is_some() {
            // cancelled by the operator: never sent again
            self.lane_write(Some(stored.nonce), None)?;
            self.release(stored.charge.as_ref()).await;
            return Ok(Round::Gone);
        }
        self.send_again(ctx, &stored, Some(stored.nonce)).await
    }

    /// A job whose transaction can never be mined (its nonce used by another transaction) sent again at a fresh
    /// nonce — a relay call only if it still succeeds, a deployment only if the profile is not there yet — with the
    /// same charge: `Pending` when sent, `Gone` when there is nothing to send (a relay call that no longer succeeds:
    /// its charge released; a deployment found made). `replaces`: its lane row, removed with the new row's write (or
    /// when given up); `None` for a transaction no longer in the lane (a displaced one, `confirm`). Caller holds
    /// `send_lock`.
    pub(super) async fn send_again(
        &self,
        ctx: &Ctx,
        stored: &PendingTx,
        replaces: Option<u64>,
    ) -> ApiResult<Round> {
        match stored.job {
            Job::Execute { profile, .. } => {
                // sent again only if the call still succeeds (its relay nonce may have been used meanwhile)
                let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
                if ctx
                    .rpc
                    .estimate_gas(ctx.signer.address(), request.to, &request.input)
                    .await
                    .is_err()
                {
                    self.lane_write(replaces, None)?;
                    self.release(stored.charge.as_ref()).await;
                    worker::console_warn!(
                        "{profile}: dropped relay call no longer succeeds; given up, quota released"
                    );
                    return Ok(Round::Gone);
                }
                self.sync_lane(ctx).await?;
                let mut dropped = stored.dropped.clone();
                dropped.extend(stored.hashes.iter().copied());
                let plan = SendPlan {
                    gas_limit: Some(request.gas_limit),
                    charge: stored.charge.clone(),
                    dropped,
                    replaces,
                    ..SendPlan::default()
                };
                self.send_new(ctx, stored.job.clone(), request.to, request.input, plan)
                    .await?;
                Ok(Round::Pending)
            }
            // the hole it was to fill is filled
            Job::Filler => {
                self.lane_write(replaces, None)?;
                Ok(Round::Gone)
            }
            Job::Deploy { universal_profile } => {
                if !ctx.rpc.code(universal_profile).await?.is_empty() {
                    // deployed by another transaction with the same salt: nothing to send
                    self.lane_write(replaces, None)?;
                    self.record(universal_profile, None).await?;
                    return Ok(Round::Gone);
                }
                self.sync_lane(ctx).await?;
                let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
                let mut dropped = stored.dropped.clone();
                dropped.extend(stored.hashes.iter().copied());
                let plan = SendPlan {
                    charge: stored.charge.clone(),
                    dropped,
                    replaces,
                    ..SendPlan::default()
                };
                match self
                    .send_new(ctx, stored.job.clone(), request.to, request.input, plan)
                    .await
                {
                    Ok(sent) => {
                        worker::console_warn!(
                            "{universal_profile}: deployment sent again at nonce {} as {}",
                            sent.nonce,
                            sent.latest_hash()
                        );
                        Ok(Round::Pending)
                    }
                    Err(e) if e.is(Code::DeploymentWouldRevert) => {
                        self.lane_write(replaces, None)?;
                        Err(e)
                    }
                    // kept as it is: the next round tries again
                    Err(e) => Err(e),
                }
            }
        }
    }

    pub(super) async fn track_all(&self) -> ApiResult<()> {
        let ctx = self.ctx()?;
        self.check_chain(&ctx).await?;
        // mined transactions whose receipt disappeared go back to the lane first (`confirm`)
        if let Err(e) = self.confirm_all(&ctx).await {
            self.note_error(&e);
            worker::console_warn!("confirming mined transactions: {} {}", e.code, e.message);
        }
        {
            let _guard = self.send_lock.lock().await;
            // holes can also appear while running (the key used elsewhere, a node that lost part of its pool):
            // every alarm reconciles, not only the first use
            self.next_nonce.set(None);
            if let Err(e) = self.sync_lane(&ctx).await {
                // the rounds below still finish mined transactions; the next send reconciles again
                self.note_error(&e);
                worker::console_warn!("reconciling the nonce lane: {} {}", e.code, e.message);
            }
        }
        for tx in self.lane()? {
            if let Err(e) = self.round(&ctx, &tx).await {
                self.note_error(&e);
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
}
