//! The nonce lane: one SQLite row per nonce of the relayer key, the decision of a round ([`next_step`]) and the
//! start-up reconciliation with the chain ([`plan_gaps`]).

use std::collections::BTreeSet;

use alloy_primitives::{B256, Bytes};
use serde::{Deserialize, Serialize};
use worker::{SqlStorage, SqlStorageValue};

use crate::{
    error::{ApiError, ApiResult},
    rpc::SendOutcome,
    signer::{TxRequest, initial_fees_capped},
};

use super::jobs::Job;
use super::rounds::{any_known, log_rebroadcast};
use super::send::{TRANSFER_GAS, fee_too_high};
use super::{Ctx, Relayer};
use crate::meter::{Charge, Limit, Subject, UNLIMITED, reserve_all};

/// A stored, not yet mined transaction of the lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PendingTx {
    pub(super) job: Job,
    pub(super) nonce: u64,
    /// The latest signed transaction for this nonce (EIP-2718 bytes): what is broadcast, and what a fee bump
    /// re-signs with higher fees.
    pub(super) raw: Bytes,
    /// Every hash signed for this nonce, oldest first; the last is `raw`'s.
    pub(super) hashes: Vec<B256>,
    /// When the fees were last set, or a bump last refused (ms since the epoch).
    pub(super) fees_checked_ms: u64,
    /// Earlier transactions for this job, at other nonces, that were dropped (their nonce went to another one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) dropped: Vec<B256>,
    /// Who pays, when metered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) charge: Option<Charge>,
    /// When the job was first sent (ms since the epoch; kept across fee bumps and re-sends; 0 for rows stored
    /// before it was recorded).
    #[serde(default)]
    pub(super) sent_ms: u64,
    /// Set when the operator cancelled the job: the index in `hashes` of the first cancelling self-transfer (it and
    /// later hashes are cancels, bumped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) cancelled_from: Option<usize>,
}

impl PendingTx {
    /// Whether `hash` is one of the cancelling self-transfers.
    pub(super) fn is_cancel(&self, hash: B256) -> bool {
        self.cancelled_from.is_some_and(|from| {
            self.hashes
                .iter()
                .position(|h| *h == hash)
                .is_some_and(|i| i >= from)
        })
    }

    /// The latest hash, for logs.
    pub(super) fn latest_hash(&self) -> String {
        self.hashes
            .last()
            .map_or_else(|| "-".to_owned(), ToString::to_string)
    }
}

/// Chain facts about one lane transaction, read in this order: the receipts of its hashes, the account's latest
/// nonce, whether the node knows any of its hashes (pool or chain). A transaction mined after its receipts were read
/// is then still known, so it is never taken for dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Facts {
    /// A hash of this nonce with a receipt.
    pub(super) mined: Option<B256>,
    /// How many transactions of the relayer are mined (`eth_getTransactionCount(…, "latest")`).
    pub(super) latest_nonce: u64,
    /// Whether `eth_getTransactionByHash` finds any of its hashes.
    pub(super) known: bool,
}

/// What to do with a lane transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Finish the job.
    Mined(B256),
    /// Nothing now.
    Wait,
    /// The node lost it and its nonce is unused: broadcast the stored bytes again.
    Rebroadcast,
    /// Not mined in time: replace it with higher fees.
    BumpFees,
    /// Its nonce went to another transaction and none of its hashes is known: send the job again, fresh nonce.
    Dropped,
}

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

/// At most this many holes are filled in one reconciliation (a stored nonce far above the chain's means the chain
/// was reset or the key used elsewhere: not something to paper over with thousands of transfers).
pub(super) const MAX_HOLES: usize = 64;

/// The result of reconciling the stored lane with the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GapPlan {
    /// Nonces to fill with self-transfers, ascending.
    pub(super) holes: Vec<u64>,
    /// The next nonce to assign once the holes are filled.
    pub(super) next_nonce: u64,
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

#[derive(Deserialize)]
pub(super) struct Row {
    pub(super) record: String,
}

pub(super) fn nonce_value(nonce: u64) -> ApiResult<SqlStorageValue> {
    let n = i64::try_from(nonce).map_err(ApiError::internal)?;
    SqlStorageValue::try_from_i64(n).map_err(ApiError::internal)
}

impl Relayer {
    pub(super) fn sql(&self) -> ApiResult<SqlStorage> {
        let sql = self.state.storage().sql();
        if !self.schema_ready.get() {
            sql.exec(
                "CREATE TABLE IF NOT EXISTS lane (nonce INTEGER PRIMARY KEY, record TEXT NOT NULL)",
                Vec::new(),
            )?;
            // the lane's signer and whether it drains
            sql.exec(
                "CREATE TABLE IF NOT EXISTS lane_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)",
                Vec::new(),
            )?;
            self.schema_ready.set(true);
        }
        Ok(sql)
    }

    pub(super) fn meta_get(&self, key: &str) -> ApiResult<Option<String>> {
        #[derive(Deserialize)]
        struct Meta {
            v: String,
        }
        let rows: Vec<Meta> = self
            .sql()?
            .exec("SELECT v FROM lane_meta WHERE k = ?", vec![key.into()])?
            .to_array()?;
        Ok(rows.into_iter().next().map(|m| m.v))
    }

    pub(super) fn meta_put(&self, key: &str, value: &str) -> ApiResult<()> {
        self.sql()?.exec(
            "INSERT OR REPLACE INTO lane_meta (k, v) VALUES (?, ?)",
            vec![key.into(), value.into()],
        )?;
        Ok(())
    }

    pub(super) fn parse_rows(rows: &[Row]) -> ApiResult<Vec<PendingTx>> {
        rows.iter()
            .map(|r| serde_json::from_str(&r.record).map_err(ApiError::internal))
            .collect()
    }

    /// Every stored transaction, by nonce.
    pub(super) fn lane(&self) -> ApiResult<Vec<PendingTx>> {
        let rows: Vec<Row> = self
            .sql()?
            .exec("SELECT record FROM lane ORDER BY nonce", Vec::new())?
            .to_array()?;
        Self::parse_rows(&rows)
    }

    /// The stored transactions of the `limit` lowest nonces.
    pub(super) fn lane_first(&self, limit: u64) -> ApiResult<Vec<PendingTx>> {
        let rows: Vec<Row> = self
            .sql()?
            .exec(
                "SELECT record FROM lane ORDER BY nonce LIMIT ?",
                vec![nonce_value(limit)?],
            )?
            .to_array()?;
        Self::parse_rows(&rows)
    }

    /// The stored transaction at `nonce`, read from storage (not from a caller's copy).
    pub(super) fn lane_get(&self, nonce: u64) -> ApiResult<Option<PendingTx>> {
        let rows: Vec<Row> = self
            .sql()?
            .exec(
                "SELECT record FROM lane WHERE nonce = ?",
                vec![nonce_value(nonce)?],
            )?
            .to_array()?;
        Ok(Self::parse_rows(&rows)?.into_iter().next())
    }

    /// Removes the row at `remove` and stores `put`, in one write (synchronous statements, no await between them).
    pub(super) fn lane_write(&self, remove: Option<u64>, put: Option<&PendingTx>) -> ApiResult<()> {
        let sql = self.sql()?;
        if let Some(nonce) = remove {
            sql.exec("DELETE FROM lane WHERE nonce = ?", vec![nonce_value(nonce)?])?;
        }
        if let Some(tx) = put {
            let record = serde_json::to_string(tx).map_err(ApiError::internal)?;
            sql.exec(
                "INSERT OR REPLACE INTO lane (nonce, record) VALUES (?, ?)",
                vec![nonce_value(tx.nonce)?, record.into()],
            )?;
        }
        Ok(())
    }

    pub(super) fn find_job(&self, job: &Job) -> ApiResult<Option<PendingTx>> {
        Ok(self.lane()?.into_iter().find(|p| &p.job == job))
    }

    /// Reconciles the lane with the chain when the next nonce is not known (first use after construction, or the
    /// node was unreachable): stored transactions the node does not know are broadcast again from their stored bytes,
    /// holes are filled with self-transfers ([`plan_gaps`]), and the next nonce is set. Caller holds `send_lock`.
    pub(super) async fn sync_lane(&self, ctx: &Ctx) -> ApiResult<()> {
        if self.next_nonce.get().is_some() {
            return Ok(());
        }
        let from = ctx.signer.address();
        let latest = ctx.rpc.latest_nonce(from).await?;
        let lane = self.lane()?;
        for tx in lane.iter().filter(|t| t.nonce >= latest) {
            if !any_known(&ctx.rpc, &tx.hashes).await? {
                let result = ctx.rpc.send_raw(&tx.raw).await;
                log_rebroadcast(tx, &result);
                if let (SendOutcome::Unknown, Err(e)) = (SendOutcome::of(&result), result) {
                    return Err(e.into());
                }
            }
        }
        let pending = ctx.rpc.pending_nonce(from).await?;
        let stored: Vec<u64> = lane.iter().map(|t| t.nonce).collect();
        let plan = plan_gaps(&stored, latest, pending);
        for &hole in &plan.holes {
            self.fill_hole(ctx, hole).await?;
        }
        if !plan.holes.is_empty() || plan.next_nonce != pending {
            worker::console_log!(
                "nonce lane reconciled: chain at {latest} (pending {pending}), {} stored, holes filled {:?}, next {}",
                lane.len(),
                plan.holes,
                plan.next_nonce
            );
        }
        self.next_nonce.set(Some(plan.next_nonce));
        Ok(())
    }

    /// Fills the hole at `nonce` with a 0-value transfer to the relayer itself. Caller holds `send_lock`.
    pub(super) async fn fill_hole(&self, ctx: &Ctx, nonce: u64) -> ApiResult<()> {
        let (base, tip) = ctx.rpc.fees().await?;
        let (max_fee, tip) = initial_fees_capped(base, tip, ctx.max_fee_per_gas)
            .ok_or_else(|| fee_too_high(base, tip, ctx.max_fee_per_gas))?;
        let request = TxRequest {
            chain_id: ctx.config.chain_id,
            nonce,
            gas_limit: TRANSFER_GAS,
            max_fee_per_gas: max_fee,
            max_priority_fee_per_gas: tip,
            to: ctx.signer.address(),
            input: Bytes::new(),
        };
        // the relayer's own gas is counted too: on its daily meter, never refused (a hole must be filled for any
        // later transaction to be mined)
        let charge = Charge {
            id: format!(
                "filler:{}:{:#x}:{nonce}:{}",
                ctx.config.chain_id,
                ctx.signer.address(),
                super::now_ms()
            ),
            meters: vec![Subject::Relayer(ctx.config.chain_id)],
        };
        reserve_all(
            &self.env,
            &charge.id,
            TRANSFER_GAS,
            ctx.config.now(),
            ctx.config.reservation_ttl,
            &[Limit {
                subject: Subject::Relayer(ctx.config.chain_id),
                limit: UNLIMITED,
            }],
        )
        .await?;
        let (tx, result) = self
            .store_and_send(ctx, Job::Filler, &request, Vec::new(), None, Some(charge.clone()))
            .await?;
        if matches!(
            SendOutcome::of(&result),
            SendOutcome::NonceTaken | SendOutcome::Rejected
        ) {
            self.release(Some(&charge)).await;
        }
        match SendOutcome::of(&result) {
            SendOutcome::Accepted | SendOutcome::AlreadyKnown | SendOutcome::Unknown => {
                worker::console_warn!(
                    "nonce hole {nonce} filled with a self-transfer {}",
                    tx.latest_hash()
                );
                Ok(())
            }
            // something occupies the nonce after all: nothing to fill
            SendOutcome::NonceTaken => Ok(()),
            SendOutcome::Rejected => Err(result
                .err()
                .map_or_else(|| ApiError::internal("rejected without an error"), ApiError::from)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use alloy_primitives::Address;

    use super::*;

    const H1: B256 = B256::repeat_byte(1);

    fn facts(mined: Option<B256>, latest_nonce: u64, known: bool) -> Facts {
        Facts {
            mined,
            latest_nonce,
            known,
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
        assert_eq!(next_step(5, facts(None, 6, false), false), Step::Dropped);
        assert_eq!(next_step(5, facts(None, 9, false), true), Step::Dropped);
        // still known: mined after the receipts were read, or about to be evicted; look again
        assert_eq!(next_step(5, facts(None, 6, true), true), Step::Wait);
    }

    #[test]
    fn an_unused_nonce_is_rebroadcast_bumped_or_waited_on() {
        // the node lost it (or it was never sent): broadcast the stored bytes, whether a bump is due or not
        assert_eq!(next_step(5, facts(None, 5, false), false), Step::Rebroadcast);
        assert_eq!(next_step(7, facts(None, 5, false), true), Step::Rebroadcast);
        assert_eq!(next_step(5, facts(None, 5, true), true), Step::BumpFees);
        assert_eq!(next_step(5, facts(None, 5, true), false), Step::Wait);
    }

    #[test]
    fn holes_between_the_chain_and_the_highest_stored_nonce_are_filled() {
        // stored 5 and 7, chain at 5, the pool holds 5 (so pending is 6): 6 is a hole
        assert_eq!(
            plan_gaps(&[5, 7], 5, 6),
            GapPlan {
                holes: vec![6],
                next_nonce: 8
            }
        );
        // the pool holds something at 6 (pending 8): no hole
        assert_eq!(
            plan_gaps(&[5, 7], 5, 8),
            GapPlan {
                holes: vec![],
                next_nonce: 8
            }
        );
        // several holes, the node knows none of the stored transactions yet
        assert_eq!(
            plan_gaps(&[3, 6], 3, 3),
            GapPlan {
                holes: vec![4, 5],
                next_nonce: 7
            }
        );
        // nothing stored: the node's pending nonce
        assert_eq!(
            plan_gaps(&[], 5, 9),
            GapPlan {
                holes: vec![],
                next_nonce: 9
            }
        );
        // stored transactions whose nonce is mined (dropped, or mined and not finished yet) do not count
        assert_eq!(
            plan_gaps(&[1, 2], 5, 5),
            GapPlan {
                holes: vec![],
                next_nonce: 5
            }
        );
        // a stored nonce far ahead of the chain: a bounded number of holes per reconciliation
        let far = plan_gaps(&[1_000_000], 0, 0);
        assert_eq!(far.holes.len(), MAX_HOLES);
        assert_eq!(far.holes.first(), Some(&0));
        assert_eq!(far.next_nonce, 1_000_001);
        // contiguous lane, nothing missing
        assert_eq!(
            plan_gaps(&[5, 6, 7], 5, 8),
            GapPlan {
                holes: vec![],
                next_nonce: 8
            }
        );
    }

    #[test]
    fn pending_records_round_trip_with_a_kind() {
        let tx = PendingTx {
            job: Job::Deploy {
                universal_profile: Address::repeat_byte(0xaa),
            },
            nonce: 7,
            raw: Bytes::from_static(&[2, 1]),
            charge: None,
            hashes: vec![H1],
            fees_checked_ms: 1,
            dropped: vec![],
            sent_ms: 1,
            cancelled_from: None,
        };
        let json = serde_json::to_value(&tx).unwrap();
        assert_eq!(json["job"]["kind"], "deploy");
        assert_eq!(
            json["job"]["universalProfile"],
            "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        );
        assert_eq!(serde_json::from_value::<PendingTx>(json.clone()).unwrap(), tx);
        let filler = serde_json::to_value(Job::Filler).unwrap();
        assert_eq!(filler["kind"], "filler");
        // rows stored before cancels existed read as not cancelled
        assert!(!json.as_object().unwrap().contains_key("cancelledFrom"));
        let cancelled = PendingTx {
            hashes: vec![H1, B256::repeat_byte(2), B256::repeat_byte(3)],
            cancelled_from: Some(1),
            ..tx
        };
        assert!(!cancelled.is_cancel(H1));
        assert!(cancelled.is_cancel(B256::repeat_byte(2)));
        assert!(cancelled.is_cancel(B256::repeat_byte(3)));
        assert!(!cancelled.is_cancel(B256::repeat_byte(4)));
    }
}
