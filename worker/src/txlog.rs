//! The Relayer object's record of every transaction hash it signed (`GET /api/transaction/:hash`), in a SQLite
//! table of the object: pending when stored, then mined / reverted (with block, `gasUsed` and the charge), replaced
//! (pointing at its successor) or dropped. Records are kept `TX_RECORD_DAYS` (default 30) after their last change.
//! Each state change is logged (one JSON line) and, for a transaction an API key asked for, queued for that key's
//! webhook in the same object's outbox ([`crate::webhooks::outbox`]), which the object flushes after each request
//! and alarm.

use alloy_primitives::{Address, B256};
use profile_relayer::api::{TransactionKind, TransactionState, TransactionStatus};
use serde::Deserialize;
use worker::{SqlStorage, SqlStorageValue};

use crate::error::{ApiError, ApiResult};

#[derive(Deserialize)]
struct Row {
    record: String,
}

#[derive(Deserialize)]
struct KeyRow {
    key_id: String,
}

/// Where a record's changes are announced: its chain, and the API key that asked for the transaction (when the
/// caller knows it; otherwise the one remembered for the hash).
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    /// The relayer's chain.
    pub chain_id: u64,
    /// The API key (`None`: the one remembered for this hash, if any).
    pub key_id: Option<&'a str>,
}

fn ensure(sql: &SqlStorage) -> ApiResult<()> {
    sql.exec(
        "CREATE TABLE IF NOT EXISTS txs (hash TEXT PRIMARY KEY, record TEXT NOT NULL, updated_ms INTEGER NOT NULL)",
        Vec::new(),
    )?;
    // the API key of a keyed transaction (deploys), for its webhook events
    sql.exec(
        "CREATE TABLE IF NOT EXISTS tx_keys (hash TEXT PRIMARY KEY, key_id TEXT NOT NULL, updated_ms INTEGER NOT NULL)",
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

fn key_of(sql: &SqlStorage, hash: B256) -> ApiResult<Option<String>> {
    let rows: Vec<KeyRow> = sql
        .exec(
            "SELECT key_id FROM tx_keys WHERE hash = ?",
            vec![hash.to_string().into()],
        )?
        .to_array()?;
    Ok(rows.into_iter().next().map(|r| r.key_id))
}

/// Writes `record`, whose status was `previous` (`None`: a new record; the caller read it, so it is not read
/// again), and forgets records unchanged for longer than `keep_ms`. A change of status is logged and queued for
/// the webhook of the record's API key.
pub fn put(
    sql: &SqlStorage,
    record: &TransactionStatus,
    previous: Option<TransactionState>,
    origin: Origin<'_>,
    now_ms: u64,
    keep_ms: u64,
) -> ApiResult<()> {
    ensure(sql)?;
    let hash = record.hash.to_string();
    if let Some(key) = origin.key_id {
        sql.exec(
            "INSERT OR REPLACE INTO tx_keys (hash, key_id, updated_ms) VALUES (?, ?, ?)",
            vec![hash.clone().into(), key.into(), ms(now_ms)?],
        )?;
    }
    if previous != Some(record.status) {
        // one log line per state change (`reqlog` writes the request lines)
        worker::console_log!(
            "{}",
            serde_json::json!({"event": "transaction", "hash": record.hash, "kind": record.kind,
                "profile": record.profile, "status": record.status, "blockNumber": record.block_number,
                "gasUsed": record.gas_used, "charged": record.charged, "replacedBy": record.replaced_by})
        );
        crate::analytics::record(&crate::analytics::Point::transaction(record));
        let key = match origin.key_id {
            Some(key) => Some(key.to_owned()),
            None => key_of(sql, record.hash)?,
        };
        if let Some(key) = key {
            crate::webhooks::outbox::push(sql, &key, origin.chain_id, record, now_ms)?;
        }
    }
    let json = serde_json::to_string(record).map_err(ApiError::internal)?;
    sql.exec(
        "INSERT OR REPLACE INTO txs (hash, record, updated_ms) VALUES (?, ?, ?)",
        vec![hash.into(), json.into(), ms(now_ms)?],
    )?;
    let cutoff = ms(now_ms.saturating_sub(keep_ms))?;
    sql.exec("DELETE FROM txs WHERE updated_ms < ?", vec![cutoff.clone()])?;
    sql.exec("DELETE FROM tx_keys WHERE updated_ms < ?", vec![cutoff])?;
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
    origin: Origin<'_>,
    now_ms: u64,
    keep_ms: u64,
    change: impl FnOnce(&mut TransactionStatus),
) -> ApiResult<()> {
    if let Some(mut record) = get(sql, hash)? {
        let previous = record.status;
        change(&mut record);
        put(sql, &record, Some(previous), origin, now_ms, keep_ms)?;
    }
    Ok(())
}
