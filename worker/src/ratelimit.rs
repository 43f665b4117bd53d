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
    /// Whole tokens left in the bucket after this request ([`Estimates`]).
    #[serde(default)]
    pub remaining: u32,
}

impl Verdict {
    fn allowed(bucket: &Bucket) -> Self {
        Self {
            allowed: true,
            retry_after: 0,
            revoked: false,
            remaining: bucket.whole_tokens(),
        }
    }
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
        let verdict = Verdict::allowed(&b);
        (b, verdict)
    }

    /// The whole tokens in the bucket.
    fn whole_tokens(&self) -> u32 {
        // within 0..=limit (a u32): the cast neither wraps nor loses a whole token
        self.tokens.floor().clamp(0.0, f64::from(u32::MAX)) as u32
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
            let verdict = Verdict::allowed(&b);
            (b, verdict)
        } else {
            let wait_ms = (1.0 - b.tokens) / rate_per_ms;
            (
                b,
                Verdict {
                    allowed: false,
                    retry_after: (wait_ms / 1000.0).ceil().max(1.0) as u64,
                    revoked: false,
                    remaining: 0,
                },
            )
        }
    }
}

/// How long what an isolate heard of a bucket may be acted on ([`Estimates`]).
const ESTIMATE_MAX_AGE_MS: f64 = 10_000.0;
/// Buckets an isolate remembers ([`Estimates`]); past it, it forgets them all (and only waits more).
const ESTIMATE_CAPACITY: usize = 1024;

/// What this isolate last heard of a few buckets: how many whole tokens were left, and when. A request whose
/// bucket had a spare token at its last answer may start its work before its own answer comes back
/// ([`Estimates::go_ahead`]): the token is still taken in the object, and the caller still waits for the answer
/// before it sends anything — a refusal then stops the work and answers 429. This only takes the object's round
/// trip off the path of clients within their limit. What a client can start ahead of a refusal is bounded by its
/// bucket: an estimate is only ever raised by an answer that found at least two tokens left (a drained bucket
/// refills at `limit` per minute), and each request let ahead takes one from it.
#[derive(Debug, Default)]
pub struct Estimates {
    heard: std::collections::HashMap<String, Estimate>,
}

#[derive(Debug, Clone, Copy)]
struct Estimate {
    remaining: u32,
    limit: u32,
    at_ms: f64,
}

impl Estimates {
    /// Whether a request to bucket `name` may start before its answer: the bucket's last answer (for this
    /// `limit`, at most [`ESTIMATE_MAX_AGE_MS`] old) left two tokens or more, counting those let ahead since.
    pub fn go_ahead(&mut self, name: &str, limit: u32, now_ms: f64) -> bool {
        match self.heard.get_mut(name) {
            Some(e)
                if e.limit == limit
                    && (0.0..=ESTIMATE_MAX_AGE_MS).contains(&(now_ms - e.at_ms))
                    && e.remaining >= 2 =>
            {
                e.remaining -= 1;
                true
            }
            _ => false,
        }
    }

    /// Bucket `name` answered `verdict` at `now_ms`.
    pub fn heard(&mut self, name: &str, limit: u32, verdict: &Verdict, now_ms: f64) {
        if self.heard.len() >= ESTIMATE_CAPACITY && !self.heard.contains_key(name) {
            self.heard.clear();
        }
        let remaining = if verdict.allowed { verdict.remaining } else { 0 };
        self.heard.insert(
            name.to_owned(),
            Estimate {
                remaining,
                limit,
                at_ms: now_ms,
            },
        );
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
                remaining: 0,
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
    fn answers_count_the_whole_tokens_left() {
        let (b, v) = Bucket::take(None, 3, 0.0, 1);
        assert_eq!(v.remaining, 2);
        let (b, v) = Bucket::take(Some(b), 3, 0.0, 1);
        assert_eq!(v.remaining, 1);
        let (b, v) = Bucket::take(Some(b), 3, 0.0, 1);
        assert_eq!(v.remaining, 0);
        let (b, v) = Bucket::take(Some(b), 3, 0.0, 1);
        assert!(!v.allowed);
        assert_eq!(v.remaining, 0);
        // half a minute refills 1.5 tokens: one whole
        let (_, v) = Bucket::take(Some(b), 3, 30_000.0, 0);
        assert_eq!(v.remaining, 1);
    }

    fn allowed(remaining: u32) -> Verdict {
        Verdict {
            allowed: true,
            retry_after: 0,
            revoked: false,
            remaining,
        }
    }

    #[test]
    fn a_request_goes_ahead_only_while_a_spare_token_is_known() {
        let mut e = Estimates::default();
        // nothing heard yet: wait for the answer
        assert!(!e.go_ahead("miss:1.2.3.4", 10, 0.0));
        e.heard("miss:1.2.3.4", 10, &allowed(3), 0.0);
        // 3 left: two go ahead (each takes one from the estimate), the third waits
        assert!(e.go_ahead("miss:1.2.3.4", 10, 1.0));
        assert!(e.go_ahead("miss:1.2.3.4", 10, 2.0));
        assert!(!e.go_ahead("miss:1.2.3.4", 10, 3.0));
        // another bucket, another limit, a stale answer: wait
        assert!(!e.go_ahead("miss:5.6.7.8", 10, 3.0));
        e.heard("miss:1.2.3.4", 10, &allowed(5), 10.0);
        assert!(!e.go_ahead("miss:1.2.3.4", 20, 11.0));
        assert!(!e.go_ahead("miss:1.2.3.4", 10, 10.0 + ESTIMATE_MAX_AGE_MS + 1.0));
        // a clock that went back is no reason either
        assert!(!e.go_ahead("miss:1.2.3.4", 10, 5.0));
        assert!(e.go_ahead("miss:1.2.3.4", 10, 12.0));
        // a refusal (or a drained bucket) stops it until an answer finds two tokens again
        let refused = Verdict {
            allowed: false,
            retry_after: 6,
            revoked: false,
            remaining: 7,
        };
        e.heard("miss:1.2.3.4", 10, &refused, 20.0);
        assert!(!e.go_ahead("miss:1.2.3.4", 10, 21.0));
        e.heard("miss:1.2.3.4", 10, &allowed(1), 22.0);
        assert!(!e.go_ahead("miss:1.2.3.4", 10, 23.0));
    }

    #[test]
    fn estimates_stay_bounded() {
        let mut e = Estimates::default();
        for i in 0..(ESTIMATE_CAPACITY * 3) {
            e.heard(&format!("miss:{i}"), 10, &allowed(5), 0.0);
            assert!(e.heard.len() <= ESTIMATE_CAPACITY);
        }
        // the newest is still known
        assert!(e.go_ahead(&format!("miss:{}", ESTIMATE_CAPACITY * 3 - 1), 10, 1.0));
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
