//! Waiting for a lane transaction: the deploy or relay request polls the rounds until its job is mined or the
//! wait ends.

use alloy_primitives::B256;
use worker::Delay;

use crate::error::ApiResult;

use super::jobs::Job;
use super::lane::PendingTx;
use super::rounds::Round;
use super::{Ctx, Relayer, now_ms};

/// How waiting for a lane transaction ended.
#[derive(Debug)]
pub(super) enum Waited {
    /// Mined with this hash (the job finished).
    Mined(B256),
    /// No longer in the lane (finished by another round, or given up); the last copy seen.
    Gone(PendingTx),
    /// Still pending when the wait ended; the latest copy.
    Pending(PendingTx),
}

/// How long a waiting request sleeps between receipt checks: short at first (a local or fast chain mines at once),
/// then every 250 ms.
pub(super) fn poll_interval(started_ms: u64) -> core::time::Duration {
    let waited = now_ms().saturating_sub(started_ms);
    core::time::Duration::from_millis(match waited {
        0..100 => 10,
        100..1_000 => 50,
        _ => 250,
    })
}

impl Relayer {
    /// Follows the lane transaction of `wanted` (replaced, or sent again under another nonce) through rounds until
    /// it is mined, leaves the lane some other way, or `DEPLOY_WAIT_SECONDS` pass.
    pub(super) async fn wait(&self, ctx: &Ctx, wanted: &Job, mut tx: PendingTx) -> ApiResult<Waited> {
        let started_ms = now_ms();
        let deadline = started_ms + ctx.config.deploy_wait_ms;
        loop {
            if let Round::Mined(hash) = self.round(ctx, &tx).await? {
                return Ok(Waited::Mined(hash));
            }
            match self.find_job(wanted)? {
                Some(current) => tx = current,
                None => return Ok(Waited::Gone(tx)),
            }
            if now_ms() >= deadline {
                return Ok(Waited::Pending(tx));
            }
            Delay::from(poll_interval(started_ms)).await;
        }
    }
}
