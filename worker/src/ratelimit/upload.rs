//! The upload budget: bytes a client address may upload an hour (`UPLOAD_BYTES_PER_HOUR`), whatever its keys or
//! tokens.

use worker::{Env, Request};

use super::{
    client::{client_ip, client_key_in},
    object::{Limiter, rate_limited},
};
use crate::error::ApiResult;

/// The bucket of [`spend_upload_budget`]: the KiB uploaded per client address.
pub const UPLOAD_BUDGET_BUCKET: &str = "upload-bytes";
/// An IPv6 client's upload budget is its /56's (a residential customer's usual assignment): a /64 each would give
/// whoever holds a /48 65,536 budgets; a /56 gives 256.
pub const UPLOAD_BUDGET_IPV6_PREFIX: u32 = 56;

/// Spends `bytes` of the client address's upload budget, `per_hour` bytes an hour (`UPLOAD_BYTES_PER_HOUR`; 0: no
/// budget), counted in KiB in its own `RateLimiter` bucket ([`UPLOAD_BUDGET_BUCKET`], an IPv6 client by its /56:
/// [`UPLOAD_BUDGET_IPV6_PREFIX`]; kept in the object's storage, so that neither an idle object's eviction nor a
/// deployment refills it): an upload is stored only when the budget holds all of it ([`super::bucket::Bucket::spend`]), so a client
/// address stores at most its budget an hour plus one hour's burst, whatever the number of requests or API keys
/// (keys and upload tokens ship inside pages: neither proves a user). An upload above the whole budget waits for a
/// full bucket.
///
/// # Errors
/// 429 `RATE_LIMITED` with `Retry-After`, nothing stored.
pub async fn spend_upload_budget(req: &Request, env: &Env, per_hour: u64, bytes: usize) -> ApiResult<()> {
    if per_hour == 0 {
        return Ok(());
    }
    let kib = |n: u64| u32::try_from(n.div_ceil(1024)).unwrap_or(u32::MAX).max(1);
    let limit = kib(per_hour);
    let name = format!(
        "{UPLOAD_BUDGET_BUCKET}:{}",
        client_key_in(&client_ip(req), UPLOAD_BUDGET_IPV6_PREFIX)
    );
    let cost = kib(u64::try_from(bytes).unwrap_or(u64::MAX));
    let verdict = Limiter::named(env, &name)?.spend(limit, 3600, cost).await?;
    if verdict.allowed {
        return Ok(());
    }
    Err(rate_limited(
        format!("uploads are limited to {limit} KiB an hour per client address"),
        &verdict,
    ))
}
