//! Finding candidates: `eth_getLogs` over adaptive windows. A window grows (×2) while it holds few logs, shrinks
//! when it holds many, and is cut to a quarter when the provider refuses it ("too many results", "block range too
//! large"); the size is kept with the cursor for the next run. An answer's size counts like its number of logs: a
//! window whose logs carry more than [`TARGET_ANSWER_BYTES`] (a contract can emit `DataChanged` logs of
//! megabytes) halves too, and grows only while its answer is small. Candidates are numbered per block (first
//! occurrence within the block, in log order), which is what the cursor's item count refers to.
//!
//! Besides the contracts, logs name the graph's pairs to read again: an LSP7 `Transfer` its sender's and
//! receiver's balances, an LSP26 `Follow` / `Unfollow` of the registry (no other emitter) its pair; an LSP8
//! `Transfer` or `TokenIdDataChanged` the token. One emitter gets at most [`MAX_ITEMS_PER_EMITTER`] balances and
//! tokens per block: a contract that emits a million transfers in one block is read for the first ones and the rest
//! is reported ([`Window::capped`]).

use std::collections::BTreeMap;

use alloy_primitives::{Address, B256, U256};
use profile_relayer::{erc165, erc725y, lsp7, lsp8, lsp23, lsp26};
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
    /// An LSP7 balance: `(asset, holder)`.
    Holding(Address, Address),
    /// An LSP26 follow: `(follower, followee)`.
    Follow(Address, Address),
}

impl Item {
    /// Whether the item is a pair read in batches ([`Item::Holding`], [`Item::Follow`]).
    pub(crate) const fn is_pair(&self) -> bool {
        matches!(self, Self::Holding(..) | Self::Follow(..))
    }
}

/// The most balances and tokens one emitter's logs make candidates of in one block.
pub(crate) const MAX_ITEMS_PER_EMITTER: usize = 500;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Log {
    address: Address,
    topics: Vec<B256>,
    block_number: U256,
    log_index: Option<U256>,
    /// The log's data (hex): measured, and decoded for LSP26 logs.
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

/// The items one log names, in order.
fn log_items(log: &Log, registry: Address) -> Vec<Item> {
    let mut items = Vec::new();
    let Some(t0) = log.topics.first() else {
        return items;
    };
    if *t0 == lsp23::DEPLOYED_PROXIES_TOPIC {
        if let Some(up) = log.topics.get(1) {
            items.push(Item::Address(Address::from_word(*up)));
        }
    } else if *t0 == lsp8::TRANSFER_TOPIC {
        items.push(Item::Address(log.address));
        if let (4, Some(token)) = (log.topics.len(), log.topics.get(3)) {
            items.push(Item::Token(log.address, *token));
        }
    } else if *t0 == lsp8::TOKEN_ID_DATA_CHANGED_TOPIC {
        if let (3, Some(token)) = (log.topics.len(), log.topics.get(1)) {
            items.push(Item::Token(log.address, *token));
        }
    } else if *t0 == lsp7::TRANSFER_TOPIC {
        items.push(Item::Address(log.address));
        if let Some((from, to)) = lsp7::transfer_parties(&log.topics) {
            for holder in [from, to] {
                if holder != Address::ZERO {
                    items.push(Item::Holding(log.address, holder));
                }
            }
        }
    } else if *t0 == lsp26::FOLLOW_TOPIC || *t0 == lsp26::UNFOLLOW_TOPIC {
        // anyone can emit the registry's events: only the registry's count
        if log.address == registry {
            let data = alloy_primitives::hex::decode(&log.data).unwrap_or_default();
            if let Some((follower, followee)) = lsp26::decode_log(&log.topics, &data) {
                items.push(Item::Follow(follower, followee));
            }
        }
    } else {
        // DataChanged, OwnershipTransferred: the emitter is read again
        items.push(Item::Address(log.address));
    }
    items
}

/// An emitter whose balances and tokens in a block passed [`MAX_ITEMS_PER_EMITTER`]: how many were left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Capped {
    pub(crate) block: u64,
    pub(crate) emitter: Address,
    pub(crate) left_out: u64,
}

/// The candidates of each block, in order, without duplicates within a block; the emitters capped.
fn candidates(mut logs: Vec<Log>, registry: Address) -> (BTreeMap<u64, Vec<Item>>, Vec<Capped>) {
    logs.sort_by_key(|l| (l.block_number, l.log_index.unwrap_or(U256::MAX)));
    let mut blocks: BTreeMap<u64, Vec<Item>> = BTreeMap::new();
    let mut per_emitter: BTreeMap<(u64, Address), usize> = BTreeMap::new();
    let mut capped: BTreeMap<(u64, Address), u64> = BTreeMap::new();
    for log in logs {
        let Ok(block) = u64::try_from(log.block_number) else {
            continue;
        };
        let list = blocks.entry(block).or_default();
        for item in log_items(&log, registry) {
            if list.contains(&item) {
                continue;
            }
            if matches!(item, Item::Token(..) | Item::Holding(..)) {
                let n = per_emitter.entry((block, log.address)).or_default();
                if *n >= MAX_ITEMS_PER_EMITTER {
                    *capped.entry((block, log.address)).or_default() += 1;
                    continue;
                }
                *n += 1;
            }
            list.push(item);
        }
    }
    let capped = capped
        .into_iter()
        .map(|((block, emitter), left_out)| Capped {
            block,
            emitter,
            left_out,
        })
        .collect();
    (blocks, capped)
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
const TOPICS: [(&str, B256); 8] = [
    ("DeployedERC1167Proxies", lsp23::DEPLOYED_PROXIES_TOPIC),
    ("DataChanged", erc725y::DATA_CHANGED_TOPIC),
    ("LSP7Transfer", lsp7::TRANSFER_TOPIC),
    ("LSP8Transfer", lsp8::TRANSFER_TOPIC),
    ("TokenIdDataChanged", lsp8::TOKEN_ID_DATA_CHANGED_TOPIC),
    ("OwnershipTransferred", erc165::OWNERSHIP_TRANSFERRED_TOPIC),
    ("Follow", lsp26::FOLLOW_TOPIC),
    ("Unfollow", lsp26::UNFOLLOW_TOPIC),
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
    /// The emitters whose balances and tokens passed [`MAX_ITEMS_PER_EMITTER`] in a block.
    pub(crate) capped: Vec<Capped>,
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
    let (blocks, capped) = candidates(logs, lsp26::REGISTRY);
    Ok(Some(Window {
        blocks,
        next_window,
        skipped,
        capped,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lsp7_log(block: u64, index: u64, asset: Address, from: Address, to: Address) -> Log {
        Log {
            address: asset,
            topics: vec![lsp7::TRANSFER_TOPIC, B256::ZERO, from.into_word(), to.into_word()],
            block_number: U256::from(block),
            log_index: Some(U256::from(index)),
            data: String::new(),
        }
    }

    fn follow_log(emitter: Address, topic: B256, a: Address, b: Address) -> Log {
        Log {
            address: emitter,
            topics: vec![topic],
            block_number: U256::from(7),
            log_index: Some(U256::ZERO),
            data: format!(
                "0x{}{}",
                alloy_primitives::hex::encode(a.into_word()),
                alloy_primitives::hex::encode(b.into_word())
            ),
        }
    }

    #[test]
    fn logs_name_the_pairs_to_read() {
        let (asset, a, b) = (
            Address::repeat_byte(1),
            Address::repeat_byte(2),
            Address::repeat_byte(3),
        );
        // a mint names the asset and the receiver, never the zero address
        let (blocks, capped) = candidates(vec![lsp7_log(5, 0, asset, Address::ZERO, a)], lsp26::REGISTRY);
        assert_eq!(blocks[&5], vec![Item::Address(asset), Item::Holding(asset, a)]);
        assert!(capped.is_empty());
        // follows count from the registry only
        let registry = lsp26::REGISTRY;
        let (blocks, _) = candidates(
            vec![
                follow_log(registry, lsp26::FOLLOW_TOPIC, a, b),
                follow_log(asset, lsp26::FOLLOW_TOPIC, b, a),
                follow_log(registry, lsp26::UNFOLLOW_TOPIC, b, a),
            ],
            registry,
        );
        assert_eq!(blocks[&7], vec![Item::Follow(a, b), Item::Follow(b, a)]);
        // a token's data changed after mint: the token is read again
        let token = B256::repeat_byte(9);
        let changed = Log {
            address: asset,
            topics: vec![lsp8::TOKEN_ID_DATA_CHANGED_TOPIC, token, B256::ZERO],
            block_number: U256::from(8),
            log_index: None,
            data: String::new(),
        };
        let (blocks, _) = candidates(vec![changed], registry);
        assert_eq!(blocks[&8], vec![Item::Token(asset, token)]);
    }

    #[test]
    fn one_emitter_is_capped_per_block() {
        let asset = Address::repeat_byte(1);
        let logs: Vec<Log> = (0..2000u64)
            .map(|i| {
                let mut holder = [0u8; 20];
                holder[..8].copy_from_slice(&(i + 1).to_be_bytes());
                lsp7_log(3, i, asset, Address::ZERO, Address::from(holder))
            })
            .chain([lsp7_log(4, 0, asset, Address::ZERO, Address::repeat_byte(7))])
            .collect();
        let (blocks, capped) = candidates(logs, lsp26::REGISTRY);
        let holdings = blocks[&3]
            .iter()
            .filter(|i| matches!(i, Item::Holding(..)))
            .count();
        assert_eq!(holdings, MAX_ITEMS_PER_EMITTER);
        assert_eq!(
            capped,
            vec![Capped {
                block: 3,
                emitter: asset,
                left_out: 2000 - MAX_ITEMS_PER_EMITTER as u64
            }]
        );
        // the next block starts again
        assert_eq!(
            blocks[&4],
            vec![
                Item::Address(asset),
                Item::Holding(asset, Address::repeat_byte(7))
            ]
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod drift {
        use std::collections::{BTreeMap, BTreeSet};

        use proptest::prelude::*;

        use super::*;

        proptest! {
            /// However the transfer logs come — reordered, duplicated, split over answers — reading the state of each
            /// pair they name gives the chain's balances for every holder that ever held or sent: nothing drifts.
            #[test]
            fn balances_never_drift(
                transfers in prop::collection::vec((0u8..3, 0u8..6, 0u8..6, 1u64..1000), 1..40),
                order in prop::collection::vec(any::<prop::sample::Index>(), 0..80),
            ) {
                let addr = |n: u8| if n == 0 { Address::ZERO } else { Address::repeat_byte(n) };
                let asset = |n: u8| Address::repeat_byte(0xa0 + n);
                // the chain: transfers applied in order (a transfer the sender cannot afford moves what it has)
                let mut chain: BTreeMap<(Address, Address), u64> = BTreeMap::new();
                let mut logs = Vec::new();
                for (i, (a, from, to, amount)) in transfers.iter().enumerate() {
                    let (a, from, to) = (asset(*a), addr(*from), addr(*to));
                    let moved = if from == Address::ZERO { *amount } else { (*amount).min(chain.get(&(a, from)).copied().unwrap_or(0)) };
                    if from != Address::ZERO { *chain.entry((a, from)).or_default() -= moved; }
                    if to != Address::ZERO { *chain.entry((a, to)).or_default() += moved; }
                    logs.push(lsp7_log(1 + i as u64 / 5, i as u64, a, from, to));
                }
                // delivered shuffled and with duplicates
                let mut delivered: Vec<Log> = order.iter().map(|ix| { let l = ix.get(&logs); Log { topics: l.topics.clone(), data: String::new(), ..*l } }).collect();
                delivered.extend(logs.iter().map(|l| Log { topics: l.topics.clone(), data: String::new(), ..*l }));
                let (blocks, capped) = candidates(delivered, lsp26::REGISTRY);
                prop_assert!(capped.is_empty());
                // the table: each named pair read at the chain's state, in any order
                let mut table: BTreeMap<(Address, Address), u64> = BTreeMap::new();
                let mut named = BTreeSet::new();
                for item in blocks.values().rev().flatten() {
                    if let Item::Holding(a, h) = item {
                        table.insert((*a, *h), chain.get(&(*a, *h)).copied().unwrap_or(0));
                        named.insert((*a, *h));
                    }
                }
                for (pair, balance) in &chain {
                    prop_assert!(named.contains(pair), "{pair:?} never read");
                    prop_assert_eq!(table.get(pair), Some(balance));
                }
            }
        }
    }

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
