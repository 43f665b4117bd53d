//! The `RateLimiter` Durable Object — one per bucket name (an API key's id, `ip:<client>`, `admin:<client>`,
//! `upload-bytes:<client>`, …) — and its typed client ([`Limiter`]). The object holds one [`Bucket`]; every step on
//! it runs without an `await` between reading and writing the bucket, so concurrent requests take their tokens one
//! after the other. An API key's object is also where its revocation takes effect at once: every authenticated
//! request passes through it, and [`LimiterOp::Revoke`] stores the flag in the object's transactional storage (KV,
//! where the key record lives, may serve a cached record for a while).

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

use std::cell::{Cell, RefCell};

use serde::{Deserialize, Serialize};
use worker::{DurableObject, Env, Request, Response, Result, State, Stub, durable_object};

use super::bucket::{Bucket, Hit, MINUTE_MS, Verdict};
use crate::error::{ApiError, ApiResult, Code};

/// What a `RateLimiter` object is asked; every op answers a [`Verdict`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "op")]
pub enum LimiterOp {
    /// One step on the bucket ([`Hit`]).
    Step(Hit),
    /// Revokes the API key this object belongs to: every later step answers `revoked`.
    Revoke,
}

/// A client of the `RateLimiter` object of one bucket name.
#[derive(Debug)]
pub struct Limiter(Stub);

impl Limiter {
    /// The object of the bucket `name`.
    pub fn named(env: &Env, name: &str) -> ApiResult<Self> {
        Ok(Self(
            env.durable_object("RATE_LIMITER")?
                .id_from_name(name)?
                .get_stub()?,
        ))
    }

    /// Sends `op`.
    pub async fn send(&self, op: &LimiterOp) -> ApiResult<Verdict> {
        crate::plumbing::call_do(&self.0, "/", op).await
    }

    /// A request bucket's step now: gives `refund` back, then takes `cost` tokens (0: only asks) or, with `lease` >
    /// 0, leases up to that many ([`Bucket::lease`]); `limit` a minute.
    async fn request_step(&self, limit: u32, cost: u32, refund: u32, lease: u32) -> ApiResult<Verdict> {
        self.send(&LimiterOp::Step(Hit {
            limit,
            now_ms: crate::plumbing::now_ms() as f64,
            cost,
            refund,
            lease,
            period_s: 0,
            whole: false,
        }))
        .await
    }

    /// Takes `cost` tokens (0: only asks) of a bucket of `limit` a minute.
    pub async fn take(&self, limit: u32, cost: u32) -> ApiResult<Verdict> {
        self.request_step(limit, cost, 0, 0).await
    }

    /// Gives one token back to a bucket of `limit` a minute.
    pub async fn give_back(&self, limit: u32) -> ApiResult<()> {
        self.request_step(limit, 0, 1, 0).await.map(|_| ())
    }

    /// Gives `refund` back, then leases up to `want` tokens of a bucket of `limit` a minute ([`super::leases::Leases`]).
    pub async fn lease(&self, limit: u32, want: u32, refund: u32) -> ApiResult<Verdict> {
        self.request_step(limit, 0, refund, want.max(1)).await
    }

    /// Spends `cost` of a budget of `limit` a `period_s` ([`Bucket::spend`]: whole or not at all), kept in the
    /// object's storage.
    pub async fn spend(&self, limit: u32, period_s: u32, cost: u32) -> ApiResult<Verdict> {
        self.send(&LimiterOp::Step(Hit {
            limit,
            now_ms: crate::plumbing::now_ms() as f64,
            cost,
            refund: 0,
            lease: 0,
            period_s,
            whole: true,
        }))
        .await
    }

    /// Revokes the API key of this object ([`LimiterOp::Revoke`]).
    pub async fn revoke(&self) -> ApiResult<()> {
        self.send(&LimiterOp::Revoke).await.map(|_| ())
    }
}

/// 429 `RATE_LIMITED` saying `message`, with the verdict's wait as `Retry-After`.
pub fn rate_limited(message: impl Into<String>, verdict: &Verdict) -> ApiError {
    let mut err = ApiError::new(Code::RateLimited, message);
    err.retry_after = Some(verdict.retry_after);
    err
}

const REVOKED_VERDICT: Verdict = Verdict {
    allowed: false,
    retry_after: 0,
    revoked: true,
    granted: 0,
};

/// The Durable Object of one bucket.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct RateLimiter {
    state: State,
    bucket: RefCell<Option<Bucket>>,
    revoked: Cell<Option<bool>>,
}

const REVOKED: &str = "revoked";
/// Where a budget's bucket ([`Hit::whole`]) is kept: an hourly budget must not refill when the object is evicted.
const BUDGET: &str = "budget";

impl DurableObject for RateLimiter {
    fn new(state: State, _env: Env) -> Self {
        Self {
            state,
            bucket: RefCell::new(None),
            revoked: Cell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let hit = match req.json::<LimiterOp>().await? {
            LimiterOp::Revoke => {
                self.state.storage().put(REVOKED, true).await?;
                self.revoked.set(Some(true));
                return Response::from_json(&REVOKED_VERDICT);
            }
            LimiterOp::Step(hit) => hit,
        };
        let revoked = match self.revoked.get() {
            Some(r) => r,
            None => {
                let r = self.state.storage().get::<bool>(REVOKED).await?.unwrap_or(false);
                self.revoked.set(Some(r));
                r
            }
        };
        if revoked {
            return Response::from_json(&REVOKED_VERDICT);
        }
        if hit.whole && self.bucket.borrow().is_none() {
            // a budget outlives the object: read back once (a storage read holds other events back)
            let stored = self.state.storage().get::<Bucket>(BUDGET).await?;
            let mut bucket = self.bucket.borrow_mut();
            if bucket.is_none() {
                *bucket = stored;
            }
        }
        // no await from here on until the answer: concurrent requests take their tokens one after the other
        let current = *self.bucket.borrow();
        let (bucket, verdict) = if hit.lease > 0 {
            Bucket::lease(current, hit.limit, hit.now_ms, hit.lease, hit.refund)
        } else if hit.refund > 0 {
            Bucket::give(current, hit.limit, hit.now_ms, hit.refund)
        } else if hit.whole {
            let period_ms = if hit.period_s == 0 {
                MINUTE_MS
            } else {
                f64::from(hit.period_s) * 1000.0
            };
            Bucket::spend(current, hit.limit, period_ms, hit.now_ms, hit.cost)
        } else {
            Bucket::take(current, hit.limit, hit.now_ms, hit.cost)
        };
        *self.bucket.borrow_mut() = Some(bucket);
        if hit.whole {
            // stored before the answer leaves (the output gate): a spent budget stays spent
            self.state.storage().put(BUDGET, bucket).await?;
        }
        Response::from_json(&verdict)
    }
}
