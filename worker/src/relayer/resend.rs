//! A job whose transaction can never be mined (its nonce used by another transaction) sent again at a fresh nonce
//! with the same charge: a round's dropped transaction (`rounds.rs`) and a displaced one whose nonce is used deep
//! enough (`confirm.rs`).

use super::ctx::Ctx;
use super::model::{Job, PendingTx, Round, SendPlan};
use super::profiles::record;
use super::send::send_new;
use super::sync::sync_lane;
use crate::{
    error::{ApiError, ApiResult, Code},
    meter::Charge,
    signer::{self, TxRequest},
};

/// Sends the job of `stored` again — a relay call only if it still succeeds, a deployment only if the profile is
/// not there yet: `Pending` when sent, `Gone` when there is nothing to send (a relay call that no longer succeeds:
/// its charge released; a deployment found made). `replaces`: its lane row, removed with the new row's write (or
/// when given up); `None` for a transaction no longer in the lane (a displaced one, `confirm`). Caller holds
/// `send_lock`.
pub(super) async fn send_again(cx: &Ctx<'_>, stored: &PendingTx, replaces: Option<u64>) -> ApiResult<Round> {
    match stored.job {
        Job::Execute { profile, .. } => {
            let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
            // sent again only if the call still succeeds (its relay nonce may have been used meanwhile)
            let succeeds = cx
                .rpc
                .estimate_gas(cx.signer.address(), request.to, &request.input)
                .await
                .is_ok();
            if !succeeds {
                cx.store().write(replaces, None)?;
                cx.release(stored.charge.as_ref()).await;
                worker::console_warn!(
                    "{profile}: dropped relay call no longer succeeds; given up, quota released"
                );
                return Ok(Round::Gone);
            }
            sync_lane(cx).await?;
            let gas_limit = Some(request.gas_limit);
            resend(cx, stored, replaces, request, gas_limit).await?;
            Ok(Round::Pending)
        }
        // the hole it was to fill is filled
        Job::Filler => {
            cx.store().write(replaces, None)?;
            Ok(Round::Gone)
        }
        Job::Deploy { universal_profile } => {
            if !cx.rpc.code(universal_profile).await?.is_empty() {
                // deployed by another transaction with the same salt: nothing to send
                cx.store().write(replaces, None)?;
                let key = stored.charge.as_ref().and_then(Charge::key_id);
                record(cx.obj, universal_profile, None, key).await?;
                return Ok(Round::Gone);
            }
            sync_lane(cx).await?;
            let (request, _) = signer::decode(&stored.raw).map_err(ApiError::internal)?;
            match resend(cx, stored, replaces, request, None).await {
                Ok(sent) => {
                    worker::console_warn!(
                        "{universal_profile}: deployment sent again at nonce {} as {}",
                        sent.nonce,
                        sent.latest_hash()
                    );
                    Ok(Round::Pending)
                }
                Err(e) if e.is(Code::DeploymentWouldRevert) => {
                    cx.store().write(replaces, None)?;
                    Err(e)
                }
                // kept as it is: the next round tries again
                Err(e) => Err(e),
            }
        }
    }
}

/// Sends `request` (the stored one, decoded) for `stored`'s job at a fresh nonce, its hashes added to the dropped.
async fn resend(
    cx: &Ctx<'_>,
    stored: &PendingTx,
    replaces: Option<u64>,
    request: TxRequest,
    gas_limit: Option<u64>,
) -> ApiResult<PendingTx> {
    let mut dropped = stored.dropped.clone();
    dropped.extend(stored.hashes.iter().copied());
    let plan = SendPlan {
        gas_limit,
        charge: stored.charge.clone(),
        dropped,
        replaces,
        ..SendPlan::default()
    };
    send_new(cx, stored.job.clone(), request.to, request.input, plan).await
}
