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
//!   node does not know it any more) until it is mined again — then it is watched again.
//!
//! With `confirmations` 0 (the local stack) nothing is watched: the job is charged at its first receipt, as before.

use alloy_primitives::B256;
use profile_relayer::api::TransactionState;
use serde::{Deserialize, Serialize};
use worker::SqlStorage;

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
}

/// What a pass does with a watched transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Confirm {
    /// Deep enough: charge `gas_used` and stop watching.
    Final { gas_used: u64 },
    /// Not yet; the receipt's block and gas, when they changed (mined again elsewhere).
    Wait { moved: Option<(u64, u64)> },
    /// The receipt is gone: back to the lane.
    Reorganized,
}

/// The decision for a watched transaction (pure): `receipt` its receipt now as `(block, gasUsed)` (`None`: no
/// receipt), `head` the chain's head, `depth` the confirmations asked (a transaction in the head block has 1).
pub(super) const fn decide(
    watched: (u64, u64),
    receipt: Option<(u64, u64)>,
    head: u64,
    depth: u64,
) -> Confirm {
    let Some((block, gas_used)) = receipt else {
        return Confirm::Reorganized;
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
        let rows: Vec<Row> = self
            .confirming()?
            .exec("SELECT record FROM confirming ORDER BY nonce", Vec::new())?
            .to_array()?;
        rows.iter()
            .map(|r| serde_json::from_str(&r.record).map_err(ApiError::internal))
            .collect()
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
    /// then stored and the alarm kept going; `false` (confirmations 0): charge it now.
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
        let watched = Watched {
            tx: tx.clone(),
            hash,
            block: u64::try_from(receipt.block_number).unwrap_or(u64::MAX),
            gas_used: u64::try_from(receipt.gas_used).unwrap_or(u64::MAX),
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
            let hash = receipt.as_ref().map_or(w.hash, |(h, _)| *h);
            match decide((w.block, w.gas_used), seen, head, depth) {
                Confirm::Final { gas_used } => {
                    let charged = self.settle(ctx, w.tx.charge.as_ref(), gas_used).await?;
                    self.log_update(ctx, hash, |r| {
                        r.gas_used = Some(gas_used);
                        r.charged = charged.or(r.charged);
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
                Confirm::Wait { moved: None } => {}
                Confirm::Wait {
                    moved: Some((block, gas_used)),
                } => {
                    self.log_update(ctx, hash, |r| {
                        r.block_number = Some(block);
                        r.gas_used = Some(gas_used);
                    })?;
                    let moved = Watched {
                        hash,
                        block,
                        gas_used,
                        ..w
                    };
                    self.watch_write(None, Some(&moved))?;
                }
                Confirm::Reorganized => self.reorganized(ctx, w).await?,
            }
        }
        Ok(())
    }

    /// The receipt of a watched transaction is gone: back to the lane, pending again.
    async fn reorganized(&self, ctx: &Ctx, w: Watched) -> ApiResult<()> {
        let _guard = self.send_lock.lock().await;
        if let Some(other) = self.lane_get(w.tx.nonce)? {
            // its nonce was given to another job meanwhile: that one's rounds decide (ours will be dropped)
            worker::console_warn!(
                "nonce {}: {} was reorganized away, but the lane holds {:?} there now",
                w.tx.nonce,
                w.hash,
                other.job
            );
        }
        let back = PendingTx {
            fees_checked_ms: now_ms(),
            ..w.tx.clone()
        };
        if self.lane_get(w.tx.nonce)?.is_none() {
            self.lane_write(None, Some(&back))?;
        }
        self.watch_write(Some(w.tx.nonce), None)?;
        // the lane is reconciled again (its next nonce may be this one's)
        self.next_nonce.set(None);
        for hash in &w.tx.hashes {
            self.log_update(ctx, *hash, |r| {
                if r.status != TransactionState::Replaced {
                    r.status = TransactionState::Pending;
                    r.block_number = None;
                    r.gas_used = None;
                }
            })?;
        }
        worker::console_warn!(
            "{}",
            serde_json::json!({
                "event": "relayer.reorganized", "hash": w.hash, "nonce": w.tx.nonce, "block": w.block,
            })
        );
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
            decide((100, 21_000), Some((100, 21_000)), 102, 3),
            Confirm::Final { gas_used: 21_000 }
        );
        // mined again in 101 with other gas: the gas of the receipt that stays is charged
        assert_eq!(
            decide((100, 21_000), Some((101, 30_000)), 103, 3),
            Confirm::Final { gas_used: 30_000 }
        );
    }

    #[test]
    fn not_deep_enough_waits_and_follows_a_move() {
        assert_eq!(
            decide((100, 5), Some((100, 5)), 101, 3),
            Confirm::Wait { moved: None }
        );
        assert_eq!(
            decide((100, 5), Some((101, 6)), 101, 3),
            Confirm::Wait {
                moved: Some((101, 6))
            }
        );
        // a head behind the receipt's block (a node that is behind) is not depth
        assert_eq!(
            decide((100, 5), Some((100, 5)), 90, 1),
            Confirm::Wait { moved: None }
        );
    }

    #[test]
    fn a_receipt_that_disappears_is_reorganized() {
        assert_eq!(decide((100, 5), None, 200, 3), Confirm::Reorganized);
        assert_eq!(decide((100, 5), None, 100, 1), Confirm::Reorganized);
    }

    #[test]
    fn one_confirmation_is_the_head_block() {
        assert_eq!(decide((7, 1), Some((7, 1)), 7, 1), Confirm::Final { gas_used: 1 });
        assert_eq!(decide((7, 1), Some((7, 1)), 7, 2), Confirm::Wait { moved: None });
    }
}
