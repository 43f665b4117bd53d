//! Confirmation depth: a mined lane transaction is watched until it is `confirmations` blocks deep (its chain's
//! `confirmations` in `CHAINS`, else `INDEXER_CONFIRMATIONS`, else the chain's default: 96 on LUKSO), and charged
//! only then. Until then it waits in the object's `confirming` table (one row per nonce, the lane row it was); each
//! alarm, before the lane is reconciled, reads its receipt again ([`decide`]):
//! - still there and deep enough: its meters are settled to the `gasUsed` of that receipt — the receipt of the chain
//!   that stays — once (settling is idempotent per charge id), the record gets `charged`, the row goes;
//! - still there, not deep enough: its block and gas are kept up to date (a reorganization that mined it again in
//!   another block changes them);
//! - gone (the block that held it was reorganized away): it goes back to the lane as it was stored, its record back
//!   to `pending` (a txlog state change, logged), and the lane's rounds broadcast the stored signed bytes again (the
//!   node does not know it any more) until it is mined again — then it is watched again;
//! - gone, and its nonce already given to another job (the lane was reconciled with the new chain before this pass
//!   saw the reorganization: a restart, a pass that could not read the head): it stays watched, *displaced*. The
//!   network may still mine its signed bytes (other nodes keep them): then it is charged as any mined transaction.
//!   Once the nonce is used by another transaction — another job's receipt is watched at that nonce, or the chain's
//!   nonce passed it with none of its hashes mined — it never can be: its reservation is released, its records
//!   `dropped`.
//!
//! Every change is made on the row as stored after the receipts were read ([`Relayer::still_watched`]): a row that
//! another job's receipt replaced meanwhile is left to that job.
//!
//! With `confirmations` 0 (the local stack) nothing is watched: the job is charged at its first receipt, as before.

use alloy_primitives::B256;
use profile_relayer::api::TransactionState;
use serde::{Deserialize, Serialize};
use worker::{SqlStorage, SqlStorageValue};

use crate::{
    config::default_confirmations,
    error::{ApiError, ApiResult},
    rpc::Receipt,
};

use super::lane::{PendingTx, nonce_value};
use super::{Ctx, Relayer, now_ms};

/// A mined transaction watched until it is deep enough.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Watched {
    /// The lane row it was (its signed bytes, hashes, charge): what goes back to the lane if its receipt disappears.
    pub(super) tx: PendingTx,
    /// The hash that was mined.
    pub(super) hash: B256,
    /// The block its receipt was last seen in.
    pub(super) block: u64,
    /// The gas that receipt used.
    pub(super) gas_used: u64,
    /// Its receipt disappeared after its nonce was given to another job (not back in the lane): charged if it is
    /// mined again, released once the nonce is used by another transaction.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) displaced: bool,
}

/// What a pass does with a watched transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Confirm {
    /// Deep enough: charge `gas_used` and stop watching.
    Final { gas_used: u64 },
    /// Not yet; the receipt's block and gas, when they changed (mined again elsewhere).
    Wait { moved: Option<(u64, u64)> },
    /// The receipt is gone: back to the lane (or displaced, when the lane gave its nonce to another job).
    Reorganized,
    /// Displaced, and its nonce is used by another transaction: it can never be mined; release its charge.
    Superseded,
}

/// Where a watched transaction's nonce stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    /// Its own: it was mined at it (or is back in the lane).
    Own,
    /// Given to another job after its receipt disappeared; `used`: the chain's nonce had passed it before its
    /// receipts were read.
    Displaced { used: bool },
}

/// The decision for a watched transaction (pure): `watched` its `(block, gasUsed)` as stored, `slot` its nonce's
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
    // a displaced transaction mined again is watched as any other (its record is mined again): always a move
    if matches!(slot, Slot::Own) && block == watched.0 && gas_used == watched.1 {
        Confirm::Wait { moved: None }
    } else {
        Confirm::Wait {
            moved: Some((block, gas_used)),
        }
    }
}

/// A transaction's record state from its receipt.
fn mined_state(receipt: &Receipt) -> TransactionState {
    if receipt.status.is_zero() {
        TransactionState::Reverted
    } else {
        TransactionState::Mined
    }
}

#[derive(Deserialize)]
struct Row {
    record: String,
}

impl Relayer {
    fn confirming(&self) -> ApiResult<SqlStorage> {
        let sql = self.sql()?;
        sql.exec(
            "CREATE TABLE IF NOT EXISTS confirming (nonce INTEGER PRIMARY KEY, record TEXT NOT NULL)",
            Vec::new(),
        )?;
        Ok(sql)
    }

    /// The confirmations a transaction of this relayer's chain needs before it is charged.
    pub(super) fn confirmations(&self, ctx: &Ctx) -> u64 {
        let chain_id = ctx.config.chain_id;
        self.config
            .chain(&chain_id.to_string())
            .map_or_else(|_| default_confirmations(chain_id), |c| c.confirmations)
    }

    /// The watched transactions, by nonce.
    pub(super) fn watched(&self) -> ApiResult<Vec<Watched>> {
        self.watched_where("", Vec::new())
    }

    /// The watched transaction at `nonce`.
    fn watched_at(&self, nonce: u64) -> ApiResult<Option<Watched>> {
        Ok(self
            .watched_where("WHERE nonce = ?", vec![nonce_value(nonce)?])?
            .into_iter()
            .next())
    }

    fn watched_where(&self, filter: &str, params: Vec<SqlStorageValue>) -> ApiResult<Vec<Watched>> {
        let rows: Vec<Row> = self
            .confirming()?
            .exec(
                &format!("SELECT record FROM confirming {filter} ORDER BY nonce"),
                params,
            )?
            .to_array()?;
        rows.iter()
            .map(|r| serde_json::from_str(&r.record).map_err(ApiError::internal))
            .collect()
    }

    /// The stored row of `w` when it is still the one a pass decided on (the same signed transaction, as it was);
    /// `None` when another job's receipt replaced it, or another step changed it, meanwhile.
    fn still_watched(&self, w: &Watched) -> ApiResult<Option<Watched>> {
        Ok(self.watched_at(w.tx.nonce)?.filter(|stored| stored == w))
    }

    fn watch_write(&self, remove: Option<u64>, put: Option<&Watched>) -> ApiResult<()> {
        let sql = self.confirming()?;
        if let Some(nonce) = remove {
            sql.exec(
                "DELETE FROM confirming WHERE nonce = ?",
                vec![nonce_value(nonce)?],
            )?;
        }
        if let Some(w) = put {
            let record = serde_json::to_string(w).map_err(ApiError::internal)?;
            sql.exec(
                "INSERT OR REPLACE INTO confirming (nonce, record) VALUES (?, ?)",
                vec![nonce_value(w.tx.nonce)?, record.into()],
            )?;
        }
        Ok(())
    }

    /// Called by `finish` for a mined transaction: `true` when it is to be watched (and charged at depth) — it is
    /// then stored and the alarm kept going; `false` (confirmations 0): charge it now. A displaced transaction
    /// watched at the same nonce is superseded by this one (its nonce is used).
    pub(super) async fn watch(
        &self,
        ctx: &Ctx,
        tx: &PendingTx,
        hash: B256,
        receipt: &Receipt,
    ) -> ApiResult<bool> {
        if self.confirmations(ctx) == 0 {
            return Ok(false);
        }
        if let Some(before) = self.watched_at(tx.nonce)?
            && !before.tx.hashes.iter().any(|h| tx.hashes.contains(h))
        {
            self.superseded(ctx, &before).await?;
        }
        let watched = Watched {
            tx: tx.clone(),
            hash,
            block: u64::try_from(receipt.block_number).unwrap_or(u64::MAX),
            gas_used: u64::try_from(receipt.gas_used).unwrap_or(u64::MAX),
            displaced: false,
        };
        self.watch_write(None, Some(&watched))?;
        self.ensure_alarm(super::ALARM_MS).await?;
        Ok(true)
    }

    /// One pass over the watched transactions (the alarm, before the lane's rounds).
    pub(super) async fn confirm_all(&self, ctx: &Ctx) -> ApiResult<()> {
        let watched = self.watched()?;
        if watched.is_empty() {
            return Ok(());
        }
        let depth = self.confirmations(ctx);
        let head = ctx.rpc.block_number().await?;
        for w in watched {
            // read before its receipts: a nonce passed then, with none of its hashes mined, went to another one
            let slot = if w.displaced {
                let latest = ctx.rpc.latest_nonce(ctx.signer.address()).await?;
                Slot::Displaced {
                    used: latest > w.tx.nonce,
                }
            } else {
                Slot::Own
            };
            let mut receipt = None;
            for hash in w.tx.hashes.iter().rev() {
                if let Some(r) = ctx.rpc.receipt(*hash).await? {
                    receipt = Some((*hash, r));
                    break;
                }
            }
            let seen = receipt.as_ref().map(|(_, r)| {
                (
                    u64::try_from(r.block_number).unwrap_or(u64::MAX),
                    u64::try_from(r.gas_used).unwrap_or(u64::MAX),
                )
            });
            let decision = decide((w.block, w.gas_used), slot, seen, head, depth);
            // the receipts were read across awaits: act only on the row as it still is
            let Some(w) = self.still_watched(&w)? else {
                continue;
            };
            match (decision, receipt) {
                (Confirm::Final { gas_used }, Some((hash, r))) => {
                    let charged = self.settle(ctx, w.tx.charge.as_ref(), gas_used).await?;
                    self.log_update(ctx, hash, |rec| {
                        rec.status = mined_state(&r);
                        rec.block_number = seen.map(|(block, _)| block);
                        rec.gas_used = Some(gas_used);
                        rec.charged = charged.or(rec.charged);
                    })?;
                    self.watch_write(Some(w.tx.nonce), None)?;
                    worker::console_log!(
                        "{}",
                        serde_json::json!({
                            "event": "relayer.final", "hash": hash, "nonce": w.tx.nonce, "gasUsed": gas_used,
                            "charged": charged, "confirmations": depth,
                        })
                    );
                }
                (
                    Confirm::Wait {
                        moved: Some((block, gas_used)),
                    },
                    Some((hash, r)),
                ) => {
                    self.log_update(ctx, hash, |rec| {
                        rec.status = mined_state(&r);
                        rec.block_number = Some(block);
                        rec.gas_used = Some(gas_used);
                    })?;
                    let moved = Watched {
                        hash,
                        block,
                        gas_used,
                        displaced: false,
                        ..w
                    };
                    self.watch_write(None, Some(&moved))?;
                }
                (Confirm::Reorganized, _) => self.reorganized(ctx, w).await?,
                (Confirm::Superseded, _) => self.superseded(ctx, &w).await?,
                // waiting, or a decision on a receipt that is not there (not made by `decide`)
                _ => {}
            }
        }
        Ok(())
    }

    /// The receipt of a watched transaction is gone: back to the lane, pending again — or, when the lane gave its
    /// nonce to another job meanwhile, displaced: watched for its receipt, not sent again.
    async fn reorganized(&self, ctx: &Ctx, w: Watched) -> ApiResult<()> {
        let _guard = self.send_lock.lock().await;
        let other = self.lane_get(w.tx.nonce)?;
        if let Some(other) = &other {
            worker::console_warn!(
                "nonce {}: {} was reorganized away, and the lane holds {:?} there now: watched as displaced",
                w.tx.nonce,
                w.hash,
                other.job
            );
            let displaced = Watched {
                displaced: true,
                ..w.clone()
            };
            self.watch_write(None, Some(&displaced))?;
        } else {
            let back = PendingTx {
                fees_checked_ms: now_ms(),
                ..w.tx.clone()
            };
            self.lane_write(None, Some(&back))?;
            self.watch_write(Some(w.tx.nonce), None)?;
            // the lane is reconciled again (its next nonce may be this one's)
            self.next_nonce.set(None);
        }
        self.log_each(ctx, &w.tx, TransactionState::Pending)?;
        worker::console_warn!(
            "{}",
            serde_json::json!({
                "event": "relayer.reorganized", "hash": w.hash, "nonce": w.tx.nonce, "block": w.block,
                "displaced": other.is_some(),
            })
        );
        Ok(())
    }

    /// A displaced transaction whose nonce another transaction used: it can never be mined. Its reservation is
    /// released, its records `dropped`, its row gone.
    async fn superseded(&self, ctx: &Ctx, w: &Watched) -> ApiResult<()> {
        self.release(w.tx.charge.as_ref()).await;
        self.log_each(ctx, &w.tx, TransactionState::Dropped)?;
        if self.still_watched(w)?.is_some() {
            self.watch_write(Some(w.tx.nonce), None)?;
        }
        worker::console_warn!(
            "{}",
            serde_json::json!({
                "event": "relayer.superseded", "hash": w.hash, "nonce": w.tx.nonce, "released": w.tx.charge.is_some(),
            })
        );
        Ok(())
    }

    /// Sets the records of every hash of `tx` that was not replaced to `state` (a pending one has no block or gas).
    fn log_each(&self, ctx: &Ctx, tx: &PendingTx, state: TransactionState) -> ApiResult<()> {
        for hash in &tx.hashes {
            self.log_update(ctx, *hash, |r| {
                if r.status != TransactionState::Replaced {
                    r.status = state;
                    if state == TransactionState::Pending {
                        r.block_number = None;
                        r.gas_used = None;
                    }
                }
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_enough_is_final_with_the_gas_of_the_receipt_now() {
        // mined in 100, head 102: 3 confirmations
        assert_eq!(
            decide((100, 21_000), Slot::Own, Some((100, 21_000)), 102, 3),
            Confirm::Final { gas_used: 21_000 }
        );
        // mined again in 101 with other gas: the gas of the receipt that stays is charged
        assert_eq!(
            decide((100, 21_000), Slot::Own, Some((101, 30_000)), 103, 3),
            Confirm::Final { gas_used: 30_000 }
        );
    }

    #[test]
    fn not_deep_enough_waits_and_follows_a_move() {
        assert_eq!(
            decide((100, 5), Slot::Own, Some((100, 5)), 101, 3),
            Confirm::Wait { moved: None }
        );
        assert_eq!(
            decide((100, 5), Slot::Own, Some((101, 6)), 101, 3),
            Confirm::Wait {
                moved: Some((101, 6))
            }
        );
        // a head behind the receipt's block (a node that is behind) is not depth
        assert_eq!(
            decide((100, 5), Slot::Own, Some((100, 5)), 90, 1),
            Confirm::Wait { moved: None }
        );
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
        // no receipt, the nonce not used yet: it may still be mined (other nodes keep its bytes)
        assert_eq!(
            decide((100, 5), free, None, 200, 3),
            Confirm::Wait { moved: None }
        );
        // mined again, even in the block number and with the gas it had: watched again (its record is mined again)
        assert_eq!(
            decide((100, 5), free, Some((100, 5)), 100, 3),
            Confirm::Wait {
                moved: Some((100, 5))
            }
        );
        assert_eq!(
            decide((100, 5), Slot::Displaced { used: true }, Some((101, 6)), 103, 3),
            Confirm::Final { gas_used: 6 }
        );
    }

    #[test]
    fn a_displaced_transaction_whose_nonce_is_used_is_superseded() {
        assert_eq!(
            decide((100, 5), Slot::Displaced { used: true }, None, 200, 3),
            Confirm::Superseded
        );
    }

    #[test]
    fn a_row_without_the_displaced_mark_reads_as_its_own() {
        // rows stored before the mark existed have no field: they are not displaced
        let tx: PendingTx = serde_json::from_value(serde_json::json!({
            "nonce": 7, "job": {"kind": "filler"}, "raw": "0x", "hashes": [], "feesCheckedMs": 0,
        }))
        .unwrap_or_else(|e| panic!("a lane row: {e}"));
        let mut w = serde_json::to_value(Watched {
            tx,
            hash: B256::ZERO,
            block: 1,
            gas_used: 2,
            displaced: false,
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(w.get("displaced").is_none(), "not written when false");
        let read: Watched = serde_json::from_value(w.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert!(!read.displaced);
        w["displaced"] = true.into();
        let read: Watched = serde_json::from_value(w).unwrap_or_else(|e| panic!("{e}"));
        assert!(read.displaced);
    }
}
