//! Storage of the indexer: one D1 batch per chunk holds the records (built by [`super::records`]), their full-text
//! rows, the retry and error bookkeeping and the cursor, so what is written is consistent and a dead run loses only
//! the chunk in flight; then the records go to Algolia. Candidates that misbehave go to `unindexable`, never to the
//! search index. Also the reads of that bookkeeping (cursor, due retries, recorded errors). What to write and when
//! is [`super::run`]'s.

use alloy_primitives::{Address, B256};
use serde::Deserialize;
use worker::{D1PreparedStatement, Env};

use super::{
    answers::ItemError,
    ctx::{Ctx, now},
    records::{MAX_TEXT, Outcome},
};
use crate::{
    d1::{Param, Statement},
    error::{ApiError, ApiResult},
    search::{self, Stored},
};

/// The cursor: the next block, and how many of its candidates are done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) block: u64,
    pub(crate) item: u64,
    /// The `eth_getLogs` window the next read starts with.
    pub(crate) window: u64,
}

/// The statements of one outcome; for a record, what Algolia gets once they are written and who it is, should D1
/// refuse them.
struct Group {
    statements: Vec<D1PreparedStatement>,
    record: Option<(String, Box<Stored>, Who)>,
}

/// A candidate as `unindexable` records it.
struct Who {
    object_id: String,
    address: Address,
    token_id: Option<B256>,
    block: u64,
}

/// Records that the `event` logs of `block` were too large to read and were skipped (`LOGS_TOO_LARGE` in
/// `unindexable`, object `block:<n>:<event>`, the zero address).
pub(crate) async fn skipped_logs(ctx: &Ctx<'_>, block: u64, event: &str) -> ApiResult<()> {
    let db = search::db(ctx.env).await?;
    ctx.budget.spend(1);
    let statement = db
        .prepare(
            "INSERT INTO unindexable (object_id, address, token_id, code, message, block, attempts, updated_at, \
             chain_id) VALUES (?1, ?2, NULL, 'LOGS_TOO_LARGE', ?3, ?4, 1, ?5, ?6) ON CONFLICT (chain_id, object_id) \
             DO UPDATE SET attempts = attempts + 1, updated_at = ?5",
        )
        .bind_params(&[
            format!("block:{block}:{event}").as_str().into(),
            Address::ZERO.to_checksum(None).as_str().into(),
            format!("the block's {event} logs exceed what one eth_getLogs answer may carry; skipped").as_str().into(),
            block.into(),
            now().into(),
            ctx.config.chain_id.into(),
        ])?;
    db.batch(vec![statement]).await.map_err(ApiError::internal)?;
    Ok(())
}

/// Writes outcomes (and the cursor, when given) in one D1 batch, then pushes the records to Algolia.
///
/// When D1 refuses the batch, each record is written on its own (one batch each, counted in the run's budget): a
/// record D1 refuses again — or that the budget leaves no room to try — is recorded in `unindexable`
/// (`STORE_REFUSED`, retried later with backoff; a record already stored stays as it was) and the rest of the
/// chunk, the bookkeeping and the cursor are written after it, so one record never holds the cursor. Only when
/// that last batch fails too (D1 itself is failing) is the error returned. Gives the refused candidates.
pub(crate) async fn write(
    ctx: &Ctx<'_>,
    outcomes: Vec<Outcome>,
    cursor: Option<Cursor>,
) -> ApiResult<Vec<(String, ItemError)>> {
    let db = search::db(ctx.env).await?;
    let base = ctx.settings.retry_seconds;
    let mut groups: Vec<Group> = Vec::with_capacity(outcomes.len());
    // retries of unindexable candidates queue under the chain's own name (`<prefix>_errors`)
    let errors_queue = ctx.config.errors_queue();
    let chain_id = ctx.config.chain_id;
    // records leaving the index leave Algolia too (queued, see `search::flush_deletes`)
    let algolia = ctx.algolia.get()?.is_some();
    let clear_retry = |index: &str, id: &str| -> ApiResult<D1PreparedStatement> {
        db.prepare("DELETE FROM retries WHERE index_name = ?1 AND object_id = ?2")
            .bind_params(&[index.into(), id.into()])
    };
    let retry = |index: &str, id: &str, address: &str, token: Option<&str>, reason: &str| {
        // exponential backoff: base, 2×base, 4×base … capped at 2^11 × base
        db.prepare(
            "INSERT INTO retries (index_name, object_id, address, token_id, attempts, next_attempt_at, reason) \
             VALUES (?1, ?2, ?3, ?4, 1, ?5 + ?7, ?6) ON CONFLICT (index_name, object_id) DO UPDATE SET \
             attempts = attempts + 1, next_attempt_at = ?5 + (?7 << min(attempts, 11)), reason = ?6",
        )
        .bind_params(&[
            index.into(),
            id.into(),
            address.into(),
            token.into(),
            now().into(),
            reason.into(),
            base.into(),
        ])
    };
    // an unindexable candidate: recorded (and, when `leave_index`, taken out of the search index)
    let unindexable = |who: &Who,
                       error: &ItemError,
                       leave_index: bool|
     -> ApiResult<Vec<D1PreparedStatement>> {
        let object_id = who.object_id.as_str();
        let address = who.address.to_checksum(None);
        let token = who.token_id.map(|t| t.to_string());
        let mut statements = vec![
            db.prepare(
                "INSERT INTO unindexable (object_id, address, token_id, code, message, block, attempts, updated_at, \
                 chain_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8) ON CONFLICT (chain_id, object_id) DO UPDATE \
                 SET code = ?4, message = ?5, block = ?6, attempts = attempts + 1, updated_at = ?7",
            )
            .bind_params(&[
                object_id.into(),
                address.as_str().into(),
                token.as_deref().into(),
                error.code.as_str().into(),
                error.message.chars().take(MAX_TEXT).collect::<String>().into(),
                who.block.into(),
                now().into(),
                chain_id.into(),
            ])?,
        ];
        if leave_index {
            // a contract that stopped being indexable leaves the search index
            for index in [&ctx.profiles, &ctx.assets] {
                statements.extend(search::delete_statements(&db, index, object_id, algolia)?);
            }
        }
        statements.push(if error.retryable {
            retry(&errors_queue, object_id, &address, token.as_deref(), &error.code)?
        } else {
            clear_retry(&errors_queue, object_id)?
        });
        Ok(statements)
    };
    for outcome in outcomes {
        match outcome {
            Outcome::Skip | Outcome::NotIndexed { .. } => {}
            Outcome::Record {
                index,
                record,
                retry: reason,
                ..
            } => {
                let header = record.record.header();
                let id = header.object_id.clone();
                let address = header.address.clone();
                let token = record.record.token_id();
                let mut statements = search::upsert_statements(&db, &index, &record)?;
                statements.push(
                    db.prepare("DELETE FROM unindexable WHERE chain_id = ?1 AND object_id = ?2")
                        .bind_params(&[chain_id.into(), id.as_str().into()])?,
                );
                statements.push(clear_retry(&errors_queue, &id)?);
                // an address remembered as "no profile or asset" by the lookup route is one now
                statements.push(
                    db.prepare("DELETE FROM lookup_misses WHERE chain_id = ?1 AND address = ?2")
                        .bind_params(&[chain_id.into(), address.as_str().into()])?,
                );
                statements.push(match reason {
                    Some(r) => retry(&index, &id, &address, token.map(|t| t.to_string()).as_deref(), &r)?,
                    None => clear_retry(&index, &id)?,
                });
                let who = address.parse::<Address>().ok().map(|address| Who {
                    object_id: id,
                    address,
                    token_id: token,
                    block: record.record.stamp().indexed_block,
                });
                groups.push(Group {
                    statements,
                    record: who.map(|who| (index, record, who)),
                });
            }
            Outcome::Error {
                object_id,
                address,
                token_id,
                error,
                block,
            } => {
                let who = Who {
                    object_id,
                    address,
                    token_id,
                    block,
                };
                groups.push(Group {
                    statements: unindexable(&who, &error, true)?,
                    record: None,
                });
            }
        }
    }
    let cursor = cursor
        .map(|c| {
            db.prepare(
                "INSERT INTO checkpoints (chain_id, next_block, next_item, window, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (chain_id) DO UPDATE SET next_block = ?2, next_item = ?3, window = ?4, updated_at = ?5",
            )
            .bind_params(&[chain_id.into(), c.block.into(), c.item.into(), c.window.into(), now().into()])
        })
        .transpose()?;
    let all: Vec<D1PreparedStatement> = groups
        .iter()
        .flat_map(|g| g.statements.iter().cloned())
        .chain(cursor.clone())
        .collect();
    if all.is_empty() {
        return Ok(Vec::new());
    }
    let records = groups.iter().filter(|g| g.record.is_some()).count();
    ctx.budget.spend(1);
    ctx.budget.add_rows(u32::try_from(records).unwrap_or(u32::MAX));
    let failure = match db.batch(all).await {
        Ok(_) => {
            let pushed: Vec<(String, Stored)> = groups
                .into_iter()
                .filter_map(|g| g.record.map(|(index, record, ..)| (index, *record)))
                .collect();
            search::push(ctx.env, ctx.algolia, &pushed).await?;
            return Ok(Vec::new());
        }
        // nothing but bookkeeping: D1 itself is failing
        Err(e) if records == 0 => return Err(ApiError::internal(e)),
        Err(e) => e.to_string(),
    };
    worker::console_warn!(
        "indexer: D1 refused a batch of {records} records, writing them one by one: {failure}"
    );
    let mut pushed: Vec<(String, Stored)> = Vec::new();
    let mut refused: Vec<(String, ItemError)> = Vec::new();
    let mut rest: Vec<D1PreparedStatement> = Vec::new();
    for group in groups {
        let Some((index, record, who)) = group.record else {
            rest.extend(group.statements);
            continue;
        };
        // this write and the last batch must fit the run's budget
        let error = if ctx.budget.can_spend(2) {
            ctx.budget.spend(1);
            match db.batch(group.statements).await {
                Ok(_) => {
                    pushed.push((index, *record));
                    continue;
                }
                Err(e) => {
                    ItemError::retryable("STORE_REFUSED", format!("the database refused the record: {e}"))
                }
            }
        } else {
            ItemError::retryable(
                "STORE_REFUSED",
                format!(
                    "the database refused the record's batch ({failure}); no budget left to write it alone"
                ),
            )
        };
        rest.extend(unindexable(&who, &error, false)?);
        refused.push((who.object_id, error));
    }
    rest.extend(cursor);
    ctx.budget.spend(1);
    db.batch(rest).await.map_err(ApiError::internal)?;
    search::push(ctx.env, ctx.algolia, &pushed).await?;
    Ok(refused)
}

#[derive(Deserialize)]
struct CheckpointRow {
    next_block: u64,
    next_item: Option<u64>,
    window: Option<u64>,
}

/// The next block to process.
pub async fn checkpoint(env: &Env, chain_id: u64) -> ApiResult<Option<u64>> {
    Ok(cursor(env, chain_id).await?.map(|c| c.block))
}

/// The stored cursor.
pub(crate) async fn cursor(env: &Env, chain_id: u64) -> ApiResult<Option<Cursor>> {
    let db = search::db(env).await?;
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

#[derive(Deserialize)]
struct ErrorRow {
    code: String,
    message: Option<String>,
}

/// The recorded error of a candidate on a chain.
pub(crate) async fn recorded_error(
    env: &Env,
    chain_id: u64,
    object_id: &str,
) -> ApiResult<Option<(String, String)>> {
    let db = search::db(env).await?;
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
    let db = search::db(env).await?;
    let row: Option<Count> = db
        .prepare("SELECT COUNT(*) AS n FROM unindexable WHERE chain_id = ?1")
        .bind_params(&[chain_id.into()])?
        .row()
        .await?;
    Ok(row.map_or(0, |c| c.n))
}

#[derive(Deserialize)]
struct RetryRow {
    address: String,
    token_id: Option<String>,
}

/// This chain's retry queues: its two indexes and its errors.
fn retry_queues(ctx: &Ctx<'_>) -> [String; 3] {
    [
        ctx.profiles.clone(),
        ctx.assets.clone(),
        ctx.config.errors_queue(),
    ]
}

/// Up to `limit` candidates of this chain due for another try, soonest first (an address, and the token id of a
/// token).
pub(crate) async fn due_retries(ctx: &Ctx<'_>, limit: u32) -> ApiResult<Vec<(Address, Option<B256>)>> {
    let db = search::db(ctx.env).await?;
    let queues = retry_queues(ctx);
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

/// Takes candidates (by object id) out of this chain's retry queues.
pub(crate) async fn forget_retries(ctx: &Ctx<'_>, object_ids: &[String]) -> ApiResult<()> {
    if object_ids.is_empty() {
        return Ok(());
    }
    let db = search::db(ctx.env).await?;
    let queues = retry_queues(ctx);
    let statements = object_ids
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
        .collect::<Result<Vec<_>, _>>()?;
    ctx.budget.spend(1);
    db.batch(statements).await.map_err(ApiError::internal)?;
    Ok(())
}
