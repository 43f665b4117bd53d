//! The indexer's own tables in D1, every statement over them in this file: `checkpoints` (the cursor per chain),
//! `checkpoint_hashes` (the hashes of its recent window ends, [`super::reorg`]), `unindexable` (the candidates it
//! refuses, and the skipped logs and deep reorganizations it reports) and `retries` (candidates due for another try,
//! with backoff). Statements for the callers' batches, and the reads. The search index is the store's
//! ([`crate::search::store`]); the remembered lookup misses are the lookup's ([`crate::lookup::misses`]).

use alloy_primitives::{Address, B256};
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement, Env};

use super::{ctx::now, records::MAX_TEXT};
use crate::{
    d1::{Param, Statement, db},
    error::ApiResult,
};

// ---- checkpoints: the cursor ----

/// The cursor: the next block, and how many of its candidates are done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) block: u64,
    pub(crate) item: u64,
    /// The `eth_getLogs` window the next read starts with.
    pub(crate) window: u64,
}

/// The statement that stores the cursor of a chain.
pub(crate) fn save_cursor(db: &D1Database, chain_id: u64, c: Cursor) -> ApiResult<D1PreparedStatement> {
    db.prepare(
        "INSERT INTO checkpoints (chain_id, next_block, next_item, window, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (chain_id) DO UPDATE SET next_block = ?2, next_item = ?3, window = ?4, updated_at = ?5",
    )
    .bind_params(&[chain_id.into(), c.block.into(), c.item.into(), c.window.into(), now().into()])
}

/// The statement that moves the cursor of a chain back to `next_block` (never forward).
pub(crate) fn rewind_cursor(
    db: &D1Database,
    chain_id: u64,
    next_block: u64,
) -> ApiResult<D1PreparedStatement> {
    db.prepare(
        "UPDATE checkpoints SET next_block = ?2, next_item = 0, updated_at = ?3 WHERE chain_id = ?1 AND \
         next_block > ?2",
    )
    .bind_params(&[chain_id.into(), next_block.into(), now().into()])
}

/// The stored cursor.
pub(crate) async fn cursor(env: &Env, chain_id: u64) -> ApiResult<Option<Cursor>> {
    #[derive(Deserialize)]
    struct CheckpointRow {
        next_block: u64,
        next_item: Option<u64>,
        window: Option<u64>,
    }
    let db = db(env).await?;
    let row: Option<CheckpointRow> = db
        .prepare("SELECT next_block, next_item, window FROM checkpoints WHERE chain_id = ?1")
        .bind_params(&[chain_id.into()])?
        .row()
        .await?;
    Ok(row.map(|r| Cursor {
        block: r.next_block,
        item: r.next_item.unwrap_or(0),
        window: r.window.unwrap_or(0),
    }))
}

/// The next block to process.
pub async fn checkpoint(env: &Env, chain_id: u64) -> ApiResult<Option<u64>> {
    Ok(cursor(env, chain_id).await?.map(|c| c.block))
}

// ---- checkpoint_hashes ----

/// The newest `limit` remembered `(block, hash)` pairs of a chain, newest first.
pub(crate) async fn hashes(db: &D1Database, chain_id: u64, limit: u32) -> ApiResult<Vec<(u64, B256)>> {
    #[derive(Deserialize)]
    struct HashRow {
        block: u64,
        hash: String,
    }
    let rows: Vec<HashRow> = db
        .prepare("SELECT block, hash FROM checkpoint_hashes WHERE chain_id = ?1 ORDER BY block DESC LIMIT ?2")
        .bind_params(&[chain_id.into(), limit.into()])?
        .rows()
        .await?;
    Ok(rows
        .iter()
        .filter_map(|r| Some((r.block, r.hash.parse::<B256>().ok()?)))
        .collect())
}

/// The statements that remember `hash` as the hash of `block` and keep only the newest `kept`.
pub(crate) fn remember_hash(
    db: &D1Database,
    chain_id: u64,
    block: u64,
    hash: B256,
    kept: u32,
) -> ApiResult<Vec<D1PreparedStatement>> {
    Ok(vec![
        db.prepare(
            "INSERT INTO checkpoint_hashes (chain_id, block, hash) VALUES (?1, ?2, ?3) ON CONFLICT (chain_id, block) \
             DO UPDATE SET hash = ?3",
        )
        .bind_params(&[chain_id.into(), block.into(), hash.to_string().as_str().into()])?,
        db.prepare(
            "DELETE FROM checkpoint_hashes WHERE chain_id = ?1 AND block NOT IN (SELECT block FROM checkpoint_hashes \
             WHERE chain_id = ?1 ORDER BY block DESC LIMIT ?2)",
        )
        .bind_params(&[chain_id.into(), kept.into()])?,
    ])
}

/// The statement that forgets the hashes of a chain from `block` on.
pub(crate) fn forget_hashes_from(
    db: &D1Database,
    chain_id: u64,
    block: u64,
) -> ApiResult<D1PreparedStatement> {
    db.prepare("DELETE FROM checkpoint_hashes WHERE chain_id = ?1 AND block >= ?2")
        .bind_params(&[chain_id.into(), block.into()])
}

// ---- unindexable ----

/// A row of `unindexable`: a candidate the indexer refuses (or a skipped range it reports) and why.
#[derive(Debug, Clone)]
pub(crate) struct Unindexable<'a> {
    pub(crate) object_id: &'a str,
    pub(crate) address: Address,
    pub(crate) token_id: Option<B256>,
    pub(crate) code: &'a str,
    /// Cut to [`MAX_TEXT`] characters.
    pub(crate) message: &'a str,
    pub(crate) block: u64,
}

/// The statement that records an unindexable candidate of a chain (a second time: its code, message and block
/// replaced, its attempts counted).
pub(crate) fn unindexable(
    db: &D1Database,
    chain_id: u64,
    row: &Unindexable<'_>,
) -> ApiResult<D1PreparedStatement> {
    let address = row.address.to_checksum(None);
    let token = row.token_id.map(|t| t.to_string());
    db.prepare(
        "INSERT INTO unindexable (object_id, address, token_id, code, message, block, attempts, updated_at, \
         chain_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8) ON CONFLICT (chain_id, object_id) DO UPDATE \
         SET code = ?4, message = ?5, block = ?6, attempts = attempts + 1, updated_at = ?7",
    )
    .bind_params(&[
        row.object_id.into(),
        address.as_str().into(),
        token.as_deref().into(),
        row.code.into(),
        row.message.chars().take(MAX_TEXT).collect::<String>().into(),
        row.block.into(),
        now().into(),
        chain_id.into(),
    ])
}

/// The statement that forgets a chain's unindexable row of a candidate (indexed now).
pub(crate) fn clear_unindexable(
    db: &D1Database,
    chain_id: u64,
    object_id: &str,
) -> ApiResult<D1PreparedStatement> {
    db.prepare("DELETE FROM unindexable WHERE chain_id = ?1 AND object_id = ?2")
        .bind_params(&[chain_id.into(), object_id.into()])
}

/// The recorded error (code, message) of a candidate on a chain.
pub(crate) async fn recorded_error(
    env: &Env,
    chain_id: u64,
    object_id: &str,
) -> ApiResult<Option<(String, String)>> {
    #[derive(Deserialize)]
    struct ErrorRow {
        code: String,
        message: Option<String>,
    }
    let db = db(env).await?;
    let row: Option<ErrorRow> = db
        .prepare("SELECT code, message FROM unindexable WHERE chain_id = ?1 AND object_id = ?2")
        .bind_params(&[chain_id.into(), object_id.into()])?
        .row()
        .await?;
    Ok(row.map(|r| (r.code, r.message.unwrap_or_default())))
}

/// Number of recorded errors of a chain.
pub(crate) async fn error_count(env: &Env, chain_id: u64) -> ApiResult<u64> {
    #[derive(Deserialize)]
    struct Count {
        n: u64,
    }
    let db = db(env).await?;
    let row: Option<Count> = db
        .prepare("SELECT COUNT(*) AS n FROM unindexable WHERE chain_id = ?1")
        .bind_params(&[chain_id.into()])?
        .row()
        .await?;
    Ok(row.map_or(0, |c| c.n))
}

// ---- retries ----

/// A candidate queued for another try.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retry<'a> {
    /// The queue: an index name, or a chain's errors queue (`<prefix>_errors`).
    pub(crate) queue: &'a str,
    pub(crate) object_id: &'a str,
    pub(crate) address: &'a str,
    pub(crate) token_id: Option<&'a str>,
    pub(crate) reason: &'a str,
}

/// The statement that queues a candidate for another try with exponential backoff: `base` seconds, 2×, 4× … capped
/// at 2^11 × `base`.
pub(crate) fn retry(db: &D1Database, retry: Retry<'_>, base: u64) -> ApiResult<D1PreparedStatement> {
    db.prepare(
        "INSERT INTO retries (index_name, object_id, address, token_id, attempts, next_attempt_at, reason) \
         VALUES (?1, ?2, ?3, ?4, 1, ?5 + ?7, ?6) ON CONFLICT (index_name, object_id) DO UPDATE SET \
         attempts = attempts + 1, next_attempt_at = ?5 + (?7 << min(attempts, 11)), reason = ?6",
    )
    .bind_params(&[
        retry.queue.into(),
        retry.object_id.into(),
        retry.address.into(),
        retry.token_id.into(),
        now().into(),
        retry.reason.into(),
        base.into(),
    ])
}

/// The statement that takes a candidate out of one retry queue.
pub(crate) fn clear_retry(db: &D1Database, queue: &str, object_id: &str) -> ApiResult<D1PreparedStatement> {
    db.prepare("DELETE FROM retries WHERE index_name = ?1 AND object_id = ?2")
        .bind_params(&[queue.into(), object_id.into()])
}

/// The statement that queues every record of `indexes` read from `block` on for a re-check in `queue`, due now
/// (reason `REORG`).
pub(crate) fn recheck_from(
    db: &D1Database,
    queue: &str,
    indexes: [&str; 2],
    block: u64,
) -> ApiResult<D1PreparedStatement> {
    db.prepare(
        "INSERT INTO retries (index_name, object_id, address, token_id, attempts, next_attempt_at, reason) \
         SELECT ?1, object_id, address, token_id, 0, 0, 'REORG' FROM records WHERE index_name IN (?2, ?3) \
         AND indexed_block >= ?4 ON CONFLICT (index_name, object_id) DO UPDATE SET next_attempt_at = 0, \
         reason = 'REORG'",
    )
    .bind_params(&[queue.into(), indexes[0].into(), indexes[1].into(), block.into()])
}

#[derive(Deserialize)]
struct RetryRow {
    address: String,
    token_id: Option<String>,
}

/// Up to `limit` candidates of `queues` due for another try, soonest first (an address, and the token id of a
/// token).
pub(crate) async fn due_retries(
    db: &D1Database,
    queues: &[String; 3],
    limit: u32,
) -> ApiResult<Vec<(Address, Option<B256>)>> {
    let due: Vec<RetryRow> = db
        .prepare(
            "SELECT address, token_id FROM retries WHERE index_name IN (?3, ?4, ?5) AND next_attempt_at <= ?1 \
             ORDER BY next_attempt_at LIMIT ?2",
        )
        .bind_params(
            &[now().into(), limit.into()]
                .into_iter()
                .chain(queues.iter().map(Param::from))
                .collect::<Vec<_>>(),
        )?
        .rows()
        .await?;
    Ok(due
        .iter()
        .filter_map(|row| {
            let address = row.address.parse::<Address>().ok()?;
            match row.token_id.as_deref().map(str::parse::<B256>) {
                Some(Ok(token)) => Some((address, Some(token))),
                Some(Err(_)) => None,
                None => Some((address, None)),
            }
        })
        .collect())
}

/// The statements that take candidates (by object id) out of `queues`.
pub(crate) fn forget_retries(
    db: &D1Database,
    queues: &[String; 3],
    object_ids: &[String],
) -> ApiResult<Vec<D1PreparedStatement>> {
    object_ids
        .iter()
        .map(|id| {
            db.prepare("DELETE FROM retries WHERE object_id = ?1 AND index_name IN (?2, ?3, ?4)")
                .bind_params(
                    &[Param::from(id)]
                        .into_iter()
                        .chain(queues.iter().map(Param::from))
                        .collect::<Vec<_>>(),
                )
        })
        .collect()
}
