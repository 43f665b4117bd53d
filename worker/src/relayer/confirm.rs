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
//!   saw the reorganization: a restart, a pass that could not read the head): it is *displaced* — kept in the
//!   `displaced` table (by nonce and hash), not sent again. The network may still mine its signed bytes (other nodes
//!   keep them): then it is watched there as above and charged at depth. Once its nonce is used `confirmations`
//!   deep with none of its hashes mined (the relayer's transaction count at the block that deep has passed it), it
//!   never can be: its records are `dropped` and its job is sent again at a fresh nonce with its charge, as a lane
//!   transaction whose nonce went to another is (a relay call only if it still succeeds; nothing sent: its
//!   reservation released).
//!
//! Every change is made on the row as stored once the chain was read ([`Relayer::still`]): a row another step
//! changed or removed across an await (a request finishing a job, the send lock's wait) is left as it is now.
//!
//! With `confirmations` 0 (the local stack) nothing is watched: the job is charged at its first receipt, as before.

use alloy_primitives::B256;
use profile_relayer::api::TransactionState;
use serde::Deserialize;
use worker::{SqlStorage, SqlStorageValue};

use crate::{
    config::default_confirmations,
    error::{ApiError, ApiResult},
    rpc::Receipt,
};

use super::lane::nonce_value;
use super::model::{Confirm, PendingTx, Round, Slot, Table, Watched};
use super::policy::{decide, mined_state};
use super::rounds::mined_receipt;
use super::{Ctx, Relayer, now_ms};

impl Table {
    const fn name(self) -> &'static str {
        match self {
            Self::Confirming => "confirming",
            Self::Displaced => "displaced",
        }
    }

    /// The `WHERE` clause naming the row of `w` in this table, and its values: its nonce, and in `displaced` its hash.
    fn key(self, w: &Watched) -> ApiResult<(&'static str, Vec<SqlStorageValue>)> {
        let nonce = nonce_value(w.tx.nonce)?;
        Ok(match self {
            Self::Confirming => ("WHERE nonce = ?", vec![nonce]),
            Self::Displaced => (
                "WHERE nonce = ? AND hash = ?",
                vec![nonce, w.hash.to_string().into()],
            ),
        })
    }
}

#[derive(Deserialize)]
struct Row {
    record: String,
}

impl Relayer {
    fn table(&self, table: Table) -> ApiResult<SqlStorage> {
        let sql = self.sql()?;
        sql.exec(
            match table {
                Table::Confirming => {
                    "CREATE TABLE IF NOT EXISTS confirming (nonce INTEGER PRIMARY KEY, record TEXT NOT NULL)"
                }
                Table::Displaced => {
                    "CREATE TABLE IF NOT EXISTS displaced (nonce INTEGER NOT NULL, hash TEXT NOT NULL, \
                     record TEXT NOT NULL, PRIMARY KEY (nonce, hash))"
                }
            },
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

    /// The watched transactions of `table`, by nonce.
    pub(super) fn watched(&self, table: Table) -> ApiResult<Vec<Watched>> {
        self.rows(table, "", Vec::new())
    }

    /// Whether any transaction is watched (in either table): the alarm keeps going while one is.
    pub(super) fn watching(&self) -> ApiResult<bool> {
        Ok(!(self.watched(Table::Confirming)?.is_empty() && self.watched(Table::Displaced)?.is_empty()))
    }

    fn rows(&self, table: Table, filter: &str, params: Vec<SqlStorageValue>) -> ApiResult<Vec<Watched>> {
        let rows: Vec<Row> = self
            .table(table)?
            .exec(
                &format!("SELECT record FROM {} {filter} ORDER BY nonce", table.name()),
                params,
            )?
            .to_array()?;
        rows.iter()
            .map(|r| serde_json::from_str(&r.record).map_err(ApiError::internal))
            .collect()
    }

    /// The row of `w` in `table` when it is still the one a pass decided on (the same signed transaction, as it
    /// was); `None` when another step changed or removed it meanwhile.
    fn still(&self, table: Table, w: &Watched) -> ApiResult<Option<Watched>> {
        let (filter, params) = table.key(w)?;
        Ok(self
            .rows(table, filter, params)?
            .into_iter()
            .find(|stored| stored == w))
    }

    /// Stores `w` in `table` (in place of the row at its nonce, or of its nonce and hash).
    fn put(&self, table: Table, w: &Watched) -> ApiResult<()> {
        let record = serde_json::to_string(w).map_err(ApiError::internal)?;
        let sql = self.table(table)?;
        match table {
            Table::Confirming => sql.exec(
                "INSERT OR REPLACE INTO confirming (nonce, record) VALUES (?, ?)",
                vec![nonce_value(w.tx.nonce)?, record.into()],
            )?,
            Table::Displaced => sql.exec(
                "INSERT OR REPLACE INTO displaced (nonce, hash, record) VALUES (?, ?, ?)",
                vec![nonce_value(w.tx.nonce)?, w.hash.to_string().into(), record.into()],
            )?,
        };
        Ok(())
    }

    /// Removes the row of `w` from `table` if it is still that row (no await between the check and the delete).
    fn remove(&self, table: Table, w: &Watched) -> ApiResult<()> {
        if self.still(table, w)?.is_none() {
            return Ok(());
        }
        let (filter, params) = table.key(w)?;
        self.table(table)?
            .exec(&format!("DELETE FROM {} {filter}", table.name()), params)?;
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
        self.put(Table::Confirming, &watched)?;
        self.ensure_alarm(super::ALARM_MS).await?;
        Ok(true)
    }

    /// One pass over the watched transactions (the alarm, before the lane's rounds): those mined at their nonce,
    /// then the displaced ones.
    pub(super) async fn confirm_all(&self, ctx: &Ctx) -> ApiResult<()> {
        let watched = self.watched(Table::Confirming)?;
        let displaced = self.watched(Table::Displaced)?;
        if watched.is_empty() && displaced.is_empty() {
            return Ok(());
        }
        let depth = self.confirmations(ctx);
        let head = ctx.rpc.block_number().await?;
        for w in watched {
            self.confirm_one(ctx, Table::Confirming, w, Slot::Own, head, depth)
                .await?;
        }
        if !displaced.is_empty() {
            // read before the receipts: the relayer's transactions mined `depth` deep (in the block that deep and
            // before); a nonce below that count is used for good
            let deep = ctx
                .rpc
                .nonce_at_block(ctx.signer.address(), (head + 1).saturating_sub(depth))
                .await?;
            for w in displaced {
                let slot = Slot::Displaced {
                    used: deep > w.tx.nonce,
                };
                self.confirm_one(ctx, Table::Displaced, w, slot, head, depth)
                    .await?;
            }
        }
        Ok(())
    }

    /// Reads the receipt of `w` (kept in `table`) and acts on [`decide`], on the row as it is stored then.
    async fn confirm_one(
        &self,
        ctx: &Ctx,
        table: Table,
        w: Watched,
        slot: Slot,
        head: u64,
        depth: u64,
    ) -> ApiResult<()> {
        let receipt = mined_receipt(&ctx.rpc, &w.tx.hashes).await?;
        let seen = receipt.as_ref().map(|(_, r)| {
            (
                u64::try_from(r.block_number).unwrap_or(u64::MAX),
                u64::try_from(r.gas_used).unwrap_or(u64::MAX),
            )
        });
        let decision = decide((w.block, w.gas_used), slot, seen, head, depth);
        // the receipts were read across awaits: act only on the row as it still is
        let Some(w) = self.still(table, &w)? else {
            return Ok(());
        };
        match (decision, receipt, seen) {
            (Confirm::Final { gas_used }, Some((hash, r)), Some((block, _))) => {
                let charged = self.settle(ctx, w.tx.charge.as_ref(), gas_used).await?;
                self.log_mined(ctx, &w.tx, hash, &r, block, gas_used, charged)?;
                self.remove(table, &w)?;
                worker::console_log!(
                    "{}",
                    serde_json::json!({
                        "event": "relayer.final", "hash": hash, "nonce": w.tx.nonce, "gasUsed": gas_used,
                        "charged": charged, "confirmations": depth, "displaced": table == Table::Displaced,
                    })
                );
            }
            (
                Confirm::Wait {
                    moved: Some((block, gas_used)),
                },
                Some((hash, r)),
                _,
            ) => {
                self.log_mined(ctx, &w.tx, hash, &r, block, gas_used, None)?;
                let moved = Watched {
                    hash,
                    block,
                    gas_used,
                    ..w.clone()
                };
                // a displaced row is kept by nonce and hash: another hash of it mined is a new row
                self.remove(table, &w)?;
                self.put(table, &moved)?;
            }
            (Confirm::Reorganized, _, _) => self.reorganized(ctx, w).await?,
            (Confirm::Superseded, _, _) => self.superseded(ctx, &w).await?,
            // waiting, or a decision on a receipt that is not there (not made by `decide`)
            _ => {}
        }
        Ok(())
    }

    /// The receipt of a watched transaction is gone: back to the lane, pending again — or, when the lane gave its
    /// nonce to another job meanwhile, displaced: watched for its receipt, not sent again.
    async fn reorganized(&self, ctx: &Ctx, w: Watched) -> ApiResult<()> {
        let _guard = self.send_lock.lock().await;
        // the lock's wait is an await: a request may have finished a job at this nonce meanwhile
        let Some(w) = self.still(Table::Confirming, &w)? else {
            return Ok(());
        };
        let other = self.lane_get(w.tx.nonce)?;
        if let Some(other) = &other {
            worker::console_warn!(
                "nonce {}: {} was reorganized away, and the lane holds {:?} there now: watched as displaced",
                w.tx.nonce,
                w.hash,
                other.job
            );
            let displaced = Watched {
                block: 0,
                gas_used: 0,
                ..w.clone()
            };
            self.put(Table::Displaced, &displaced)?;
        } else {
            let back = PendingTx {
                fees_checked_ms: now_ms(),
                ..w.tx.clone()
            };
            self.lane_write(None, Some(&back))?;
            // the lane is reconciled again (its next nonce may be this one's)
            self.next_nonce.set(None);
        }
        self.remove(Table::Confirming, &w)?;
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

    /// A displaced transaction whose nonce another transaction used deep enough: it can never be mined. Its records
    /// are `dropped`, its row goes, and its job is sent again at a fresh nonce with its charge, as a lane
    /// transaction whose nonce went to another is (`rounds::send_again`: a relay call only if it still succeeds, a
    /// deployment only if the profile is not there); when nothing is sent, its reservation is released.
    async fn superseded(&self, ctx: &Ctx, w: &Watched) -> ApiResult<()> {
        let _guard = self.send_lock.lock().await;
        let Some(w) = self.still(Table::Displaced, w)? else {
            return Ok(());
        };
        self.log_each(ctx, &w.tx, TransactionState::Dropped)?;
        self.remove(Table::Displaced, &w)?;
        let again = if w.tx.cancelled_from.is_some() {
            // cancelled by the operator: never sent again
            Ok(Round::Gone)
        } else {
            self.send_again(ctx, &w.tx, None).await
        };
        let sent = matches!(again, Ok(Round::Pending));
        if !sent {
            // given up (or nothing to send): what was reserved for it goes back
            self.release(w.tx.charge.as_ref()).await;
        }
        worker::console_warn!(
            "{}",
            serde_json::json!({
                "event": "relayer.superseded", "hash": w.hash, "nonce": w.tx.nonce, "sentAgain": sent,
                "error": again.as_ref().err().map(|e| e.code),
            })
        );
        Ok(())
    }

    /// The records of `tx` mined as `hash` in `block`: that one mined (or reverted) with its gas and `charged`, the
    /// others that were pending again `replaced` by it.
    #[allow(clippy::too_many_arguments)]
    fn log_mined(
        &self,
        ctx: &Ctx,
        tx: &PendingTx,
        hash: B256,
        receipt: &Receipt,
        block: u64,
        gas_used: u64,
        charged: Option<u64>,
    ) -> ApiResult<()> {
        for h in &tx.hashes {
            self.log_update(ctx, *h, |r| {
                if *h == hash {
                    r.status = mined_state(receipt);
                    r.block_number = Some(block);
                    r.gas_used = Some(gas_used);
                    r.charged = charged.or(r.charged);
                } else if r.status == TransactionState::Pending {
                    r.status = TransactionState::Replaced;
                    r.replaced_by = Some(hash);
                }
            })?;
        }
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

