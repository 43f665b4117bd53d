//! Waiting for a lane transaction: the deploy or relay request polls the rounds until its job is mined or the
//! wait ends.

use worker::Delay;

use super::ctx::{Ctx, now_ms};
use super::model::{Job, PendingTx, Round, Waited};
use super::policy::poll_interval;
use super::rounds::round;
use crate::error::ApiResult;

/// Follows the lane transaction of `wanted` (replaced, or sent again under another nonce) through rounds until
/// it is mined, leaves the lane some other way, or `wait_ms` pass (a deploy: `DEPLOY_WAIT_SECONDS`; a relay call:
/// what its `Prefer: wait` asked, within that).
pub(super) async fn wait(cx: &Ctx<'_>, wanted: &Job, mut tx: PendingTx, wait_ms: u64) -> ApiResult<Waited> {
    let started_ms = now_ms();
    let deadline = started_ms + wait_ms;
    loop {
        if let Round::Mined(hash) = round(cx, &tx).await? {
            return Ok(Waited::Mined(hash));
        }
        match cx.store().find_job(wanted)? {
            Some(current) => tx = current,
            None => return Ok(Waited::Gone(tx)),
        }
        if now_ms() >= deadline {
            return Ok(Waited::Pending(tx));
        }
        Delay::from(poll_interval(now_ms().saturating_sub(started_ms))).await;
    }
}
