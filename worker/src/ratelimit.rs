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
    /// Tokens given back instead (a request that took one and turned out not to count: the right admin token), or
    /// before a lease (the unused tokens of the caller's last lease).
    #[serde(default)]
    pub refund: u32,
    /// A lease instead of a take: up to this many whole tokens taken at once (at least one, else refused), for the
    /// caller to spend on its own ([`Bucket::lease`]); `granted` in the verdict.
    #[serde(default)]
    pub lease: u32,
    /// The bucket's refill period, seconds: `limit` tokens a period, bursts up to `limit` (0: a minute).
    #[serde(default)]
    pub period_s: u32,
    /// A budget ([`Bucket::spend`]): `cost` is taken only when the bucket holds all of it, never overdrawn.
    #[serde(default)]
    pub whole: bool,
}

const fn one() -> u32 {
    1
}

const MINUTE_MS: f64 = 60_000.0;

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
    /// Tokens leased (a lease: ≥ 1 when allowed).
    #[serde(default)]
    pub granted: u32,
}

/// Token bucket state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
                granted: 0,
            },
        )
    }

    /// Takes `cost` tokens while one is left (a request that turns out to cost more empties the bucket, it is not
    /// refused): `limit` a minute.
    pub fn take(state: Option<Self>, limit: u32, now_ms: f64, cost: u32) -> (Self, Verdict) {
        Self::step(state, limit, MINUTE_MS, now_ms, cost, 1.0)
    }

    /// Spends `cost` of a budget of `limit` a `period_ms`, only when all of it is there: a spend never overdraws
    /// the bucket, and a refused one waits until the bucket holds it. A `cost` above `limit` is asked as `limit` (a
    /// full bucket), so that every spend can be made some time.
    pub fn spend(state: Option<Self>, limit: u32, period_ms: f64, now_ms: f64, cost: u32) -> (Self, Verdict) {
        let cost = cost.min(limit.max(1));
        Self::step(state, limit, period_ms, now_ms, cost, f64::from(cost))
    }

    /// The bucket refilled to `now_ms` (`limit` a `period_ms`), then `cost` taken when at least `needed` is there.
    fn step(
        state: Option<Self>,
        limit: u32,
        period_ms: f64,
        now_ms: f64,
        cost: u32,
        needed: f64,
    ) -> (Self, Verdict) {
        let capacity = f64::from(limit.max(1));
        let rate_per_ms = capacity / period_ms.max(1.0);
        let mut b = state.unwrap_or(Self {
            tokens: capacity,
            updated_ms: now_ms,
        });
        b.tokens = (b.tokens + (now_ms - b.updated_ms).max(0.0) * rate_per_ms).min(capacity);
        // callers' clocks differ: a time behind the last one refills nothing, and the same time is not refilled twice
        b.updated_ms = b.updated_ms.max(now_ms);
        if b.tokens >= needed {
            b.tokens = (b.tokens - f64::from(cost)).max(0.0);
            (
                b,
                Verdict {
                    allowed: true,
                    retry_after: 0,
                    revoked: false,
                    granted: 0,
                },
            )
        } else {
            let wait_ms = (needed - b.tokens) / rate_per_ms;
            (
                b,
                Verdict {
                    allowed: false,
                    retry_after: (wait_ms / 1000.0).ceil().max(1.0) as u64,
                    revoked: false,
                    granted: 0,
                },
            )
        }
    }

    /// Gives `refund` back, then takes up to `want` whole tokens at once: at least one, else refused (with the wait
    /// for one). What is leased is gone from the bucket: whoever spends it can never spend more than the bucket gave.
    pub fn lease(state: Option<Self>, limit: u32, now_ms: f64, want: u32, refund: u32) -> (Self, Verdict) {
        let (mut b, _) = Self::give(state, limit, now_ms, refund);
        if b.tokens < 1.0 {
            return Self::take(Some(b), limit, now_ms, 1);
        }
        // whole tokens only, at most the capacity (a `u32`)
        let granted = (b.tokens.floor() as u32).min(want.max(1));
        b.tokens -= f64::from(granted);
        (
            b,
            Verdict {
                allowed: true,
                retry_after: 0,
                revoked: false,
                granted,
            },
        )
    }
}

/// How long a lease's tokens may be spent (ms); unused ones go back with the client's next lease.
const LEASE_MS: f64 = 10_000.0;
/// Clients with a lease held in one isolate; past it, the oldest lease is dropped (its tokens are lost: stricter).
const MAX_LEASES: usize = 1024;
/// The largest lease: a sixteenth of the limit, at most 8, at least 1 (a small limit is asked token by token).
#[must_use]
pub fn max_lease(limit: u32) -> u32 {
    (limit / 16).clamp(1, 8)
}

/// One client's leased tokens in this isolate.
#[derive(Debug, Clone, Copy)]
struct Lease {
    tokens: u32,
    /// The size of the lease these tokens came from (the next one doubles it when they are spent in time).
    size: u32,
    expires_ms: f64,
}

/// Tokens leased from the `RateLimiter` objects, held by one isolate and spent without asking the object, so that a
/// client that keeps coming costs one object call per lease instead of one per request. A lease starts at one token
/// and doubles (up to [`max_lease`]) each time the last one was spent within [`LEASE_MS`]: a client seen once holds
/// no spare token, a busy one at most the largest lease. Never looser than asking per request: every token spent
/// was taken from the bucket first; tokens unspent by expiry are given back with the client's next lease (taken
/// from the entry as it is read, so that two requests cannot give them back twice), lost if it never comes.
#[derive(Debug, Default)]
pub struct Leases(std::collections::HashMap<String, Lease>);

impl Leases {
    /// Spends one of `key`'s leased tokens: `None` when one was there, else what to ask the object for: a lease of
    /// `.0` tokens, giving `.1` back.
    pub fn spend(&mut self, key: &str, limit: u32, now_ms: f64) -> Option<(u32, u32)> {
        let Some(lease) = self.0.get_mut(key) else {
            return Some((1, 0));
        };
        if lease.expires_ms <= now_ms {
            // expired: its unused tokens go back, the next lease starts small
            return Some((1, core::mem::take(&mut lease.tokens)));
        }
        if lease.tokens > 0 {
            lease.tokens -= 1;
            return None;
        }
        // spent in time: a larger one
        Some((lease.size.saturating_mul(2).min(max_lease(limit)), 0))
    }

    /// The object's answer to a lease for `key`: its tokens (one of them spent on the request that asked) are held.
    pub fn granted(&mut self, key: &str, verdict: &Verdict, now_ms: f64) {
        if !verdict.allowed {
            self.0.remove(key);
            return;
        }
        if self.0.len() >= MAX_LEASES && !self.0.contains_key(key) {
            self.0.retain(|_, lease| lease.expires_ms > now_ms);
            if self.0.len() >= MAX_LEASES
                && let Some(oldest) = self
                    .0
                    .iter()
                    .min_by(|a, b| a.1.expires_ms.total_cmp(&b.1.expires_ms))
                    .map(|(k, _)| k.clone())
            {
                self.0.remove(&oldest);
            }
        }
        self.0.insert(
            key.to_owned(),
            Lease {
                tokens: verdict.granted.saturating_sub(1),
                size: verdict.granted.max(1),
                expires_ms: now_ms + LEASE_MS,
            },
        );
    }

    /// How many clients hold a lease.
    #[cfg(test)]
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no client holds a lease.
    #[cfg(test)]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
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
                granted: 0,
            });
        }
        let hit: Hit = req.json().await?;
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
    fn a_lease_takes_whole_tokens_up_to_what_is_there_and_never_more() {
        // 5 tokens: a lease of 3, then of 3 (only 2 left), then refused with the wait for one token
        let (b, v) = Bucket::lease(None, 5, 0.0, 3, 0);
        assert!(v.allowed);
        assert_eq!(v.granted, 3);
        let (b, v) = Bucket::lease(Some(b), 5, 0.0, 3, 0);
        assert_eq!((v.allowed, v.granted), (true, 2));
        let (b, v) = Bucket::lease(Some(b), 5, 0.0, 3, 0);
        assert_eq!((v.allowed, v.granted, v.retry_after), (false, 0, 12));
        // a token refilled after 12 s: one is leased, not more
        let (b, v) = Bucket::lease(Some(b), 5, 12_000.0, 3, 0);
        assert_eq!((v.allowed, v.granted), (true, 1));
        // unused tokens of a lease come back with the next one
        let (b, v) = Bucket::lease(Some(b), 5, 12_000.0, 3, 2);
        assert_eq!((v.allowed, v.granted), (true, 2));
        assert!(!Bucket::take(Some(b), 5, 12_000.0, 1).1.allowed);
        // a lease of 0 is a lease of 1
        assert_eq!(Bucket::lease(None, 5, 0.0, 0, 0).1.granted, 1);
    }

    fn allowed(granted: u32) -> Verdict {
        Verdict {
            allowed: true,
            retry_after: 0,
            revoked: false,
            granted,
        }
    }

    #[test]
    fn leases_grow_while_spent_in_time_and_give_back_what_expired() {
        let mut leases = Leases::default();
        // first request: a lease of one, spent on it
        assert_eq!(leases.spend("k", 160, 0.0), Some((1, 0)));
        leases.granted("k", &allowed(1), 0.0);
        // spent in time: 2, then 4, then 8, then 8 (the largest for 160 a minute)
        let mut asks = Vec::new();
        let mut served_locally = 0;
        for i in 0..20 {
            match leases.spend("k", 160, f64::from(i)) {
                Some((want, refund)) => {
                    assert_eq!(refund, 0);
                    asks.push(want);
                    leases.granted("k", &allowed(want), f64::from(i));
                }
                None => served_locally += 1,
            }
        }
        assert_eq!(asks, vec![2, 4, 8, 8]);
        // 20 requests: 4 asked (each spending one token of its lease) and 16 spent from leases
        assert_eq!(served_locally, 16);
        // 23 tokens leased, 21 spent: the 2 left go back after expiry, and the next lease starts at one
        assert_eq!(leases.spend("k", 160, 30_000.0), Some((1, 2)));
        // taken from the entry as it was read: a second request meanwhile gives nothing back twice
        assert_eq!(leases.spend("k", 160, 30_000.0), Some((1, 0)));
        // a refusal drops the lease; a small limit is asked token by token
        leases.granted(
            "k",
            &Verdict {
                allowed: false,
                ..allowed(0)
            },
            30_000.0,
        );
        assert!(leases.is_empty());
        assert_eq!(max_lease(3), 1);
        assert_eq!(max_lease(600), 8);
    }

    #[test]
    fn leases_are_bounded_in_number() {
        let mut leases = Leases::default();
        for i in 0..(MAX_LEASES + 10) {
            leases.granted(
                &format!("client {i}"),
                &allowed(4),
                f64::from(u32::try_from(i).unwrap()),
            );
        }
        assert_eq!(leases.len(), MAX_LEASES);
        // the oldest went first
        assert_eq!(leases.spend("client 0", 64, 0.0), Some((1, 0)));
        assert_eq!(leases.spend(&format!("client {}", MAX_LEASES + 9), 64, 0.0), None);
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

    #[test]
    fn a_budget_is_spent_whole_never_overdrawn_and_refills_over_its_period() {
        const HOUR: f64 = 3_600_000.0;
        // 100 a period: 60 spent, then 60 refused (40 left) with the wait for the 20 missing (0.2 h = 720 s)
        let (b, v) = Bucket::spend(None, 100, HOUR, 0.0, 60);
        assert!(v.allowed);
        let (b, v) = Bucket::spend(Some(b), 100, HOUR, 0.0, 60);
        assert_eq!((v.allowed, v.retry_after), (false, 720));
        // nothing was taken by the refusal: 40 can be spent
        let (b, v) = Bucket::spend(Some(b), 100, HOUR, 0.0, 40);
        assert!(v.allowed);
        assert!(!Bucket::spend(Some(b), 100, HOUR, 0.0, 1).1.allowed);
        // after the wait the 60 are there
        let (_, v) = Bucket::spend(Some(b), 100, HOUR, 2_160_000.0, 60);
        assert!(v.allowed);
        // a spend above the budget is asked as a full bucket: possible once the bucket is full
        let (b, v) = Bucket::spend(None, 100, HOUR, 0.0, 500);
        assert!(v.allowed);
        let (_, v) = Bucket::spend(Some(b), 100, HOUR, 0.0, 500);
        assert_eq!((v.allowed, v.retry_after), (false, 3600));
        // a request bucket still lets the last token pay for a larger cost
        let (b, _) = Bucket::take(None, 3, 0.0, 2);
        assert!(Bucket::take(Some(b), 3, 0.0, 5).1.allowed);
    }
}
