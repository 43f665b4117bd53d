//! A pending transaction signed again at its nonce, in place of the stored copy: a round's fee bump
//! (`rounds.rs`) and the operator's replace / cancel (`manage.rs`). The new copy is stored before it is broadcast;
//! the transaction log gets the new hash `pending` and the old one `replaced` by it (a cancel: the old hash
//! `dropped`, its self-transfer has no record); a refusal by the node puts the stored copy and the records back, so
//! nothing it refused stays. No meter is touched here: the job's charge goes with the copy, settled once on the
//! receipt of whichever hash is mined.

use profile_relayer::api::TransactionState;

use crate::{
    error::{ApiError, ApiResult},
    rpc::SendOutcome,
    signer::TxRequest,
    txlog,
};

use super::model::{PendingTx, Resign, Resigned};
use super::{Ctx, Relayer, now_ms};

impl Relayer {
    /// Signs `replacement` in place of `stored` (its nonce), stores it, records it, broadcasts it; a refusal puts
    /// `stored` back (see [`Resign`]). Caller holds `send_lock` and read `stored` under it.
    pub(super) async fn record_resigned(
        &self,
        ctx: &Ctx,
        stored: PendingTx,
        replacement: &TxRequest,
        why: Resign,
    ) -> ApiResult<Resigned> {
        let (raw, hash) = ctx.signer.sign(replacement).map_err(ApiError::internal)?;
        let old = stored.hashes.last().copied();
        let next = why.next(&stored, raw.into(), hash, now_ms());
        // stored before it is broadcast
        self.lane_write(None, Some(&next))?;
        let described = next.job.described();
        let plan = why.log_plan(described.is_some(), stored.cancelled_from.is_some());
        if let (Some((kind, profile)), Some(plan)) = (described, plan) {
            if plan.new_pending {
                self.log_put(
                    ctx,
                    &txlog::pending(hash, kind, profile),
                    None,
                    next.charge.as_ref(),
                )?;
            }
            if let Some(old) = old {
                self.log_update(ctx, old, |r| {
                    r.status = plan.old;
                    if plan.old == TransactionState::Replaced {
                        r.replaced_by = Some(hash);
                    }
                })?;
            }
        }
        let result = ctx.rpc.send_raw(&next.raw).await;
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
            self.lane_write(None, Some(&why.kept(stored, now_ms())))?;
            if plan.is_some() {
                self.log_update(ctx, hash, |r| r.status = TransactionState::Dropped)?;
                if let Some(old) = old {
                    self.log_update(ctx, old, |r| {
                        r.status = TransactionState::Pending;
                        r.replaced_by = None;
                    })?;
                }
            }
        }
        Ok(resigned)
    }
}

