//! The graph's pairs read again: LSP7 balances (`balanceOf(holder)` of the asset) and LSP26 follows
//! (`isFollowing(follower, followee)` of the registry), many in one JSON-RPC batch ([`PAIRS_PER_BATCH`]), each
//! turned into a graph fact ([`Outcome::Graph`]). What a contract does wrong is noted per contract (`<asset>:balanceOf`,
//! `<registry>:isFollowing` in `unindexable`) and leaves its rows as they were; a batch the node fails is read again
//! pair by pair, so one contract whose calls time out costs its own pairs only.

use std::collections::BTreeMap;

use alloy_primitives::Address;
use profile_relayer::lsp26;

use super::{
    chain::{self, PairAnswer, PairRead},
    ctx::Ctx,
    discovery::Item,
    records::{Graph, Note, Outcome},
};
use crate::{error::ApiResult, search::store::graph::Fact};

/// The most pairs read in one batch.
pub(crate) const PAIRS_PER_BATCH: usize = 100;

/// The note on a contract's calls: `problem` as `(code, message)`, or `None` when they answered.
fn note(contract: Address, call: &str, problem: Option<(&'static str, String)>) -> Note {
    Note {
        object_id: format!("{}:{call}", contract.to_checksum(None)),
        address: contract,
        problem,
    }
}

/// Reads the pair items (each with the block it was seen in): one outcome per item, in order.
pub(crate) async fn process_pairs(ctx: &Ctx<'_>, items: &[(u64, Item)]) -> ApiResult<Vec<Outcome>> {
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(PAIRS_PER_BATCH) {
        match read(ctx, chunk).await {
            Ok(outcomes) => out.extend(outcomes),
            Err(e) if chunk.len() > 1 => {
                // the node is asked whether it answers at all (a dead node stops the run), then each pair alone
                ctx.budget.spend(1);
                ctx.rpc.block_number().await?;
                worker::console_warn!(
                    "indexer: a batch of {} pairs failed ({e:?}); read one by one",
                    chunk.len()
                );
                for one in chunk {
                    match read(ctx, std::slice::from_ref(one)).await {
                        Ok(outcomes) => out.extend(outcomes),
                        Err(e) => out.push(noted(one, "CALL_FAILED", &format!("the call failed: {e:?}"))),
                    }
                }
            }
            Err(e) => {
                ctx.budget.spend(1);
                ctx.rpc.block_number().await?;
                if let Some(one) = chunk.first() {
                    out.push(noted(one, "CALL_FAILED", &format!("the call failed: {e:?}")));
                }
            }
        }
    }
    Ok(out)
}

/// The outcome of a pair whose read failed (`code`, `detail`): no fact, a note on its contract's call.
fn noted((block, item): &(u64, Item), code: &'static str, detail: &str) -> Outcome {
    let (contract, call) = match item {
        Item::Follow(..) => (lsp26::REGISTRY, "isFollowing"),
        Item::Holding(asset, _) | Item::Address(asset) | Item::Token(asset, _) => (*asset, "balanceOf"),
    };
    Outcome::Graph {
        graph: Graph {
            facts: Vec::new(),
            notes: vec![note(contract, call, Some((code, format!("{call}: {detail}"))))],
        },
        block: *block,
    }
}

/// What one pair's answer gives: its fact, or the problem to note (`(code, message)`); neither when the batch
/// had no answer for it.
fn judge<T>(
    answer: Option<PairAnswer<T>>,
    call: &str,
    reverted: impl FnOnce() -> String,
    reverted_code: &'static str,
    fact: impl FnOnce(T) -> Fact,
) -> (Option<Fact>, Option<(&'static str, String)>) {
    match answer {
        Some(Ok(Some(value))) => (Some(fact(value)), None),
        Some(Ok(None)) => (None, Some((reverted_code, reverted()))),
        Some(Err(e)) => (None, Some(("MALFORMED_ANSWER", format!("{call}: {}", e.message)))),
        None => (None, None),
    }
}

/// One batch of pairs.
async fn read(ctx: &Ctx<'_>, items: &[(u64, Item)]) -> Result<Vec<Outcome>, crate::rpc::RpcError> {
    let balances: Vec<(Address, Address)> = items
        .iter()
        .filter_map(|(_, i)| match i {
            Item::Holding(asset, holder) => Some((*asset, *holder)),
            _ => None,
        })
        .collect();
    let follows: Vec<(Address, Address)> = items
        .iter()
        .filter_map(|(_, i)| match i {
            Item::Follow(a, b) => Some((*a, *b)),
            _ => None,
        })
        .collect();
    let (mut b, mut f) = match chain::read_pairs(ctx, &balances, &follows, lsp26::REGISTRY).await? {
        PairRead::Read { balances, follows } => (balances.into_iter(), follows.into_iter()),
        PairRead::TooLarge(detail) => {
            let detail = format!("the answers are too large: {detail}");
            return Ok(items
                .iter()
                .map(|one| noted(one, "ANSWER_TOO_LARGE", &detail))
                .collect());
        }
    };
    // one note per contract and batch: its last answer's verdict
    let mut notes: BTreeMap<(Address, &str), Option<(&'static str, String)>> = BTreeMap::new();
    let mut outcomes = Vec::with_capacity(items.len());
    for (block, item) in items {
        let fact = match item {
            Item::Holding(asset, holder) => {
                let (fact, problem) = judge(
                    b.next(),
                    &format!("balanceOf({holder})"),
                    || format!("balanceOf({holder}) reverted; the balance is left as it was"),
                    "BALANCE_REVERTED",
                    |balance| Fact::Balance {
                        asset: *asset,
                        holder: *holder,
                        balance,
                    },
                );
                notes.insert((*asset, "balanceOf"), problem);
                fact
            }
            Item::Follow(follower, followee) => {
                let (fact, problem) = judge(
                    f.next(),
                    "isFollowing",
                    || format!("isFollowing({follower}, {followee}) reverted"),
                    "CALL_REVERTED",
                    |following| Fact::Follow {
                        follower: *follower,
                        followee: *followee,
                        following,
                    },
                );
                notes.insert((lsp26::REGISTRY, "isFollowing"), problem);
                fact
            }
            Item::Address(_) | Item::Token(..) => None,
        };
        outcomes.push(Outcome::Graph {
            graph: Graph {
                facts: fact.into_iter().collect(),
                notes: Vec::new(),
            },
            block: *block,
        });
    }
    // the notes go with the batch's last outcome, so they are written after its facts
    if let Some(Outcome::Graph { graph, .. }) = outcomes.last_mut() {
        graph.notes = notes
            .into_iter()
            .map(|((contract, call), problem)| note(contract, call, problem))
            .collect();
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_name_the_contract_and_call() {
        let a = Address::repeat_byte(0xaa);
        let n = note(a, "balanceOf", None);
        assert_eq!(n.object_id, format!("{}:balanceOf", a.to_checksum(None)));
        assert!(!n.object_id.contains("-0x"));
    }
}
