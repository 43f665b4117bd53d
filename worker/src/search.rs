//! The search index: D1 with SQLite FTS5 (embedded default, always written; the lookup routes read it), plus
//! Algolia when configured (`ALGOLIA_APP_ID` + secret `ALGOLIA_ADMIN_KEY`): records are pushed with the batch API.
//! Index names, per chain: `<indexPrefix>_universal_profiles`, `<indexPrefix>_assets` (`prod_mainnet`, `prod_testnet`,
//! …; see `config::ChainConfig`).

use alloy_primitives::B256;
use profile_relayer::api::{
    SearchResult,
    records::{AssetRecord, ProfileRecord, RecordHeader, RecordStamp, TokenRecord},
};
use serde::Deserialize;
use serde_json::{Value, json};
use worker::{D1Database, D1PreparedStatement, Env, Fetch, Headers, Method, Request, RequestInit};

use crate::{
    config::{AlgoliaConfig, Setting},
    d1::{Param, Statement},
    error::{ApiError, ApiResult, Code},
};

pub use crate::d1::db;

pub(crate) mod caps;
pub mod trim;

/// A record the indexer built, by kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Profile(ProfileRecord),
    Asset(AssetRecord),
    Token(TokenRecord),
}

impl Record {
    /// Who the record is.
    pub fn header(&self) -> &RecordHeader {
        match self {
            Self::Profile(r) => &r.header,
            Self::Asset(r) => &r.header,
            Self::Token(r) => &r.header,
        }
    }

    /// When it was read.
    pub fn stamp(&self) -> &RecordStamp {
        match self {
            Self::Profile(r) => &r.stamp,
            Self::Asset(r) => &r.stamp,
            Self::Token(r) => &r.stamp,
        }
    }

    /// The token id of a token record.
    pub fn token_id(&self) -> Option<B256> {
        match self {
            Self::Token(r) => Some(r.token_id),
            Self::Profile(_) | Self::Asset(_) => None,
        }
    }

    /// The row the `records` table and the full-text index get for it.
    pub fn row(&self) -> SearchRow {
        let header = self.header();
        let (name, symbol, description, tags) = match self {
            Self::Profile(r) => (&r.name, &None, &r.description, r.tags.as_slice()),
            Self::Asset(r) => (&r.name, &r.symbol, &r.description, [].as_slice()),
            Self::Token(r) => (&r.name, &None, &r.description, [].as_slice()),
        };
        let text = |key: &str, value: &Option<String>| {
            value
                .as_deref()
                .map_or_else(String::new, |v| caps::capped_text(key, v))
        };
        SearchRow {
            object_id: header.object_id.clone(),
            address: header.address.to_lowercase(),
            token_id: self.token_id().map(|t| t.to_string()),
            kind: header.kind.clone(),
            indexed_block: self.stamp().indexed_block,
            name: text("name", name),
            symbol: text("symbol", symbol),
            description: text("description", description),
            tags: caps::capped_tags(tags).join(" "),
        }
    }
}

/// What the `records` table and the full-text index hold of a record besides its JSON: its identity and its
/// text, cut as the stored JSON is ([`caps`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRow {
    pub object_id: String,
    /// Lower case.
    pub address: String,
    pub token_id: Option<String>,
    pub kind: String,
    pub indexed_block: u64,
    pub name: String,
    pub symbol: String,
    pub description: String,
    /// Space-separated.
    pub tags: String,
}

/// A record as it is stored: the typed record, its row and its JSON within the caps of [`caps`] (what D1 keeps,
/// the lookup routes answer and Algolia gets).
#[derive(Debug, Clone)]
pub struct Stored {
    pub record: Record,
    pub row: SearchRow,
    json: Value,
}

impl Stored {
    pub fn new(record: Record) -> Self {
        let mut json = match &record {
            Record::Profile(r) => serde_json::to_value(r),
            Record::Asset(r) => serde_json::to_value(r),
            Record::Token(r) => serde_json::to_value(r),
        }
        .unwrap_or(Value::Null);
        caps::cap(&mut json);
        Self {
            row: record.row(),
            record,
            json,
        }
    }
}

/// The statements that insert or replace a record and its full-text row (for a caller's batch).
pub fn upsert_statements(
    db: &D1Database,
    index: &str,
    stored: &Stored,
) -> ApiResult<Vec<D1PreparedStatement>> {
    fn args<'a>(values: &[&'a str]) -> Vec<Param<'a>> {
        values.iter().map(|v| Param::from(*v)).collect()
    }
    let row = &stored.row;
    let json = serde_json::to_string(&stored.json).map_err(ApiError::internal)?;
    Ok(vec![
        // written again: a queued Algolia deletion of it would remove what is pushed next
        db.prepare("DELETE FROM algolia_deletes WHERE index_name = ?1 AND object_id = ?2")
            .bind_params(&args(&[index, &row.object_id]))?,
        db.prepare("DELETE FROM records_fts WHERE index_name = ?1 AND object_id = ?2").bind_params(&args(&[index, &row.object_id]))?,
        db.prepare(
            "INSERT INTO records_fts (index_name, object_id, name, symbol, description, tags, address) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind_params(&args(&[
            index,
            &row.object_id,
            &row.name,
            &row.symbol,
            &row.description,
            &row.tags,
            &row.address,
        ]))?,
        db.prepare(
            "INSERT OR REPLACE INTO records (index_name, object_id, address, token_id, kind, record, indexed_block, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .bind_params(&[
            index.into(),
            row.object_id.as_str().into(),
            row.address.as_str().into(),
            row.token_id.as_deref().into(),
            row.kind.as_str().into(),
            json.into(),
            row.indexed_block.into(),
            worker::Date::now().as_millis().into(),
        ])?,
    ])
}

/// The statements that delete a record and its full-text row; with `algolia` (Algolia configured) a record that was
/// there is first queued for deletion from the Algolia index too (`algolia_deletes`, see [`flush_deletes`]).
pub fn delete_statements(
    db: &D1Database,
    index: &str,
    object_id: &str,
    algolia: bool,
) -> ApiResult<Vec<D1PreparedStatement>> {
    let queue = algolia
        .then(|| {
            db.prepare(
                "INSERT INTO algolia_deletes (index_name, object_id, attempts, next_attempt_at) SELECT index_name, \
                 object_id, 0, 0 FROM records WHERE index_name = ?1 AND object_id = ?2 ON CONFLICT (index_name, \
                 object_id) DO UPDATE SET next_attempt_at = 0",
            )
            .bind_params(&[index.into(), object_id.into()])
        })
        .transpose()?;
    Ok(queue
        .into_iter()
        .chain([
            db.prepare("DELETE FROM records_fts WHERE index_name = ?1 AND object_id = ?2")
                .bind_params(&[index.into(), object_id.into()])?,
            db.prepare("DELETE FROM records WHERE index_name = ?1 AND object_id = ?2")
                .bind_params(&[index.into(), object_id.into()])?,
        ])
        .collect())
}

/// Queued Algolia deletions a run sends at most.
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
    let now = worker::Date::now().as_millis() / 1000;
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
            match trim::trim(&record.json, max) {
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
    let now = worker::Date::now().as_millis();
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

/// Number of records in each of `indexes` (one chain's two; the indexes without records are left out): only their
/// rows are read (the primary key starts with the index name), not every chain's.
pub async fn counts(env: &Env, indexes: [&str; 2]) -> ApiResult<Vec<(String, u64)>> {
    #[derive(Deserialize)]
    struct C {
        index_name: String,
        n: u64,
    }
    let db = db(env).await?;
    let rows: Vec<C> = db
        .prepare(
            "SELECT index_name, COUNT(*) AS n FROM records WHERE index_name IN (?1, ?2) GROUP BY index_name \
             ORDER BY index_name",
        )
        .bind_params(&[Param::from(indexes[0]), Param::from(indexes[1])])?
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
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use alloy_primitives::Address;
    use profile_relayer::{
        api::records::{AssetData, MetadataInfo, Stamp},
        lsp3::Lsp3ProfileJson,
        lsp4::Lsp4MetadataJson,
        lsp8::TokenIdFormat,
    };

    use super::*;

    const STAMP: Stamp = Stamp {
        chain_id: 42,
        block: 7,
        now: 1_711_015_200,
    };

    fn address() -> Address {
        "0x77ae93d6fabcc1369ee3fa3651e55a2f2e136bcc".parse().unwrap()
    }

    fn profile(name: &str, description: &str, tags: &[String]) -> Record {
        let lsp3 = Lsp3ProfileJson::from_value_lenient(
            json!({ "LSP3Profile": { "name": name, "description": description, "tags": tags } }),
        )
        .unwrap()
        .value
        .profile;
        Record::Profile(ProfileRecord::new(
            address(),
            STAMP,
            Some(lsp3),
            MetadataInfo::default(),
            "",
        ))
    }

    fn asset(name: &str, symbol: &str, description: &str) -> Record {
        let lsp4 = Lsp4MetadataJson::from_value_lenient(
            json!({ "LSP4Metadata": { "name": "ignored", "description": description } }),
        )
        .unwrap()
        .value
        .metadata;
        let data = AssetData {
            name: Some(name.to_owned()),
            symbol: Some(symbol.to_owned()),
            ..AssetData::default()
        };
        Record::Asset(AssetRecord::new(
            address(),
            false,
            STAMP,
            data,
            Some(lsp4),
            MetadataInfo::default(),
            "",
        ))
    }

    fn token(name: &str, description: &str) -> Record {
        let lsp4 = Lsp4MetadataJson::from_value_lenient(
            json!({ "LSP4Metadata": { "name": name, "description": description } }),
        )
        .unwrap()
        .value
        .metadata;
        Record::Token(TokenRecord::new(
            address(),
            B256::with_last_byte(9),
            TokenIdFormat::Number,
            STAMP,
            Some(lsp4),
            MetadataInfo::default(),
            "",
        ))
    }

    /// The row as it was read from the stored JSON by field name before records were typed: what the typed row
    /// must stay equal to.
    fn row_of_json(json: &Value) -> SearchRow {
        let text = |field: &str| match json.get(field).unwrap_or(&Value::Null) {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        };
        SearchRow {
            object_id: text("objectID"),
            address: text("address").to_lowercase(),
            token_id: json.get("tokenId").and_then(Value::as_str).map(str::to_owned),
            kind: text("kind"),
            indexed_block: json.get("indexedBlock").and_then(Value::as_u64).unwrap_or(0),
            name: text("name"),
            symbol: text("symbol"),
            description: text("description"),
            tags: text("tags"),
        }
    }

    #[test]
    fn the_row_of_each_kind_comes_from_its_type() {
        let id = address().to_checksum(None);
        let lower = id.to_lowercase();
        let row = profile("Alice", "about", &["a".into(), "b c".into()]).row();
        assert_eq!(
            row,
            SearchRow {
                object_id: id.clone(),
                address: lower.clone(),
                token_id: None,
                kind: "LSP0ERC725Account".into(),
                indexed_block: 7,
                name: "Alice".into(),
                symbol: String::new(),
                description: "about".into(),
                tags: "a b c".into(),
            }
        );
        let row = asset("Coin", "C", "a coin").row();
        assert_eq!(
            (
                row.object_id.as_str(),
                row.kind.as_str(),
                row.name.as_str(),
                row.symbol.as_str()
            ),
            (id.as_str(), "LSP7DigitalAsset", "Coin", "C")
        );
        assert_eq!(
            (row.description.as_str(), row.tags.as_str(), row.token_id),
            ("a coin", "", None)
        );
        let row = token("Coin #9", "one coin").row();
        let token_id = B256::with_last_byte(9).to_string();
        assert_eq!(row.object_id, format!("{id}:{token_id}"));
        assert_eq!(row.address, lower);
        assert_eq!(row.token_id.as_deref(), Some(token_id.as_str()));
        assert_eq!(
            (
                row.kind.as_str(),
                row.name.as_str(),
                row.symbol.as_str(),
                row.description.as_str()
            ),
            ("LSP8Token", "Coin #9", "", "one coin")
        );
        // the stored JSON is the record's own serialization
        for record in [profile("A", "", &[]), asset("B", "b", ""), token("C", "")] {
            let stored = Stored::new(record.clone());
            assert_eq!(stored.row, row_of_json(&stored.json));
            assert_eq!(stored.json["objectID"], record.header().object_id.as_str());
        }
    }

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

    #[test]
    fn huge_texts_are_cut_as_the_stored_json_cuts_them() {
        let tags: Vec<String> = (0..100).map(|i| format!("{i}{}", "t\"".repeat(300))).collect();
        let long = "é\u{1}x".repeat(20_000);
        for record in [
            profile(&long, &long, &tags),
            asset(&long, &long, &long),
            token(&long, &long),
        ] {
            let stored = Stored::new(record);
            assert_eq!(stored.json[caps::TRUNCATED], true);
            assert_eq!(stored.row, row_of_json(&stored.json));
            assert!(stored.row.name.len() < caps::MAX_NAME_BYTES);
            assert!(stored.row.description.len() < caps::MAX_DESCRIPTION_BYTES);
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        #[test]
        fn typed_rows_equal_the_capped_json(
            name in "[a-z\"\\\u{1}é😀 ]{0,8}", n in 0usize..3000,
            description in "[a-z\"\u{1}é ]{0,8}", d in 0usize..6000,
            tags in proptest::collection::vec("[a-z\"é]{0,40}", 0..60),
        ) {
            let name = name.repeat(n);
            let description = description.repeat(d);
            for record in [profile(&name, &description, &tags), asset(&name, &description, &description), token(&name, &description)] {
                let stored = Stored::new(record);
                proptest::prop_assert_eq!(&stored.row, &row_of_json(&stored.json));
            }
        }
    }

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
