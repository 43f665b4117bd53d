//! `RelayerOp::Deploy`: an LSP23 deployment through the lane — under the send lock the lane is reconciled, a
//! pending deployment of the same profile is joined, a deployed profile answered at once, else the gas is reserved
//! on the asking key's month, the relayer's day and their fair shares ([`super::policy::deploy_plan`]) and the
//! transaction sent; then the request waits for the receipt (`wait.rs`) up to `DEPLOY_WAIT_SECONDS`.

use alloy_primitives::{Address, Bytes};
use profile_relayer::lsp23::deploy_erc1167_proxies_calldata;

use super::ctx::{Ctx, Object, now_ms};
use super::model::{DeployJob, DeployOutcome, Job, PendingTx, Waited};
use super::policy::{self, ALARM_MS};
use super::send::send_new;
use super::sync::sync_lane;
use super::wait::wait;
use crate::{error::ApiResult, meter::Limit, shares::Payer, store};

/// Deploys (or finds deployed) the profile of `job`.
pub(super) async fn deploy(obj: Object<'_>, job: DeployJob) -> ApiResult<DeployOutcome> {
    let result = deploy_and_wait(obj, job).await;
    if let Err(e) = &result {
        obj.note_error(e);
    }
    result
}

async fn deploy_and_wait(obj: Object<'_>, job: DeployJob) -> ApiResult<DeployOutcome> {
    let cx = obj.ctx()?;
    cx.check_chain().await?;
    let input =
        deploy_erc1167_proxies_calldata(job.salt, &job.post_deployment_call_data, &cx.config.constants)?;
    let profile = job.universal_profile;
    let wanted = Job::Deploy {
        universal_profile: profile,
    };
    let Some(tx) = pending_or_sent(&cx, &job, &wanted, input.into()).await? else {
        return Ok(DeployOutcome {
            transaction_hash: None,
            deployed: true,
        });
    };
    match wait(&cx, &wanted, tx, cx.config.deploy_wait_ms).await? {
        Waited::Mined(hash) => Ok(DeployOutcome {
            transaction_hash: Some(hash),
            deployed: true,
        }),
        Waited::Gone(last) => gone(&cx, profile, &last).await,
        Waited::Pending(last) => Ok(DeployOutcome {
            transaction_hash: last.hashes.last().copied(),
            deployed: false,
        }),
    }
}

/// Under the send lock: the pending deployment of the profile, else a new one sent; `None` when the profile is
/// deployed already (nothing sent).
async fn pending_or_sent(
    cx: &Ctx<'_>,
    job: &DeployJob,
    wanted: &Job,
    input: Bytes,
) -> ApiResult<Option<PendingTx>> {
    let _guard = cx.obj.send_lock.lock().await;
    sync_lane(cx).await?;
    // under the lock: a concurrent request for the same profile waits for the first one's transaction
    if let Some(pending) = cx.store().find_job(wanted)? {
        return Ok(Some(pending));
    }
    let profile = job.universal_profile;
    cx.obj.refuse_if_draining(profile)?;
    if !cx.rpc.code(profile).await?.is_empty() {
        return Ok(None);
    }
    let key = job.key_id.clone().map(|key| (key, job.key_budget));
    let plan = policy::deploy_plan(
        cx.config.chain_id,
        profile,
        key,
        cx.config.max_gas_per_day,
        deploy_shares(cx, job),
        now_ms(),
    );
    let tx = send_new(cx, wanted.clone(), cx.config.constants.factory, input, plan).await?;
    cx.store().ensure_alarm(ALARM_MS).await?;
    Ok(Some(tx))
}

/// The fair shares a deployment is also reserved on: the asking client's part of the key's budget, and the
/// client's and the key's parts of the day's ceiling ([`crate::shares`]).
fn deploy_shares(cx: &Ctx<'_>, job: &DeployJob) -> Vec<Limit> {
    let shares = &cx.config.shares;
    let payer = Payer {
        client: job.client.clone(),
        key: job.key_id.clone(),
        ..Payer::default()
    };
    let budget = match (&job.key_id, &job.client) {
        (Some(key), Some(client)) => shares.of_key_budget(key, client, job.key_budget),
        _ => None,
    };
    budget
        .into_iter()
        .chain(shares.of_ceiling(cx.config.chain_id, cx.config.max_gas_per_day, &payer, None))
        .collect()
}

/// The deployment left the lane while the request waited: finished by another round (the alarm), or deployed by
/// someone else.
async fn gone(cx: &Ctx<'_>, profile: Address, last: &PendingTx) -> ApiResult<DeployOutcome> {
    let deployed = !cx.rpc.code(profile).await?.is_empty();
    let recorded = store::profile(&cx.obj.env.kv("PROFILES")?, profile)
        .await?
        .and_then(|r| r.deployment_transaction);
    Ok(DeployOutcome {
        transaction_hash: if deployed {
            recorded
        } else {
            last.hashes.last().copied()
        },
        deployed,
    })
}
