//! One run of the indexer, and the on-demand indexing of one address or token: due retries, then the chain
//! followed window by window from the cursor ([`super::discovery`]), each chunk of candidates read and built into
//! records ([`super::records`]) with bounded parallelism, then written with the cursor ([`super::writer`], the
//! cursor and the bookkeeping in [`super::ledger`]).

use std::collections::BTreeSet;

use alloy_primitives::{Address, B256};
use futures_util::{StreamExt, stream};
use profile_relayer::api::{admin::RunStats, records::Refusal};
use worker::Env;

use super::{
    answers::{self, Kind},
    ctx::{Budget, Ctx, now_ms},
    discovery::{self, Item, Window},
    ledger::{self, Cursor},
    records::{self, Outcome, object_id},
    relations, reorg, writer,
};
use crate::{
    config::{ChainConfig, Config, IndexerConfig},
    error::{ApiError, ApiResult, Code},
    search::outbound,
};

/// What reading an address on demand found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Indexed {
    /// A profile or asset, indexed now.
    Lsp(Kind),
    /// Neither a profile nor an asset (`contract`: the address has code). Nothing is written.
    Nothing { contract: bool },
    /// A contract that misbehaved when read, and how. Nothing is written.
    Refused(Refusal),
}

/// What reading one token on demand found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenIndexed {
    /// The token exists and is indexed now.
    Indexed,
    /// The collection has no such token (`tokenOwnerOf` reverts). Nothing is written.
    Missing,
    /// The token's data misbehaved when read, and how. Nothing is written.
    Refused(Refusal),
}

/// A contract's misbehaviour as an answer; a failure that may pass (timeout, node error) is an error instead, so
/// that it is neither answered nor remembered as the contract's doing.
fn refusal(error: &answers::ItemError) -> ApiResult<Refusal> {
    if error.retryable {
        return Err(ApiError::new(
            Code::RpcError,
            format!("reading the contract failed ({}): {}", error.code, error.message),
        ));
    }
    Ok(Refusal {
        code: error.code.clone(),
        message: error.message.clone(),
    })
}

/// Reads the address from chain and indexes it now (the lookup route's read-through). A contract that misbehaves
/// is [`Indexed::Refused`] (nothing is written then).
pub async fn index_now(
    env: &Env,
    config: &Config,
    chain: &ChainConfig,
    address: Address,
) -> ApiResult<Indexed> {
    let ctx = Ctx::new(env, config, chain, Budget::unlimited())?;
    let head = ctx.rpc.block_number().await?;
    let outcome = records::process_address(&ctx, address, head).await?;
    let kind = outcome.kind();
    match &outcome {
        Outcome::Error { error, .. } => return Ok(Indexed::Refused(refusal(error)?)),
        Outcome::NotIndexed { contract } => return Ok(Indexed::Nothing { contract: *contract }),
        _ => {}
    }
    if let Some((_, error)) = writer::write(&ctx, vec![outcome], None).await?.into_iter().next() {
        return Ok(Indexed::Refused(Refusal {
            code: error.code,
            message: error.message,
        }));
    }
    Ok(kind.map_or(Indexed::Nothing { contract: true }, Indexed::Lsp))
}

/// Indexes one existing token now (read-through of the token route).
pub async fn index_token_now(
    env: &Env,
    config: &Config,
    chain: &ChainConfig,
    address: Address,
    token_id: B256,
) -> ApiResult<TokenIndexed> {
    let ctx = Ctx::new(env, config, chain, Budget::unlimited())?;
    let head = ctx.rpc.block_number().await?;
    match records::process_token(&ctx, address, token_id, head).await? {
        Outcome::Skip | Outcome::Gone { .. } => Ok(TokenIndexed::Missing),
        Outcome::Error { error, .. } => Ok(TokenIndexed::Refused(refusal(&error)?)),
        outcome => match writer::write(&ctx, vec![outcome], None).await?.into_iter().next() {
            Some((_, error)) => Ok(TokenIndexed::Refused(Refusal {
                code: error.code,
                message: error.message,
            })),
            None => Ok(TokenIndexed::Indexed),
        },
    }
}

/// The recorded error of an address or token on a chain (`unindexable`).
pub async fn recorded_error(env: &Env, chain_id: u64, object_id: &str) -> ApiResult<Option<Refusal>> {
    Ok(ledger::recorded_error(env, chain_id, object_id)
        .await?
        .map(|(code, message)| Refusal { code, message }))
}

/// Number of recorded unindexable candidates of a chain.
pub async fn error_count(env: &Env, chain_id: u64) -> ApiResult<u64> {
    ledger::error_count(env, chain_id).await
}

/// The invocation's budget (`INDEXER_MAX_SECONDS`, `INDEXER_MAX_SUBREQUESTS`), shared by the chains it indexes.
fn invocation_budget(settings: &IndexerConfig) -> (u64, u32) {
    (
        now_ms().saturating_add(settings.max_seconds.saturating_mul(1000)),
        settings.max_subrequests,
    )
}

/// One indexer run of one chain with the whole invocation budget: due retries, then block windows until the
/// head or the budget.
pub async fn run(env: &Env, config: &Config, chain: &ChainConfig) -> ApiResult<RunStats> {
    let settings = config.indexer.get()?;
    let (deadline, subrequests) = invocation_budget(settings);
    let stats = run_with(
        env,
        config,
        chain,
        Budget::share(settings, deadline, subrequests, 1)?,
    )
    .await?;
    crate::analytics::record(&crate::analytics::Point::indexer(&stats));
    Ok(stats)
}

async fn run_with(env: &Env, config: &Config, chain: &ChainConfig, budget: Budget) -> ApiResult<RunStats> {
    let ctx = Ctx::new(env, config, chain, budget)?;
    ctx.budget.spend(1);
    let head = ctx.rpc.block_number().await?;
    let mut stats = RunStats {
        chain_id: chain.chain_id,
        head_block: head,
        ..RunStats::default()
    };
    // a dropped checkpoint block first: the cursor goes back and the records past it are queued for the retries
    reorg::check(&ctx, head).await?;
    retries(&ctx, head, &mut stats).await?;
    // records that left the D1 index leave Algolia: queued deletions, bounded, never failing the run;
    // before the windows, which may spend the whole budget
    // (2 D1 requests, one Algolia request per index: 4 subrequests)
    if matches!(ctx.algolia.get(), Ok(Some(_))) && ctx.budget.can_spend(4) {
        ctx.budget.spend(4);
        outbound::flush_deletes(
            env,
            ctx.algolia,
            [&ctx.profiles, &ctx.assets],
            outbound::MAX_DELETES_PER_RUN,
            ctx.settings.retry_seconds,
        )
        .await;
    }
    let result = follow(&ctx, head, &mut stats).await;
    stats.subrequests = ctx.budget.subrequests.get();
    result.map(|()| stats)
}

/// Due retries (failed metadata fetches, calls that failed): at most a quarter of the run's subrequests.
async fn retries(ctx: &Ctx<'_>, head: u64, stats: &mut RunStats) -> ApiResult<()> {
    // an item costs up to 5 subrequests (two read batches, a fetch, a redirect, its own write should D1 refuse
    // the batch): a quarter of what is left, in items
    let limit = (ctx.budget.left() / 4 / 5).min(50);
    let mut items: Vec<(u64, Item)> = writer::due_retries(ctx, limit)
        .await?
        .into_iter()
        .map(|(address, token)| {
            (
                head,
                token.map_or(Item::Address(address), |t| Item::Token(address, t)),
            )
        })
        .collect();
    // the graph's pairs a reorganization left to read again (many per subrequest), then
    let rechecks = writer::due_rechecks(ctx, limit.saturating_mul(4)).await?;
    items.extend(rechecks.iter().map(|r| (head, writer::recheck_item(*r))));
    stats.retried += items.len() as u64;
    let outcomes = process_all(ctx, &items).await?;
    // a retried candidate that turned out to be nothing (burned token, code gone, reorganized away) leaves the
    // retry queue and the index
    let gone: Vec<String> = items
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| {
            matches!(
                o,
                Outcome::Skip | Outcome::NotIndexed { .. } | Outcome::Gone { .. }
            )
        })
        .filter_map(|((_, item), _)| match item {
            Item::Address(a) => Some(object_id(*a, None)),
            Item::Token(a, t) => Some(object_id(*a, Some(*t))),
            Item::Holding(..) | Item::Follow(..) => None,
        })
        .collect();
    writer::forget_retries(ctx, &gone).await?;
    reorg::forget_records(ctx, &gone).await?;
    count(stats, &outcomes);
    let refused = writer::write(ctx, outcomes, None).await?;
    count_refused(stats, &refused);
    writer::rechecked(ctx, &rechecks).await?;
    Ok(())
}

/// Processes one item; a failed read is told apart: a dead node stops the run (`Err`), a node that answers means
/// the candidate itself is at fault (its calls time out): it is recorded and retried later.
async fn process(ctx: &Ctx<'_>, item: Item, block: u64) -> ApiResult<Outcome> {
    let result = match item {
        Item::Address(a) => records::process_address(ctx, a, block).await,
        Item::Token(a, t) => records::process_token(ctx, a, t, block).await,
        // read in batches by `process_all`
        Item::Holding(..) | Item::Follow(..) => return Ok(Outcome::Skip),
    };
    match result {
        Ok(o) => Ok(o),
        Err(e) => {
            ctx.budget.spend(1);
            ctx.rpc.block_number().await?;
            let (address, token) = match item {
                Item::Address(a) | Item::Holding(a, _) | Item::Follow(a, _) => (a, None),
                Item::Token(a, t) => (a, Some(t)),
            };
            Ok(Outcome::failed(address, token, block, &e))
        }
    }
}

/// Processes items (each with the block it was seen in) with bounded parallelism (`INDEXER_CONCURRENCY`),
/// addresses before tokens, then the pairs in batches ([`relations`]). The outcomes come back in item order (so
/// an asset's row is written before its holds).
async fn process_all(ctx: &Ctx<'_>, items: &[(u64, Item)]) -> ApiResult<Vec<Outcome>> {
    let mut slots: Vec<Option<Outcome>> = items.iter().map(|_| None).collect();
    for tokens in [false, true] {
        let jobs = items
            .iter()
            .enumerate()
            .filter(|(_, (_, i))| !i.is_pair() && matches!(i, Item::Token(..)) == tokens)
            .map(|(n, (block, item))| async move { (n, process(ctx, *item, *block).await) });
        let mut done = stream::iter(jobs).buffer_unordered(ctx.concurrency);
        while let Some((n, outcome)) = done.next().await {
            if let Some(slot) = slots.get_mut(n) {
                *slot = Some(outcome?);
            }
        }
    }
    let (at, pairs): (Vec<usize>, Vec<(u64, Item)>) = items
        .iter()
        .enumerate()
        .filter(|(_, (_, i))| i.is_pair())
        .map(|(n, item)| (n, *item))
        .unzip();
    for (n, outcome) in at.into_iter().zip(relations::process_pairs(ctx, &pairs).await?) {
        if let Some(slot) = slots.get_mut(n) {
            *slot = Some(outcome);
        }
    }
    Ok(slots.into_iter().map(|o| o.unwrap_or(Outcome::Skip)).collect())
}

/// Follows the chain from the cursor to `head - confirmations`, window by window, chunk by chunk, until
/// the head or the budget.
async fn follow(ctx: &Ctx<'_>, head: u64, stats: &mut RunStats) -> ApiResult<()> {
    let env = ctx.env;
    // per chain (`CHAINS`, default `INDEXER_CONFIRMATIONS` / `INDEXER_MAX_BLOCKS` / `INDEXER_START_BLOCK`)
    let confirmations = ctx.config.confirmations;
    let first_window = ctx.config.max_blocks.max(1);
    let max_window = ctx.settings.max_window.max(first_window);
    let target_logs = ctx.settings.target_logs.max(1);
    let start = ctx.config.start_block;
    let mut cursor = ledger::cursor(env, ctx.config.chain_id).await?.unwrap_or(Cursor {
        block: start,
        item: 0,
        window: first_window,
    });
    if cursor.window == 0 {
        cursor.window = first_window;
    }
    cursor.window = cursor.window.min(max_window);
    let safe_head = head.saturating_sub(confirmations);
    stats.from_block = cursor.block;
    stats.to_block = cursor.block.saturating_sub(1);
    stats.window = cursor.window;
    while cursor.block <= safe_head {
        if let Some(why) = ctx.budget.exhausted(4) {
            stats.stopped = Some(why.to_owned());
            break;
        }
        let from = cursor.block;
        let to = safe_head.min(from.saturating_add(cursor.window - 1));
        // the window's last block's hash, read before its logs: remembered once the window is complete, so a
        // later run sees the chain drop it (`reorg`)
        let to_hash = reorg::hash_of(ctx, to).await?;
        let Window {
            blocks,
            next_window,
            skipped,
            capped,
        } = match discovery::read_window(ctx, from, to, cursor.window, target_logs, max_window).await? {
            Some(window) => window,
            None => {
                // too large to read at once: a quarter of the window
                cursor.window = (cursor.window / 4).max(1);
                stats.window = cursor.window;
                continue;
            }
        };
        for event in skipped {
            writer::skipped_logs(ctx, from, event).await?;
            stats.errors += 1;
        }
        if !capped.is_empty() {
            stats.errors += capped.len() as u64;
            writer::capped(ctx, &capped).await?;
        }
        stats.windows += 1;
        // the window's items in order, from the cursor on
        let mut queue: Vec<(u64, u64, Item)> = Vec::new();
        for (block, items) in &blocks {
            for (i, item) in items.iter().enumerate() {
                let i = i as u64;
                if *block > from || i >= cursor.item {
                    queue.push((*block, i, *item));
                }
            }
        }
        let mut seen: BTreeSet<Item> = BTreeSet::new();
        let mut stopped = false;
        let mut rest = queue.as_slice();
        while !rest.is_empty() {
            // a chunk costs at most ~5 subrequests per item (a batch, a legacy batch, a fetch, a redirect, and its
            // own write should D1 refuse the chunk's batch)
            let fits = (ctx.budget.left() / 5).saturating_sub(2) as usize;
            if let Some(why) = ctx.budget.exhausted(6).or((fits == 0).then_some("subrequests")) {
                stats.stopped = Some(why.to_owned());
                stopped = true;
                break;
            }
            let (chunk, tail) = rest.split_at(rest.len().min(fits).min(ctx.concurrency * 4));
            rest = tail;
            // an item already done in this window needs no second read
            let todo: Vec<(u64, Item)> = chunk
                .iter()
                .filter(|(_, _, item)| seen.insert(*item))
                .map(|(b, _, item)| (*b, *item))
                .collect();
            let outcomes = process_all(ctx, &todo).await?;
            count(stats, &outcomes);
            let next = match rest.first() {
                Some((block, i, _)) => Cursor {
                    block: *block,
                    item: *i,
                    window: cursor.window,
                },
                None => Cursor {
                    block: to + 1,
                    item: 0,
                    window: next_window,
                },
            };
            let refused = writer::write(ctx, outcomes, Some(next)).await?;
            count_refused(stats, &refused);
            stats.to_block = next.block.saturating_sub(1);
            cursor = next;
        }
        if stopped {
            break;
        }
        if cursor.block <= to {
            // no items left in the window (or none at all): the window is complete
            cursor = Cursor {
                block: to + 1,
                item: 0,
                window: next_window,
            };
            writer::write(ctx, Vec::new(), Some(cursor)).await?;
        }
        stats.to_block = to;
        stats.window = cursor.window;
        if let Some(hash) = to_hash {
            reorg::remember(ctx, to, hash).await?;
        }
    }
    Ok(())
}

/// Moves candidates D1 refused from the indexed to the error count.
fn count_refused(stats: &mut RunStats, refused: &[(String, answers::ItemError)]) {
    let n = refused.len() as u64;
    stats.indexed = stats.indexed.saturating_sub(n);
    stats.errors += n;
}

/// Adds outcomes to the run's counters.
fn count(stats: &mut RunStats, outcomes: &[Outcome]) {
    for o in outcomes {
        match o {
            Outcome::Record { .. } => stats.indexed += 1,
            Outcome::Error { .. } => stats.errors += 1,
            Outcome::Graph { .. } | Outcome::Gone { .. } | Outcome::Skip | Outcome::NotIndexed { .. } => {}
        }
    }
}
