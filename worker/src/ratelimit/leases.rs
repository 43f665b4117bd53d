//! Tokens leased from the `RateLimiter` objects to one isolate ([`Leases`]): a client that keeps coming costs one
//! object call per lease instead of one per request, never more requests than its bucket allows.

use super::bucket::Verdict;

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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
}
