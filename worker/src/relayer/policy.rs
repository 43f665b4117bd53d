//! The relayer's pure decisions: what a round does with a lane transaction ([`next_step`]), the nonce holes to fill
//! at reconciliation ([`plan_gaps`]), what a confirmation pass does with a watched transaction ([`decide`]), how a
//! re-signed copy is stored and logged ([`Resign`]), the fee, gas and balance checks before signing, the
//! reservations a job makes ([`deploy_plan`], [`execute_plan`], [`filler_charge`]) and how often a waiting request
//! polls. Nothing here reads the chain, the storage or the clock: every input is an argument, so every decision is
//! table-tested below.

use std::collections::BTreeSet;

use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use profile_relayer::api::TransactionState;
use profile_relayer::api::admin::{PendingKind, PendingTransaction};

use super::model::{
    Confirm, Facts, GapPlan, Job, LaneList, LaneStatus, LogPlan, PendingTx, Resign, Round, SendPlan, Slot,
    Step,
};
use crate::{
    error::{ApiError, ApiResult, Code},
    meter::{Charge, Limit, Subject},
    rpc::{Receipt, RpcError},
    signer::{TxRequest, bumped_fees_capped, initial_fees, initial_fees_capped},
};

/// How often the alarm runs while the lane holds transactions, watches mined ones or has events to deliver.
pub(super) const ALARM_MS: i64 = 2_000;

/// How long a `FEE_TOO_HIGH` client should wait.
pub(super) const FEE_RETRY_AFTER_SECONDS: u64 = 60;

/// Gas of a plain transfer to an account without code.
pub(super) const TRANSFER_GAS: u64 = 21_000;

/// At most this many holes are filled in one reconciliation (a stored nonce far above the chain's means the chain
/// was reset or the key used elsewhere: not something to paper over with thousands of transfers).
pub(super) const MAX_HOLES: usize = 64;

/// The decision of a round for the transaction at `nonce`; `bump_due`: `REPLACE_AFTER_SECONDS` have passed since
/// its fees were last set.
pub(super) const fn next_step(nonce: u64, facts: Facts, bump_due: bool) -> Step {
    if let Some(hash) = facts.mined {
        return Step::Mined(hash);
    }
    if facts.latest_nonce > nonce {
        // the nonce is used, and not by one of ours (no receipt). A hash the node still knows was mined after the
        // receipts were read, or is about to be evicted: look again next round.
        return if facts.known { Step::Wait } else { Step::Dropped };
    }
    if !facts.known {
        Step::Rebroadcast
    } else if bump_due {
        Step::BumpFees
    } else {
        Step::Wait
    }
}

/// Whether a fee bump is due: `replace_after_ms` have passed since the fees were last set (`fees_checked_ms`).
pub(super) const fn bump_due(now_ms: u64, fees_checked_ms: u64, replace_after_ms: u64) -> bool {
    now_ms.saturating_sub(fees_checked_ms) >= replace_after_ms
}

/// Nonce holes at start-up. `stored`: nonces of the stored transactions; `latest`: the relayer's mined transaction
/// count; `pending`: the node's next nonce counting its pool (read after the stored transactions were re-broadcast,
/// so nonces below it are occupied). A hole is a nonce between `max(latest, pending)` and the highest stored nonce
/// with nothing stored: nothing will ever be mined at it, so every later nonce would wait forever.
pub(super) fn plan_gaps(stored: &[u64], latest: u64, pending: u64) -> GapPlan {
    let live: BTreeSet<u64> = stored.iter().copied().filter(|n| *n >= latest).collect();
    let floor = pending.max(latest);
    match live.last().copied() {
        None => GapPlan {
            holes: Vec::new(),
            next_nonce: floor,
        },
        Some(top) => GapPlan {
            holes: (floor..top)
                .filter(|n| !live.contains(n))
                .take(MAX_HOLES)
                .collect(),
            next_nonce: floor.max(top.saturating_add(1)),
        },
    }
}

/// The next nonce after a nonce error: the node's pending nonce, above every stored one.
pub(super) fn resync_nonce(pending: u64, stored: &[PendingTx]) -> u64 {
    let above_stored = stored
        .iter()
        .map(|p| p.nonce.saturating_add(1))
        .max()
        .unwrap_or(0);
    pending.max(above_stored)
}

/// The copy a round acts on: the stored one (read under the send lock) when it still is the one decided on (`seen`);
/// otherwise what that round saw: gone from the lane, or changed meanwhile by another round (still pending).
pub(super) fn still_stored(stored: Option<PendingTx>, seen: &PendingTx) -> Result<PendingTx, Round> {
    match stored {
        None => Err(Round::Gone),
        Some(stored) if stored.hashes != seen.hashes => Err(Round::Pending),
        Some(stored) => Ok(stored),
    }
}

/// The decision for a watched transaction: `watched` its `(block, gasUsed)` as stored, `slot` its nonce's
/// standing, `receipt` its receipt now as `(block, gasUsed)` (`None`: no receipt), `head` the chain's head, `depth`
/// the confirmations asked (a transaction in the head block has 1).
pub(super) const fn decide(
    watched: (u64, u64),
    slot: Slot,
    receipt: Option<(u64, u64)>,
    head: u64,
    depth: u64,
) -> Confirm {
    let Some((block, gas_used)) = receipt else {
        return match slot {
            Slot::Own => Confirm::Reorganized,
            Slot::Displaced { used: false } => Confirm::Wait { moved: None },
            Slot::Displaced { used: true } => Confirm::Superseded,
        };
    };
    if head >= block && head - block + 1 >= depth {
        return Confirm::Final { gas_used };
    }
    if block == watched.0 && gas_used == watched.1 {
        Confirm::Wait { moved: None }
    } else {
        Confirm::Wait {
            moved: Some((block, gas_used)),
        }
    }
}

/// A receipt's `(block, gasUsed)`, saturated.
pub(super) fn receipt_facts(receipt: &Receipt) -> (u64, u64) {
    (
        u64::try_from(receipt.block_number).unwrap_or(u64::MAX),
        u64::try_from(receipt.gas_used).unwrap_or(u64::MAX),
    )
}

/// A transaction's record state from its receipt.
pub(super) fn mined_state(receipt: &Receipt) -> TransactionState {
    if receipt.status.is_zero() {
        TransactionState::Reverted
    } else {
        TransactionState::Mined
    }
}

impl Resign {
    /// The copy stored in place of `stored`: the new bytes, their hash last, fees checked `now_ms`; a cancel marks
    /// where its self-transfers start. Job, nonce, charge and the rest stay as they were.
    pub(super) fn next(self, stored: &PendingTx, raw: Bytes, hash: B256, now_ms: u64) -> PendingTx {
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
    pub(super) const fn log_plan(self, described: bool, cancelled: bool) -> Option<LogPlan> {
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
    pub(super) fn kept(self, stored: PendingTx, now_ms: u64) -> PendingTx {
        match self {
            Self::Bump => PendingTx {
                fees_checked_ms: now_ms,
                ..stored
            },
            Self::Replace | Self::Cancel => stored,
        }
    }

    /// The transaction signed in place of `request` (the stored one, decoded) at the bumped fees: the same call,
    /// or for a cancel a 0-value transfer to `signer` at its nonce on `chain_id`.
    pub(super) fn request(
        self,
        request: TxRequest,
        (max_fee, tip): (u128, u128),
        signer: Address,
        chain_id: u64,
    ) -> TxRequest {
        match self {
            Self::Bump | Self::Replace => TxRequest {
                max_fee_per_gas: max_fee,
                max_priority_fee_per_gas: tip,
                ..request
            },
            Self::Cancel => TxRequest {
                chain_id,
                nonce: request.nonce,
                gas_limit: TRANSFER_GAS,
                max_fee_per_gas: max_fee,
                max_priority_fee_per_gas: tip,
                to: signer,
                input: Bytes::new(),
            },
        }
    }
}

/// The answer of a fee above the cap: `FEE_TOO_HIGH`, retry later.
pub(super) fn fee_too_high(base: u128, tip: u128, cap: u128) -> ApiError {
    let mut err = ApiError::new(
        Code::FeeTooHigh,
        format!(
            "the network asks {base} wei base fee + {tip} wei tip per gas, above the relayer's limit of {cap} wei; \
             retry later"
        ),
    );
    err.retry_after = Some(FEE_RETRY_AFTER_SECONDS);
    err
}

/// The fees `(max fee, tip)` of a new transaction at the network's `base` fee and `tip`, refused above `cap`.
pub(super) fn new_fees(base: u128, tip: u128, cap: u128) -> ApiResult<(u128, u128)> {
    initial_fees_capped(base, tip, cap).ok_or_else(|| fee_too_high(base, tip, cap))
}

/// The fees of a replacement of a transaction signed at `previous` fees: at least 10% more, at least the network's
/// fees now; `None` above `cap`.
pub(super) fn bumped_fees(previous: (u128, u128), base: u128, tip: u128, cap: u128) -> Option<(u128, u128)> {
    bumped_fees_capped(previous, initial_fees(base, tip), cap)
}

/// Refuses a transaction needing more gas than `MAX_TRANSACTION_GAS`.
pub(super) fn check_gas_limit(gas_limit: u64, max_transaction_gas: u64) -> ApiResult<()> {
    if gas_limit > max_transaction_gas {
        return Err(ApiError::new(
            Code::GasLimitTooHigh,
            format!(
                "the transaction needs {gas_limit} gas; this relayer sends at most {max_transaction_gas} \
                 (MAX_TRANSACTION_GAS)"
            ),
        ));
    }
    Ok(())
}

/// Refuses a transaction the signer's `balance` cannot pay at its gas limit and max fee.
pub(super) fn check_balance(balance: U256, gas_limit: u64, max_fee: u128) -> ApiResult<()> {
    if balance < U256::from(gas_limit) * U256::from(max_fee) {
        let mut err = ApiError::new(
            Code::InsufficientFunds,
            "the relayer's balance cannot pay for this deployment",
        );
        err.retry_after = Some(60);
        return Err(err);
    }
    Ok(())
}

/// A failed gas estimate: a node's refusal means the call would revert.
pub(super) fn estimate_error(e: RpcError) -> ApiError {
    match e {
        RpcError::Node { message, .. } => ApiError::new(
            Code::DeploymentWouldRevert,
            format!("the factory call would revert: {message}"),
        ),
        other => other.into(),
    }
}

/// Refuses new work while `draining`, unless the lane `holds` work of the profile (the pool routes around a drained
/// signer; this closes the race with a drain that lands between the routing and the send).
pub(super) fn refuse_if_draining(draining: bool, holds: bool) -> ApiResult<()> {
    if draining && !holds {
        let mut err = ApiError::new(
            Code::NoActiveSigner,
            "this signer is draining; retry (new work goes to another signer)",
        );
        err.retry_after = Some(1);
        return Err(err);
    }
    Ok(())
}

/// Whether `lane` has pending work for `profile` (a deploy of it or a relay call of it).
pub(super) fn holds(lane: &[PendingTx], profile: Address) -> bool {
    lane.iter().any(|tx| tx.job.profile() == Some(profile))
}

/// The lane as the operator sees it: how many transactions are pending and since when.
pub(super) fn lane_status(
    lane: &[PendingTx],
    now_ms: u64,
    next_nonce: Option<u64>,
    draining: bool,
) -> LaneStatus {
    let oldest = lane.iter().map(|tx| tx.sent_ms).filter(|ms| *ms > 0).min();
    LaneStatus {
        pending: u64::try_from(lane.len()).unwrap_or(u64::MAX),
        oldest_pending_age_seconds: oldest.map(|ms| now_ms.saturating_sub(ms) / 1000),
        next_nonce,
        draining,
    }
}

/// The lane's pending transactions as the operator sees them: `rows` the `limit + 1` lowest nonces.
pub(super) fn lane_list(mut rows: Vec<PendingTx>, signer: Address, limit: u64) -> LaneList {
    let truncated = u64::try_from(rows.len()).unwrap_or(u64::MAX) > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let transactions = rows
        .into_iter()
        .filter_map(|tx| {
            let hash = *tx.hashes.last()?;
            let kind = match tx.job {
                Job::Deploy { .. } => PendingKind::Deploy,
                Job::Execute { .. } => PendingKind::Execute,
                Job::Filler => PendingKind::Filler,
            };
            Some(PendingTransaction {
                hash,
                signer,
                nonce: tx.nonce,
                kind,
                profile: tx.job.profile(),
                first_sent_at: (tx.sent_ms > 0).then_some(tx.sent_ms / 1000),
                fee_bumps: u64::try_from(tx.hashes.len().saturating_sub(1)).unwrap_or(u64::MAX),
                cancelled: tx.cancelled_from.is_some(),
            })
        })
        .collect();
    LaneList {
        transactions,
        truncated,
    }
}

/// The reservation id of a relay call: `keccak256("execute" ‖ chain id ‖ profile ‖ key manager ‖ signer ‖
/// nonce)` (the LSP25 nonce carries the channel in its upper 128 bits).
pub fn execute_id(
    chain_id: u64,
    profile: Address,
    key_manager: Address,
    signer: Address,
    nonce: U256,
) -> B256 {
    let mut input = Vec::with_capacity(7 + 8 + 3 * 20 + 32);
    input.extend_from_slice(b"execute");
    input.extend_from_slice(&chain_id.to_be_bytes());
    input.extend_from_slice(profile.as_slice());
    input.extend_from_slice(key_manager.as_slice());
    input.extend_from_slice(signer.as_slice());
    input.extend_from_slice(&nonce.to_be_bytes::<32>());
    keccak256(&input)
}

/// The reservation id of one transaction sent for the signed nonce `id`, made under the send lock at `now_ms`.
///
/// Per transaction, not per signed nonce: a relay call whose transaction reverted leaves its LSP25 nonce unused,
/// so the same nonce may be relayed again — by the same signed call or another one — and that second transaction
/// spends gas of its own. Under one id it would find the first one's reservation open (`Existing`: no limit
/// checked) and settle to nothing (an id is settled once): gas charged to no one.
pub(super) fn attempt_charge_id(id: B256, now_ms: u64) -> String {
    format!("execute:{id}:{now_ms}")
}

/// How a relay call is sent: its gas limit, reserved for this very transaction on the profile's month
/// (`monthly_gas_quota`), the relayer-wide day (`max_gas_per_day`) and the fair `shares` of that day
/// ([`crate::shares::Shares::of_ceiling`]) under an id of its own.
pub(super) fn execute_plan(
    chain_id: u64,
    profile: Address,
    id: B256,
    gas_limit: u64,
    (monthly_gas_quota, max_gas_per_day): (u64, u64),
    shares: Vec<Limit>,
    now_ms: u64,
) -> SendPlan {
    // the profile's month, the relayer-wide ceiling and the shares of it, for this very transaction, under the
    // send lock: nothing is sent unless every one has room for its gas limit
    let mut reserve = vec![
        Limit {
            subject: Subject::Profile(profile),
            limit: monthly_gas_quota,
        },
        Limit {
            subject: Subject::Relayer(chain_id),
            limit: max_gas_per_day,
        },
    ];
    reserve.extend(shares);
    SendPlan {
        gas_limit: Some(gas_limit),
        charge: Some(Charge {
            id: attempt_charge_id(id, now_ms),
            meters: reserve.iter().map(|l| l.subject.clone()).collect(),
        }),
        reserve,
        ..SendPlan::default()
    }
}

/// How a deployment is sent: its estimated gas reserved on the asking key's month (`key`: its id and budget), the
/// relayer's day and the fair `shares` (of the key's budget and of the day), one reservation per deploy attempt (a
/// retried deploy after a revert is a new transaction).
pub(super) fn deploy_plan(
    chain_id: u64,
    profile: Address,
    key: Option<(String, u64)>,
    max_gas_per_day: u64,
    shares: Vec<Limit>,
    now_ms: u64,
) -> SendPlan {
    let mut reserve = vec![Limit {
        subject: Subject::Relayer(chain_id),
        limit: max_gas_per_day,
    }];
    if let Some((key, budget)) = key {
        reserve.insert(
            0,
            Limit {
                subject: Subject::Key(key),
                limit: budget,
            },
        );
    }
    reserve.extend(shares);
    SendPlan {
        charge: Some(Charge {
            id: format!("deploy:{chain_id}:{profile:#x}:{now_ms}"),
            meters: reserve.iter().map(|l| l.subject.clone()).collect(),
        }),
        reserve,
        ..SendPlan::default()
    }
}

/// The charge of a hole's self-transfer: the relayer's own gas, on its daily meter.
pub(super) fn filler_charge(chain_id: u64, signer: Address, nonce: u64, now_ms: u64) -> Charge {
    Charge {
        id: format!("filler:{chain_id}:{signer:#x}:{nonce}:{now_ms}"),
        meters: vec![Subject::Relayer(chain_id)],
    }
}

/// A cancelled job's charge split in two: the relayer's meter (it pays the self-transfer) and the others (the
/// profile's or key's reservation, released).
pub(super) fn split_cancelled(charge: &Charge) -> (Charge, Charge) {
    let (relayer, others): (Vec<Subject>, Vec<Subject>) = charge
        .meters
        .iter()
        .cloned()
        .partition(|s| matches!(s, Subject::Relayer(_)));
    (
        Charge {
            id: charge.id.clone(),
            meters: relayer,
        },
        Charge {
            id: charge.id.clone(),
            meters: others,
        },
    )
}

/// How long a waiting request sleeps between receipt checks, `waited_ms` into its wait: short at first (a local
/// or fast chain mines at once), then every 250 ms.
pub(super) const fn poll_interval(waited_ms: u64) -> core::time::Duration {
    core::time::Duration::from_millis(match waited_ms {
        0..100 => 10,
        100..1_000 => 50,
        _ => 250,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const H1: B256 = B256::repeat_byte(1);
    const H2: B256 = B256::repeat_byte(2);
    const NEW: B256 = B256::repeat_byte(9);
    const PROFILE: Address = Address::repeat_byte(0xaa);
    const SIGNER: Address = Address::repeat_byte(0x51);

    fn facts(mined: Option<B256>, latest_nonce: u64, known: bool) -> Facts {
        Facts {
            mined,
            latest_nonce,
            known,
        }
    }

    fn stored(cancelled_from: Option<usize>) -> PendingTx {
        PendingTx {
            job: Job::Deploy {
                universal_profile: PROFILE,
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

    fn at(nonce: u64, job: Job, sent_ms: u64) -> PendingTx {
        PendingTx {
            job,
            nonce,
            sent_ms,
            ..stored(None)
        }
    }

    #[test]
    fn a_mined_hash_wins() {
        for latest in [4, 5, 6] {
            for (known, due) in [(true, true), (false, false)] {
                assert_eq!(next_step(5, facts(Some(H1), latest, known), due), Step::Mined(H1));
            }
        }
    }

    #[test]
    fn a_used_nonce_without_our_hashes_is_dropped() {
        // (nonce, latest nonce, known, bump due) → step
        let cases = [
            (5, 6, false, false, Step::Dropped),
            (5, 9, false, true, Step::Dropped),
            // still known: mined after the receipts were read, or about to be evicted; look again
            (5, 6, true, true, Step::Wait),
        ];
        for (nonce, latest, known, due, step) in cases {
            assert_eq!(
                next_step(nonce, facts(None, latest, known), due),
                step,
                "{nonce} {latest} {known}"
            );
        }
    }

    #[test]
    fn an_unused_nonce_is_rebroadcast_bumped_or_waited_on() {
        let cases = [
            // the node lost it (or it was never sent): broadcast the stored bytes, whether a bump is due or not
            (5, 5, false, false, Step::Rebroadcast),
            (7, 5, false, true, Step::Rebroadcast),
            (5, 5, true, true, Step::BumpFees),
            (5, 5, true, false, Step::Wait),
        ];
        for (nonce, latest, known, due, step) in cases {
            assert_eq!(
                next_step(nonce, facts(None, latest, known), due),
                step,
                "{nonce} {latest} {known} {due}"
            );
        }
    }

    #[test]
    fn a_bump_is_due_once_the_wait_has_passed() {
        // (now, fees checked, replace after) → due
        let cases = [
            (100, 0, 100, true),
            (99, 0, 100, false),
            (500, 100, 100, true),
            // a clock behind the stored time is no bump
            (50, 100, 10, false),
            (0, 0, 0, true),
        ];
        for (now, checked, after, due) in cases {
            assert_eq!(bump_due(now, checked, after), due, "{now} {checked} {after}");
        }
    }

    #[test]
    fn holes_between_the_chain_and_the_highest_stored_nonce_are_filled() {
        // (stored, latest, pending) → (holes, next nonce)
        type Case = (&'static [u64], u64, u64, &'static [u64], u64);
        let cases: [Case; 6] = [
            // stored 5 and 7, chain at 5, the pool holds 5 (so pending is 6): 6 is a hole
            (&[5, 7], 5, 6, &[6], 8),
            // the pool holds something at 6 (pending 8): no hole
            (&[5, 7], 5, 8, &[], 8),
            // several holes, the node knows none of the stored transactions yet
            (&[3, 6], 3, 3, &[4, 5], 7),
            // nothing stored: the node's pending nonce
            (&[], 5, 9, &[], 9),
            // stored transactions whose nonce is mined (dropped, or mined and not finished yet) do not count
            (&[1, 2], 5, 5, &[], 5),
            // contiguous lane, nothing missing
            (&[5, 6, 7], 5, 8, &[], 8),
        ];
        for (stored, latest, pending, holes, next_nonce) in cases {
            assert_eq!(
                plan_gaps(stored, latest, pending),
                GapPlan {
                    holes: holes.to_vec(),
                    next_nonce
                },
                "{stored:?} {latest} {pending}"
            );
        }
        // a stored nonce far ahead of the chain: a bounded number of holes per reconciliation
        let far = plan_gaps(&[1_000_000], 0, 0);
        assert_eq!(far.holes.len(), MAX_HOLES);
        assert_eq!(far.holes.first(), Some(&0));
        assert_eq!(far.next_nonce, 1_000_001);
    }

    #[test]
    fn a_resynced_nonce_is_above_the_node_and_every_stored_one() {
        let job = || Job::Filler;
        let cases = [
            (vec![], 4, 4),
            (vec![at(3, job(), 1)], 4, 4),
            (vec![at(3, job(), 1), at(9, job(), 1)], 4, 10),
            (vec![at(u64::MAX, job(), 1)], 0, u64::MAX),
        ];
        for (lane, pending, next) in cases {
            assert_eq!(resync_nonce(pending, &lane), next, "{pending}");
        }
    }

    #[test]
    fn a_round_acts_only_on_the_copy_it_decided_on() {
        let seen = stored(None);
        assert_eq!(still_stored(None, &seen), Err(Round::Gone));
        assert_eq!(still_stored(Some(seen.clone()), &seen), Ok(seen.clone()));
        let bumped = PendingTx {
            hashes: vec![H1, H2, NEW],
            ..seen.clone()
        };
        assert_eq!(still_stored(Some(bumped), &seen), Err(Round::Pending));
        // other fields changed (fees checked) with the same hashes: still the one decided on, as stored now
        let checked = PendingTx {
            fees_checked_ms: 99,
            ..seen.clone()
        };
        assert_eq!(still_stored(Some(checked.clone()), &seen), Ok(checked));
    }

    #[test]
    fn deep_enough_is_final_with_the_gas_of_the_receipt_now() {
        // (watched, receipt now, head, depth) → decision
        let cases = [
            // mined in 100, head 102: 3 confirmations
            (
                (100, 21_000),
                (100, 21_000),
                102,
                3,
                Confirm::Final { gas_used: 21_000 },
            ),
            // mined again in 101 with other gas: the gas of the receipt that stays is charged
            (
                (100, 21_000),
                (101, 30_000),
                103,
                3,
                Confirm::Final { gas_used: 30_000 },
            ),
        ];
        for (watched, receipt, head, depth, decision) in cases {
            assert_eq!(decide(watched, Slot::Own, Some(receipt), head, depth), decision);
        }
    }

    #[test]
    fn not_deep_enough_waits_and_follows_a_move() {
        let cases = [
            ((100, 5), (100, 5), 101, 3, Confirm::Wait { moved: None }),
            (
                (100, 5),
                (101, 6),
                101,
                3,
                Confirm::Wait {
                    moved: Some((101, 6)),
                },
            ),
            // a head behind the receipt's block (a node that is behind) is not depth
            ((100, 5), (100, 5), 90, 1, Confirm::Wait { moved: None }),
        ];
        for (watched, receipt, head, depth, decision) in cases {
            assert_eq!(decide(watched, Slot::Own, Some(receipt), head, depth), decision);
        }
    }

    #[test]
    fn a_receipt_that_disappears_is_reorganized() {
        assert_eq!(decide((100, 5), Slot::Own, None, 200, 3), Confirm::Reorganized);
        assert_eq!(decide((100, 5), Slot::Own, None, 100, 1), Confirm::Reorganized);
    }

    #[test]
    fn one_confirmation_is_the_head_block() {
        assert_eq!(
            decide((7, 1), Slot::Own, Some((7, 1)), 7, 1),
            Confirm::Final { gas_used: 1 }
        );
        assert_eq!(
            decide((7, 1), Slot::Own, Some((7, 1)), 7, 2),
            Confirm::Wait { moved: None }
        );
    }

    #[test]
    fn a_displaced_transaction_waits_for_its_receipt_and_is_charged_if_mined_again() {
        let free = Slot::Displaced { used: false };
        let used = Slot::Displaced { used: true };
        let cases = [
            // no receipt, the nonce not used yet: it may still be mined (other nodes keep its bytes)
            ((100, 5), free, None, 200, Confirm::Wait { moved: None }),
            // mined again: a displaced row holds no block (0), so its first receipt is a move (its record mined
            // again)
            (
                (0, 0),
                free,
                Some((100, 5)),
                100,
                Confirm::Wait {
                    moved: Some((100, 5)),
                },
            ),
            (
                (100, 5),
                used,
                Some((101, 6)),
                103,
                Confirm::Final { gas_used: 6 },
            ),
        ];
        for (watched, slot, receipt, head, decision) in cases {
            assert_eq!(
                decide(watched, slot, receipt, head, 3),
                decision,
                "{slot:?} {receipt:?}"
            );
        }
    }

    #[test]
    fn a_displaced_transaction_whose_nonce_is_used_is_superseded() {
        assert_eq!(
            decide((100, 5), Slot::Displaced { used: true }, None, 200, 3),
            Confirm::Superseded
        );
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
        let dropped = Some(LogPlan {
            new_pending: false,
            old: TransactionState::Dropped,
        });
        // (why, described, cancelled) → plan
        let cases = [
            (Resign::Bump, true, false, replaced),
            (Resign::Replace, true, false, replaced),
            (Resign::Cancel, true, false, dropped),
            // a bumped or replaced cancel: its self-transfers have no records
            (Resign::Bump, true, true, None),
            (Resign::Replace, true, true, None),
            (Resign::Cancel, true, true, None),
            // a job without records (a nonce filler)
            (Resign::Bump, false, false, None),
            (Resign::Replace, false, false, None),
            (Resign::Cancel, false, false, None),
        ];
        for (why, described, cancelled, plan) in cases {
            assert_eq!(
                why.log_plan(described, cancelled),
                plan,
                "{why:?} {described} {cancelled}"
            );
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

    #[test]
    fn a_replacement_keeps_the_call_a_cancel_is_a_self_transfer() {
        let request = TxRequest {
            chain_id: 42,
            nonce: 7,
            gas_limit: 300_000,
            max_fee_per_gas: 10,
            max_priority_fee_per_gas: 1,
            to: PROFILE,
            input: Bytes::from_static(&[1, 2, 3]),
        };
        for why in [Resign::Bump, Resign::Replace] {
            let next = why.request(request.clone(), (20, 3), SIGNER, 42);
            assert_eq!(
                next,
                TxRequest {
                    max_fee_per_gas: 20,
                    max_priority_fee_per_gas: 3,
                    ..request.clone()
                },
                "{why:?}"
            );
        }
        assert_eq!(
            Resign::Cancel.request(request, (20, 3), SIGNER, 42),
            TxRequest {
                chain_id: 42,
                nonce: 7,
                gas_limit: TRANSFER_GAS,
                max_fee_per_gas: 20,
                max_priority_fee_per_gas: 3,
                to: SIGNER,
                input: Bytes::new(),
            }
        );
    }

    #[test]
    fn fees_above_the_cap_are_refused_with_a_retry() {
        // (base, tip, cap) → fees
        let cases = [
            (10, 2, 100, Some((22, 2))),
            // a tip of 0 is raised to 1 wei
            (10, 0, 100, Some((21, 1))),
            // base + tip at the cap is sent, the headroom cut at the cap
            (60, 40, 100, Some((100, 40))),
            (60, 41, 100, None),
        ];
        for (base, tip, cap, fees) in cases {
            let got = new_fees(base, tip, cap);
            assert_eq!(got.as_ref().ok().copied(), fees, "{base} {tip} {cap}");
            if let Err(e) = got {
                assert!(e.is(Code::FeeTooHigh));
                assert_eq!(e.retry_after, Some(FEE_RETRY_AFTER_SECONDS));
            }
        }
    }

    #[test]
    fn a_bump_raises_the_fees_under_the_cap() {
        // (previous, base, tip, cap) → fees
        let cases = [
            // 10% more than before, above the network's fees now
            ((100, 10), 1, 1, 1_000, Some((111, 12))),
            // the network's fees now, above 10% more
            ((100, 10), 100, 20, 1_000, Some((220, 20))),
            // above the cap: priced at the cap while the smallest replacement fits, else none
            ((100, 10), 100, 20, 150, Some((150, 20))),
            ((100, 10), 1, 1, 109, None),
        ];
        for (previous, base, tip, cap, fees) in cases {
            assert_eq!(
                bumped_fees(previous, base, tip, cap),
                fees,
                "{previous:?} {base} {tip} {cap}"
            );
        }
    }

    #[test]
    fn gas_and_balance_checks() {
        assert!(check_gas_limit(100, 100).is_ok());
        assert!(check_gas_limit(101, 100).unwrap_err().is(Code::GasLimitTooHigh));
        // (balance, gas limit, max fee) → paid
        let cases = [
            (U256::from(2_100u64), 21, 100, true),
            (U256::from(2_099u64), 21, 100, false),
            (U256::ZERO, 0, 100, true),
            (U256::MAX, u64::MAX, u128::MAX, true),
        ];
        for (balance, gas, fee, paid) in cases {
            let result = check_balance(balance, gas, fee);
            assert_eq!(result.is_ok(), paid, "{balance} {gas} {fee}");
            if let Err(e) = result {
                assert!(e.is(Code::InsufficientFunds));
                assert_eq!(e.retry_after, Some(60));
            }
        }
    }

    #[test]
    fn a_draining_signer_takes_only_the_work_it_holds() {
        // (draining, holds) → refused
        for (draining, holds, refused) in [
            (false, false, false),
            (false, true, false),
            (true, true, false),
            (true, false, true),
        ] {
            let result = refuse_if_draining(draining, holds);
            assert_eq!(result.is_err(), refused, "{draining} {holds}");
            if let Err(e) = result {
                assert!(e.is(Code::NoActiveSigner));
                assert_eq!(e.retry_after, Some(1));
            }
        }
    }

    #[test]
    fn a_lane_holds_the_deploys_and_relay_calls_of_a_profile() {
        let other = Address::repeat_byte(0xbb);
        let lane = [
            at(1, Job::Filler, 1),
            at(
                2,
                Job::Execute {
                    id: H1,
                    profile: other,
                },
                1,
            ),
        ];
        let deploy = [at(
            3,
            Job::Deploy {
                universal_profile: PROFILE,
            },
            1,
        )];
        let cases: [(&[PendingTx], Address, bool); 5] = [
            (&[], PROFILE, false),
            (&lane, PROFILE, false),
            (&lane, other, true),
            (&deploy, PROFILE, true),
            (&deploy, other, false),
        ];
        for (lane, profile, holds_it) in cases {
            assert_eq!(holds(lane, profile), holds_it, "{profile}");
        }
    }

    #[test]
    fn the_lane_status_counts_and_ages_the_pending() {
        let lane = [
            at(1, Job::Filler, 0),
            at(2, Job::Filler, 5_000),
            at(3, Job::Filler, 9_000),
        ];
        // (lane, now) → (pending, oldest age)
        let cases: [(&[PendingTx], u64, u64, Option<u64>); 4] = [
            (&[], 10_000, 0, None),
            // rows stored before the send time was recorded (0) have no age
            (&lane[..1], 10_000, 1, None),
            (&lane, 10_000, 3, Some(5)),
            (&lane, 1_000, 3, Some(0)),
        ];
        for (rows, now, pending, age) in cases {
            assert_eq!(
                lane_status(rows, now, Some(4), true),
                LaneStatus {
                    pending,
                    oldest_pending_age_seconds: age,
                    next_nonce: Some(4),
                    draining: true,
                }
            );
        }
    }

    #[test]
    fn the_lane_list_is_truncated_at_the_limit() {
        let rows = || {
            vec![
                at(
                    1,
                    Job::Deploy {
                        universal_profile: PROFILE,
                    },
                    2_000,
                ),
                PendingTx {
                    cancelled_from: Some(1),
                    ..at(2, Job::Filler, 0)
                },
            ]
        };
        // (limit) → (listed, truncated)
        for (limit, listed, truncated) in [(0, 0, true), (1, 1, true), (2, 2, false), (5, 2, false)] {
            let list = lane_list(rows(), SIGNER, limit);
            assert_eq!(
                (list.transactions.len(), list.truncated),
                (listed, truncated),
                "{limit}"
            );
        }
        let list = lane_list(rows(), SIGNER, 2);
        let deploy = list.transactions.first().unwrap();
        assert_eq!(
            (
                deploy.hash,
                deploy.signer,
                deploy.nonce,
                deploy.kind,
                deploy.profile
            ),
            (H2, SIGNER, 1, PendingKind::Deploy, Some(PROFILE))
        );
        assert_eq!(
            (deploy.first_sent_at, deploy.fee_bumps, deploy.cancelled),
            (Some(2), 1, false)
        );
        let filler = list.transactions.get(1).unwrap();
        assert_eq!(
            (
                filler.kind,
                filler.profile,
                filler.first_sent_at,
                filler.cancelled
            ),
            (PendingKind::Filler, None, None, true)
        );
    }

    #[test]
    fn every_job_reserves_on_its_meters_under_an_id_of_its_own() {
        let execute = execute_plan(42, PROFILE, H1, 90_000, (1_000, 2_000), Vec::new(), 7);
        assert_eq!(execute.gas_limit, Some(90_000));
        assert_eq!(
            execute.charge,
            Some(Charge {
                id: format!("execute:{H1}:7"),
                meters: vec![Subject::Profile(PROFILE), Subject::Relayer(42)],
            })
        );
        assert_eq!(
            execute.reserve,
            vec![
                Limit {
                    subject: Subject::Profile(PROFILE),
                    limit: 1_000
                },
                Limit {
                    subject: Subject::Relayer(42),
                    limit: 2_000
                },
            ]
        );
        // a deploy: estimated (no gas limit), the key first when one asked
        let cases = [
            (None, vec![Subject::Relayer(42)]),
            (
                Some(("k1".to_owned(), 500)),
                vec![Subject::Key("k1".to_owned()), Subject::Relayer(42)],
            ),
        ];
        for (key, meters) in cases {
            let plan = deploy_plan(42, PROFILE, key, 2_000, Vec::new(), 7);
            assert_eq!(plan.gas_limit, None);
            let charge = plan.charge.unwrap();
            assert_eq!(charge.id, format!("deploy:42:{PROFILE:#x}:7"));
            assert_eq!(charge.meters, meters);
            let reserved: Vec<Subject> = plan.reserve.iter().map(|l| l.subject.clone()).collect();
            assert_eq!(reserved, charge.meters);
        }
        assert_eq!(
            filler_charge(42, SIGNER, 3, 7),
            Charge {
                id: format!("filler:42:{SIGNER:#x}:3:7"),
                meters: vec![Subject::Relayer(42)],
            }
        );
        // the shares come after the caps they are parts of, reserved and charged alike
        let share = Limit {
            subject: Subject::Share(42, crate::meter::Holder::Untrusted),
            limit: 1_600,
        };
        for plan in [
            execute_plan(42, PROFILE, H1, 90_000, (1_000, 2_000), vec![share.clone()], 7),
            deploy_plan(42, PROFILE, None, 2_000, vec![share.clone()], 7),
        ] {
            assert_eq!(plan.reserve.last(), Some(&share));
            let meters = plan.charge.map(|c| c.meters).unwrap_or_default();
            assert_eq!(meters.last(), Some(&share.subject));
            assert_eq!(meters.len(), plan.reserve.len());
        }
        // one id per attempt: the same signed nonce later is another reservation
        assert_ne!(attempt_charge_id(H1, 1), attempt_charge_id(H1, 2));
    }

    #[test]
    fn a_cancelled_job_pays_the_relayer_and_releases_the_others() {
        let charge = Charge {
            id: "deploy:1".to_owned(),
            meters: vec![
                Subject::Key("k".to_owned()),
                Subject::Relayer(42),
                Subject::Profile(PROFILE),
            ],
        };
        let (relayer, others) = split_cancelled(&charge);
        assert_eq!(relayer.meters, vec![Subject::Relayer(42)]);
        assert_eq!(
            others.meters,
            vec![Subject::Key("k".to_owned()), Subject::Profile(PROFILE)]
        );
        assert_eq!(
            (relayer.id.as_str(), others.id.as_str()),
            ("deploy:1", "deploy:1")
        );
    }

    #[test]
    fn a_waiting_request_polls_fast_first() {
        for (waited, ms) in [
            (0, 10),
            (99, 10),
            (100, 50),
            (999, 50),
            (1_000, 250),
            (u64::MAX, 250),
        ] {
            assert_eq!(
                poll_interval(waited),
                core::time::Duration::from_millis(ms),
                "{waited}"
            );
        }
    }
}
