//! The nonce lane: one SQLite row per nonce of the relayer key, the decision of a round ([`next_step`]) and the
//! start-up reconciliation with the chain ([`plan_gaps`]).

use alloy_primitives::Bytes;
use serde::Deserialize;
use worker::{SqlStorage, SqlStorageValue};

use crate::{
    error::{ApiError, ApiResult},
    rpc::SendOutcome,
    signer::{TxRequest, initial_fees_capped},
};

use super::model::{Job, PendingTx};
use super::policy::{TRANSFER_GAS, fee_too_high, plan_gaps};
use super::rounds::{any_known, log_rebroadcast};
use super::{Ctx, Relayer};
use crate::meter::{Charge, Limit, Subject, UNLIMITED, reserve_all};

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

