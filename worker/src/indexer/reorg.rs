//! Reorganizations: the indexer remembers the hash of the block each completed window ended at (D1
//! `checkpoint_hashes`, the newest [`KEPT_HASHES`] per chain). Each run first compares the newest with the chain's
//! block of that number (one RPC call); when they differ, the chain's hashes of every remembered block are read (one
//! batch) and [`rewind`] decides: the newest block the chain still has is the common ancestor, the checkpoint goes
//! back to the block after it, and every record read from a block past it is queued for a re-check (the retry pass
//! re-reads it: a contract that no longer exists, or is no longer a profile or asset, leaves the index; one that
//! exists is read again), and so is every graph pair those blocks wrote (`graph_rechecks`: a balance, a token, a
//! follow or unfollow). The rewound range is then followed again like any other, so what the new chain created is
//! found. A reorganization deeper than every remembered block (none of them is on the chain any more) rewinds
//! [`DEEP_REWIND`] blocks below the oldest, logs an error line and records a `DEEP_REORG` row in `unindexable`
//! (counted by `/v1/:chainId/indexer` and the `indexer_unindexable` metric). Work per run: at most 2 RPC requests
//! and 2 D1 batches here, the re-checks bounded by the retry pass's share of the run.

use alloy_primitives::{Address, B256};
use serde_json::{Value, json};

use super::{
    ctx::Ctx,
    ledger::{self, Unindexable},
    writer,
};
use crate::{
    error::{ApiError, ApiResult},
    rpc::RpcError,
    search::store::{self, graph},
};

/// Remembered checkpoint hashes per chain.
pub(crate) const KEPT_HASHES: u32 = 64;

/// How far below the oldest remembered block a reorganization deeper than all of them rewinds.
pub(crate) const DEEP_REWIND: u64 = 1024;

/// What to do with the checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rewind {
    /// The newest remembered block is still on the chain (or nothing is remembered).
    Keep,
    /// Go back: `next_block` is the first block read again; `deep` when no remembered block is on the chain.
    To { next_block: u64, deep: bool },
}

/// The rewind decision (pure): `stored` the remembered `(block, hash)` pairs, newest first; `chain` the chain's
/// hash of each of those blocks (same order; `None`: the chain has no such block any more, or answered none).
/// `start_block` is the chain's configured first block, below which nothing rewinds.
pub(crate) fn rewind(stored: &[(u64, B256)], chain: &[Option<B256>], start_block: u64) -> Rewind {
    let on_chain =
        |i: usize| matches!((stored.get(i), chain.get(i)), (Some((_, s)), Some(Some(c))) if s == c);
    if stored.is_empty() || on_chain(0) {
        return Rewind::Keep;
    }
    match (0..stored.len())
        .find(|i| on_chain(*i))
        .and_then(|i| stored.get(i))
    {
        Some((ancestor, _)) => Rewind::To {
            next_block: ancestor.saturating_add(1).max(start_block),
            deep: false,
        },
        None => {
            let oldest = stored.iter().map(|(b, _)| *b).min().unwrap_or(0);
            Rewind::To {
                next_block: oldest.saturating_sub(DEEP_REWIND).max(start_block),
                deep: true,
            }
        }
    }
}

/// The remembered hashes of this chain, newest first.
async fn stored(ctx: &Ctx<'_>) -> ApiResult<Vec<(u64, B256)>> {
    let db = store::db(ctx.env).await?;
    ctx.budget.spend(1);
    ledger::hashes(&db, ctx.config.chain_id, KEPT_HASHES).await
}

fn block_params(block: u64) -> Value {
    json!([format!("0x{block:x}"), false])
}

/// The hash in an `eth_getBlockByNumber` answer (`None` for `null`: no such block).
fn block_hash(answer: &Value) -> Result<Option<B256>, RpcError> {
    if answer.is_null() {
        return Ok(None);
    }
    answer
        .get("hash")
        .and_then(Value::as_str)
        .and_then(|h| h.parse::<B256>().ok())
        .map(Some)
        .ok_or_else(|| RpcError::Decode("eth_getBlockByNumber: no block hash".to_owned()))
}

/// The chain's hash of `block` (`None`: the chain has no such block).
pub(crate) async fn hash_of(ctx: &Ctx<'_>, block: u64) -> ApiResult<Option<B256>> {
    ctx.budget.spend(1);
    let answer: Value = ctx.rpc.call("eth_getBlockByNumber", block_params(block)).await?;
    Ok(block_hash(&answer)?)
}

/// Remembers `hash` as the hash of `block`, the end of a completed window (the newest [`KEPT_HASHES`] are kept).
pub(crate) async fn remember(ctx: &Ctx<'_>, block: u64, hash: B256) -> ApiResult<()> {
    let db = store::db(ctx.env).await?;
    let statements = ledger::remember_hash(&db, ctx.config.chain_id, block, hash, KEPT_HASHES)?;
    ctx.budget.spend(1);
    db.batch(statements).await.map_err(ApiError::internal)?;
    Ok(())
}

/// A rewind this run made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rewound {
    /// The first block read again.
    pub(crate) next_block: u64,
    /// Deeper than every remembered block.
    pub(crate) deep: bool,
}

/// Compares the newest remembered block with the chain and, when the chain dropped it, rewinds the checkpoint
/// (see the module's documentation). `None` when nothing changed. `head` is the node's head: a node behind the
/// newest remembered block (another node behind a load balancer) cannot tell, and nothing is rewound for it.
pub(crate) async fn check(ctx: &Ctx<'_>, head: u64) -> ApiResult<Option<Rewound>> {
    let stored = stored(ctx).await?;
    let Some((newest, hash)) = stored.first().copied() else {
        return Ok(None);
    };
    if newest > head {
        return Ok(None);
    }
    if hash_of(ctx, newest).await? == Some(hash) {
        return Ok(None);
    }
    // the newest is gone: every remembered block's hash, in one batch
    let calls: Vec<(&str, Value)> = stored
        .iter()
        .map(|(b, _)| ("eth_getBlockByNumber", block_params(*b)))
        .collect();
    ctx.budget.spend(1);
    let answers = ctx.rpc.batch(&calls).await?;
    if answers.len() != calls.len() {
        return Err(RpcError::Decode("batch: wrong number of answers".to_owned()).into());
    }
    let chain = answers
        .into_iter()
        .map(|a| block_hash(&a?))
        .collect::<Result<Vec<_>, RpcError>>()?;
    let Rewind::To { next_block, deep } = rewind(&stored, &chain, ctx.config.start_block) else {
        return Ok(None);
    };
    apply(ctx, next_block, deep).await?;
    let line = json!({
        "event": "indexer.reorg",
        "chainId": ctx.config.chain_id,
        "droppedBlock": newest,
        "rewoundTo": next_block,
        "deep": deep,
    });
    if deep {
        worker::console_error!("{line}");
    } else {
        worker::console_warn!("{line}");
    }
    Ok(Some(Rewound { next_block, deep }))
}

/// One D1 batch: the cursor back to `next_block` (never forward), the hashes from it on forgotten, the records read
/// from it on queued for a re-check (due now, reason `REORG`), and for a deep one its `unindexable` row.
async fn apply(ctx: &Ctx<'_>, next_block: u64, deep: bool) -> ApiResult<()> {
    let db = store::db(ctx.env).await?;
    let chain_id = ctx.config.chain_id;
    let mut statements = vec![
        ledger::rewind_cursor(&db, chain_id, next_block)?,
        ledger::forget_hashes_from(&db, chain_id, next_block)?,
        ledger::recheck_from(
            &db,
            &ctx.config.errors_queue(),
            [&ctx.profiles, &ctx.assets],
            next_block,
        )?,
    ];
    // the graph's pairs those blocks wrote (balances, tokens, follows) are read again too
    statements.extend(graph::recheck_from(&db, chain_id, next_block)?);
    if deep {
        let object_id = format!("reorg:{next_block}");
        let message = format!(
            "a reorganization deeper than the {KEPT_HASHES} remembered checkpoints: rewound to block \
             {next_block}; raise INDEXER_CONFIRMATIONS"
        );
        statements.push(ledger::unindexable(
            &db,
            chain_id,
            &Unindexable {
                object_id: &object_id,
                address: Address::ZERO,
                token_id: None,
                code: "DEEP_REORG",
                message: &message,
                block: next_block,
            },
        )?);
    }
    ctx.budget.spend(1);
    db.batch(statements).await.map_err(ApiError::internal)?;
    Ok(())
}

/// Takes candidates that turned out to be nothing (code gone, no longer a profile or asset, a burned token) out of
/// this chain's search index (D1), queuing their deletion from Algolia when it is configured (sent by the run's
/// `outbound::flush_deletes`). One batch; nothing when none.
pub(crate) async fn forget_records(ctx: &Ctx<'_>, object_ids: &[String]) -> ApiResult<()> {
    if object_ids.is_empty() {
        return Ok(());
    }
    let db = store::db(ctx.env).await?;
    let algolia = ctx.algolia.get()?.is_some();
    let mut statements = Vec::with_capacity(object_ids.len() * 6);
    for id in object_ids {
        statements.extend(writer::leave_index(ctx, &db, id, algolia)?);
    }
    ctx.budget.spend(1);
    db.batch(statements).await.map_err(ApiError::internal)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(n: u8) -> B256 {
        B256::repeat_byte(n)
    }

    #[test]
    fn nothing_remembered_or_newest_on_chain_keeps() {
        assert_eq!(rewind(&[], &[], 0), Rewind::Keep);
        let stored = [(30, h(3)), (20, h(2)), (10, h(1))];
        assert_eq!(
            rewind(&stored, &[Some(h(3)), Some(h(2)), Some(h(1))], 0),
            Rewind::Keep
        );
        // only the newest is compared for "keep": the others are not read then
        assert_eq!(rewind(&stored, &[Some(h(3))], 0), Rewind::Keep);
    }

    #[test]
    fn rewinds_to_the_block_after_the_newest_common_one() {
        let stored = [(30, h(3)), (20, h(2)), (10, h(1))];
        assert_eq!(
            rewind(&stored, &[Some(h(9)), Some(h(2)), Some(h(1))], 0),
            Rewind::To {
                next_block: 21,
                deep: false
            }
        );
        // the new chain is shorter: no block 30, 20 replaced too
        assert_eq!(
            rewind(&stored, &[None, Some(h(8)), Some(h(1))], 0),
            Rewind::To {
                next_block: 11,
                deep: false
            }
        );
    }

    #[test]
    fn deeper_than_every_remembered_block_goes_back_further() {
        let stored = [(3000, h(3)), (2000, h(2))];
        assert_eq!(
            rewind(&stored, &[Some(h(9)), None], 0),
            Rewind::To {
                next_block: 2000 - DEEP_REWIND,
                deep: true
            }
        );
        // never below the chain's first block
        assert_eq!(
            rewind(&stored, &[None, None], 1500),
            Rewind::To {
                next_block: 1500,
                deep: true
            }
        );
        let near_genesis = [(5, h(1))];
        assert_eq!(
            rewind(&near_genesis, &[Some(h(2))], 0),
            Rewind::To {
                next_block: 0,
                deep: true
            }
        );
    }

    #[test]
    fn a_missing_chain_answer_is_not_a_match() {
        let stored = [(30, h(3)), (20, h(2))];
        // fewer answers than remembered blocks: the unanswered ones are not taken as common
        assert_eq!(
            rewind(&stored, &[Some(h(9))], 0),
            Rewind::To {
                next_block: 20 - DEEP_REWIND.min(20),
                deep: true
            }
        );
    }

    #[test]
    fn block_hashes_are_read_from_answers() {
        assert_eq!(block_hash(&Value::Null).unwrap(), None);
        let answer = json!({ "number": "0x1", "hash": h(7).to_string() });
        assert_eq!(block_hash(&answer).unwrap(), Some(h(7)));
        assert!(block_hash(&json!({ "number": "0x1" })).is_err());
        assert!(block_hash(&json!({ "hash": "0x12" })).is_err());
    }
}
