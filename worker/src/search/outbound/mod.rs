//! The outbound Algolia service client: when Algolia is configured (`ALGOLIA_APP_ID` + secret
//! `ALGOLIA_ADMIN_KEY`), the indexer pushes the records it stored to it with the batch API ([`push`], every record
//! trimmed below `ALGOLIA_MAX_RECORD_BYTES` by [`trim`]; the records it refuses in `push_rejections`) and sends the
//! deletions queued in `algolia_deletes` ([`queue_delete`], [`flush_deletes`]). Index names, per chain:
//! `<indexPrefix>_universal_profiles`, `<indexPrefix>_assets` (`prod_mainnet`, `prod_testnet`, …; see
//! `config::ChainConfig`). Its own tables' SQL is here; the records it sends are the store's ([`Stored`]).

pub mod trim;

use serde::Deserialize;
use serde_json::{Value, json};
use worker::{D1Database, D1PreparedStatement, Env, Fetch, Headers, Method, Request, RequestInit};

use super::store::Stored;
use crate::{
    config::{AlgoliaConfig, Setting},
    d1::{Statement, db},
    error::{ApiError, ApiResult, Code},
};

/// The statement that drops a queued deletion of a record written again (for the write's batch): a queued Algolia
/// deletion of it would remove what is pushed next.
pub fn unqueue_delete(db: &D1Database, index: &str, object_id: &str) -> ApiResult<D1PreparedStatement> {
    db.prepare("DELETE FROM algolia_deletes WHERE index_name = ?1 AND object_id = ?2")
        .bind_params(&[index.into(), object_id.into()])
}

/// The statement that queues a record's deletion from the Algolia index, when the record is there (for the batch
/// that deletes it from the store, before its statements: it reads the row). Sent by [`flush_deletes`].
pub fn queue_delete(db: &D1Database, index: &str, object_id: &str) -> ApiResult<D1PreparedStatement> {
    db.prepare(
        "INSERT INTO algolia_deletes (index_name, object_id, attempts, next_attempt_at) SELECT index_name, \
         object_id, 0, 0 FROM records WHERE index_name = ?1 AND object_id = ?2 ON CONFLICT (index_name, \
         object_id) DO UPDATE SET next_attempt_at = 0",
    )
    .bind_params(&[index.into(), object_id.into()])
}

pub const MAX_DELETES_PER_RUN: u32 = 100;

#[derive(Deserialize)]
struct DeleteRow {
    index_name: String,
    object_id: String,
}

/// Sends the due queued Algolia deletions of `indexes` (`algolia_deletes`, at most `limit`): one `deleteObject`
/// batch per index.
/// A deleted batch leaves the queue; a failed one (any HTTP error or network failure) is logged and stays queued
/// with exponential backoff (`retry_seconds`, 2×, 4× … capped at 2^11×), like a failed retry. Never fails: an error
/// (D1 included) is logged, and the next run tries again; D1 and the checkpoint never wait for it. Costs at most
/// 2 D1 requests and one Algolia request per index of `indexes`. Gives the number of objects Algolia confirmed deleted.
pub async fn flush_deletes(
    env: &Env,
    config: &Setting<Option<AlgoliaConfig>>,
    indexes: [&str; 2],
    limit: u32,
    retry_seconds: u64,
) -> u64 {
    match try_flush_deletes(env, config, indexes, limit, retry_seconds).await {
        Ok(n) => n,
        Err(e) => {
            worker::console_warn!("algolia: queued deletions not sent: {}", e.message);
            0
        }
    }
}

async fn try_flush_deletes(
    env: &Env,
    config: &Setting<Option<AlgoliaConfig>>,
    indexes: [&str; 2],
    limit: u32,
    retry_seconds: u64,
) -> ApiResult<u64> {
    let Some(config) = config.get()? else {
        return Ok(0);
    };
    if limit == 0 {
        return Ok(0);
    }
    let db = db(env).await?;
    let now = crate::plumbing::now();
    let rows: Vec<DeleteRow> = db
        .prepare(
            "SELECT index_name, object_id FROM algolia_deletes WHERE next_attempt_at <= ?1 AND index_name IN \
             (?3, ?4) ORDER BY next_attempt_at, index_name, object_id LIMIT ?2",
        )
        .bind_params(&[now.into(), limit.into(), indexes[0].into(), indexes[1].into()])?
        .rows()
        .await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let algolia = Algolia::new(config);
    let mut indexes: Vec<&str> = rows.iter().map(|r| r.index_name.as_str()).collect();
    indexes.sort_unstable();
    indexes.dedup();
    let mut deleted = 0u64;
    let mut statements = Vec::with_capacity(rows.len());
    for index in indexes {
        let ids: Vec<&str> = rows
            .iter()
            .filter(|r| r.index_name == index)
            .map(|r| r.object_id.as_str())
            .collect();
        let failure = match algolia.delete(index, &ids).await {
            Ok(Ok(())) => None,
            Ok(Err(message)) => Some(message),
            Err(e) => Some(e.message),
        };
        for id in &ids {
            statements.push(match &failure {
                None => db
                    .prepare("DELETE FROM algolia_deletes WHERE index_name = ?1 AND object_id = ?2")
                    .bind_params(&[index.into(), (*id).into()])?,
                Some(message) => db
                    .prepare(
                        "UPDATE algolia_deletes SET attempts = attempts + 1, next_attempt_at = ?3 + \
                         (?4 << min(attempts, 11)), message = ?5 WHERE index_name = ?1 AND object_id = ?2",
                    )
                    .bind_params(&[
                        index.into(),
                        (*id).into(),
                        now.into(),
                        retry_seconds.into(),
                        message.as_str().into(),
                    ])?,
            });
        }
        match &failure {
            None => deleted += ids.len() as u64,
            Some(message) => worker::console_warn!(
                "algolia: deleting {} objects from {index} failed, retried later: {message}",
                ids.len()
            ),
        }
    }
    db.batch(statements).await.map_err(ApiError::internal)?;
    Ok(deleted)
}

/// Pushes records to Algolia when configured: one batch request per index, every record trimmed below
/// `ALGOLIA_MAX_RECORD_BYTES` (see [`trim`]). When Algolia rejects a batch (4xx), its records are
/// pushed one by one; a record rejected alone (or too large even trimmed) is recorded in `push_rejections` (index,
/// objectID, Algolia's answer) and never blocks the others or the checkpoint. Transient failures (5xx, 429, network) fail.
pub async fn push(
    env: &Env,
    config: &Setting<Option<AlgoliaConfig>>,
    records: &[(String, Stored)],
) -> ApiResult<()> {
    let Some(config) = config.get()? else {
        return Ok(());
    };
    let algolia = Algolia::new(config);
    let max = config.max_record_bytes;
    let mut indexes: Vec<&str> = records.iter().map(|(i, _)| i.as_str()).collect();
    indexes.sort_unstable();
    indexes.dedup();
    let mut rejected: Vec<(&str, &Stored, String)> = Vec::new();
    for index in indexes {
        let mut batch: Vec<(&Stored, Value)> = Vec::new();
        for (_, record) in records.iter().filter(|(i, _)| i == index) {
            match trim::trim(record.json(), max) {
                Some(trimmed) => batch.push((record, trimmed)),
                None => rejected.push((
                    index,
                    record,
                    format!("over ALGOLIA_MAX_RECORD_BYTES ({max}) even trimmed"),
                )),
            }
        }
        let all: Vec<&Value> = batch.iter().map(|(_, t)| t).collect();
        if all.is_empty() {
            continue;
        }
        match algolia.push(index, &all).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) if all.len() > 1 => {
                for (original, trimmed) in &batch {
                    if let Err(message) = algolia.push(index, &[trimmed]).await? {
                        rejected.push((index, original, message));
                    }
                }
            }
            Ok(Err(message)) => {
                if let Some((original, _)) = batch.first() {
                    rejected.push((index, original, message));
                }
            }
            Err(e) => return Err(e),
        }
    }
    if rejected.is_empty() {
        return Ok(());
    }
    let db = db(env).await?;
    let now = crate::plumbing::now_ms();
    let mut statements = Vec::with_capacity(rejected.len());
    for (index, record, message) in rejected {
        let object_id = record.row.object_id.as_str();
        worker::console_warn!("algolia: rejected {object_id}: {message}");
        statements.push(
            db.prepare(
                "INSERT INTO push_rejections (index_name, object_id, message, attempts, updated_at) \
                 VALUES (?1, ?2, ?3, 1, ?4) ON CONFLICT (index_name, object_id) DO UPDATE SET \
                 message = ?3, attempts = attempts + 1, updated_at = ?4",
            )
            .bind_params(&[index.into(), object_id.into(), message.into(), now.into()])?,
        );
    }
    db.batch(statements).await.map_err(ApiError::internal)?;
    Ok(())
}

/// The Algolia REST adapter (batch writes with the admin key).
#[derive(Debug, Clone)]
pub struct Algolia {
    host: String,
    app_id: String,
    admin_key: String,
}

impl Algolia {
    /// The adapter of the configured application (`ALGOLIA_HOST`: tests point it at a local server).
    pub fn new(config: &AlgoliaConfig) -> Self {
        Self {
            host: config.host.clone(),
            app_id: config.app_id.clone(),
            admin_key: config.admin_key.expose().to_owned(),
        }
    }

    /// `POST /1/indexes/{index}/batch` with `updateObject` actions (objectID = address or address:tokenId).
    /// `Ok(Err(message))` when Algolia refuses the batch (a 4xx other than 429): retrying it would fail again.
    pub async fn push(&self, index: &str, records: &[&Value]) -> ApiResult<Result<(), String>> {
        let body = json!({
            "requests": records.iter().map(|r| json!({ "action": "updateObject", "body": r })).collect::<Vec<_>>()
        });
        self.batch(index, body).await
    }

    /// One batch request (`body`: `{"requests": [...]}`).
    async fn batch(&self, index: &str, body: Value) -> ApiResult<Result<(), String>> {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        headers.set("x-algolia-application-id", &self.app_id)?;
        headers.set("x-algolia-api-key", &self.admin_key)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(body.to_string().into()));
        let url = format!("{}/1/indexes/{}/batch", self.host, index);
        let response = Fetch::Request(Request::new_with_init(&url, &init)?)
            .send()
            .await?;
        let status = response.status_code();
        if (400..500).contains(&status) && status != 429 {
            return Ok(Err(format!("Algolia rejected the batch (HTTP {status})")));
        }
        if !(200..300).contains(&status) {
            return Err(ApiError::new(
                Code::SearchBackendError,
                format!("Algolia answered HTTP {}", response.status_code()),
            ));
        }
        Ok(Ok(()))
    }

    /// `POST /1/indexes/{index}/batch` with `deleteObject` actions. `Ok(Err(message))` when Algolia refuses the
    /// batch (a 4xx other than 429); `Err` for a transient failure (5xx, 429, network).
    pub async fn delete(&self, index: &str, object_ids: &[&str]) -> ApiResult<Result<(), String>> {
        self.batch(index, delete_body(object_ids)).await
    }
}

/// The batch body that deletes `object_ids`.
fn delete_body(object_ids: &[&str]) -> Value {
    json!({
        "requests": object_ids
            .iter()
            .map(|id| json!({ "action": "deleteObject", "body": { "objectID": id } }))
            .collect::<Vec<_>>()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletions_are_delete_object_actions() {
        assert_eq!(
            delete_body(&["0xAb", "0xAb:0x01"]),
            json!({ "requests": [
                { "action": "deleteObject", "body": { "objectID": "0xAb" } },
                { "action": "deleteObject", "body": { "objectID": "0xAb:0x01" } },
            ] })
        );
    }
}
