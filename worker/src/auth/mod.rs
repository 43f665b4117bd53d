//! Who may call: API keys ([`keys`]: the repository, hashes only), the admin token ([`admin`]) and the upload
//! tokens LUKSO's wallet sends ([`upload_token`]). Each key's request limit and revocation live in its
//! `RateLimiter` object (`crate::ratelimit`).

mod admin;
mod bearer;
mod keys;
mod upload_token;

use worker::{Env, Request};

use self::bearer::bearer;
pub use self::{
    admin::authenticate_admin,
    keys::{ApiKeyRecord, ApiKeys, Scope, StoredKey, generate_key, hash_secret, well_formed},
};
use crate::{
    config::{Config, Secret},
    error::{ApiError, ApiResult, Code},
    ratelimit::{Limiter, Taking, client_bucket, limit_client_in, rate_limited},
    shares::Shares,
};

/// Authenticates the request's API key, checks `scope` and takes one request from the client address's share of
/// the key's rate limit ([`Shares::of_key_rate`], when `shares` are given and below the whole), then from the key's
/// own: a client flooding a public key is refused on its share and leaves the rest of the key's minute to everyone
/// else. The key's `RateLimiter` object is asked on every request, so a revocation counts from the next request on.
///
/// # Errors
/// 401 `MISSING_API_KEY` / `INVALID_API_KEY`, 403 `API_KEY_REVOKED` / `INSUFFICIENT_SCOPE`, 429 `RATE_LIMITED`.
pub async fn authenticate(
    req: &Request,
    env: &Env,
    scope: Scope,
    shares: Option<&Shares>,
) -> ApiResult<ApiKeyRecord> {
    let key = bearer(req)?.ok_or_else(|| {
        ApiError::new(
            Code::MissingApiKey,
            "send the API key as `Authorization: Bearer <key>`",
        )
    })?;
    if !well_formed(&key) {
        return Err(ApiError::new(Code::InvalidApiKey, "malformed API key"));
    }
    let record = ApiKeys::of(env)?
        .by_secret(&key)
        .await?
        .ok_or_else(|| ApiError::new(Code::InvalidApiKey, "unknown API key"))?;
    crate::reqlog::note_key(&record.id);
    let revoked = || ApiError::new(Code::ApiKeyRevoked, "this API key was revoked");
    if record.revoked_at.is_some() {
        return Err(revoked());
    }
    if !record.scopes.contains(&scope) {
        let name = serde_json::to_string(&scope).unwrap_or_default();
        return Err(ApiError::new(
            Code::InsufficientScope,
            format!("this API key lacks the {name} scope"),
        ));
    }
    if let Some(per_minute) = shares.and_then(|s| s.of_key_rate(record.rate_limit_per_minute)) {
        let client = format!("{}:client:{}", record.id, client_bucket(req));
        let verdict = Limiter::named(env, &client)?.take(per_minute, 1).await?;
        if !verdict.allowed {
            return Err(rate_limited(
                format!(
                    "this API key allows {per_minute} requests per minute from one client address (its fair share \
                     of {})",
                    record.rate_limit_per_minute
                ),
                &verdict,
            ));
        }
    }
    let verdict = Limiter::named(env, &record.id)?
        .take(record.rate_limit_per_minute, 1)
        .await?;
    if verdict.revoked {
        return Err(revoked());
    }
    if !verdict.allowed {
        return Err(rate_limited(
            format!(
                "this API key allows {} requests per minute",
                record.rate_limit_per_minute
            ),
            &verdict,
        ));
    }
    Ok(record)
}

/// Authenticates an upload: either an API key with the `upload` scope ([`authenticate`]) or, when the operator set
/// `UPLOAD_JWT_SECRET`, the short-lived HS256 token LUKSO's wallet sends ([`upload_token`]): issuer in
/// `UPLOAD_JWT_ISSUERS` (default `extension`), `exp` within `UPLOAD_JWT_SKEW_SECONDS` (default 30). Token uploads
/// are limited per client address (`UPLOAD_JWT_RATE_LIMIT_PER_MINUTE`, default 30): the secret ships inside the
/// wallet's pages, so a token proves the client's build, not a user.
///
/// # Errors
/// As [`authenticate`]; 401 `INVALID_UPLOAD_TOKEN` for a refused token; 429 `RATE_LIMITED`.
pub async fn authenticate_upload(req: &Request, env: &Env, config: &Config) -> ApiResult<()> {
    let secret = config.upload_jwt_secret.as_ref().map(Secret::expose);
    let token = bearer(req)?;
    let (Some(secret), Some(token)) = (secret, token.filter(|t| upload_token::looks_like_jwt(t))) else {
        let relayer = config.relayer().ok();
        let shares = relayer.map(|r| &r.shares);
        return authenticate(req, env, Scope::Upload, shares).await.map(|_| ());
    };
    let issuers = config.upload_jwt_issuers.get()?;
    let skew = config.upload_jwt_skew.value()?;
    let now = crate::plumbing::now_ms() as f64 / 1000.0;
    upload_token::verify(&token, secret.as_bytes(), issuers, now, f64::from(skew))
        .map_err(|refusal| ApiError::new(Code::InvalidUploadToken, refusal.reason()))?;
    limit_client_in(
        req,
        env,
        "upload-token",
        config.limits.upload_jwt.value()?,
        "uploads with an upload token",
        Taking::EachRequest,
    )
    .await
}
