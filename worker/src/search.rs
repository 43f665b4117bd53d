//! The search index: D1 with SQLite FTS5 (embedded default, always written; the lookup routes read it), plus
//! Algolia when configured (`ALGOLIA_APP_ID` + secret `ALGOLIA_ADMIN_KEY`): records are pushed with the batch API.
//! Index names, per chain: `<indexPrefix>_universal_profiles`, `<indexPrefix>_assets` (`prod_mainnet`, `prod_testnet`,
//! …; see `config::ChainConfig`).

use profile_relayer::api::SearchResult;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use worker::{D1Database, D1PreparedStatement, Env, Fetch, Headers, Method, Request, RequestInit};

use crate::{
    config::var,
    d1::{Param, Statement},
    error::{ApiError, ApiResult, Code},
};

/// The search index's tables: records and their full-text rows (per index), and the records Algolia refused.
pub(crate) const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS records (index_name TEXT NOT NULL, object_id TEXT NOT NULL, address TEXT NOT NULL, \
token_id TEXT, kind TEXT NOT NULL, record TEXT NOT NULL, indexed_block INTEGER, updated_at INTEGER, \
PRIMARY KEY (index_name, object_id));
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(index_name UNINDEXED, object_id UNINDEXED, name, symbol, \
description, tags, address, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS push_rejections (index_name TEXT NOT NULL, object_id TEXT NOT NULL, message TEXT, \
attempts INTEGER NOT NULL, updated_at INTEGER, PRIMARY KEY (index_name, object_id));";

pub use crate::d1::db;

/// A record as stored and returned.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record(pub Value);

impl Record {
    fn text(&self, field: &str) -> String {
        match self.0.get(field).unwrap_or(&Value::Null) {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        }
    }
}

/// The statements that insert or replace a record and its full-text row (for a caller's batch).
pub fn upsert_statements(
    db: &D1Database,
    index: &str,
    record: &Record,
) -> ApiResult<Vec<D1PreparedStatement>> {
    let object_id = record.text("objectID");
    fn args<'a>(values: &[&'a str]) -> Vec<Param<'a>> {
        values.iter().map(|v| Param::from(*v)).collect()
    }
    let json = serde_json::to_string(&record.0).map_err(ApiError::internal)?;
    let block = record.0.get("indexedBlock").and_then(Value::as_u64).unwrap_or(0);
    Ok(vec![
        db.prepare("DELETE FROM records_fts WHERE index_name = ?1 AND object_id = ?2").bind_params(&args(&[index, &object_id]))?,
        db.prepare(
            "INSERT INTO records_fts (index_name, object_id, name, symbol, description, tags, address) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind_params(&args(&[
            index,
            &object_id,
            &record.text("name"),
            &record.text("symbol"),
            &record.text("description"),
            &record.text("tags"),
            &record.text("address").to_lowercase(),
        ]))?,
        db.prepare(
            "INSERT OR REPLACE INTO records (index_name, object_id, address, token_id, kind, record, indexed_block, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .bind_params(&[
            index.into(),
            object_id.as_str().into(),
            record.text("address").to_lowercase().into(),
            record.0.get("tokenId").and_then(Value::as_str).into(),
            record.text("kind").into(),
            json.into(),
            block.into(),
            worker::Date::now().as_millis().into(),
        ])?,
    ])
}

/// The statements that delete a record and its full-text row.
pub fn delete_statements(
    db: &D1Database,
    index: &str,
    object_id: &str,
) -> ApiResult<Vec<D1PreparedStatement>> {
    Ok(vec![
        db.prepare("DELETE FROM records_fts WHERE index_name = ?1 AND object_id = ?2")
            .bind_params(&[index.into(), object_id.into()])?,
        db.prepare("DELETE FROM records WHERE index_name = ?1 AND object_id = ?2")
            .bind_params(&[index.into(), object_id.into()])?,
    ])
}

/// Pushes records to Algolia when configured: one batch request per index, every record trimmed below
/// `ALGOLIA_MAX_RECORD_BYTES` (see [`crate::algolia::trim`]). When Algolia rejects a batch (4xx), its records are
/// pushed one by one; a record rejected alone (or too large even trimmed) is recorded in `push_rejections` (index,
/// objectID, Algolia's answer) and never blocks the others or the checkpoint. Transient failures (5xx, 429, network) fail.
pub async fn push(env: &Env, records: &[(String, Record)]) -> ApiResult<()> {
    let Some(algolia) = Algolia::from_env(env)? else {
        return Ok(());
    };
    let max = var(env, "ALGOLIA_MAX_RECORD_BYTES")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(crate::algolia::trim::DEFAULT_MAX_RECORD_BYTES);
    let mut indexes: Vec<&str> = records.iter().map(|(i, _)| i.as_str()).collect();
    indexes.sort_unstable();
    indexes.dedup();
    let mut rejected: Vec<(&str, &Record, String)> = Vec::new();
    for index in indexes {
        let mut batch: Vec<(&Record, Record)> = Vec::new();
        for (_, record) in records.iter().filter(|(i, _)| i == index) {
            match crate::algolia::trim::trim(&record.0, max) {
                Some(trimmed) => batch.push((record, Record(trimmed))),
                None => rejected.push((
                    index,
                    record,
                    format!("over ALGOLIA_MAX_RECORD_BYTES ({max}) even trimmed"),
                )),
            }
        }
        let all: Vec<&Record> = batch.iter().map(|(_, t)| t).collect();
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
    let now = worker::Date::now().as_millis();
    let mut statements = Vec::with_capacity(rejected.len());
    for (index, record, message) in rejected {
        worker::console_warn!("algolia: rejected {}: {message}", record.text("objectID"));
        statements.push(
            db.prepare(
                "INSERT INTO push_rejections (index_name, object_id, message, attempts, updated_at) \
                 VALUES (?1, ?2, ?3, 1, ?4) ON CONFLICT (index_name, object_id) DO UPDATE SET \
                 message = ?3, attempts = attempts + 1, updated_at = ?4",
            )
            .bind_params(&[
                index.into(),
                record.text("objectID").into(),
                message.into(),
                now.into(),
            ])?,
        );
    }
    db.batch(statements).await.map_err(ApiError::internal)?;
    Ok(())
}

/// The error code of a push Algolia refused (4xx other than 429): retrying the same records cannot succeed.

#[derive(Deserialize)]
struct Row {
    record: String,
}

/// Reads one record.
pub async fn get(env: &Env, index: &str, object_id: &str) -> ApiResult<Option<Value>> {
    let db = db(env).await?;
    let row: Option<Row> = db
        .prepare("SELECT record FROM records WHERE index_name = ?1 AND object_id = ?2")
        .bind_params(&[index.into(), object_id.into()])?
        .row()
        .await?;
    row.map(|r| parse(&r)).transpose()
}

fn parse(row: &Row) -> ApiResult<Value> {
    serde_json::from_str(&row.record).map_err(ApiError::internal)
}

/// Runs a statement selecting a `record` column and parses every row.
async fn records(statement: D1PreparedStatement) -> ApiResult<Vec<Value>> {
    let rows: Vec<Row> = statement.rows().await?;
    rows.iter().map(parse).collect()
}

/// Runs a statement selecting `COUNT(*) AS n`.
async fn count(statement: D1PreparedStatement) -> ApiResult<u64> {
    let row: Option<Count> = statement.row().await?;
    Ok(row.map_or(0, |c| c.n))
}

/// Token records of an LSP8 contract.
pub async fn tokens_of(env: &Env, index: &str, address: &str, limit: u32) -> ApiResult<Vec<Value>> {
    let db = db(env).await?;
    records(
        db.prepare("SELECT record FROM records WHERE index_name = ?1 AND address = ?2 AND token_id IS NOT NULL ORDER BY object_id LIMIT ?3")
            .bind_params(&[index.into(), address.to_lowercase().into(), limit.into()])?,
    )
    .await
}

/// Turns free text into an FTS5 query: every word must match as a prefix (no FTS syntax reaches SQLite).
pub fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(8)
        .map(|w| format!("\"{}\"*", w.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[derive(Deserialize)]
struct Count {
    n: u64,
}

/// Searches one index.
pub async fn search(
    env: &Env,
    index: &str,
    query: &str,
    page: u64,
    hits_per_page: u64,
) -> ApiResult<SearchResult> {
    let started = worker::Date::now().as_millis();
    let hits_per_page = hits_per_page.clamp(1, 100);
    if fts_query(query).is_some() {
        // typo-tolerant and ranked as Algolia ranks (the Algolia-compatible route's engine)
        let params = crate::algolia::params::Params::for_query(query, page, hits_per_page);
        let mut found = crate::algolia::search(env, index, &params).await?;
        for hit in &mut found.hits {
            if let Value::Object(hit) = hit {
                hit.remove("_highlightResult");
            }
        }
        return Ok(SearchResult {
            hits: found.hits,
            nb_hits: found.nb_hits,
            page,
            nb_pages: found.nb_pages,
            hits_per_page,
            processing_time_ms: worker::Date::now().as_millis().saturating_sub(started),
            query: query.to_owned(),
            params: format!(
                "query={}&hitsPerPage={hits_per_page}&page={page}",
                query.replace('&', "%26")
            ),
            index: index.to_owned(),
        });
    }
    let db = db(env).await?;
    let offset = Param::from(page.saturating_mul(hits_per_page));
    let limit = Param::from(hits_per_page);
    // with words: full-text match, best first; without: the most recently updated records
    let (select, count_all) = match fts_query(query) {
        Some(q) => (
            db.prepare(
                "SELECT r.record AS record FROM records_fts f JOIN records r \
                 ON r.index_name = f.index_name AND r.object_id = f.object_id \
                 WHERE records_fts MATCH ?1 AND f.index_name = ?2 ORDER BY rank LIMIT ?3 OFFSET ?4",
            )
            .bind_params(&[q.as_str().into(), index.into(), limit, offset])?,
            db.prepare("SELECT COUNT(*) AS n FROM records_fts WHERE records_fts MATCH ?1 AND index_name = ?2")
                .bind_params(&[q.as_str().into(), index.into()])?,
        ),
        None => (
            db.prepare("SELECT record FROM records WHERE index_name = ?1 ORDER BY updated_at DESC LIMIT ?2 OFFSET ?3")
                .bind_params(&[index.into(), limit, offset])?,
            db.prepare("SELECT COUNT(*) AS n FROM records WHERE index_name = ?1").bind_params(&[index.into()])?,
        ),
    };
    let hits = records(select).await?;
    let nb_hits = count(count_all).await?;
    Ok(SearchResult {
        hits,
        nb_hits,
        page,
        nb_pages: nb_hits.div_ceil(hits_per_page),
        hits_per_page,
        processing_time_ms: worker::Date::now().as_millis().saturating_sub(started),
        query: query.to_owned(),
        params: format!(
            "query={}&hitsPerPage={hits_per_page}&page={page}",
            query.replace('&', "%26")
        ),
        index: index.to_owned(),
    })
}

/// Number of records per index.
pub async fn counts(env: &Env) -> ApiResult<Vec<(String, u64)>> {
    #[derive(Deserialize)]
    struct C {
        index_name: String,
        n: u64,
    }
    let db = db(env).await?;
    let rows: Vec<C> = db
        .prepare("SELECT index_name, COUNT(*) AS n FROM records GROUP BY index_name ORDER BY index_name")
        .rows()
        .await?;
    Ok(rows.into_iter().map(|c| (c.index_name, c.n)).collect())
}

/// The Algolia REST adapter (batch writes with the admin key).
#[derive(Debug, Clone)]
pub struct Algolia {
    host: String,
    app_id: String,
    admin_key: String,
}

impl Algolia {
    /// Configured when `ALGOLIA_APP_ID` and the `ALGOLIA_ADMIN_KEY` secret are set. `ALGOLIA_HOST` overrides
    /// `https://<app id>.algolia.net` (tests point it at a local server).
    pub fn from_env(env: &Env) -> ApiResult<Option<Self>> {
        let Some(app_id) = var(env, "ALGOLIA_APP_ID") else {
            return Ok(None);
        };
        let admin_key = env
            .secret("ALGOLIA_ADMIN_KEY")
            .map(|s| s.to_string())
            .map_err(|_| ApiError::config("ALGOLIA_APP_ID is set but the ALGOLIA_ADMIN_KEY secret is not"))?;
        let host = var(env, "ALGOLIA_HOST").unwrap_or_else(|| format!("https://{app_id}.algolia.net"));
        Ok(Some(Self {
            host,
            app_id,
            admin_key,
        }))
    }

    /// `POST /1/indexes/{index}/batch` with `updateObject` actions (objectID = address or address:tokenId).
    /// `Ok(Err(message))` when Algolia refuses the batch (a 4xx other than 429): retrying it would fail again.
    pub async fn push(&self, index: &str, records: &[&Record]) -> ApiResult<Result<(), String>> {
        let body = json!({
            "requests": records.iter().map(|r| json!({ "action": "updateObject", "body": r.0 })).collect::<Vec<_>>()
        });
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_queries_are_sanitized() {
        assert_eq!(fts_query("Alice  Bob").as_deref(), Some("\"alice\"* \"bob\"*"));
        assert_eq!(
            fts_query("\" OR name:* NEAR("),
            Some("\"or\"* \"name\"* \"near\"*".to_owned())
        );
        assert_eq!(fts_query("  -- ;"), None);
    }
}
