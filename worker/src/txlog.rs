//! The Relayer object's record of every transaction hash it signed (`GET /api/transaction/:hash`), in a SQLite
//! table of the object: pending when stored, then mined / reverted (with block, `gasUsed` and the charge), replaced
//! (pointing at its successor) or dropped. Records are kept `TX_RECORD_DAYS` (default 30) after their last change.

use alloy_primitives::{Address, B256};
use profile_relayer::api::{TransactionKind, TransactionState, TransactionStatus};
use serde::Deserialize;
use worker::{SqlStorage, SqlStorageValue};

use crate::error::{ApiError, ApiResult};

#[derive(Deserialize)]
struct Row {
    record: String,
}

fn ensure(sql: &SqlStorage) -> ApiResult<()> {
    sql.exec(
        "CREATE TABLE IF NOT EXISTS txs (hash TEXT PRIMARY KEY, record TEXT NOT NULL, updated_ms INTEGER NOT NULL)",
        Vec::new(),
    )?;
    Ok(())
}

fn ms(value: u64) -> ApiResult<SqlStorageValue> {
    SqlStorageValue::try_from_i64(i64::try_from(value).map_err(ApiError::internal)?)
        .map_err(ApiError::internal)
}

/// The record of `hash`.
pub fn get(sql: &SqlStorage, hash: B256) -> ApiResult<Option<TransactionStatus>> {
    ensure(sql)?;
    let rows: Vec<Row> = sql
        .exec(
            "SELECT record FROM txs WHERE hash = ?",
            vec![hash.to_string().into()],
        )?
        .to_array()?;
    rows.first()
        .map(|r| serde_json::from_str(&r.record).map_err(ApiError::internal))
        .transpose()
}

/// Writes `record`, and forgets records unchanged for longer than `keep_ms`.
pub fn put(sql: &SqlStorage, record: &TransactionStatus, now_ms: u64, keep_ms: u64) -> ApiResult<()> {
    ensure(sql)?;
    if get(sql, record.hash)?.map(|r| r.status) != Some(record.status) {
        // one log line per state change (`reqlog` writes the request lines)
        worker::console_log!(
            "{}",
            serde_json::json!({"event": "transaction", "hash": record.hash, "kind": record.kind,
                "profile": record.profile, "status": record.status, "blockNumber": record.block_number,
                "gasUsed": record.gas_used, "charged": record.charged, "replacedBy": record.replaced_by})
        );
        crate::analytics::record(&crate::analytics::Point::transaction(record));
    }
    let json = serde_json::to_string(record).map_err(ApiError::internal)?;
    sql.exec(
        "INSERT OR REPLACE INTO txs (hash, record, updated_ms) VALUES (?, ?, ?)",
        vec![record.hash.to_string().into(), json.into(), ms(now_ms)?],
    )?;
    sql.exec(
        "DELETE FROM txs WHERE updated_ms < ?",
        vec![ms(now_ms.saturating_sub(keep_ms))?],
    )?;
    Ok(())
}

/// A new, pending record.
pub fn pending(hash: B256, kind: TransactionKind, profile: Address) -> TransactionStatus {
    TransactionStatus {
        hash,
        kind,
        profile,
        status: TransactionState::Pending,
        replaced_by: None,
        block_number: None,
        gas_used: None,
        charged: None,
    }
}

/// Changes the record of `hash` (when there is one) with `change`.
pub fn update(
    sql: &SqlStorage,
    hash: B256,
    now_ms: u64,
    keep_ms: u64,
    change: impl FnOnce(&mut TransactionStatus),
) -> ApiResult<()> {
    if let Some(mut record) = get(sql, hash)? {
        change(&mut record);
        put(sql, &record, now_ms, keep_ms)?;
    }
    Ok(())
}
