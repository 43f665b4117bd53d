//! The profile registry (KV `profile:<address>`; this object is its single writer): a registration, and a
//! deployment recorded on the profile.

use alloy_primitives::{Address, B256};

use super::ctx::{Object, now_ms};
use super::model::RegisterOutcome;
use crate::{
    error::ApiResult,
    store::{self, ProfileRecord},
};

/// Registers `address` (with the hash of its deployment, when known, and the key that registers or deployed it:
/// the first one is kept): whether this call created the record, and when the profile was registered.
pub(super) async fn record(
    obj: Object<'_>,
    address: Address,
    deployment: Option<B256>,
    key: Option<&str>,
) -> ApiResult<(bool, u64)> {
    let kv = obj.env.kv("PROFILES")?;
    match store::profile(&kv, address).await? {
        Some(mut existing) => {
            if existing.deployment_transaction.is_none() && deployment.is_some() {
                existing.deployment_transaction = deployment;
                store::put_profile(&kv, &existing).await?;
            }
            Ok((false, existing.registered_at))
        }
        None => {
            // the metering clock (CLOCK_OFFSET_SECONDS moves it in tests): a warm-up is counted in it
            let registered_at = obj.config.relayer().map_or(now_ms() / 1000, |c| c.now());
            let record = ProfileRecord {
                address,
                registered_at,
                deployment_transaction: deployment,
                registered_by: key.map(str::to_owned),
            };
            store::put_profile(&kv, &record).await?;
            Ok((true, registered_at))
        }
    }
}

/// `RelayerOp::Register`: registers `address` (for the key `key`) and answers its quota.
pub(super) async fn register(
    obj: Object<'_>,
    address: Address,
    key: Option<&str>,
) -> ApiResult<RegisterOutcome> {
    let (newly_registered, registered_at) = record(obj, address, None, key).await?;
    let kv = obj.env.kv("PROFILES")?;
    let config = obj.config.relayer()?;
    let now = config.now();
    let quota = store::quota(&kv, address, now, config.profile_quota(registered_at, now)).await?;
    Ok(RegisterOutcome {
        newly_registered,
        quota,
    })
}
