//! Finding candidates: `eth_getLogs` over adaptive windows. A window grows (×2) while it holds few logs, shrinks
//! when it holds many, and is cut to a quarter when the provider refuses it ("too many results", "block range too
//! large"); the size is kept with the cursor for the next run. An answer's size counts like its number of logs: a
//! window whose logs carry more than [`TARGET_ANSWER_BYTES`] (a contract can emit `DataChanged` logs of
//! megabytes) halves too, and grows only while its answer is small. Candidates are numbered per block (first
//! occurrence within the block, in log order), which is what the cursor's item count refers to.

use std::collections::{BTreeMap, BTreeSet};

use alloy_primitives::{Address, B256, U256};
use futures_util::{StreamExt, stream};
use profile_relayer::{erc725y, lsp7, lsp8, lsp23};
use serde::Deserialize;
use serde_json::json;

use super::{
    Ctx, RunStats,
    writer::{self, Cursor, Outcome},
};
use crate::{error::ApiResult, rpc::RpcError};

/// One thing to index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Item {
    /// A profile or asset candidate.
    Address(Address),
    /// An LSP8 token id.
    Token(Address, B256),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Log {
    address: Address,
    topics: Vec<B256>,
    block_number: U256,
    log_index: Option<U256>,
    /// The log's data (hex), only measured.
    #[serde(default)]
    data: String,
}

/// The answer size above which the next window halves (and below a quarter of which it may grow).
const TARGET_ANSWER_BYTES: usize = 1024 * 1024;
/// What one log takes in an `eth_getLogs` answer besides its data and topics (field names, hashes, numbers).
const LOG_OVERHEAD_BYTES: usize = 400;

/// About the size of the `eth_getLogs` answer that held `logs`, in bytes.
fn answer_bytes(logs: &[Log]) -> usize {
    logs.iter()
        .map(|l| l.data.len() + l.topics.len() * 69 + LOG_OVERHEAD_BYTES)
        .sum()
}

/// The window after one of `window` blocks (`full`: the whole window was read, not cut by the head) that held
/// `logs` logs in `bytes` bytes: doubled while both are small, halved when either is large.
fn next_window(
    window: u64,
    full: bool,
    logs: usize,
    bytes: usize,
    target_logs: usize,
    max_window: u64,
) -> u64 {
    if logs > target_logs.saturating_mul(2) || bytes > TARGET_ANSWER_BYTES {
        (window / 2).max(1)
    } else if logs < target_logs / 4 && bytes < TARGET_ANSWER_BYTES / 4 && full {
        window.saturating_mul(2).min(max_window)
    } else {
        window
    }
}

/// The candidates of each block, in order, without duplicates within a block.
fn candidates(mut logs: Vec<Log>) -> BTreeMap<u64, Vec<Item>> {
    let deployed = lsp23::DEPLOYED_PROXIES_TOPIC;
    let lsp8_transfer = lsp8::TRANSFER_TOPIC;
    logs.sort_by_key(|l| (l.block_number, l.log_index.unwrap_or(U256::MAX)));
    let mut blocks: BTreeMap<u64, Vec<Item>> = BTreeMap::new();
    for log in logs {
        let Ok(block) = u64::try_from(log.block_number) else {
            continue;
        };
        let mut items = Vec::new();
        match log.topics.first() {
            Some(t0) if *t0 == deployed => {
                if let Some(up) = log.topics.get(1) {
                    items.push(Item::Address(Address::from_word(*up)));
                }
            }
            Some(t0) if *t0 == lsp8_transfer => {
                items.push(Item::Address(log.address));
                if let (4, Some(token)) = (log.topics.len(), log.topics.get(3)) {
                    items.push(Item::Token(log.address, *token));
                }
            }
            Some(_) => items.push(Item::Address(log.address)),
            None => {}
        }
        let list = blocks.entry(block).or_default();
        for item in items {
            if !list.contains(&item) {
                list.push(item);
            }
        }
    }
    blocks
}

/// Whether a `eth_getLogs` error means "ask for less".
fn too_large(e: &RpcError) -> bool {
    let RpcError::Node { code, message, .. } = e else {
        // an answer over RPC_MAX_RESPONSE_BYTES: a smaller window answers less
        return matches!(e, RpcError::TooLarge(_));
    };
    let m = message.to_ascii_lowercase();
    *code == -32005
        || [
            "too many",
            "more than",
            "limit",
            "exceed",
            "range",
            "too large",
            "response size",
        ]
        .iter()
        .any(|w| m.contains(w))
}

/// The events that make candidates (the first topic of a log), with the names a skipped block is recorded under.
const TOPICS: [(&str, B256); 4] = [
    ("DeployedERC1167Proxies", lsp23::DEPLOYED_PROXIES_TOPIC),
    ("DataChanged", erc725y::DATA_CHANGED_TOPIC),
    ("LSP7Transfer", lsp7::TRANSFER_TOPIC),
    ("LSP8Transfer", lsp8::TRANSFER_TOPIC),
];

async fn get_logs(ctx: &Ctx<'_>, from: u64, to: u64) -> Result<Vec<Log>, RpcError> {
    get_logs_of(ctx, from, to, &TOPICS.map(|(_, topic)| topic)).await
}

async fn get_logs_of(ctx: &Ctx<'_>, from: u64, to: u64, topics: &[B256]) -> Result<Vec<Log>, RpcError> {
    ctx.budget.spend(1);
    ctx.rpc
        .call(
            "eth_getLogs",
            json!([{ "fromBlock": format!("0x{from:x}"), "toBlock": format!("0x{to:x}"), "topics": [topics] }]),
        )
        .await
}

/// The logs of one block too large to read at once (one full block of `DataChanged` logs is cheap on LUKSO): read
/// event by event; an event whose logs alone are still too large is skipped in this block and recorded in
/// `unindexable` (`LOGS_TOO_LARGE`, object `block:<n>:<event>`), so one block can never hold the cursor.
async fn one_block(ctx: &Ctx<'_>, block: u64, stats: &mut RunStats) -> ApiResult<Vec<Log>> {
    let mut logs = Vec::new();
    for (name, topic) in TOPICS {
        match get_logs_of(ctx, block, block, &[topic]).await {
            Ok(found) => logs.extend(found),
            Err(e) if too_large(&e) => {
                worker::console_error!(
                    "chain {}: {name} logs of block {block} too large to read ({e:?}); skipped",
                    ctx.config.chain_id
                );
                writer::skipped_logs(ctx, block, name).await?;
                stats.errors += 1;
            }
            Err(e) => return Err(e.into()),
        }
    }
    // in log order, as one answer would have had them
    logs.sort_by_key(|l| l.log_index);
    Ok(logs)
}

/// Processes one item; a failed read is told apart: a dead node stops the run (`Err`), a node that answers means
/// the candidate itself is at fault (its calls time out): it is recorded and retried later.
async fn process(ctx: &Ctx<'_>, item: Item, block: u64) -> ApiResult<Outcome> {
    let result = match item {
        Item::Address(a) => writer::process_address(ctx, a, block).await,
        Item::Token(a, t) => writer::process_token(ctx, a, t, block).await,
    };
    match result {
        Ok(o) => Ok(o),
        Err(e) => {
            ctx.budget.spend(1);
            ctx.rpc.block_number().await?;
            let (address, token) = match item {
                Item::Address(a) => (a, None),
                Item::Token(a, t) => (a, Some(t)),
            };
            Ok(Outcome::failed(address, token, block, &e))
        }
    }
}

/// Processes items (each with the block it was seen in) with bounded parallelism (`INDEXER_CONCURRENCY`),
/// addresses before tokens. The outcomes come back in item order.
pub(crate) async fn process_all(ctx: &Ctx<'_>, items: &[(u64, Item)]) -> ApiResult<Vec<Outcome>> {
    let mut slots: Vec<Option<Outcome>> = items.iter().map(|_| None).collect();
    for tokens in [false, true] {
        let jobs = items
            .iter()
            .enumerate()
            .filter(|(_, (_, i))| matches!(i, Item::Token(..)) == tokens)
            .map(|(n, (block, item))| async move { (n, process(ctx, *item, *block).await) });
        let mut done = stream::iter(jobs).buffer_unordered(ctx.concurrency);
        while let Some((n, outcome)) = done.next().await {
            if let Some(slot) = slots.get_mut(n) {
                *slot = Some(outcome?);
            }
        }
    }
    Ok(slots.into_iter().map(|o| o.unwrap_or(Outcome::Skip)).collect())
}

/// Follows the chain from the cursor to `head - confirmations`, window by window, chunk by chunk, until
/// the head or the budget.
pub(crate) async fn follow(ctx: &Ctx<'_>, head: u64, stats: &mut RunStats) -> ApiResult<()> {
    let env = ctx.env;
    // per chain (`CHAINS`, default `INDEXER_CONFIRMATIONS` / `INDEXER_MAX_BLOCKS` / `INDEXER_START_BLOCK`)
    let confirmations = ctx.config.confirmations;
    let first_window = ctx.config.max_blocks.max(1);
    let max_window = ctx.settings.max_window.max(first_window);
    let target_logs = ctx.settings.target_logs.max(1);
    let start = ctx.config.start_block;
    let mut cursor = writer::cursor(env, ctx.config.chain_id).await?.unwrap_or(Cursor {
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
        if let Some(why) = ctx.budget.exhausted(2) {
            stats.stopped = Some(why.to_owned());
            break;
        }
        let from = cursor.block;
        let to = safe_head.min(from.saturating_add(cursor.window - 1));
        let logs = match get_logs(ctx, from, to).await {
            Ok(logs) => logs,
            Err(e) if too_large(&e) && cursor.window > 1 => {
                cursor.window = (cursor.window / 4).max(1);
                stats.window = cursor.window;
                continue;
            }
            Err(e) if too_large(&e) => one_block(ctx, from, stats).await?,
            Err(e) => return Err(e.into()),
        };
        stats.windows += 1;
        // what the next window will be: grow while small, shrink when large (in logs or in bytes)
        let next_window = next_window(
            cursor.window,
            to - from + 1 == cursor.window,
            logs.len(),
            answer_bytes(&logs),
            target_logs,
            max_window,
        );
        let blocks = candidates(logs);
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
            writer::count(stats, &outcomes);
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
            writer::count_refused(stats, &refused);
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
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_the_count_and_the_size_of_answers() {
        let next = |logs, bytes| next_window(1000, true, logs, bytes, 500, 200_000);
        assert_eq!(next(10, 10_000), 2000);
        assert_eq!(next(300, 10_000), 1000);
        assert_eq!(next(1001, 10_000), 500);
        // few logs, but megabytes of them: shrinks like many logs do, never grows
        assert_eq!(next(3, TARGET_ANSWER_BYTES + 1), 500);
        assert_eq!(next(3, TARGET_ANSWER_BYTES / 2), 1000);
        assert_eq!(next_window(1, true, 3, 50_000_000, 500, 200_000), 1);
        // a window cut by the head does not grow
        assert_eq!(next_window(1000, false, 0, 0, 500, 200_000), 1000);
        assert_eq!(next_window(150_000, true, 0, 0, 500, 200_000), 200_000);
        let log = |data: usize| Log {
            address: Address::ZERO,
            topics: vec![B256::ZERO; 2],
            block_number: U256::from(1),
            log_index: None,
            data: "a".repeat(data),
        };
        let bytes = answer_bytes(&[log(2 * 1024 * 1024), log(0)]);
        assert!(
            bytes > 2 * 1024 * 1024 && bytes < 2 * 1024 * 1024 + 2000,
            "{bytes}"
        );
        // the data field is read from a real answer's shape
        let parsed: Log = serde_json::from_value(serde_json::json!({
            "address": "0x0000000000000000000000000000000000000001", "topics": [], "blockNumber": "0x1",
            "logIndex": "0x0", "data": "0xabcd", "transactionHash": "0x00",
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.data.len(), 6);
    }

    #[test]
    fn provider_refusals_are_recognized() {
        let node = |code, message: &str| RpcError::Node {
            code,
            message: message.to_owned(),
            data: None,
        };
        assert!(too_large(&node(-32005, "whatever")));
        assert!(too_large(&node(-32000, "query returned more than 10000 results")));
        assert!(too_large(&node(-32602, "block range too large (max 100000)")));
        assert!(!too_large(&node(3, "execution reverted")));
        assert!(too_large(&RpcError::TooLarge(
            "eth_getLogs: over 4194304 bytes".into()
        )));
        assert!(!too_large(&RpcError::Unavailable(
            "eth_getLogs: timed out".to_owned()
        )));
    }
}
