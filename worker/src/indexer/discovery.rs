//! Finding candidates: `eth_getLogs` over adaptive windows. A window grows (×2) while it holds few logs, shrinks
//! when it holds many, and is cut to a quarter when the provider refuses it ("too many results", "block range too
//! large"); the size is kept with the cursor for the next run. An answer's size counts like its number of logs: a
//! window whose logs carry more than [`TARGET_ANSWER_BYTES`] (a contract can emit `DataChanged` logs of
//! megabytes) halves too, and grows only while its answer is small. Candidates are numbered per block (first
//! occurrence within the block, in log order), which is what the cursor's item count refers to.

use std::collections::BTreeMap;

use alloy_primitives::{Address, B256, U256};
use profile_relayer::{erc725y, lsp7, lsp8, lsp23};
use serde::Deserialize;
use serde_json::json;

use super::ctx::Ctx;
use crate::rpc::RpcError;

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
/// event by event; an event whose logs alone are still too large is skipped in this block (given by name, for the
/// caller to record in `unindexable` as `LOGS_TOO_LARGE`, object `block:<n>:<event>`), so one block can never hold
/// the cursor.
async fn one_block(ctx: &Ctx<'_>, block: u64) -> Result<(Vec<Log>, Vec<&'static str>), RpcError> {
    let mut logs = Vec::new();
    let mut skipped = Vec::new();
    for (name, topic) in TOPICS {
        match get_logs_of(ctx, block, block, &[topic]).await {
            Ok(found) => logs.extend(found),
            Err(e) if too_large(&e) => {
                worker::console_error!(
                    "chain {}: {name} logs of block {block} too large to read ({e:?}); skipped",
                    ctx.config.chain_id
                );
                skipped.push(name);
            }
            Err(e) => return Err(e),
        }
    }
    // in log order, as one answer would have had them
    logs.sort_by_key(|l| l.log_index);
    Ok((logs, skipped))
}

/// What one window of blocks holds.
pub(crate) struct Window {
    /// The candidates of each block, in order.
    pub(crate) blocks: BTreeMap<u64, Vec<Item>>,
    /// The window the next read starts with: grown while answers are small, shrunk when large (in logs or bytes).
    pub(crate) next_window: u64,
    /// The events of a single-block window whose logs were too large to read: skipped.
    pub(crate) skipped: Vec<&'static str>,
}

/// Reads the candidates of blocks `from..=to` (a window of `window` blocks, cut by the head when shorter).
/// `None`: the answer would be too large and the window is more than one block (read a smaller one); a single
/// block too large is read event by event ([`Window::skipped`]).
pub(crate) async fn read_window(
    ctx: &Ctx<'_>,
    from: u64,
    to: u64,
    window: u64,
    target_logs: usize,
    max_window: u64,
) -> Result<Option<Window>, RpcError> {
    let (logs, skipped) = match get_logs(ctx, from, to).await {
        Ok(logs) => (logs, Vec::new()),
        Err(e) if too_large(&e) && window > 1 => return Ok(None),
        Err(e) if too_large(&e) => one_block(ctx, from).await?,
        Err(e) => return Err(e),
    };
    let next_window = next_window(
        window,
        to - from + 1 == window,
        logs.len(),
        answer_bytes(&logs),
        target_logs,
        max_window,
    );
    Ok(Some(Window {
        blocks: candidates(logs),
        next_window,
        skipped,
    }))
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
