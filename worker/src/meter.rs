//! Gas metering: the `Meter` Durable Object, one per metered subject — a profile's monthly quota
//! (`profile:<address>`), an API key's monthly deploy budget (`key:<id>`) and the relayer's daily ceiling
//! (`relayer:<chain id>`). Each object is the single writer of its subject's counters and keeps them, with the
//! open reservations, in its own transactional storage; profile usage is written through to KV
//! (`usage:<address>:<month start>`) for cheap reads. Sharding by subject is what lets this grow: every profile
//! and key has its own object, so metering never serializes on the nonce lane or on one another.
//!
//! A transaction's gas limit is **reserved** before anything is sent (refused when it does not fit: nothing is
//! sent), then **settled** to the receipt's `gasUsed` — or released when the transaction was never sent.
//! Reservations are keyed by the job's id: settling or releasing twice is a no-op, so a retried settlement can
//! neither lose nor double a debit. Usage is charged to the period the reservation was made in.

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

use std::{cell::RefCell, collections::BTreeMap};

use profile_relayer::api::{month_start, next_month_start};
use serde::{Deserialize, Serialize};
use worker::{DurableObject, Env, Request, Response, Result, State, Stub, durable_object};

use crate::error::{ApiError, ApiResult};

/// How long a metering period lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    /// UTC calendar month.
    Month,
    /// UTC day.
    Day,
}

impl Period {
    /// First second of the period containing `now`.
    pub fn start(self, now: u64) -> u64 {
        match self {
            Self::Month => month_start(now),
            Self::Day => now - now % 86_400,
        }
    }

    /// First second of the next period.
    pub fn end(self, now: u64) -> u64 {
        match self {
            Self::Month => next_month_start(now),
            Self::Day => self.start(now) + 86_400,
        }
    }
}

/// An open reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reservation {
    /// Gas reserved.
    pub amount: u64,
    /// Start of the period it counts in.
    pub period_start: u64,
}

/// The counters of one subject.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    /// Settled gas per period start.
    pub used: BTreeMap<u64, u64>,
    /// Open reservations by job id.
    pub open: BTreeMap<String, Reservation>,
}

/// What a reservation attempt found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// The period's limit.
    pub limit: u64,
    /// Settled this period.
    pub used: u64,
    /// Reserved and not settled yet, this period.
    pub reserved: u64,
    /// `limit - used - reserved`, never negative.
    pub remaining: u64,
    /// First second of the next period (the reset).
    pub reset_at: u64,
}

impl Ledger {
    /// The usage of the period containing `now`.
    pub fn usage(&self, period: Period, limit: u64, now: u64) -> Usage {
        let start = period.start(now);
        let used = self.used.get(&start).copied().unwrap_or(0);
        let reserved = self
            .open
            .values()
            .filter(|r| r.period_start == start)
            .fold(0u64, |acc, r| acc.saturating_add(r.amount));
        Usage {
            limit,
            used,
            reserved,
            remaining: limit.saturating_sub(used).saturating_sub(reserved),
            reset_at: period.end(now),
        }
    }

    /// Reserves `amount` for job `id` if it fits; an id already reserved is answered as it stands.
    pub fn reserve(&mut self, id: &str, amount: u64, period: Period, limit: u64, now: u64) -> (bool, Usage) {
        if self.open.contains_key(id) {
            return (true, self.usage(period, limit, now));
        }
        let before = self.usage(period, limit, now);
        if amount > before.remaining {
            return (false, before);
        }
        self.open.insert(
            id.to_owned(),
            Reservation {
                amount,
                period_start: period.start(now),
            },
        );
        (true, self.usage(period, limit, now))
    }

    /// Settles job `id` to `gas_used` (charged to the reservation's period). Returns the charge, `None` when no
    /// reservation is open under that id (settled before, or released). A receipt's `gasUsed` never exceeds the
    /// gas limit that was reserved; the charge is capped at the reservation all the same, so a subject can never
    /// be pushed past its limit.
    pub fn settle(&mut self, id: &str, gas_used: u64) -> Option<u64> {
        let reservation = self.open.remove(id)?;
        let charge = gas_used.min(reservation.amount);
        let used = self.used.entry(reservation.period_start).or_insert(0);
        *used = used.saturating_add(charge);
        Some(charge)
    }

    /// Drops job `id`'s reservation without charging (nothing was sent).
    pub fn release(&mut self, id: &str) -> bool {
        self.open.remove(id).is_some()
    }

    /// Forgets settled periods that ended before `keep_from` (bounded storage).
    pub fn prune(&mut self, keep_from: u64) {
        self.used.retain(|start, _| *start >= keep_from);
    }
}

/// A request to a `Meter` object.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "op")]
pub enum MeterOp {
    /// Reserve `amount` for `id`.
    Reserve {
        /// Job id.
        id: String,
        /// Gas.
        amount: u64,
        /// Period.
        period: Period,
        /// Limit per period.
        limit: u64,
        /// Unix seconds.
        now: u64,
    },
    /// Settle `id` to `gasUsed`.
    Settle {
        /// Job id.
        id: String,
        /// Gas used by the receipt.
        gas_used: u64,
    },
    /// Release `id`.
    Release {
        /// Job id.
        id: String,
    },
    /// Read the usage.
    Usage {
        /// Period.
        period: Period,
        /// Limit per period.
        limit: u64,
        /// Unix seconds.
        now: u64,
    },
}

/// The answer of a `Meter` object.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeterAnswer {
    /// Whether a reservation was made (or exists); settled/released for the other operations.
    pub ok: bool,
    /// Usage after the operation (reservation and usage operations).
    pub usage: Option<Usage>,
    /// Gas charged by a settlement.
    pub charged: Option<u64>,
}

const LEDGER: &str = "ledger";

/// The Durable Object.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct Meter {
    state: State,
    env: Env,
    ledger: RefCell<Option<Ledger>>,
}

impl DurableObject for Meter {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            ledger: RefCell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let answer = match req.json::<MeterOp>().await {
            Ok(op) => self.apply(op, req.path().trim_start_matches('/')).await,
            Err(e) => Err(ApiError::internal(e)),
        };
        Ok(answer
            .and_then(|a| Response::from_json(&a).map_err(ApiError::from))
            .unwrap_or_else(ApiError::into_response))
    }
}

impl Meter {
    async fn load(&self) -> ApiResult<Ledger> {
        if let Some(l) = self.ledger.borrow().clone() {
            return Ok(l);
        }
        let stored: Ledger = self.state.storage().get(LEDGER).await?.unwrap_or_default();
        *self.ledger.borrow_mut() = Some(stored.clone());
        Ok(stored)
    }

    async fn save(&self, ledger: Ledger) -> ApiResult<()> {
        self.state.storage().put(LEDGER, &ledger).await?;
        *self.ledger.borrow_mut() = Some(ledger);
        Ok(())
    }

    /// Applies `op`; `subject` is the object's name (from the request path), used for the KV write-through.
    async fn apply(&self, op: MeterOp, subject: &str) -> ApiResult<MeterAnswer> {
        // one operation at a time: the storage calls below are awaited, and the object's input gate keeps
        // other requests out while they run
        let mut ledger = self.load().await?;
        let answer = match op {
            MeterOp::Reserve {
                id,
                amount,
                period,
                limit,
                now,
            } => {
                let (ok, usage) = ledger.reserve(&id, amount, period, limit, now);
                MeterAnswer {
                    ok,
                    usage: Some(usage),
                    charged: None,
                }
            }
            MeterOp::Settle { id, gas_used } => {
                let charged = ledger.settle(&id, gas_used);
                MeterAnswer {
                    ok: charged.is_some(),
                    usage: None,
                    charged,
                }
            }
            MeterOp::Release { id } => MeterAnswer {
                ok: ledger.release(&id),
                usage: None,
                charged: None,
            },
            MeterOp::Usage { period, limit, now } => {
                return Ok(MeterAnswer {
                    ok: true,
                    usage: Some(ledger.usage(period, limit, now)),
                    charged: None,
                });
            }
        };
        if let Some(newest) = ledger.used.keys().next_back().copied() {
            // a year of months is kept; older periods are never read again
            ledger.prune(newest.saturating_sub(400 * 86_400));
        }
        let written = ledger.clone();
        self.save(ledger).await?;
        if let Some(address) = subject.strip_prefix("profile:") {
            for (start, used) in written.used.iter().rev().take(2) {
                let key = format!("usage:{address}:{start}");
                self.env
                    .kv("PROFILES")?
                    .put(&key, used.to_string())
                    .map_err(ApiError::internal)?
                    .execute()
                    .await
                    .map_err(ApiError::internal)?;
            }
        }
        Ok(answer)
    }
}

/// A client of one subject's `Meter` object.
#[derive(Debug)]
pub struct MeterClient {
    stub: Stub,
    subject: String,
}

impl MeterClient {
    /// The meter of `subject` (`profile:<0x address, lower case>`, `key:<id>`, `relayer:<chain id>`).
    pub fn new(env: &Env, subject: &str) -> ApiResult<Self> {
        Ok(Self {
            stub: env.durable_object("METER")?.id_from_name(subject)?.get_stub()?,
            subject: subject.to_owned(),
        })
    }

    /// Sends `op`.
    pub async fn send(&self, op: &MeterOp) -> ApiResult<MeterAnswer> {
        crate::routes::call_do(&self.stub, &format!("/{}", self.subject), op).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAN_15: u64 = 1_768_435_200; // 2026-01-15T00:00:00Z
    const FEB_1: u64 = 1_769_904_000;

    #[test]
    fn reserve_settle_release() {
        let mut l = Ledger::default();
        let (ok, u) = l.reserve("a", 600, Period::Month, 1000, JAN_15);
        assert!(ok);
        assert_eq!(
            (u.used, u.reserved, u.remaining, u.reset_at),
            (0, 600, 400, FEB_1)
        );
        // does not fit: refused, nothing changes
        let (ok, u) = l.reserve("b", 401, Period::Month, 1000, JAN_15);
        assert!(!ok);
        assert_eq!(u.remaining, 400);
        assert_eq!(l.open.len(), 1);
        // the same id again is the same reservation
        assert!(l.reserve("a", 600, Period::Month, 1000, JAN_15).0);
        assert_eq!(l.open.len(), 1);
        // settled to what the receipt used; settling twice charges once
        assert_eq!(l.settle("a", 420), Some(420));
        assert_eq!(l.settle("a", 420), None);
        let u = l.usage(Period::Month, 1000, JAN_15);
        assert_eq!((u.used, u.reserved, u.remaining), (420, 0, 580));
        assert!(l.reserve("c", 580, Period::Month, 1000, JAN_15).0);
        assert!(l.release("c"));
        assert!(!l.release("c"));
        assert_eq!(l.usage(Period::Month, 1000, JAN_15).remaining, 580);
    }

    #[test]
    fn periods_reset_and_charges_stay_in_their_period() {
        let mut l = Ledger::default();
        assert!(l.reserve("a", 900, Period::Month, 1000, JAN_15).0);
        // settled after the month turned: charged to January, February starts full
        assert_eq!(l.settle("a", 900), Some(900));
        assert_eq!(l.usage(Period::Month, 1000, JAN_15).remaining, 100);
        assert_eq!(l.usage(Period::Month, 1000, FEB_1).remaining, 1000);
        assert_eq!(Period::Day.start(JAN_15 + 3600), JAN_15);
        assert_eq!(Period::Day.end(JAN_15 + 3600), JAN_15 + 86_400);
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        // any interleaving of reservations and settlements: never over the limit while open, every settled
        // unit counted exactly once
        #[test]
        fn never_over_and_never_lost(ops in proptest::collection::vec((0u8..3, 0u8..6, 0u64..500), 0..60)) {
            let mut l = Ledger::default();
            let mut charged = 0u64;
            for (kind, id, amount) in ops {
                let id = id.to_string();
                match kind {
                    0 => { l.reserve(&id, amount, Period::Month, 1000, JAN_15); }
                    1 => { charged += l.settle(&id, amount).unwrap_or(0); }
                    _ => { l.release(&id); }
                }
                let u = l.usage(Period::Month, 1000, JAN_15);
                proptest::prop_assert!(u.used + u.reserved <= 1000);
                proptest::prop_assert_eq!(u.used, charged);
            }
        }
    }
}
