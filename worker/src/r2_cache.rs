//! A bounded share of the R2 bucket: what anonymous traffic makes the Worker store (relayed blocks, derived
//! images) is recorded in a D1 ledger (`key`, `size`, `stored_at`), and the oldest entries are evicted to make room
//! for a new one. Concurrent writers may pass the bound by at most one object each.

use std::collections::HashMap;

use worker::{D1Database, Env};

use crate::{
    d1::Statement,
    error::{ApiError, ApiResult},
};

/// One bounded cache: its ledger table (a constant name, never user input) and its bound in bytes.
#[derive(Debug, Clone, Copy)]
pub struct BoundedCache {
    /// The D1 ledger table.
    pub table: &'static str,
    /// Its key column (`cid` in the relay's ledger, which predates this module).
    pub key_column: &'static str,
    /// The most bytes the cache may hold.
    pub max_bytes: u64,
}

/// Where an object's bytes are.
#[derive(Debug, Clone, Copy)]
pub enum Bytes<'a> {
    /// In the Worker's memory (a derived image).
    Worker(&'a [u8]),
    /// In the runtime's (relayed content): written to R2 from there, never copied into the Worker.
    Runtime(&'a js_sys::Uint8Array),
}

impl Bytes<'_> {
    fn len(self) -> u64 {
        match self {
            Self::Worker(bytes) => bytes.len() as u64,
            Self::Runtime(bytes) => u64::from(bytes.length()),
        }
    }

    /// What R2 is given.
    fn data(self) -> ApiResult<worker::Data> {
        Ok(match self {
            Self::Worker(bytes) => bytes.to_vec().into(),
            Self::Runtime(bytes) => crate::body::native_body(bytes)
                .map_err(ApiError::internal)?
                .into(),
        })
    }
}

/// An object to store.
#[derive(Debug)]
pub struct Object<'a> {
    /// The R2 key.
    pub key: &'a str,
    /// The bytes.
    pub bytes: Bytes<'a>,
    /// Its `Content-Type`.
    pub content_type: &'a str,
    /// R2 custom metadata.
    pub metadata: HashMap<String, String>,
}

#[derive(serde::Deserialize)]
struct Total {
    total: u64,
}

#[derive(serde::Deserialize)]
struct Entry {
    key: String,
    size: u64,
}

/// Whether `object` is an upload (`origin` `upload`): what an API key or the wallet stored, which no cache evicts or
/// replaces.
pub(crate) fn is_upload_object(object: &worker::Object) -> ApiResult<bool> {
    Ok(object.custom_metadata()?.get("origin").map(String::as_str) == Some("upload"))
}

/// Whether the object under `key` is an upload ([`is_upload_object`]).
async fn is_upload(bucket: &worker::Bucket, key: &str) -> ApiResult<bool> {
    match bucket.head(key).await? {
        Some(object) => is_upload_object(&object),
        None => Ok(false),
    }
}

impl BoundedCache {
    /// The database holding the ledger (`relay_cache`, `image_cache`: `worker/migrations/0001_initial.sql`).
    async fn ledger(&self, env: &Env) -> ApiResult<D1Database> {
        crate::d1::db(env).await
    }

    /// Stores `object` in the `IPFS` bucket when it fits, evicting the oldest entries of this cache to make room;
    /// an object larger than the whole bound is not stored, and an upload under the same key is never replaced.
    /// `Ok(false)` when it was not stored.
    pub async fn put(&self, env: &Env, object: Object<'_>) -> ApiResult<bool> {
        let size = object.bytes.len();
        if size > self.max_bytes {
            return Ok(false);
        }
        let bucket = env.bucket("IPFS")?;
        if is_upload(&bucket, object.key).await? {
            // the same bytes, uploaded meanwhile: kept as the upload they are (never evicted)
            return Ok(false);
        }
        let db = self.ledger(env).await?;
        let (table, column) = (self.table, self.key_column);
        let total = db
            .prepare(format!("SELECT COALESCE(SUM(size), 0) AS total FROM {table}"))
            .row::<Total>()
            .await?
            .map_or(0, |t| t.total);
        let mut excess = (total + size).saturating_sub(self.max_bytes);
        if excess > 0 {
            let oldest: Vec<Entry> = db
                .prepare(format!(
                    "SELECT {column} AS key, size FROM {table} ORDER BY stored_at LIMIT 100"
                ))
                .rows()
                .await?;
            for entry in oldest {
                if excess == 0 {
                    break;
                }
                // an entry whose key was uploaded since is the upload's now: out of the ledger, not out of R2
                if !is_upload(&bucket, &entry.key).await? {
                    bucket.delete(&entry.key).await?;
                }
                db.prepare(format!("DELETE FROM {table} WHERE {column} = ?1"))
                    .bind_params(&[entry.key.as_str().into()])?
                    .run()
                    .await
                    .map_err(ApiError::internal)?;
                excess = excess.saturating_sub(entry.size);
            }
            if excess > 0 {
                return Ok(false);
            }
        }
        bucket
            .put(object.key, object.bytes.data()?)
            .http_metadata(worker::HttpMetadata {
                content_type: Some(object.content_type.to_owned()),
                ..Default::default()
            })
            .custom_metadata(object.metadata)
            .execute()
            .await?;
        db.prepare(format!(
            "INSERT OR REPLACE INTO {table} ({column}, size, stored_at) VALUES (?1, ?2, ?3)"
        ))
        .bind_params(&[object.key.into(), size.into(), crate::plumbing::now_ms().into()])?
        .run()
        .await
        .map_err(ApiError::internal)?;
        Ok(true)
    }
}
