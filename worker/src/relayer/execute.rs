//! `RelayerOp::Execute`: a checked relay call through the lane, once per signed nonce while it is pending (a
//! replay is answered with its transaction, never sent twice; one mined and succeeded but not yet final, likewise),
//! its gas limit reserved on the profile's month, the relayer's day and the fair shares of that day for this very
//! transaction ([`super::policy::execute_plan`], [`crate::shares`]); then it answers at once, or waits for the
//! receipt (`wait.rs`) as long as the request's `Prefer: wait` asked (at most `DEPLOY_WAIT_SECONDS`).

use alloy_primitives::Bytes;

use super::ctx::{Ctx, Object, now_ms};
use super::model::{ExecuteJob, ExecuteOutcome, Job, PendingTx, Table, Waited};
use super::policy::{self, ALARM_MS};
use super::send::send_new;
use super::sync::sync_lane;
use super::wait::wait;
use crate::{
    error::{ApiError, ApiResult, Code},
    signer,
};

/// What the send step found for a relay call.
enum Found {
    /// Its lane transaction (pending, or just sent).
    Pending(PendingTx),
    /// Mined and succeeded, not final yet: the answer.
    Done(ExecuteOutcome),
}

/// Sends a checked relay call through the lane and waits for its receipt.
pub(super) async fn execute(obj: Object<'_>, job: ExecuteJob) -> ApiResult<ExecuteOutcome> {
    let cx = obj.ctx()?;
    cx.check_chain().await?;
    let wanted = Job::Execute {
        id: job.id,
        profile: job.profile,
    };
    let tx = match pending_or_sent(&cx, &job, &wanted).await? {
        Found::Pending(tx) => tx,
        Found::Done(done) => return Ok(done),
    };
    // answered once sent unless the request asked to wait (`Prefer: wait`); a job from before the preference
    // existed waits as long as a deploy
    let wait_ms = job.wait_ms.unwrap_or(cx.config.deploy_wait_ms);
    if wait_ms == 0 {
        return Ok(ExecuteOutcome {
            transaction_hash: latest_hash(&tx)?,
            mined: None,
        });
    }
    match wait(&cx, &wanted, tx, wait_ms).await? {
        Waited::Mined(hash) => Ok(ExecuteOutcome {
            transaction_hash: hash,
            mined: cx.mined_facts(&[hash])?.map(|(_, f)| f),
        }),
        Waited::Gone(last) => {
            // finished by another round (the alarm), or given up
            let mut hashes = last.dropped.clone();
            hashes.extend(last.hashes.iter().copied());
            let found = cx.mined_facts(&hashes)?;
            let latest = latest_hash(&last)?;
            Ok(ExecuteOutcome {
                transaction_hash: found.map_or(latest, |(h, _)| h),
                mined: found.map(|(_, f)| f),
            })
        }
        Waited::Pending(last) => Ok(ExecuteOutcome {
            transaction_hash: latest_hash(&last)?,
            mined: None,
        }),
    }
}

fn latest_hash(tx: &PendingTx) -> ApiResult<alloy_primitives::B256> {
    tx.hashes
        .last()
        .copied()
        .ok_or_else(|| ApiError::internal("no hash"))
}

/// Under the send lock: the pending transaction of the signed nonce (the same call only), its mined answer, or a new
/// transaction sent.
async fn pending_or_sent(cx: &Ctx<'_>, job: &ExecuteJob, wanted: &Job) -> ApiResult<Found> {
    let _guard = cx.obj.send_lock.lock().await;
    sync_lane(cx).await?;
    if let Some(existing) = cx.store().find_job(wanted)? {
        // the same signed nonce again: answered with the same transaction, never sent twice
        let (request, _) = signer::decode(&existing.raw).map_err(ApiError::internal)?;
        if request.input != job.calldata {
            return Err(ApiError::new(
                Code::InvalidRelayNonce,
                "another relay call with this signer and nonce is pending",
            ));
        }
        return Ok(Found::Pending(existing));
    }
    if let Some(done) = mined_for(cx, wanted, &job.calldata)? {
        // mined and succeeded, not yet final (the check read the nonce before): the same answer
        return Ok(Found::Done(done));
    }
    cx.obj.refuse_if_draining(job.profile)?;
    let quota = job.quota.unwrap_or(cx.config.monthly_gas_quota);
    let limits = (quota, cx.config.max_gas_per_day);
    let shares = cx.config.shares.of_ceiling(
        cx.config.chain_id,
        cx.config.max_gas_per_day,
        &job.payer,
        Some((job.profile, quota)),
    );
    let plan = policy::execute_plan(
        cx.config.chain_id,
        job.profile,
        job.id,
        job.gas_limit,
        limits,
        shares,
        now_ms(),
    );
    let tx = send_new(cx, wanted.clone(), job.key_manager, job.calldata.clone(), plan).await?;
    cx.store().ensure_alarm(ALARM_MS).await?;
    Ok(Found::Pending(tx))
}

/// A transaction of the signed nonce `wanted` mined and succeeded but not final yet (watched for its depth):
/// its outcome for the same call, a refusal for another one (the nonce is used). `None` when there is none, or
/// it reverted — the nonce is then unused, and a new transaction is a new attempt with a reservation of its own.
fn mined_for(cx: &Ctx<'_>, wanted: &Job, calldata: &Bytes) -> ApiResult<Option<ExecuteOutcome>> {
    let watched = cx.store().watched(Table::Confirming)?;
    let displaced = cx.store().watched(Table::Displaced)?;
    for watched in watched
        .into_iter()
        .chain(displaced)
        .filter(|w| &w.tx.job == wanted)
    {
        let Some((hash, facts)) = cx.mined_facts(&[watched.hash])? else {
            continue;
        };
        if !facts.success {
            continue;
        }
        let (request, _) = signer::decode(&watched.tx.raw).map_err(ApiError::internal)?;
        if &request.input != calldata {
            return Err(ApiError::new(
                Code::InvalidRelayNonce,
                format!("another relay call with this signer and nonce was mined in {hash}"),
            ));
        }
        return Ok(Some(ExecuteOutcome {
            transaction_hash: hash,
            mined: Some(facts),
        }));
    }
    Ok(None)
}
