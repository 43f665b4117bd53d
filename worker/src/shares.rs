//! Fair shares: how much of a global cap any one party may take, so that one stranger cannot take the service from
//! everyone. Pure: the routes and the Relayer object read the facts (who signed, from which client address, under
//! which key), this module says which extra meters a transaction or a registration is reserved on, and the
//! `Meter` objects ([`crate::meter`]) count them exactly like the quotas they sit beside.
//!
//! Per chain and UTC day, of the relayer's ceiling (`MAX_GAS_PER_DAY`):
//! - a **profile**, a **controller** (over every profile it signs for) and a **client address** (IPv6 by its /64,
//!   over every relay call and deploy it sends) each take at most `FAIR_SHARE_PERCENT`;
//! - an **API key** (over the relay calls of the profiles registered or deployed with it, and its deploys) at most
//!   `KEY_SHARE_PERCENT`, unless the operator marked it trusted (`TRUSTED_API_KEYS`);
//! - every key not marked trusted, together (and profiles registered before registrants were recorded), at most
//!   `100 - TRUSTED_RESERVE_PERCENT`: the rest is kept for the trusted keys.
//!
//! Per API key: one client address takes at most `FAIR_SHARE_PERCENT` of the key's monthly deploy budget and of
//! its requests per minute. Per UTC day: at most `MAX_REGISTRATIONS_PER_KEY_PER_DAY` new registrations with one
//! key (not counted for trusted keys) and `MAX_REGISTRATIONS_PER_CLIENT_PER_DAY` from one client address.
//!
//! A share of 100 % (or a reserve of 0 %) is the whole cap: no meter is added for it, since the cap's own meter
//! already bounds it.

use alloy_primitives::Address;
use serde::{Deserialize, Serialize};

pub use crate::config::Shares;
use crate::meter::{Holder, Limit, Subject};

/// Who a sponsored transaction is for besides the profile, as the request showed it (a relay job carries it to
/// the Relayer object).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Payer {
    /// The controller that signed the relay call (`None` for a deploy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<Address>,
    /// The client address of the request ([`crate::ratelimit::client_key`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The API key: the one the profile was registered or deployed with, or the one asking for a deploy. `None`
    /// for a profile registered before registrants were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// `percent` % of `whole`, rounded down.
pub const fn part(whole: u64, percent: u8) -> u64 {
    // u128: no overflow for any u64
    ((whole as u128 * percent as u128) / 100) as u64
}

impl Shares {
    /// Whether the operator marked the key `id` trusted.
    pub fn trusts(&self, id: &str) -> bool {
        self.trusted_keys.iter().any(|k| k == id)
    }

    /// The shares of the chain's daily ceiling (`ceiling` gas) a transaction for `payer` is reserved on, besides
    /// the ceiling itself. `profile`: the profile a relay call executes on and its monthly quota (its share is added
    /// only when that quota could take more than the share in a day); `None` for a deploy, which a key's budget pays.
    pub fn of_ceiling(
        &self,
        chain_id: u64,
        ceiling: u64,
        payer: &Payer,
        profile: Option<(Address, u64)>,
    ) -> Vec<Limit> {
        let fair = part(ceiling, self.fair_percent);
        let mut limits = Vec::new();
        let mut add = |holder: Holder, limit: u64| {
            if limit < ceiling {
                limits.push(Limit {
                    subject: Subject::Share(chain_id, holder),
                    limit,
                });
            }
        };
        if let Some((profile, quota)) = profile
            && quota > fair
        {
            add(Holder::Profile(profile), fair);
        }
        if let Some(controller) = payer.controller {
            add(Holder::Controller(controller), fair);
        }
        if let Some(client) = &payer.client {
            add(Holder::Client(client.clone()), fair);
        }
        let untrusted = match &payer.key {
            Some(key) if self.trusts(key) => false,
            Some(key) => {
                add(Holder::Key(key.clone()), part(ceiling, self.key_percent));
                true
            }
            None => true,
        };
        if untrusted {
            add(
                Holder::Untrusted,
                part(ceiling, 100u8.saturating_sub(self.trusted_reserve_percent)),
            );
        }
        limits
    }

    /// The share of the key `key`'s monthly deploy budget (`budget` gas) one client address may take (`None` at
    /// 100 %).
    pub fn of_key_budget(&self, key: &str, client: &str, budget: u64) -> Option<Limit> {
        (self.fair_percent < 100).then(|| Limit {
            subject: Subject::ClientBudget(key.to_owned(), client.to_owned()),
            limit: part(budget, self.fair_percent),
        })
    }

    /// The registration counters a new registration with `key` from `client` is counted on.
    pub fn of_registrations(&self, key: &str, client: &str) -> Vec<Limit> {
        let mut limits = vec![Limit {
            subject: Subject::Registrations(Holder::Client(client.to_owned())),
            limit: self.registrations_per_client,
        }];
        if !self.trusts(key) {
            limits.push(Limit {
                subject: Subject::Registrations(Holder::Key(key.to_owned())),
                limit: self.registrations_per_key,
            });
        }
        limits
    }

    /// A client address's requests per minute under a key allowing `per_minute` (at least one); `None` at 100 %
    /// (the key's own bucket is the bound).
    pub fn of_key_rate(&self, per_minute: u32) -> Option<u32> {
        (self.fair_percent < 100).then(|| {
            let share = u64::from(per_minute) * u64::from(self.fair_percent);
            u32::try_from(share.div_ceil(100)).unwrap_or(u32::MAX).max(1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CEILING: u64 = 500_000_000;
    const P: Address = Address::repeat_byte(1);
    const C: Address = Address::repeat_byte(2);

    fn shares() -> Shares {
        Shares {
            trusted_keys: vec!["trusted0000000000".into()],
            ..Shares::default()
        }
    }

    fn payer(key: Option<&str>) -> Payer {
        Payer {
            controller: Some(C),
            client: Some("198.51.100.7".into()),
            key: key.map(str::to_owned),
        }
    }

    fn named(limits: &[Limit]) -> Vec<(String, u64)> {
        limits.iter().map(|l| (l.subject.name(), l.limit)).collect()
    }

    #[test]
    fn parts_round_down_and_never_overflow() {
        assert_eq!(part(500_000_000, 10), 50_000_000);
        assert_eq!(part(7, 50), 3);
        assert_eq!(part(u64::MAX, 100), u64::MAX);
        assert_eq!(part(u64::MAX, 0), 0);
    }

    #[test]
    fn a_relay_call_of_an_untrusted_key_counts_on_every_share() {
        let limits = shares().of_ceiling(42, CEILING, &payer(Some("k1")), Some((P, 20_000_000)));
        assert_eq!(
            named(&limits),
            [
                (format!("share:42:controller:{C:#x}"), 50_000_000),
                ("share:42:client:198.51.100.7".into(), 50_000_000),
                ("share:42:key:k1".into(), 125_000_000),
                ("share:42:untrusted".into(), 400_000_000),
            ]
        );
    }

    #[test]
    fn the_profile_share_only_when_its_quota_could_exceed_it() {
        let below = shares().of_ceiling(42, CEILING, &payer(None), Some((P, 50_000_000)));
        assert!(named(&below).iter().all(|(n, _)| !n.contains(":profile:")));
        let above = shares().of_ceiling(42, CEILING, &payer(None), Some((P, 50_000_001)));
        assert_eq!(
            named(&above).first(),
            Some(&(format!("share:42:profile:{P:#x}"), 50_000_000))
        );
    }

    #[test]
    fn a_trusted_key_has_no_key_share_and_may_use_the_reserve() {
        let limits = shares().of_ceiling(42, CEILING, &payer(Some("trusted0000000000")), Some((P, 0)));
        let names = named(&limits);
        assert!(
            names
                .iter()
                .all(|(n, _)| !n.contains(":key:") && !n.ends_with("untrusted"))
        );
        assert_eq!(names.len(), 2, "controller and client only: {names:?}");
    }

    #[test]
    fn an_unknown_registrant_counts_as_untrusted() {
        let names = named(&shares().of_ceiling(42, CEILING, &payer(None), Some((P, 0))));
        assert_eq!(names.last(), Some(&("share:42:untrusted".into(), 400_000_000)));
        assert!(names.iter().all(|(n, _)| !n.contains(":key:")));
    }

    #[test]
    fn whole_shares_add_no_meter() {
        let whole = Shares {
            fair_percent: 100,
            key_percent: 100,
            trusted_reserve_percent: 0,
            ..shares()
        };
        assert_eq!(
            whole.of_ceiling(42, CEILING, &payer(Some("k1")), Some((P, u64::MAX))),
            []
        );
        assert_eq!(whole.of_key_rate(60), None);
        assert_eq!(whole.of_key_budget("k1", "::/64", 100), None);
    }

    #[test]
    fn a_deploy_counts_on_the_client_and_key_shares() {
        let deploy = Payer {
            client: Some("2001:db8::/64".into()),
            key: Some("k1".into()),
            ..Payer::default()
        };
        assert_eq!(
            named(&shares().of_ceiling(4201, CEILING, &deploy, None)),
            [
                ("share:4201:client:2001:db8::/64".into(), 50_000_000),
                ("share:4201:key:k1".into(), 125_000_000),
                ("share:4201:untrusted".into(), 400_000_000),
            ]
        );
        let budget = shares().of_key_budget("k1", "2001:db8::/64", 100_000_000);
        assert_eq!(
            budget.map(|b| (b.subject.name(), b.limit)),
            Some(("client-budget:k1:2001:db8::/64".into(), 10_000_000))
        );
    }

    #[test]
    fn registrations_per_client_always_and_per_key_unless_trusted() {
        assert_eq!(
            named(&shares().of_registrations("k1", "198.51.100.7")),
            [
                ("registrations:client:198.51.100.7".into(), 20),
                ("registrations:key:k1".into(), 500),
            ]
        );
        assert_eq!(
            named(&shares().of_registrations("trusted0000000000", "::1")),
            [("registrations:client:::1".into(), 20)]
        );
    }

    #[test]
    fn a_client_rate_is_its_share_of_the_key_rate_at_least_one() {
        let s = shares();
        assert_eq!(s.of_key_rate(60), Some(6));
        assert_eq!(s.of_key_rate(61), Some(7));
        assert_eq!(s.of_key_rate(1), Some(1));
        assert_eq!(s.of_key_rate(u32::MAX), Some(429_496_730));
    }
}
