//! The token bucket (pure): `limit` tokens a period refilled continuously, bursts up to `limit`; what a step on
//! it asks ([`Hit`]) and answers ([`Verdict`]).

use serde::{Deserialize, Serialize};

/// One step on a bucket: take, ask, give back, lease or spend (see [`super::object::LimiterOp::Step`]).
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

/// A request bucket's refill period (ms).
pub(super) const MINUTE_MS: f64 = 60_000.0;

/// The deepest debt a charge ([`Bucket::take`] of more than is left) leaves, in periods of refill: a client is
/// refused for at most this many periods after the heaviest request.
pub const MAX_DEBT_PERIODS: f64 = 10.0;

/// The answer to a step.
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

    /// Takes `cost` tokens while one is left: `limit` a minute. A request that costs more than is left is not
    /// refused — it is charged, and the bucket goes into debt (at most [`MAX_DEBT_PERIODS`] minutes of tokens)
    /// which its client waits out: the work of a heavy request is paid for by the requests after it.
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
            b.tokens = (b.tokens - f64::from(cost)).max(-capacity * MAX_DEBT_PERIODS);
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

    #[test]
    fn a_charge_larger_than_the_bucket_is_answered_then_waited_out() {
        // 20 a minute (one every 3 s): a call costing 12 leaves 8; one costing 16 is answered and leaves a debt of 8
        let (b, v) = Bucket::take(None, 20, 0.0, 12);
        assert!(v.allowed);
        let (b, v) = Bucket::take(Some(b), 20, 0.0, 16);
        assert!(v.allowed);
        // the next request waits until the debt and its own token are refilled: 9 tokens, 27 s
        let (b, v) = Bucket::take(Some(b), 20, 0.0, 1);
        assert_eq!((v.allowed, v.retry_after), (false, 27));
        let (b, v) = Bucket::take(Some(b), 20, 26_000.0, 1);
        assert!(!v.allowed);
        let (_, v) = Bucket::take(Some(b), 20, 27_100.0, 1);
        assert!(v.allowed);
        // the heaviest charge is answered too, and its debt is at most ten minutes of tokens
        let (b, v) = Bucket::take(None, 20, 0.0, 1_000);
        assert!(v.allowed);
        let (b, v) = Bucket::take(Some(b), 20, 0.0, 1);
        assert_eq!((v.allowed, v.retry_after), (false, 603));
        assert!(!Bucket::take(Some(b), 20, 602_000.0, 1).1.allowed);
        assert!(Bucket::take(Some(b), 20, 603_100.0, 1).1.allowed);
        // a refusal takes nothing: the wait does not grow with the refused requests
        let (b, _) = Bucket::take(Some(b), 20, 0.0, 1);
        let (_, v) = Bucket::take(Some(b), 20, 0.0, 1);
        assert_eq!(v.retry_after, 603);
    }
}
