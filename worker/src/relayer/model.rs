//! The relayer's data: what the object is asked and answers ([`RelayerOp`] and its answers), the jobs a lane
//! transaction is for ([`Job`]), a stored lane transaction ([`PendingTx`]) and a watched one ([`Watched`]), and the
//! small enums the decisions of [`super::policy`] speak in. No behaviour beyond reading its own fields.

use alloy_primitives::{Address, B256, Bytes};
use profile_relayer::api::admin::PendingTransaction;
use profile_relayer::api::{Quota, TransactionKind, TransactionState};
use serde::{Deserialize, Serialize};

use crate::{
    meter::{Charge, Limit},
    rpc::{RpcError, SendOutcome},
};

/// What the `Relayer` object is asked: the body of every request to it ([`super::RelayerClient`] sends them).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum RelayerOp {
    /// Deploy a profile (answers [`DeployOutcome`]).
    Deploy(DeployJob),
    /// Register a profile (answers [`RegisterOutcome`]).
    Register(RegisterJob),
    /// Send a checked relay call (answers [`ExecuteOutcome`]).
    Execute(ExecuteJob),
    /// The lane (answers [`LaneStatus`]).
    Status,
    /// The lane's pending transactions, the `limit` lowest nonces (answers [`LaneList`]).
    List {
        /// At most this many.
        limit: u64,
    },
    /// The record of a transaction (answers `Option<TransactionStatus>`).
    Transaction {
        /// Its hash.
        hash: B256,
    },
    /// The pending deployment of a profile (answers `Option<B256>`, its latest hash).
    Pending {
        /// The profile.
        address: Address,
    },
    /// Where a profile's work may go (answers [`RouteAnswer`]).
    Route {
        /// The profile (a deploy's predicted address).
        profile: Address,
    },
    /// Drains the signer (`true`: no new work, pending work finishes) or makes it active again (answers
    /// [`LaneStatus`]).
    Drain {
        /// Whether it drains.
        draining: bool,
    },
    /// Cancels a pending transaction: a 0-value self-transfer at its nonce, fees bumped to replace it (answers
    /// [`ManagedTx`]).
    Cancel {
        /// Any hash signed for it.
        hash: B256,
    },
    /// Replaces a pending transaction: the same job re-signed at its nonce with higher fees (answers
    /// [`ManagedTx`]).
    Replace {
        /// Any hash signed for it.
        hash: B256,
    },
}

/// A request to a `Relayer` object: the signer whose lane it is, and the operation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Envelope {
    pub(super) signer: Address,
    #[serde(flatten)]
    pub(super) op: RelayerOp,
}

/// What [`RelayerOp::Route`] answers: the lane's state as the assignment needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteAnswer {
    /// The signer takes no new work.
    pub draining: bool,
    /// The lane has pending work for the profile: its next work must go here too (LSP25 nonces in order).
    pub holds: bool,
}

/// What an admin cancel or replace did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedTx {
    /// The nonce.
    pub nonce: u64,
    /// The transaction replaced (the latest signed before).
    pub replaced: B256,
    /// The replacement broadcast.
    pub transaction_hash: B256,
}

/// What [`RelayerOp::Status`] answers: the lane of the relayer key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneStatus {
    /// Transactions sent and not mined yet (fillers included).
    pub pending: u64,
    /// Seconds since the oldest of them was first sent.
    pub oldest_pending_age_seconds: Option<u64>,
    /// The next nonce, when the lane has been reconciled with the chain since the object started.
    pub next_nonce: Option<u64>,
    /// The signer takes no new work.
    #[serde(default)]
    pub draining: bool,
}

/// What [`RelayerOp::List`] answers: the lane's pending transactions, by nonce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneList {
    /// The transactions.
    pub transactions: Vec<PendingTransaction>,
    /// The lane holds more than listed.
    pub truncated: bool,
}

/// A relay call handed to the Relayer object, checked; its gas is reserved by the object, for the transaction it
/// sends.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteJob {
    /// The signed nonce's id ([`super::execute_id`]): one pending transaction per profile and signed nonce, so a
    /// replayed or concurrent call is answered with the transaction sent for it, and no two profiles share one. Not
    /// the reservation id: each transaction sent has its own ([`super::policy::attempt_charge_id`]).
    pub id: B256,
    /// The profile (charged).
    pub profile: Address,
    /// Its KeyManager (the transaction's `to`).
    pub key_manager: Address,
    /// `executeRelayCall` calldata.
    pub calldata: Bytes,
    /// Gas limit (what is reserved).
    pub gas_limit: u64,
    /// Who the call is for, beyond the profile: its controller, client address and registrant key (their fair
    /// shares are reserved too, [`crate::shares`]).
    #[serde(default)]
    pub payer: crate::shares::Payer,
    /// How long the request waits for the receipt (`Prefer: wait`, capped at `DEPLOY_WAIT_SECONDS`): 0 answers once
    /// the node took the transaction; `None` (a job from before the preference existed) waits as a deploy does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
    /// The profile's monthly quota ([`crate::config::RelayerConfig::profile_quota`]: lower while it warms up);
    /// `None` (a job from before the warm-up existed): `MONTHLY_GAS_QUOTA`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<u64>,
}

/// What the Relayer object answers for an execute job.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteOutcome {
    /// The transaction (the mined one, or the latest sent).
    pub transaction_hash: B256,
    /// Receipt facts when mined within the wait.
    pub mined: Option<MinedFacts>,
}

/// A receipt, as the service reports it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MinedFacts {
    /// Whether it succeeded.
    pub success: bool,
    /// `gasUsed` (what was charged).
    pub gas_used: u64,
    /// The block.
    pub block_number: u64,
}

/// A deployment to perform.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeployJob {
    /// Salt.
    pub salt: B256,
    /// `postDeploymentCallData`.
    pub post_deployment_call_data: Bytes,
    /// Predicted profile.
    pub universal_profile: Address,
    /// Predicted KeyManager.
    pub key_manager: Address,
    /// The API key that asked (its monthly gas budget pays).
    #[serde(default)]
    pub key_id: Option<String>,
    /// That key's monthly gas budget.
    #[serde(default)]
    pub key_budget: u64,
    /// The request's client address (its share of the key's budget and of the day's ceiling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

/// What happened to a deployment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeployOutcome {
    /// The transaction (the mined one, or the latest sent while pending); `None` if nothing was sent.
    pub transaction_hash: Option<B256>,
    /// Whether the profile exists on chain now.
    pub deployed: bool,
}

/// A profile to register.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisterJob {
    /// The profile.
    pub address: Address,
    /// The API key that registers it (kept on a new record: its relay calls count on the key's share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// Registration result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisterOutcome {
    /// Whether this call created the registration.
    pub newly_registered: bool,
    /// The profile's quota.
    pub quota: Quota,
}

/// What a lane transaction is for: decides how it is finished when mined and what happens when it is dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(super) enum Job {
    /// An LSP23 deployment of this profile (the calldata is in the signed transaction).
    #[serde(rename_all = "camelCase")]
    Deploy { universal_profile: Address },
    /// An LSP25 `executeRelayCall` for this profile; `id` is the signed nonce's ([`ExecuteJob::id`]).
    #[serde(rename_all = "camelCase")]
    Execute { id: B256, profile: Address },
    /// A 0-value transfer to the relayer itself that fills a nonce hole.
    Filler,
}

impl Job {
    /// The kind and profile shown by the transaction status route (`None` for fillers).
    pub(super) const fn described(&self) -> Option<(TransactionKind, Address)> {
        match self {
            Self::Deploy { universal_profile } => Some((TransactionKind::Deploy, *universal_profile)),
            Self::Execute { profile, .. } => Some((TransactionKind::Execute, *profile)),
            Self::Filler => None,
        }
    }

    /// The profile the job works for (`None` for fillers).
    pub(super) const fn profile(&self) -> Option<Address> {
        match self {
            Self::Deploy { universal_profile } => Some(*universal_profile),
            Self::Execute { profile, .. } => Some(*profile),
            Self::Filler => None,
        }
    }
}

/// A stored, not yet mined transaction of the lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PendingTx {
    pub(super) job: Job,
    pub(super) nonce: u64,
    /// The latest signed transaction for this nonce (EIP-2718 bytes): what is broadcast, and what a fee bump
    /// re-signs with higher fees.
    pub(super) raw: Bytes,
    /// Every hash signed for this nonce, oldest first; the last is `raw`'s.
    pub(super) hashes: Vec<B256>,
    /// When the fees were last set, or a bump last refused (ms since the epoch).
    pub(super) fees_checked_ms: u64,
    /// Earlier transactions for this job, at other nonces, that were dropped (their nonce went to another one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) dropped: Vec<B256>,
    /// Who pays, when metered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) charge: Option<Charge>,
    /// When the job was first sent (ms since the epoch; kept across fee bumps and re-sends; 0 for rows stored
    /// before it was recorded).
    #[serde(default)]
    pub(super) sent_ms: u64,
    /// Set when the operator cancelled the job: the index in `hashes` of the first cancelling self-transfer (it and
    /// later hashes are cancels, bumped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) cancelled_from: Option<usize>,
}

impl PendingTx {
    /// Whether `hash` is one of the cancelling self-transfers.
    pub(super) fn is_cancel(&self, hash: B256) -> bool {
        self.cancelled_from.is_some_and(|from| {
            self.hashes
                .iter()
                .position(|h| *h == hash)
                .is_some_and(|i| i >= from)
        })
    }

    /// The latest hash, for logs.
    pub(super) fn latest_hash(&self) -> String {
        self.hashes
            .last()
            .map_or_else(|| "-".to_owned(), ToString::to_string)
    }
}

/// Chain facts about one lane transaction, read in this order: the receipts of its hashes, the account's latest
/// nonce, whether the node knows any of its hashes (pool or chain). A transaction mined after its receipts were read
/// is then still known, so it is never taken for dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Facts {
    /// A hash of this nonce with a receipt.
    pub(super) mined: Option<B256>,
    /// How many transactions of the relayer are mined (`eth_getTransactionCount(…, "latest")`).
    pub(super) latest_nonce: u64,
    /// Whether `eth_getTransactionByHash` finds any of its hashes.
    pub(super) known: bool,
}

/// What to do with a lane transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Finish the job.
    Mined(B256),
    /// Nothing now.
    Wait,
    /// The node lost it and its nonce is unused: broadcast the stored bytes again.
    Rebroadcast,
    /// Not mined in time: replace it with higher fees.
    BumpFees,
    /// Its nonce went to another transaction and none of its hashes is known: send the job again, fresh nonce.
    Dropped,
}

/// The result of reconciling the stored lane with the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GapPlan {
    /// Nonces to fill with self-transfers, ascending.
    pub(super) holes: Vec<u64>,
    /// The next nonce to assign once the holes are filled.
    pub(super) next_nonce: u64,
}

/// What one round did to a lane transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Round {
    /// Mined (and the job finished) with this hash.
    Mined(B256),
    /// Still pending (possibly re-broadcast, replaced or re-sent under another nonce).
    Pending,
    /// No longer in the lane, without a hash of its own being mined.
    Gone,
}

/// How waiting for a lane transaction ended.
#[derive(Debug)]
pub(super) enum Waited {
    /// Mined with this hash (the job finished).
    Mined(B256),
    /// No longer in the lane (finished by another round, or given up); the last copy seen.
    Gone(PendingTx),
    /// Still pending when the wait ended; the latest copy.
    Pending(PendingTx),
}

/// How `send_new` sends: a known gas limit (else estimated) and the reservations to make before signing.
#[derive(Debug, Default)]
pub(super) struct SendPlan {
    pub(super) gas_limit: Option<u64>,
    pub(super) charge: Option<Charge>,
    /// Subjects to reserve the gas limit on (under `charge`'s id) before signing.
    pub(super) reserve: Vec<Limit>,
    /// Earlier hashes of the job that were dropped.
    pub(super) dropped: Vec<B256>,
    /// The lane row this send replaces (a dropped job sent again), removed in the same write.
    pub(super) replaces: Option<u64>,
}

/// A mined transaction watched until it is deep enough.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Watched {
    /// The lane row it was (its signed bytes, hashes, charge): what goes back to the lane if its receipt disappears.
    pub(super) tx: PendingTx,
    /// The hash that was mined.
    pub(super) hash: B256,
    /// The block its receipt was last seen in (0 for a displaced transaction not seen since).
    pub(super) block: u64,
    /// The gas that receipt used.
    pub(super) gas_used: u64,
}

/// Where a watched transaction is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Table {
    /// `confirming`: mined at its nonce, one row per nonce.
    Confirming,
    /// `displaced`: reorganized away after its nonce was given to another job, by nonce and hash.
    Displaced,
}

/// What a pass does with a watched transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Confirm {
    /// Deep enough: charge `gas_used` and stop watching.
    Final { gas_used: u64 },
    /// Not yet; the receipt's block and gas, when they changed (mined again elsewhere).
    Wait { moved: Option<(u64, u64)> },
    /// The receipt is gone: back to the lane (or displaced, when the lane gave its nonce to another job).
    Reorganized,
    /// Displaced, and its nonce is used deep enough by another transaction: it can never be mined; release its
    /// charge.
    Superseded,
}

/// Where a watched transaction's nonce stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    /// Its own: it was mined at it (or is back in the lane).
    Own,
    /// Given to another job after its receipt disappeared; `used`: the relayer's transactions mined `confirmations`
    /// deep had passed it before its receipts were read.
    Displaced { used: bool },
}

/// Why a pending transaction is signed again at its nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Resign {
    /// A round's fee bump; refused, the stored copy waits `replace_after_ms` before the next bump.
    Bump,
    /// The operator's replacement: the same call with higher fees.
    Replace,
    /// The operator's cancel: a self-transfer; its hashes are the cancels from here on (`cancelled_from`).
    Cancel,
}

/// What the transaction log gets for a re-signed transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LogPlan {
    /// The new hash is recorded `pending` (the same job, at higher fees).
    pub(super) new_pending: bool,
    /// The old hash's new state (`replaced` also names the new hash).
    pub(super) old: TransactionState,
}

/// A re-signed transaction, stored and broadcast.
#[derive(Debug)]
pub(super) struct Resigned {
    pub(super) nonce: u64,
    pub(super) hash: B256,
    /// The node's answer. Refused (`NonceTaken`, `Rejected`): the old copy and its records are back. Otherwise
    /// (`Unknown` included) the new copy stays stored and recorded: a later round sees what became of it.
    pub(super) result: core::result::Result<B256, RpcError>,
}

impl Resigned {
    pub(super) fn outcome(&self) -> SendOutcome {
        SendOutcome::of(&self.result)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const H1: B256 = B256::repeat_byte(1);

    #[test]
    fn pending_records_round_trip_with_a_kind() {
        let tx = PendingTx {
            job: Job::Deploy {
                universal_profile: Address::repeat_byte(0xaa),
            },
            nonce: 7,
            raw: Bytes::from_static(&[2, 1]),
            charge: None,
            hashes: vec![H1],
            fees_checked_ms: 1,
            dropped: vec![],
            sent_ms: 1,
            cancelled_from: None,
        };
        let json = serde_json::to_value(&tx).unwrap();
        assert_eq!(json["job"]["kind"], "deploy");
        assert_eq!(
            json["job"]["universalProfile"],
            "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        );
        assert_eq!(serde_json::from_value::<PendingTx>(json.clone()).unwrap(), tx);
        let filler = serde_json::to_value(Job::Filler).unwrap();
        assert_eq!(filler["kind"], "filler");
        // rows stored before cancels existed read as not cancelled
        assert!(!json.as_object().unwrap().contains_key("cancelledFrom"));
        let cancelled = PendingTx {
            hashes: vec![H1, B256::repeat_byte(2), B256::repeat_byte(3)],
            cancelled_from: Some(1),
            ..tx
        };
        assert!(!cancelled.is_cancel(H1));
        assert!(cancelled.is_cancel(B256::repeat_byte(2)));
        assert!(cancelled.is_cancel(B256::repeat_byte(3)));
        assert!(!cancelled.is_cancel(B256::repeat_byte(4)));
    }
}
