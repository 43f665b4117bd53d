//! Per-key rate limits: one `RateLimiter` Durable Object per API key, a token bucket refilled continuously
//! (`limit` requests per minute, bursts up to `limit`). Approximate across restarts, exact within one instance.

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

use std::cell::RefCell;

use serde::{Deserialize, Serialize};
use worker::{DurableObject, Env, Request, Response, Result, State, durable_object};

/// Request to the limiter.
#[derive(Debug, Serialize, Deserialize)]
pub struct Hit {
    /// Requests per minute.
    pub limit: u32,
    /// Current time, milliseconds.
    pub now_ms: f64,
}

/// Answer of the limiter.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// Seconds until a request would be allowed.
    pub retry_after: u64,
}

/// Token bucket state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    tokens: f64,
    updated_ms: f64,
}

impl Bucket {
    /// Takes one token if available.
    pub fn take(state: Option<Self>, limit: u32, now_ms: f64) -> (Self, Verdict) {
        let capacity = f64::from(limit.max(1));
        let rate_per_ms = capacity / 60_000.0;
        let mut b = state.unwrap_or(Self {
            tokens: capacity,
            updated_ms: now_ms,
        });
        b.tokens = (b.tokens + (now_ms - b.updated_ms).max(0.0) * rate_per_ms).min(capacity);
        b.updated_ms = now_ms;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            (
                b,
                Verdict {
                    allowed: true,
                    retry_after: 0,
                },
            )
        } else {
            let wait_ms = (1.0 - b.tokens) / rate_per_ms;
            (
                b,
                Verdict {
                    allowed: false,
                    retry_after: (wait_ms / 1000.0).ceil().max(1.0) as u64,
                },
            )
        }
    }
}

/// The Durable Object.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct RateLimiter {
    bucket: RefCell<Option<Bucket>>,
}

impl DurableObject for RateLimiter {
    fn new(_state: State, _env: Env) -> Self {
        Self {
            bucket: RefCell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let hit: Hit = req.json().await?;
        let current = *self.bucket.borrow();
        let (bucket, verdict) = Bucket::take(current, hit.limit, hit.now_ms);
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
            let (b, v) = Bucket::take(state, 3, 1000.0);
            assert!(v.allowed, "request {i}");
            state = Some(b);
        }
        let (b, v) = Bucket::take(state, 3, 1000.0);
        assert!(!v.allowed);
        assert_eq!(v.retry_after, 20);
        let (_, v) = Bucket::take(Some(b), 3, 21_000.0);
        assert!(v.allowed);
    }
}
