//! A pending transaction signed again at its nonce, in place of the stored copy: a round's fee bump
//! (`rounds.rs`) and the operator's replace / cancel (`manage.rs`). The new copy is stored before it is broadcast;
//! the transaction log gets the new hash `pending` and the old one `replaced` by it (a cancel: the old hash
//! `dropped`, its self-transfer has no record); a refusal by the node puts the stored copy and the records back, so
//! nothing it refused stays. No meter is touched here: the job's charge goes with the copy, settled once on the
//! receipt of whichever hash is mined.

use alloy_primitives::{B256, Bytes};
use profile_relayer::api::TransactionState;

use crate::{
    error::{ApiError, ApiResult},
    rpc::{RpcError, SendOutcome},
    signer::TxRequest,
    txlog,
};

use super::lane::PendingTx;
use super::{Ctx, Relayer, now_ms};

/// Why a pending transaction is signed again at its nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Resign {
    /// A round's fee bump; refused, the stored copy waits `replace_after_ms` before the next bump.
    Bump,
    /// The operator's replacement: the same call with higher fees.
    Replace,
    /// The operator's cancel: a self-transfer; its hashes are the cancels from here on (`cancelled_from`).
    Cancel,
}

/// What the transaction log gets for a re-signed transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LogPlan {
    /// The new hash is recorded `pending` (the same job, at higher fees).
    new_pending: bool,
    /// The old hash's new state (`replaced` also names the new hash).
    old: TransactionState,
}

impl Resign {
    /// The copy stored in place of `stored`: the new bytes, their hash last, fees checked `now_ms`; a cancel marks
    /// where its self-transfers start. Job, nonce, charge and the rest stay as they were.
    fn next(self, stored: &PendingTx, raw: Bytes, hash: B256, now_ms: u64) -> PendingTx {
        let mut next = stored.clone();
        next.raw = raw;
        next.hashes.push(hash);
        next.fees_checked_ms = now_ms;
        if self == Self::Cancel {
            next.cancelled_from = Some(next.hashes.len().saturating_sub(1));
        }
        next
    }

    /// The log changes for a job that has records (`described`), `None` when there are none to make: the job has
    /// no records, or its stored copy is a cancel (its self-transfers have none).
    fn log_plan(self, described: bool, cancelled: bool) -> Option<LogPlan> {
        if !described || cancelled {
            return None;
        }
        Some(match self {
            Self::Bump | Self::Replace => LogPlan {
                new_pending: true,
                old: TransactionState::Replaced,
            },
            Self::Cancel => LogPlan {
                new_pending: false,
                old: TransactionState::Dropped,
            },
        })
    }

    /// What is stored again when the node refuses the new copy: the old copy, for a bump with its fees checked
    /// `now_ms` (the next bump waits a whole `replace_after_ms`).
    fn kept(self, stored: PendingTx, now_ms: u64) -> PendingTx {
        match self {
            Self::Bump => PendingTx {
                fees_checked_ms: now_ms,
                ..stored
            },
            Self::Replace | Self::Cancel => stored,
        }
    }
}

/// A re-signed transaction, stored and broadcast.
pub(super) struct Resigned {
    pub(super) nonce: u64,
    pub(super) hash: B256,
    /// The node's answer. Refused (`NonceTaken`, `Rejected`): the old copy and its records are back. Otherwise
    /// (`Unknown` included) the new copy stays stored and recorded: a later round sees what became of it.
    pub(super) result: core::result::Result<B256, RpcError>,
}

impl Resigned {
    pub(super) fn outcome(&self) -> SendOutcome {
        SendOutcome::of(&self.result)
    }
}

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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use alloy_primitives::Address;

    use super::super::jobs::Job;
    use super::*;

    const H1: B256 = B256::repeat_byte(1);
    const H2: B256 = B256::repeat_byte(2);
    const NEW: B256 = B256::repeat_byte(9);

    fn stored(cancelled_from: Option<usize>) -> PendingTx {
        PendingTx {
            job: Job::Deploy {
                universal_profile: Address::repeat_byte(0xaa),
            },
            nonce: 7,
            raw: Bytes::from_static(&[2, 1]),
            charge: None,
            hashes: vec![H1, H2],
            fees_checked_ms: 1,
            dropped: vec![B256::repeat_byte(5)],
            sent_ms: 3,
            cancelled_from,
        }
    }

    #[test]
    fn the_new_copy_adds_its_hash_and_keeps_the_job() {
        for why in [Resign::Bump, Resign::Replace, Resign::Cancel] {
            let next = why.next(&stored(None), Bytes::from_static(&[2, 9]), NEW, 50);
            assert_eq!(next.raw, Bytes::from_static(&[2, 9]));
            assert_eq!(next.hashes, vec![H1, H2, NEW], "{why:?}");
            assert_eq!(next.fees_checked_ms, 50);
            // what pays and what it is stay: the job is charged once, on the receipt of whichever hash is mined
            assert_eq!(
                (next.job, next.nonce, next.charge, next.dropped, next.sent_ms),
                (stored(None).job, 7, None, vec![B256::repeat_byte(5)], 3)
            );
            // a cancel starts at its own hash; the others keep what was stored
            let from = if why == Resign::Cancel { Some(2) } else { None };
            assert_eq!(next.cancelled_from, from, "{why:?}");
            let next = why.next(&stored(Some(1)), Bytes::new(), NEW, 50);
            assert_eq!(
                next.cancelled_from,
                Some(if why == Resign::Cancel { 2 } else { 1 })
            );
        }
    }

    #[test]
    fn records_follow_a_replacement_but_not_a_cancels_self_transfers() {
        let replaced = Some(LogPlan {
            new_pending: true,
            old: TransactionState::Replaced,
        });
        assert_eq!(Resign::Bump.log_plan(true, false), replaced);
        assert_eq!(Resign::Replace.log_plan(true, false), replaced);
        assert_eq!(
            Resign::Cancel.log_plan(true, false),
            Some(LogPlan {
                new_pending: false,
                old: TransactionState::Dropped,
            })
        );
        for why in [Resign::Bump, Resign::Replace, Resign::Cancel] {
            // a bumped or replaced cancel: its self-transfers have no records
            assert_eq!(why.log_plan(true, true), None, "{why:?}");
            // a job without records (a nonce filler)
            assert_eq!(why.log_plan(false, false), None, "{why:?}");
        }
    }

    #[test]
    fn a_refusal_keeps_the_stored_copy_a_refused_bump_waits_again() {
        assert_eq!(Resign::Replace.kept(stored(None), 50), stored(None));
        assert_eq!(Resign::Cancel.kept(stored(Some(1)), 50), stored(Some(1)));
        let kept = Resign::Bump.kept(stored(None), 50);
        assert_eq!(kept.fees_checked_ms, 50);
        assert_eq!(
            PendingTx {
                fees_checked_ms: 1,
                ..kept
            },
            stored(None)
        );
    }
}
