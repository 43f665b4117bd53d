//! Addresses found to hold no profile or asset, remembered per chain so that repeating their lookup costs no RPC.
//! Every statement over `lookup_misses` is here: the lookup routes remember and read misses, the indexer forgets
//! the miss of an address it indexes ([`forget`], in its write's batch).

use profile_relayer::api::records::{NotIndexed, UNKNOWN_STANDARD};
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement, Env};

use crate::{
    config::Config,
    d1::{Statement as _, db},
    error::{ApiError, ApiResult},
    plumbing::now,
};

/// Expired misses deleted by each write of a new one: more than one, so that the table shrinks back to what
/// `LOOKUP_MISS_SECONDS` keeps however fast lookups of empty addresses come (each adds one row).
pub(crate) const PRUNE_BATCH: u64 = 50;

/// A remembered "no profile or asset here" answer, if still fresh: an address found to hold no profile or asset is
/// answered from D1 without reading the chain again for `LOOKUP_MISS_SECONDS` (0 turns it off). The indexer drops
/// the entry when it indexes the address.
pub(super) async fn remembered_miss(
    env: &Env,
    config: &Config,
    chain_id: u64,
    id: &str,
) -> ApiResult<Option<NotIndexed>> {
    #[derive(Deserialize)]
    struct Row {
        standard: String,
        checked_at: u64,
    }
    let seconds = config.lookup_miss_seconds.value()?;
    if seconds == 0 {
        return Ok(None);
    }
    let db = db(env).await?;
    let since = now().saturating_sub(seconds);
    let row: Option<Row> = db
        .prepare("SELECT standard, checked_at FROM lookup_misses WHERE chain_id = ?1 AND address = ?2 AND checked_at > ?3")
        .bind_params(&[chain_id.into(), id.into(), since.into()])?
        .row()
        .await?;
    Ok(row.and_then(|r| {
        let address = id.parse().ok()?;
        Some(NotIndexed::new(
            address,
            chain_id,
            r.standard == UNKNOWN_STANDARD,
            r.checked_at,
        ))
    }))
}

/// Remembers a "no profile or asset here" answer, and deletes up to [`PRUNE_BATCH`] expired ones (any chain) in
/// the same batch: rows older than `LOOKUP_MISS_SECONDS` are never answered again, so they are not kept.
pub(super) async fn remember_miss(
    env: &Env,
    config: &Config,
    answer: &NotIndexed,
    now: u64,
) -> ApiResult<()> {
    let seconds = config.lookup_miss_seconds.value()?;
    if seconds == 0 {
        return Ok(());
    }
    let db = db(env).await?;
    let insert = db
        .prepare(
            "INSERT INTO lookup_misses (chain_id, address, standard, checked_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (chain_id, address) DO UPDATE SET standard = ?3, checked_at = ?4",
        )
        .bind_params(&[
            answer.chain_id.into(),
            answer.address.as_str().into(),
            answer.lsp_standard.as_str().into(),
            now.into(),
        ])?;
    // `remembered_miss` answers rows with checked_at > now - seconds: the others are expired
    let prune = db
        .prepare(
            "DELETE FROM lookup_misses WHERE rowid IN (SELECT rowid FROM lookup_misses WHERE checked_at <= ?1 \
             ORDER BY checked_at LIMIT ?2)",
        )
        .bind_params(&[now.saturating_sub(seconds).into(), PRUNE_BATCH.into()])?;
    db.batch(vec![insert, prune]).await.map_err(ApiError::internal)?;
    Ok(())
}

/// The statement that forgets the remembered miss of `address` on a chain (for the indexer's batch that writes its
/// record: an address remembered as "no profile or asset" is one now).
pub(crate) fn forget(db: &D1Database, chain_id: u64, address: &str) -> ApiResult<D1PreparedStatement> {
    db.prepare("DELETE FROM lookup_misses WHERE chain_id = ?1 AND address = ?2")
        .bind_params(&[chain_id.into(), address.into()])
}
