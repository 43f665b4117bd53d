//! Sending a new lane transaction: reserve its gas on the meters, assign the nonce, sign, store, broadcast — all
//! under the send lock.

use alloy_primitives::{Address, B256, Bytes, U256};

use profile_relayer::api::TransactionState;

use crate::{
    error::{ApiError, ApiResult, Code},
    meter::{Charge, Subject, reserve_all},
    rpc::{RpcError, SendOutcome},
    signer::{TxRequest, initial_fees_capped},
    txlog,
};

use super::model::{Job, PendingTx, SendPlan};
use super::policy::fee_too_high;
use super::{Ctx, Relayer, now_ms};

impl Relayer {
    /// Signs `request`, stores it (removing the row `replaces` in the same write) and then broadcasts it; when the
    /// node definitively refuses it (nonce taken, rejected) the write is undone. An unanswered broadcast keeps the
    /// row: the next round broadcasts it again if the node does not have it. Caller holds `send_lock`.
    pub(super) async fn store_and_send(
        &self,
        ctx: &Ctx,
        job: Job,
        request: &TxRequest,
        dropped: Vec<B256>,
        replaces: Option<u64>,
        charge: Option<Charge>,
    ) -> ApiResult<(PendingTx, core::result::Result<B256, RpcError>)> {
        let (raw, hash) = ctx.signer.sign(request).map_err(ApiError::internal)?;
        let previous = match replaces {
            Some(n) => self.lane_get(n)?,
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
            self.log_put(
                ctx,
                &txlog::pending(hash, kind, profile),
                None,
                tx.charge.as_ref(),
            )?;
        }
        let overwritten = self.lane_get(tx.nonce)?;
        // stored before it is broadcast: a crash in between is recovered from the stored bytes
        self.lane_write(replaces, Some(&tx))?;
        let result = ctx.rpc.send_raw(&tx.raw).await;
        if matches!(
            SendOutcome::of(&result),
            SendOutcome::NonceTaken | SendOutcome::Rejected
        ) {
            self.log_update(ctx, hash, |r| r.status = TransactionState::Dropped)?;
            self.lane_write(Some(tx.nonce), overwritten.as_ref())?;
            if let Some(p) = &previous {
                self.lane_write(None, Some(p))?;
            }
        }
        Ok((tx, result))
    }

    /// Estimates gas, prices, signs, stores and sends a transaction for `job` at the next nonce. Caller holds
    /// `send_lock` and has synced the lane.
    pub(super) async fn send_new(
        &self,
        ctx: &Ctx,
        job: Job,
        to: Address,
        input: Bytes,
        plan: SendPlan,
    ) -> ApiResult<PendingTx> {
        let fresh = plan.replaces.is_none();
        let mut created = Vec::new();
        let result = self
            .send_new_inner(ctx, job, to, input, &plan, &mut created)
            .await;
        if result.is_err()
            && fresh
            && let Some(charge) = &plan.charge
        {
            // nothing was sent for this new job: what was reserved for it is released
            self.release(Some(&Charge {
                id: charge.id.clone(),
                meters: created,
            }))
            .await;
        }
        result
    }

    async fn send_new_inner(
        &self,
        ctx: &Ctx,
        job: Job,
        to: Address,
        input: Bytes,
        plan: &SendPlan,
        created: &mut Vec<Subject>,
    ) -> ApiResult<PendingTx> {
        let (dropped, replaces) = (plan.dropped.clone(), plan.replaces);
        let from = ctx.signer.address();
        let gas_limit = match plan.gas_limit {
            Some(limit) => limit,
            None => {
                let gas = ctx
                    .rpc
                    .estimate_gas(from, to, &input)
                    .await
                    .map_err(|e| match e {
                        RpcError::Node { message, .. } => ApiError::new(
                            Code::DeploymentWouldRevert,
                            format!("the factory call would revert: {message}"),
                        ),
                        other => other.into(),
                    })?;
                crate::signer::gas_limit_for(gas)
            }
        };
        if gas_limit > ctx.config.max_transaction_gas {
            return Err(ApiError::new(
                Code::GasLimitTooHigh,
                format!(
                    "the transaction needs {gas_limit} gas; this relayer sends at most {} (MAX_TRANSACTION_GAS)",
                    ctx.config.max_transaction_gas
                ),
            ));
        }
        if let Some(charge) = &plan.charge
            && !plan.reserve.is_empty()
        {
            *created = reserve_all(
                &self.env,
                &charge.id,
                gas_limit,
                ctx.config.now(),
                ctx.config.reservation_ttl,
                &plan.reserve,
            )
            .await?;
        }
        let (fees, balance) = futures_util::future::join(ctx.rpc.fees(), ctx.rpc.balance(from)).await;
        let (base, tip) = fees?;
        let (max_fee, tip) = initial_fees_capped(base, tip, ctx.max_fee_per_gas)
            .ok_or_else(|| fee_too_high(base, tip, ctx.max_fee_per_gas))?;
        let balance = balance?;
        if balance < U256::from(gas_limit) * U256::from(max_fee) {
            let mut err = ApiError::new(
                Code::InsufficientFunds,
                "the relayer's balance cannot pay for this deployment",
            );
            err.retry_after = Some(60);
            return Err(err);
        }
        for attempt in 0..3 {
            let mut nonce = match self.next_nonce.get() {
                Some(n) => n,
                None => self.resync_nonce(ctx).await?,
            };
            if self.lane_get(nonce)?.is_some() {
                // never overwrite a stored transaction: the cached nonce is behind the lane
                nonce = self.resync_nonce(ctx).await?;
            }
            let request = TxRequest {
                chain_id: ctx.config.chain_id,
                nonce,
                gas_limit,
                max_fee_per_gas: max_fee,
                max_priority_fee_per_gas: tip,
                to,
                input: input.clone(),
            };
            let (tx, result) = self
                .store_and_send(
                    ctx,
                    job.clone(),
                    &request,
                    dropped.clone(),
                    replaces,
                    plan.charge.clone(),
                )
                .await?;
            match (SendOutcome::of(&result), result) {
                (SendOutcome::Accepted | SendOutcome::AlreadyKnown, _) => {
                    self.next_nonce.set(Some(nonce + 1));
                    return Ok(tx);
                }
                (SendOutcome::Unknown, result) => {
                    self.next_nonce.set(Some(nonce + 1));
                    worker::console_warn!(
                        "nonce {nonce}: no answer to the broadcast ({:?}); stored, broadcast again by the next round",
                        result.err()
                    );
                    return Ok(tx);
                }
                (SendOutcome::NonceTaken, result) if attempt < 2 => {
                    // the chain is the source of truth: re-read it
                    self.next_nonce.set(None);
                    worker::console_warn!("nonce {nonce} taken ({:?}); re-reading the chain", result.err());
                }
                (_, result) => {
                    return Err(result
                        .err()
                        .map_or_else(|| ApiError::internal("rejected without an error"), ApiError::from));
                }
            }
        }
        Err(ApiError::internal("nonce retries exhausted"))
    }

    /// The next nonce after a nonce error: the node's pending nonce, above every stored one. Caller holds `send_lock`.
    pub(super) async fn resync_nonce(&self, ctx: &Ctx) -> ApiResult<u64> {
        let pending = ctx.rpc.pending_nonce(ctx.signer.address()).await?;
        let above_stored = self
            .lane()?
            .iter()
            .map(|p| p.nonce.saturating_add(1))
            .max()
            .unwrap_or(0);
        let next = pending.max(above_stored);
        self.next_nonce.set(Some(next));
        Ok(next)
    }
}
