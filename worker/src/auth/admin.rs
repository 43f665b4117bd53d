//! The admin token (secret `ADMIN_TOKEN`), its guesses limited per client address.

use sha2::{Digest, Sha256};
use worker::{Env, Request};

use crate::{
    config::{Config, Secret},
    error::{ApiError, ApiResult, Code},
    ratelimit::{Limiter, client_bucket, rate_limited},
};

/// Checks the admin token (secret `ADMIN_TOKEN`), comparing SHA-256 digests. Guesses are limited per client IP:
/// every attempt takes a token from the IP's admin bucket *before* the comparison (one step in the `RateLimiter`
/// object, so a burst of simultaneous guesses gets at most `ADMIN_FAILURES_PER_MINUTE` compared), and the right
/// token gives it back. Once the bucket is empty every admin request from that IP answers 429 (the right token
/// included, so a guess cannot be confirmed) until it refills.
///
/// # Errors
/// 401 `INVALID_ADMIN_TOKEN`, 429 `RATE_LIMITED`; 500 `CONFIGURATION_ERROR` when no admin token is configured.
pub async fn authenticate_admin(req: &Request, env: &Env, config: &Config) -> ApiResult<()> {
    let expected = config
        .admin_token
        .as_ref()
        .map(Secret::expose)
        .filter(|s| s.len() >= 16)
        .ok_or_else(|| ApiError::config("the ADMIN_TOKEN secret is not set (16 characters or more)"))?;
    let limit = config.limits.admin_failures.value()?;
    let bucket = Limiter::named(env, &format!("admin:{}", client_bucket(req)))?;
    let verdict = bucket.take(limit, 1).await?;
    if !verdict.allowed {
        return Err(rate_limited(
            "too many wrong admin tokens from this address; retry later",
            &verdict,
        ));
    }
    let Ok(Some(given)) = super::bearer::bearer(req) else {
        return Err(invalid_admin());
    };
    // digests of equal length: the comparison time does not depend on how much of the token matched
    let (a, b) = (
        Sha256::digest(given.as_bytes()),
        Sha256::digest(expected.as_bytes()),
    );
    if a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) != 0 {
        return Err(invalid_admin());
    }
    // the right token: its attempt does not count
    bucket.give_back(limit).await
}

fn invalid_admin() -> ApiError {
    ApiError::new(
        Code::InvalidAdminToken,
        "admin routes need `Authorization: Bearer <admin token>`",
    )
}
