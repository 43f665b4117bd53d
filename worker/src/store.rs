//! The registered profiles' records and their KV key formats (the API keys' are `crate::auth::keys`'s).
//!
//! Registered profiles and their monthly gas usage, in KV `PROFILES`:
//! `profile:<address>` → [`ProfileRecord`]; `usage:<address>:<month start, unix seconds>` → gas used (written by
//! each profile's `Meter` Durable Object, its single writer; a month without usage reads as 0).
//! Profile records are written only by the `Relayer` Durable Object (KV has no compare-and-set).

use alloy_primitives::{Address, B256};
use profile_relayer::api::{Quota, month_start};
use serde::{Deserialize, Serialize};
use worker::kv::KvStore;

use crate::error::{ApiError, ApiResult};

/// A registered profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileRecord {
    /// The profile.
    pub address: Address,
    /// Unix seconds.
    pub registered_at: u64,
    /// The deployment transaction, for profiles this relayer deployed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_transaction: Option<B256>,
    /// The id of the API key that registered or deployed it (its relay calls count on that key's fair share);
    /// `None` for records written before registrants were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registered_by: Option<String>,
}

fn profile_key(address: Address) -> String {
    format!("profile:{address:#x}")
}

fn usage_key(address: Address, now: u64) -> String {
    usage_key_of_month(address, month_start(now))
}

/// `usage:<address>:<month start>`: a profile's settled gas of one month (written by its `Meter` object).
pub fn usage_key_of_month(address: Address, month_start: u64) -> String {
    format!("usage:{address:#x}:{month_start}")
}

/// Reads a profile record.
pub async fn profile(kv: &KvStore, address: Address) -> ApiResult<Option<ProfileRecord>> {
    kv.get(&profile_key(address))
        .json()
        .await
        .map_err(ApiError::internal)
}

/// Writes a profile record (Relayer DO only).
pub async fn put_profile(kv: &KvStore, record: &ProfileRecord) -> ApiResult<()> {
    kv.put(&profile_key(record.address), record)
        .map_err(ApiError::internal)?
        .execute()
        .await
        .map_err(ApiError::internal)
}

/// The quota of `address` in the month containing `now`, `total` gas a month, as the profile's `Meter` last wrote
/// it through (reservations of transactions still pending are not counted here; `/api/quota` counts them).
pub async fn quota(kv: &KvStore, address: Address, now: u64, total: u64) -> ApiResult<Quota> {
    let used: u64 = kv
        .get(&usage_key(address, now))
        .text()
        .await
        .map_err(ApiError::internal)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Ok(Quota::with_total(total, used, now))
}
