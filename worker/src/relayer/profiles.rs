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
/// the first one is kept); `true` when this call created the record.
pub(super) async fn record(
    obj: Object<'_>,
    address: Address,
    deployment: Option<B256>,
    key: Option<&str>,
) -> ApiResult<bool> {
    let kv = obj.env.kv("PROFILES")?;
    match store::profile(&kv, address).await? {
        Some(mut existing) => {
            if existing.deployment_transaction.is_none() && deployment.is_some() {
                existing.deployment_transaction = deployment;
                store::put_profile(&kv, &existing).await?;
            }
            Ok(false)
        }
        None => {
            let record = ProfileRecord {
                address,
                registered_at: now_ms() / 1000,
                deployment_transaction: deployment,
                registered_by: key.map(str::to_owned),
            };
            store::put_profile(&kv, &record).await?;
            Ok(true)
        }
    }
}

/// `RelayerOp::Register`: registers `address` (for the key `key`) and answers its quota.
pub(super) async fn register(
    obj: Object<'_>,
    address: Address,
    key: Option<&str>,
) -> ApiResult<RegisterOutcome> {
    let newly_registered = record(obj, address, None, key).await?;
    let kv = obj.env.kv("PROFILES")?;
    let config = obj.config.relayer()?;
    let quota = store::quota(&kv, address, config.now(), config.monthly_gas_quota).await?;
    Ok(RegisterOutcome {
        newly_registered,
        quota,
    })
}
