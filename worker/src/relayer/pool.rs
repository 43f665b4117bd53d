//! The signer pool: which signer's lane (Relayer object) a profile's work goes to.
//!
//! Each signer has its own nonce lane, so two transactions of one profile on two lanes could be mined in either
//! order; for two relay calls of one LSP25 channel the later nonce would then revert (gas paid for nothing). So a
//! profile's work stays on one signer:
//! 1. a lane that still has pending work for the profile (a deploy of it, a relay call of it) gets its next work,
//!    even while it drains: it keeps the profile until that work is mined;
//! 2. otherwise the profile goes to the active (not draining) signer of highest rendezvous weight
//!    `keccak256(profile ‖ signer)` ([`rendezvous`]): a deterministic choice, the same in every request and
//!    isolate, that spreads profiles evenly and moves only the profiles of a signer that leaves or joins;
//! 3. no active signer: `NO_ACTIVE_SIGNER` (503).
//!
//! A deploy is routed by its predicted profile address; a job id (deploy of a profile, relay call of a profile and
//! signed nonce) therefore always reaches the lane that holds it, which sends it once (its send lock).

use alloy_primitives::{Address, B256, keccak256};
use futures_util::future::join_all;
use profile_relayer::api::TransactionStatus;
use profile_relayer::api::admin::PendingTransaction;
use worker::Env;

use super::client::RelayerClient;
use super::model::{LaneStatus, RouteAnswer};
use crate::{
    config::RelayerConfig,
    error::{ApiError, ApiResult, Code},
};

/// The rendezvous weight of `signer` for `profile`.
fn weight(profile: Address, signer: Address) -> B256 {
    let mut input = [0u8; 40];
    input[..20].copy_from_slice(profile.as_slice());
    input[20..].copy_from_slice(signer.as_slice());
    keccak256(input)
}

/// The signer of `candidates` with the highest weight for `profile` (`None` when there is none).
pub fn rendezvous(profile: Address, candidates: &[Address]) -> Option<Address> {
    candidates
        .iter()
        .copied()
        .max_by_key(|signer| weight(profile, *signer))
}

/// The lane for `profile` from every lane's answer, in pool order: the first that holds the profile's pending work,
/// else the rendezvous choice among the active ones.
pub fn choose(profile: Address, answers: &[(Address, RouteAnswer)]) -> Option<Address> {
    if let Some((signer, _)) = answers.iter().find(|(_, a)| a.holds) {
        return Some(*signer);
    }
    let active: Vec<Address> = answers
        .iter()
        .filter(|(_, a)| !a.draining)
        .map(|(s, _)| *s)
        .collect();
    rendezvous(profile, &active)
}

/// Every signer's lane client, in pool order.
///
/// # Errors
/// `CONFIGURATION_ERROR` when no key is set or one is malformed.
pub fn lanes(env: &Env, config: &RelayerConfig) -> ApiResult<Vec<RelayerClient>> {
    config
        .signers()?
        .iter()
        .map(|p| RelayerClient::new(env, config, p.signer.address(), p.legacy))
        .collect()
}

/// The lane of `address`, `SIGNER_NOT_FOUND` when no signer of the pool has it.
///
/// # Errors
/// As said.
pub fn lane_of(env: &Env, config: &RelayerConfig, address: Address) -> ApiResult<RelayerClient> {
    lanes(env, config)?
        .into_iter()
        .find(|l| l.address() == address)
        .ok_or_else(|| {
            ApiError::new(
                Code::SignerNotFound,
                format!("no signer of the pool has the address {address}"),
            )
        })
}

/// The lane `profile`'s next work goes to ([`choose`]).
///
/// # Errors
/// `NO_ACTIVE_SIGNER` (503, `Retry-After`) when every signer is drained; a lane's error.
pub async fn route(env: &Env, config: &RelayerConfig, profile: Address) -> ApiResult<RelayerClient> {
    let lanes = lanes(env, config)?;
    let answers = join_all(lanes.iter().map(|l| l.route(profile))).await;
    let mut seen = Vec::with_capacity(lanes.len());
    for (lane, answer) in lanes.iter().zip(answers) {
        seen.push((lane.address(), answer?));
    }
    let chosen = choose(profile, &seen).ok_or_else(|| {
        let mut err = ApiError::new(
            Code::NoActiveSigner,
            "every signer of the relayer is drained; no new transaction can be sent",
        );
        err.retry_after = Some(60);
        err
    })?;
    lanes
        .into_iter()
        .find(|l| l.address() == chosen)
        .ok_or_else(|| ApiError::internal("the chosen signer is not in the pool"))
}

/// The record of transaction `hash`, from whichever lane sent it.
///
/// # Errors
/// A lane's error.
pub async fn transaction(
    env: &Env,
    config: &RelayerConfig,
    hash: B256,
) -> ApiResult<Option<TransactionStatus>> {
    let lanes = lanes(env, config)?;
    for found in join_all(lanes.iter().map(|l| l.transaction(hash))).await {
        if let Some(record) = found? {
            return Ok(Some(record));
        }
    }
    Ok(None)
}

/// The latest hash of `address`'s pending deployment, on whichever lane.
///
/// # Errors
/// A lane's error.
pub async fn pending(env: &Env, config: &RelayerConfig, address: Address) -> ApiResult<Option<B256>> {
    let lanes = lanes(env, config)?;
    for found in join_all(lanes.iter().map(|l| l.pending(address))).await {
        if let Some(hash) = found? {
            return Ok(Some(hash));
        }
    }
    Ok(None)
}

/// Every lane's pending transactions (at most `limit` each), in pool order; `true` when some lane holds more.
///
/// # Errors
/// A lane's error: a list that silently misses a lane would hide what is in flight.
pub async fn pending_transactions(
    env: &Env,
    config: &RelayerConfig,
    limit: u64,
) -> ApiResult<(Vec<PendingTransaction>, bool)> {
    let lanes = lanes(env, config)?;
    let mut transactions = Vec::new();
    let mut truncated = false;
    for answer in join_all(lanes.iter().map(|l| l.list(limit))).await {
        let answer = answer?;
        truncated |= answer.truncated;
        transactions.extend(answer.transactions);
    }
    Ok((transactions, truncated))
}

/// Every lane's status, in pool order.
pub async fn statuses(
    env: &Env,
    config: &RelayerConfig,
) -> ApiResult<Vec<(RelayerClient, ApiResult<LaneStatus>)>> {
    let lanes = lanes(env, config)?;
    let answers = join_all(lanes.iter().map(RelayerClient::status)).await;
    Ok(lanes.into_iter().zip(answers).collect())
}

/// The lane that holds the pending transaction `hash` (the one whose record it has).
///
/// # Errors
/// `TRANSACTION_NOT_FOUND` when no lane sent it; a lane's error.
pub async fn lane_with(env: &Env, config: &RelayerConfig, hash: B256) -> ApiResult<RelayerClient> {
    let lanes = lanes(env, config)?;
    let found = join_all(lanes.iter().map(|l| l.transaction(hash))).await;
    for (lane, record) in lanes.into_iter().zip(found) {
        if record?.is_some() {
            return Ok(lane);
        }
    }
    Err(ApiError::new(
        Code::TransactionNotFound,
        format!("no signer of this relayer sent {hash} (or its record expired)"),
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn signers(n: u8) -> Vec<Address> {
        (1..=n).map(Address::repeat_byte).collect()
    }

    fn profile(i: u32) -> Address {
        let mut bytes = [0u8; 20];
        bytes[16..].copy_from_slice(&i.to_be_bytes());
        Address::from(bytes)
    }

    const ACTIVE: RouteAnswer = RouteAnswer {
        draining: false,
        holds: false,
    };

    #[test]
    fn the_assignment_is_deterministic_and_spreads_profiles_evenly() {
        let pool = signers(4);
        let mut counts = [0u32; 4];
        for i in 0..4000 {
            let chosen = rendezvous(profile(i), &pool).unwrap();
            // the same answer every time, whatever the order of the pool
            let mut reversed = pool.clone();
            reversed.reverse();
            assert_eq!(rendezvous(profile(i), &reversed), Some(chosen));
            counts[pool.iter().position(|s| *s == chosen).unwrap()] += 1;
        }
        for c in counts {
            assert!((850..=1150).contains(&c), "uneven spread {counts:?}");
        }
        assert_eq!(rendezvous(profile(1), &[]), None);
    }

    #[test]
    fn the_legacy_key_keeps_the_object_named_by_the_chain() {
        let a = Address::repeat_byte(0xab);
        assert_eq!(super::super::lane_name(42, a, true), "chain-42");
        assert_eq!(
            super::super::lane_name(42, a, false),
            "chain-42-0xabababababababababababababababababababab"
        );
        assert_ne!(
            super::super::lane_name(42, a, false),
            super::super::lane_name(4201, a, false)
        );
    }

    #[test]
    fn a_leaving_or_joining_signer_moves_only_its_own_profiles() {
        let pool = signers(4);
        let without_last = &pool[..3];
        for i in 0..1000 {
            let before = rendezvous(profile(i), &pool).unwrap();
            let after = rendezvous(profile(i), without_last).unwrap();
            if before != pool[3] {
                assert_eq!(before, after, "profile {i} moved although its signer stayed");
            }
        }
    }

    #[test]
    fn pending_work_keeps_a_profile_on_its_lane_even_while_draining() {
        let pool = signers(3);
        let p = profile(7);
        let preferred = rendezvous(p, &pool).unwrap();
        let answers: Vec<_> = pool.iter().map(|s| (*s, ACTIVE)).collect();
        assert_eq!(choose(p, &answers), Some(preferred));
        // another lane holds the profile's pending work, and drains: the work still goes there
        let holder = *pool.iter().find(|s| **s != preferred).unwrap();
        let answers: Vec<_> = pool
            .iter()
            .map(|s| {
                let a = if *s == holder {
                    RouteAnswer {
                        draining: true,
                        holds: true,
                    }
                } else {
                    ACTIVE
                };
                (*s, a)
            })
            .collect();
        assert_eq!(choose(p, &answers), Some(holder));
        // the preferred signer drains and holds nothing: the profile goes to the best active one
        let answers: Vec<_> = pool
            .iter()
            .map(|s| {
                let a = RouteAnswer {
                    draining: *s == preferred,
                    holds: false,
                };
                (*s, a)
            })
            .collect();
        let others: Vec<Address> = pool.iter().copied().filter(|s| *s != preferred).collect();
        assert_eq!(choose(p, &answers), rendezvous(p, &others));
        assert_ne!(choose(p, &answers), Some(preferred));
        // every signer drains: nothing
        let answers: Vec<_> = pool
            .iter()
            .map(|s| {
                (
                    *s,
                    RouteAnswer {
                        draining: true,
                        holds: false,
                    },
                )
            })
            .collect();
        assert_eq!(choose(p, &answers), None);
    }
}
