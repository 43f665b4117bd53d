//! Confirmation depth: a mined lane transaction is watched until it is `confirmations` blocks deep (its chain's
//! `confirmations` in `CHAINS`, else `INDEXER_CONFIRMATIONS`, else the chain's default: 96 on LUKSO), and charged
//! only then. Until then it waits in the object's `confirming` table (one row per nonce, the lane row it was); each
//! alarm, before the lane is reconciled, reads its receipt again ([`super::policy::decide`]):
//! - still there and deep enough: its meters are settled to the `gasUsed` of that receipt — the receipt of the chain
//!   that stays — once (settling is idempotent per charge id), the record gets `charged`, the row goes;
//! - still there, not deep enough: its block and gas are kept up to date (a reorganization that mined it again in
//!   another block changes them);
//! - gone (the block that held it was reorganized away): it goes back to the lane as it was stored, its record back
//!   to `pending` (a txlog state change, logged), and the lane's rounds broadcast the stored signed bytes again (the
//!   node does not know it any more) until it is mined again — then it is watched again;
//! - gone, and its nonce already given to another job (the lane was reconciled with the new chain before this pass
//!   saw the reorganization: a restart, a pass that could not read the head): it is *displaced* — kept in the
//!   `displaced` table (by nonce and hash), not sent again. The network may still mine its signed bytes (other nodes
//!   keep them): then it is watched there as above and charged at depth. Once its nonce is used `confirmations`
//!   deep with none of its hashes mined (the relayer's transaction count at the block that deep has passed it), it
//!   never can be: its records are `dropped` and its job is sent again at a fresh nonce with its charge, as a lane
//!   transaction whose nonce went to another is (a relay call only if it still succeeds; nothing sent: its
//!   reservation released).
//!
//! Every change is made on the row as stored once the chain was read ([`super::store::LaneStore::still`]): a row another step
//! changed or removed across an await (a request finishing a job, the send lock's wait) is left as it is now.
//!
//! With `confirmations` 0 (the local stack) nothing is watched: the job is charged at its first receipt, as before.

use alloy_primitives::B256;
use profile_relayer::api::TransactionState;

use super::ctx::{Ctx, now_ms};
use super::model::{Confirm, PendingTx, Round, Slot, Table, Watched};
use super::policy::{self, ALARM_MS};
use super::resend::send_again;
use crate::{error::ApiResult, rpc::Receipt};

/// Called by `finish` for a mined transaction: `true` when it is to be watched (and charged at depth) — it is
/// then stored and the alarm kept going; `false` (confirmations 0): charge it now.
pub(super) async fn watch(cx: &Ctx<'_>, tx: &PendingTx, hash: B256, receipt: &Receipt) -> ApiResult<bool> {
    if cx.confirmations() == 0 {
        return Ok(false);
    }
    let (block, gas_used) = policy::receipt_facts(receipt);
    let watched = Watched {
        tx: tx.clone(),
        hash,
        block,
        gas_used,
    };
    cx.store().put_watched(Table::Confirming, &watched)?;
    cx.store().ensure_alarm(ALARM_MS).await?;
    Ok(true)
}

/// One pass over the watched transactions (the alarm, before the lane's rounds): those mined at their nonce,
/// then the displaced ones.
pub(super) async fn confirm_all(cx: &Ctx<'_>) -> ApiResult<()> {
    let watched = cx.store().watched(Table::Confirming)?;
    let displaced = cx.store().watched(Table::Displaced)?;
    if watched.is_empty() && displaced.is_empty() {
        return Ok(());
    }
    let depth = cx.confirmations();
    let head = cx.rpc.block_number().await?;
    for w in watched {
        confirm_one(cx, (Table::Confirming, Slot::Own), w, head, depth).await?;
    }
    if !displaced.is_empty() {
        // read before the receipts: the relayer's transactions mined `depth` deep (in the block that deep and
        // before); a nonce below that count is used for good
        let deep = cx
            .rpc
            .nonce_at_block(cx.signer.address(), (head + 1).saturating_sub(depth))
            .await?;
        for w in displaced {
            let slot = Slot::Displaced {
                used: deep > w.tx.nonce,
            };
            confirm_one(cx, (Table::Displaced, slot), w, head, depth).await?;
        }
    }
    Ok(())
}

/// Reads the receipt of `w` (kept in `table`, its nonce standing as `slot`) and acts on [`policy::decide`], on the
/// row as it is stored then.
async fn confirm_one(
    cx: &Ctx<'_>,
    (table, slot): (Table, Slot),
    w: Watched,
    head: u64,
    depth: u64,
) -> ApiResult<()> {
    let receipt = cx.mined_receipt(&w.tx.hashes).await?;
    let seen = receipt.as_ref().map(|(_, r)| policy::receipt_facts(r));
    let decision = policy::decide((w.block, w.gas_used), slot, seen, head, depth);
    // the receipts were read across awaits: act only on the row as it still is
    let Some(w) = cx.store().still(table, &w)? else {
        return Ok(());
    };
    match (decision, receipt, seen) {
        (Confirm::Final { gas_used }, Some((hash, r)), Some((block, _))) => {
            let charged = cx.settle(w.tx.charge.as_ref(), gas_used).await?;
            log_mined(cx, &w.tx, (hash, &r), (block, gas_used), charged)?;
            cx.store().remove_watched(table, &w)?;
            worker::console_log!(
                "{}",
                serde_json::json!({
                    "event": "relayer.final", "hash": hash, "nonce": w.tx.nonce, "gasUsed": gas_used,
                    "charged": charged, "confirmations": depth, "displaced": table == Table::Displaced,
                })
            );
        }
        (
            Confirm::Wait {
                moved: Some((block, gas_used)),
            },
            Some((hash, r)),
            _,
        ) => {
            log_mined(cx, &w.tx, (hash, &r), (block, gas_used), None)?;
            let moved = Watched {
                hash,
                block,
                gas_used,
                ..w.clone()
            };
            // a displaced row is kept by nonce and hash: another hash of it mined is a new row
            cx.store().remove_watched(table, &w)?;
            cx.store().put_watched(table, &moved)?;
        }
        (Confirm::Reorganized, _, _) => reorganized(cx, w).await?,
        (Confirm::Superseded, _, _) => superseded(cx, &w).await?,
        // waiting, or a decision on a receipt that is not there (not made by `decide`)
        _ => {}
    }
    Ok(())
}

/// The receipt of a watched transaction is gone: back to the lane, pending again — or, when the lane gave its
/// nonce to another job meanwhile, displaced: watched for its receipt, not sent again.
async fn reorganized(cx: &Ctx<'_>, w: Watched) -> ApiResult<()> {
    let _guard = cx.obj.send_lock.lock().await;
    let store = cx.store();
    // the lock's wait is an await: a request may have finished a job at this nonce meanwhile
    let Some(w) = store.still(Table::Confirming, &w)? else {
        return Ok(());
    };
    let other = store.get(w.tx.nonce)?;
    if let Some(other) = &other {
        worker::console_warn!(
            "nonce {}: {} was reorganized away, and the lane holds {:?} there now: watched as displaced",
            w.tx.nonce,
            w.hash,
            other.job
        );
        let displaced = Watched {
            block: 0,
            gas_used: 0,
            ..w.clone()
        };
        store.put_watched(Table::Displaced, &displaced)?;
    } else {
        let back = PendingTx {
            fees_checked_ms: now_ms(),
            ..w.tx.clone()
        };
        store.write(None, Some(&back))?;
        // the lane is reconciled again (its next nonce may be this one's)
        cx.obj.memory.next_nonce.set(None);
    }
    store.remove_watched(Table::Confirming, &w)?;
    log_each(cx, &w.tx, TransactionState::Pending)?;
    worker::console_warn!(
        "{}",
        serde_json::json!({
            "event": "relayer.reorganized", "hash": w.hash, "nonce": w.tx.nonce, "block": w.block,
            "displaced": other.is_some(),
        })
    );
    Ok(())
}

/// A displaced transaction whose nonce another transaction used deep enough: it can never be mined. Its records
/// are `dropped`, its row goes, and its job is sent again at a fresh nonce with its charge, as a lane
/// transaction whose nonce went to another is (`resend::send_again`: a relay call only if it still succeeds, a
/// deployment only if the profile is not there); when nothing is sent, its reservation is released.
async fn superseded(cx: &Ctx<'_>, w: &Watched) -> ApiResult<()> {
    let _guard = cx.obj.send_lock.lock().await;
    let Some(w) = cx.store().still(Table::Displaced, w)? else {
        return Ok(());
    };
    log_each(cx, &w.tx, TransactionState::Dropped)?;
    cx.store().remove_watched(Table::Displaced, &w)?;
    let again = if w.tx.cancelled_from.is_some() {
        // cancelled by the operator: never sent again
        Ok(Round::Gone)
    } else {
        send_again(cx, &w.tx, None).await
    };
    let sent = matches!(again, Ok(Round::Pending));
    if !sent {
        // given up (or nothing to send): what was reserved for it goes back
        cx.release(w.tx.charge.as_ref()).await;
    }
    worker::console_warn!(
        "{}",
        serde_json::json!({
            "event": "relayer.superseded", "hash": w.hash, "nonce": w.tx.nonce, "sentAgain": sent,
            "error": again.as_ref().err().map(|e| e.code),
        })
    );
    Ok(())
}

/// The records of `tx` mined as `hash` (with its receipt) in `block` using `gas_used`: that one mined (or
/// reverted) with its gas and `charged`, the others that were pending again `replaced` by it.
fn log_mined(
    cx: &Ctx<'_>,
    tx: &PendingTx,
    (hash, receipt): (B256, &Receipt),
    (block, gas_used): (u64, u64),
    charged: Option<u64>,
) -> ApiResult<()> {
    for h in &tx.hashes {
        cx.log_update(*h, |r| {
            if *h == hash {
                r.status = policy::mined_state(receipt);
                r.block_number = Some(block);
                r.gas_used = Some(gas_used);
                r.charged = charged.or(r.charged);
            } else if r.status == TransactionState::Pending {
                r.status = TransactionState::Replaced;
                r.replaced_by = Some(hash);
            }
        })?;
    }
    Ok(())
}

/// Sets the records of every hash of `tx` that was not replaced to `state` (a pending one has no block or gas).
fn log_each(cx: &Ctx<'_>, tx: &PendingTx, state: TransactionState) -> ApiResult<()> {
    for hash in &tx.hashes {
        cx.log_update(*hash, |r| {
            if r.status != TransactionState::Replaced {
                r.status = state;
                if state == TransactionState::Pending {
                    r.block_number = None;
                    r.gas_used = None;
                }
            }
        })?;
    }
    Ok(())
}
