//! Writing of the indexer: one D1 batch per chunk holds the records (built by [`super::records`]; their statements
//! the store's), the retry and error bookkeeping and the cursor (the [`super::ledger`]'s) and the lookup misses
//! they end ([`crate::lookup::misses::forget`]), so what is written is consistent and a dead run loses only the
//! chunk in flight; then the records go to Algolia ([`crate::search::outbound`]). Candidates that misbehave go to
//! `unindexable`, never to the search index. What to write and when is [`super::run`]'s.

use alloy_primitives::{Address, B256};
use worker::{D1Database, D1PreparedStatement};

use super::{
    answers::ItemError,
    ctx::Ctx,
    discovery::{Capped, Item, MAX_ITEMS_PER_EMITTER},
    ledger::{self, Cursor, Retry, Unindexable},
    records::{Graph, Outcome},
};
use crate::{
    error::{ApiError, ApiResult},
    lookup::misses,
    search::{
        outbound,
        store::{
            self, Stored,
            graph::{self, Recheck},
        },
    },
};

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
    let db = store::db(ctx.env).await?;
    ctx.budget.spend(1);
    let object_id = format!("block:{block}:{event}");
    let message = format!("the block's {event} logs exceed what one eth_getLogs answer may carry; skipped");
    let statement = ledger::unindexable(
        &db,
        ctx.config.chain_id,
        &Unindexable {
            object_id: &object_id,
            address: Address::ZERO,
            token_id: None,
            code: "LOGS_TOO_LARGE",
            message: &message,
            block,
        },
    )?;
    db.batch(vec![statement]).await.map_err(ApiError::internal)?;
    Ok(())
}

/// The statements that take a candidate out of this chain's search index (both indexes), its deletion from the
/// Algolia index queued first when Algolia is configured (`algolia`; sent by the run's
/// [`outbound::flush_deletes`]).
pub(super) fn leave_index(
    ctx: &Ctx<'_>,
    db: &D1Database,
    object_id: &str,
    algolia: bool,
) -> ApiResult<Vec<D1PreparedStatement>> {
    let mut statements = Vec::with_capacity(12);
    for index in [&ctx.profiles, &ctx.assets] {
        if algolia {
            statements.push(outbound::queue_delete(db, index, object_id)?);
        }
        statements.extend(store::delete_statements(db, index, object_id)?);
    }
    // and the graph's rows of it (an object id is `<address>` or `<address>:<token id>`)
    let (address, token) = object_id
        .split_once(':')
        .map_or((object_id, None), |(a, t)| (a, Some(t)));
    if let Ok(address) = address.parse::<Address>() {
        let token = token.and_then(|t| t.parse::<B256>().ok());
        statements.extend(graph::forget(db, ctx.config.chain_id, &address, token.as_ref())?);
    }
    Ok(statements)
}

/// The statements of a read's graph: its facts (read because of an event in `block`), then its notes recorded in
/// `unindexable` (not retried: the next event re-reads) or forgotten.
fn graph_statements(
    ctx: &Ctx<'_>,
    db: &D1Database,
    block: u64,
    graph: &Graph,
) -> ApiResult<Vec<D1PreparedStatement>> {
    let chain_id = ctx.config.chain_id;
    let mut statements = Vec::with_capacity(graph.facts.len() * 2 + graph.notes.len());
    for fact in &graph.facts {
        statements.extend(graph::statements(db, chain_id, block, fact)?);
    }
    for note in &graph.notes {
        statements.push(match &note.problem {
            Some((code, message)) => ledger::unindexable(
                db,
                chain_id,
                &Unindexable {
                    object_id: &note.object_id,
                    address: note.address,
                    token_id: None,
                    code,
                    message,
                    block,
                },
            )?,
            None => ledger::clear_unindexable(db, chain_id, &note.object_id)?,
        });
    }
    Ok(statements)
}

/// Records the emitters whose balances and tokens passed the per-block cap (`CANDIDATES_CAPPED` in
/// `unindexable`, one row per emitter: `<emitter>:candidates`, its latest block).
pub(crate) async fn capped(ctx: &Ctx<'_>, capped: &[Capped]) -> ApiResult<()> {
    let db = store::db(ctx.env).await?;
    let statements = capped
        .iter()
        .map(|c| {
            let object_id = format!("{}:candidates", c.emitter.to_checksum(None));
            let message = format!(
                "block {}: the contract's logs named {} more balances and tokens than the {MAX_ITEMS_PER_EMITTER} read                  per block; those were left out",
                c.block, c.left_out
            );
            ledger::unindexable(
                &db,
                ctx.config.chain_id,
                &Unindexable {
                    object_id: &object_id,
                    address: c.emitter,
                    token_id: None,
                    code: "CANDIDATES_CAPPED",
                    message: &message,
                    block: c.block,
                },
            )
        })
        .collect::<ApiResult<Vec<_>>>()?;
    ctx.budget.spend(1);
    db.batch(statements).await.map_err(ApiError::internal)?;
    Ok(())
}

/// Up to `limit` of this chain's graph pairs a reorganization left to read again.
pub(crate) async fn due_rechecks(ctx: &Ctx<'_>, limit: u32) -> ApiResult<Vec<Recheck>> {
    let db = store::db(ctx.env).await?;
    ctx.budget.spend(1);
    graph::rechecks(&db, ctx.config.chain_id, limit).await
}

/// The item that reads a re-check's pair again.
pub(crate) const fn recheck_item(recheck: Recheck) -> Item {
    match recheck {
        Recheck::Hold(asset, holder) => Item::Holding(asset, holder),
        Recheck::Token(asset, token) => Item::Token(asset, token),
        Recheck::Follow(follower, followee) => Item::Follow(follower, followee),
    }
}

/// Takes re-checks done (their pairs written) out of the queue.
pub(crate) async fn rechecked(ctx: &Ctx<'_>, done: &[Recheck]) -> ApiResult<()> {
    if done.is_empty() {
        return Ok(());
    }
    let db = store::db(ctx.env).await?;
    let statements = graph::rechecked(&db, ctx.config.chain_id, done)?;
    ctx.budget.spend(1);
    db.batch(statements).await.map_err(ApiError::internal)?;
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
    let db = store::db(ctx.env).await?;
    let base = ctx.settings.retry_seconds;
    let mut groups: Vec<Group> = Vec::with_capacity(outcomes.len());
    // retries of unindexable candidates queue under the chain's own name (`<prefix>_errors`)
    let errors_queue = ctx.config.errors_queue();
    let chain_id = ctx.config.chain_id;
    // records leaving the index leave Algolia too (queued, see `outbound::flush_deletes`)
    let algolia = ctx.algolia.get()?.is_some();
    // an unindexable candidate: recorded (and, when `leave_index`, taken out of the search index)
    let unindexable = |who: &Who, error: &ItemError, leave: bool| -> ApiResult<Vec<D1PreparedStatement>> {
        let object_id = who.object_id.as_str();
        let mut statements = vec![ledger::unindexable(
            &db,
            chain_id,
            &Unindexable {
                object_id,
                address: who.address,
                token_id: who.token_id,
                code: &error.code,
                message: &error.message,
                block: who.block,
            },
        )?];
        if leave {
            // a contract that stopped being indexable leaves the search index
            statements.extend(leave_index(ctx, &db, object_id, algolia)?);
        }
        statements.push(if error.retryable {
            let address = who.address.to_checksum(None);
            let token = who.token_id.map(|t| t.to_string());
            let retry = Retry {
                queue: &errors_queue,
                object_id,
                address: &address,
                token_id: token.as_deref(),
                reason: &error.code,
            };
            ledger::retry(&db, retry, base)?
        } else {
            ledger::clear_retry(&db, &errors_queue, object_id)?
        });
        Ok(statements)
    };
    let mut facts: u32 = 0;
    for outcome in outcomes {
        match outcome {
            Outcome::Skip | Outcome::NotIndexed { .. } => {}
            Outcome::Graph { graph, block } | Outcome::Gone { graph, block } => {
                facts = facts.saturating_add(u32::try_from(graph.facts.len()).unwrap_or(u32::MAX));
                groups.push(Group {
                    statements: graph_statements(ctx, &db, block, &graph)?,
                    record: None,
                });
            }
            Outcome::Record {
                index,
                record,
                retry: reason,
                graph,
                ..
            } => {
                let header = record.record.header();
                let id = header.object_id.clone();
                let address = header.address.clone();
                let token = record.record.token_id();
                // written again: a queued Algolia deletion of it would remove what is pushed next
                let mut statements = vec![outbound::unqueue_delete(&db, &index, &id)?];
                statements.extend(store::upsert_statements(&db, &index, &record)?);
                statements.push(ledger::clear_unindexable(&db, chain_id, &id)?);
                statements.push(ledger::clear_retry(&db, &errors_queue, &id)?);
                // an address remembered as "no profile or asset" by the lookup route is one now
                statements.push(misses::forget(&db, chain_id, &address)?);
                statements.push(match reason {
                    Some(r) => {
                        let token = token.map(|t| t.to_string());
                        let retry = Retry {
                            queue: &index,
                            object_id: &id,
                            address: &address,
                            token_id: token.as_deref(),
                            reason: &r,
                        };
                        ledger::retry(&db, retry, base)?
                    }
                    None => ledger::clear_retry(&db, &index, &id)?,
                });
                facts = facts.saturating_add(u32::try_from(graph.facts.len()).unwrap_or(u32::MAX));
                statements.extend(graph_statements(
                    ctx,
                    &db,
                    record.record.stamp().indexed_block,
                    &graph,
                )?);
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
        .map(|c| ledger::save_cursor(&db, chain_id, c))
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
    ctx.budget
        .add_rows(u32::try_from(records).unwrap_or(u32::MAX).saturating_add(facts));
    let failure = match db.batch(all).await {
        Ok(_) => {
            let pushed: Vec<(String, Stored)> = groups
                .into_iter()
                .filter_map(|g| g.record.map(|(index, record, ..)| (index, *record)))
                .collect();
            outbound::push(ctx.env, ctx.algolia, &pushed).await?;
            return Ok(Vec::new());
        }
        // nothing but bookkeeping and graph facts: D1 itself is failing
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
    outbound::push(ctx.env, ctx.algolia, &pushed).await?;
    Ok(refused)
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
    let db = store::db(ctx.env).await?;
    ledger::due_retries(&db, &retry_queues(ctx), limit).await
}

/// Takes candidates (by object id) out of this chain's retry queues.
pub(crate) async fn forget_retries(ctx: &Ctx<'_>, object_ids: &[String]) -> ApiResult<()> {
    if object_ids.is_empty() {
        return Ok(());
    }
    let db = store::db(ctx.env).await?;
    let statements = ledger::forget_retries(&db, &retry_queues(ctx), object_ids)?;
    ctx.budget.spend(1);
    db.batch(statements).await.map_err(ApiError::internal)?;
    Ok(())
}
