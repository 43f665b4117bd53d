//! The Relayer object's outbox: events of keyed transactions, written by `txlog::put` in the same storage as the
//! state change itself (so a change is never recorded without its event), and handed to each key's `Webhooks`
//! object after every request and alarm of the Relayer object ([`flush`]); an event is removed only once its
//! `Webhooks` object stored it (stored twice is harmless: the object ignores an id it has).

use std::collections::BTreeMap;

use profile_relayer::api::{TransactionState, TransactionStatus};
use serde::Deserialize;
use worker::{Env, SqlStorage, SqlStorageValue, State};

use super::{Event, WebhookOp, WebhooksClient, key_object};
use crate::error::{ApiError, ApiResult};

/// Events handed over per flush (the rest by the next one).
const PER_FLUSH: u32 = 200;

/// Events the outbox holds at most (a `Webhooks` object unreachable for long): the oldest are dropped beyond.
const MAX_ROWS: u32 = 10_000;

#[derive(Deserialize)]
struct OutRow {
    seq: i64,
    key_id: String,
    event: String,
}

fn ensure(sql: &SqlStorage) -> ApiResult<()> {
    sql.exec(
        "CREATE TABLE IF NOT EXISTS webhook_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, key_id TEXT NOT NULL, \
         event TEXT NOT NULL)",
        Vec::new(),
    )?;
    Ok(())
}

/// The event type of a transaction state.
pub fn event_type(status: TransactionState) -> &'static str {
    match status {
        TransactionState::Pending => "transaction.pending",
        TransactionState::Mined => "transaction.mined",
        TransactionState::Reverted => "transaction.reverted",
        TransactionState::Replaced => "transaction.replaced",
        TransactionState::Dropped => "transaction.dropped",
    }
}

/// The event of `record`'s new state on `chain_id`: its data is the record as `GET /api/transaction/:hash` answers
/// it, plus `chainId`.
pub fn transaction_event(chain_id: u64, record: &TransactionStatus, now_ms: u64) -> ApiResult<Event> {
    let mut data = serde_json::to_value(record).map_err(ApiError::internal)?;
    if let Some(obj) = data.as_object_mut() {
        obj.insert("chainId".to_owned(), chain_id.into());
    }
    Event::new(event_type(record.status), now_ms, data)
}

/// Queues the event of `record`'s new state for the webhook of API key `key_id`.
pub fn push(
    sql: &SqlStorage,
    key_id: &str,
    chain_id: u64,
    record: &TransactionStatus,
    now_ms: u64,
) -> ApiResult<()> {
    ensure(sql)?;
    let event = transaction_event(chain_id, record, now_ms)?;
    sql.exec(
        "INSERT INTO webhook_outbox (key_id, event) VALUES (?, ?)",
        vec![
            key_id.into(),
            serde_json::to_string(&event).map_err(ApiError::internal)?.into(),
        ],
    )?;
    sql.exec(
        "DELETE FROM webhook_outbox WHERE seq <= (SELECT MAX(seq) FROM webhook_outbox) - ?",
        vec![i64::from(MAX_ROWS).into()],
    )?;
    Ok(())
}

/// Hands the outbox to the `Webhooks` objects; answers whether events are left (a failed hand-over or more than
/// one flush's worth): the caller then keeps its alarm coming. Failures are logged, never answered.
pub async fn flush(env: &Env, state: &State) -> bool {
    match flush_inner(env, &state.storage().sql()).await {
        Ok(left) => left,
        Err(e) => {
            worker::console_warn!("webhook outbox: {} {}", e.code, e.message);
            true
        }
    }
}

async fn flush_inner(env: &Env, sql: &SqlStorage) -> ApiResult<bool> {
    ensure(sql)?;
    let rows: Vec<OutRow> = sql
        .exec(
            "SELECT seq, key_id, event FROM webhook_outbox ORDER BY seq LIMIT ?",
            vec![i64::from(PER_FLUSH + 1).into()],
        )?
        .to_array()?;
    if rows.is_empty() {
        return Ok(false);
    }
    let more = rows.len() > PER_FLUSH as usize;
    let mut by_key: BTreeMap<String, Vec<(i64, Event)>> = BTreeMap::new();
    for row in rows.into_iter().take(PER_FLUSH as usize) {
        match serde_json::from_str::<Event>(&row.event) {
            Ok(event) => by_key.entry(row.key_id).or_default().push((row.seq, event)),
            Err(e) => {
                worker::console_warn!("webhook outbox: row {} unreadable ({e}); dropped", row.seq);
                sql.exec(
                    "DELETE FROM webhook_outbox WHERE seq = ?",
                    vec![SqlStorageValue::from(row.seq)],
                )?;
            }
        }
    }
    let mut failed = false;
    for (key, events) in by_key {
        let seqs: Vec<i64> = events.iter().map(|(seq, _)| *seq).collect();
        let op = WebhookOp::Enqueue {
            events: events.into_iter().map(|(_, e)| e).collect(),
        };
        let sent: ApiResult<u32> = match WebhooksClient::new(env, &key_object(&key)) {
            Ok(client) => client.send(&op).await,
            Err(e) => Err(e),
        };
        match sent {
            Ok(_) => {
                for seq in seqs {
                    sql.exec(
                        "DELETE FROM webhook_outbox WHERE seq = ?",
                        vec![SqlStorageValue::from(seq)],
                    )?;
                }
            }
            Err(e) => {
                failed = true;
                worker::console_warn!("webhook outbox: key {key}: {} {}", e.code, e.message);
            }
        }
    }
    Ok(more || failed)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use alloy_primitives::{Address, B256};
    use profile_relayer::api::TransactionKind;

    use super::*;

    #[test]
    fn a_transaction_event_carries_the_record_and_chain() {
        let mut record =
            crate::txlog::pending(B256::repeat_byte(0xab), TransactionKind::Deploy, Address::ZERO);
        record.status = TransactionState::Mined;
        record.gas_used = Some(500_000);
        record.block_number = Some(7);
        let event = transaction_event(4201, &record, 1_700_000_000_000).unwrap();
        assert_eq!(event.event_type, "transaction.mined");
        let body: serde_json::Value = serde_json::from_str(&event.body).unwrap();
        assert_eq!(body["type"], "transaction.mined");
        assert_eq!(body["data"]["chainId"], 4201);
        assert_eq!(body["data"]["status"], "mined");
        assert_eq!(body["data"]["gasUsed"], 500_000);
        assert_eq!(body["data"]["hash"], format!("{}", record.hash));
        for (state, name) in [
            (TransactionState::Pending, "transaction.pending"),
            (TransactionState::Reverted, "transaction.reverted"),
            (TransactionState::Replaced, "transaction.replaced"),
            (TransactionState::Dropped, "transaction.dropped"),
        ] {
            assert_eq!(event_type(state), name);
        }
    }
}
