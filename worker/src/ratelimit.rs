//! Per-key rate limits: one `RateLimiter` Durable Object per API key (and per client IP for the admin token
//! and anonymous routes), a token bucket refilled continuously (`limit` requests per minute, bursts up to
//! `limit`). Approximate across restarts, exact within one instance.
//!
//! The key's object is also where its revocation takes effect at once: every authenticated request passes
//! through it, and `/revoke` stores the flag in the object's transactional storage (KV, where the key record
//! lives, may serve a cached record for a while).

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

use std::cell::{Cell, RefCell};

use serde::{Deserialize, Serialize};
use worker::{DurableObject, Env, Request, Response, Result, State, durable_object};

/// Request to the limiter.
#[derive(Debug, Serialize, Deserialize)]
pub struct Hit {
    /// Requests per minute.
    pub limit: u32,
    /// Current time, milliseconds.
    pub now_ms: f64,
    /// Tokens taken: 1 for a request; 0 only asks whether one would be allowed.
    #[serde(default = "one")]
    pub cost: u32,
    /// Tokens given back instead (a request that took one and turned out not to count: the right admin token).
    #[serde(default)]
    pub refund: u32,
}

const fn one() -> u32 {
    1
}

/// Answer of the limiter.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// Seconds until a request would be allowed.
    pub retry_after: u64,
    /// The API key of this object was revoked.
    #[serde(default)]
    pub revoked: bool,
}

/// Token bucket state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    tokens: f64,
    updated_ms: f64,
}

impl Bucket {
    /// Gives `n` tokens back (at most up to the capacity); always allowed.
    pub fn give(state: Option<Self>, limit: u32, now_ms: f64, n: u32) -> (Self, Verdict) {
        let (mut b, _) = Self::take(state, limit, now_ms, 0);
        b.tokens = (b.tokens + f64::from(n)).min(f64::from(limit.max(1)));
        (
            b,
            Verdict {
                allowed: true,
                retry_after: 0,
                revoked: false,
            },
        )
    }

    /// Takes one token if available.
    pub fn take(state: Option<Self>, limit: u32, now_ms: f64, cost: u32) -> (Self, Verdict) {
        let capacity = f64::from(limit.max(1));
        let rate_per_ms = capacity / 60_000.0;
        let mut b = state.unwrap_or(Self {
            tokens: capacity,
            updated_ms: now_ms,
        });
        b.tokens = (b.tokens + (now_ms - b.updated_ms).max(0.0) * rate_per_ms).min(capacity);
        b.updated_ms = now_ms;
        if b.tokens >= 1.0 {
            b.tokens = (b.tokens - f64::from(cost)).max(0.0);
            (
                b,
                Verdict {
                    allowed: true,
                    retry_after: 0,
                    revoked: false,
                },
            )
        } else {
            let wait_ms = (1.0 - b.tokens) / rate_per_ms;
            (
                b,
                Verdict {
                    allowed: false,
                    retry_after: (wait_ms / 1000.0).ceil().max(1.0) as u64,
                    revoked: false,
                },
            )
        }
    }
}

/// The Durable Object.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct RateLimiter {
    state: State,
    bucket: RefCell<Option<Bucket>>,
    revoked: Cell<Option<bool>>,
}

const REVOKED: &str = "revoked";

impl DurableObject for RateLimiter {
    fn new(state: State, _env: Env) -> Self {
        Self {
            state,
            bucket: RefCell::new(None),
            revoked: Cell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        if req.path() == "/revoke" {
            self.state.storage().put(REVOKED, true).await?;
            self.revoked.set(Some(true));
            return Response::from_json(&true);
        }
        let revoked = match self.revoked.get() {
            Some(r) => r,
            None => {
                let r = self.state.storage().get::<bool>(REVOKED).await?.unwrap_or(false);
                self.revoked.set(Some(r));
                r
            }
        };
        if revoked {
            return Response::from_json(&Verdict {
                allowed: false,
                retry_after: 0,
                revoked: true,
            });
        }
        let hit: Hit = req.json().await?;
        // no await from here on: concurrent requests take their tokens one after the other
        let current = *self.bucket.borrow();
        let (bucket, verdict) = if hit.refund > 0 {
            Bucket::give(current, hit.limit, hit.now_ms, hit.refund)
        } else {
            Bucket::take(current, hit.limit, hit.now_ms, hit.cost)
        };
        *self.bucket.borrow_mut() = Some(bucket);
        Response::from_json(&verdict)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn bucket_allows_limit_then_refills() {
        let mut state = None;
        for i in 0..3 {
            let (b, v) = Bucket::take(state, 3, 1000.0, 1);
            assert!(v.allowed, "request {i}");
            state = Some(b);
        }
        let (b, v) = Bucket::take(state, 3, 1000.0, 1);
        assert!(!v.allowed);
        assert_eq!(v.retry_after, 20);
        // asking costs nothing
        let (b, v) = Bucket::take(Some(b), 3, 1000.0, 0);
        assert!(!v.allowed);
        let (b, v) = Bucket::take(Some(b), 3, 21_000.0, 0);
        assert!(v.allowed);
        let (_, v) = Bucket::take(Some(b), 3, 21_000.0, 1);
        assert!(v.allowed);
    }

    #[test]
    fn a_refund_gives_a_token_back_up_to_the_capacity() {
        let (b, _) = Bucket::take(None, 2, 0.0, 1);
        let (b, _) = Bucket::take(Some(b), 2, 0.0, 1);
        assert!(!Bucket::take(Some(b), 2, 0.0, 1).1.allowed);
        let (b, v) = Bucket::give(Some(b), 2, 0.0, 1);
        assert!(v.allowed);
        let (b, v) = Bucket::take(Some(b), 2, 0.0, 1);
        assert!(v.allowed);
        assert!(!Bucket::take(Some(b), 2, 0.0, 1).1.allowed);
        // never above the capacity
        let (b, _) = Bucket::give(None, 2, 0.0, 5);
        let (b, _) = Bucket::take(Some(b), 2, 0.0, 1);
        let (b, _) = Bucket::take(Some(b), 2, 0.0, 1);
        assert!(!Bucket::take(Some(b), 2, 0.0, 1).1.allowed);
    }
}
