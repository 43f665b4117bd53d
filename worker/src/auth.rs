//! API keys (stored in KV only as SHA-256 hashes) and the admin token.
//!
//! KV `API_KEYS`: `key:<sha256(api key)>` → [`ApiKeyRecord`]; `id:<id>` → the hash, with the record as metadata so
//! that listing needs one KV call.

use std::net::{IpAddr, Ipv6Addr};

use alloy_primitives::hex;
use sha2::{Digest, Sha256};
use worker::{Date, Env, Request};

use crate::{
    config::{Config, Secret},
    error::{ApiError, ApiResult, Code},
    ratelimit::{Hit, Leases, Verdict},
};

/// What a key may do; a key as stored (never the key itself).
pub use profile_relayer::api::admin::{ApiKey as ApiKeyRecord, Scope};

/// Key prefix: `prk_` + 64 hex characters.
pub const KEY_PREFIX: &str = "prk_";

/// SHA-256 of a secret, hex.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A fresh random key and its id.
pub fn generate_key() -> ApiResult<(String, String)> {
    let mut secret = [0u8; 32];
    let mut id = [0u8; 8];
    getrandom::fill(&mut secret).map_err(ApiError::internal)?;
    getrandom::fill(&mut id).map_err(ApiError::internal)?;
    Ok((format!("{KEY_PREFIX}{}", hex::encode(secret)), hex::encode(id)))
}

fn bearer(req: &Request) -> ApiResult<Option<String>> {
    let Some(value) = req.headers().get("authorization")? else {
        return Ok(None);
    };
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::new(
                Code::InvalidApiKey,
                "the Authorization header must be `Bearer <key>`",
            )
        })?;
    Ok(Some(token.to_owned()))
}

/// Whether `key` has the shape of an API key.
pub fn well_formed(key: &str) -> bool {
    key.strip_prefix(KEY_PREFIX)
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Authenticates the request's API key, checks `scope` and takes one request from the key's rate limit. The
/// key's `RateLimiter` object is asked on every request, so a revocation counts from the next request on.
///
/// # Errors
/// 401 `MISSING_API_KEY` / `INVALID_API_KEY`, 403 `API_KEY_REVOKED` / `INSUFFICIENT_SCOPE`, 429 `RATE_LIMITED`.
pub async fn authenticate(req: &Request, env: &Env, scope: Scope) -> ApiResult<ApiKeyRecord> {
    let key = bearer(req)?.ok_or_else(|| {
        ApiError::new(
            Code::MissingApiKey,
            "send the API key as `Authorization: Bearer <key>`",
        )
    })?;
    if !well_formed(&key) {
        return Err(ApiError::new(Code::InvalidApiKey, "malformed API key"));
    }
    let kv = env.kv("API_KEYS")?;
    let record: ApiKeyRecord = kv
        .get(&crate::store::api_key_key(&hash_secret(&key)))
        .json()
        .await
        .map_err(ApiError::internal)?
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
    let verdict = hit(env, &record.id, record.rate_limit_per_minute, 1).await?;
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

/// One step on the bucket named `name`: gives `refund` back, then takes `cost` tokens (0: only asks) or, with
/// `lease` > 0, leases up to that many.
async fn bucket_step(
    env: &Env,
    name: &str,
    limit: u32,
    cost: u32,
    refund: u32,
    lease: u32,
) -> ApiResult<Verdict> {
    let hit = Hit {
        limit,
        now_ms: Date::now().as_millis() as f64,
        cost,
        refund,
        lease,
        period_s: 0,
        whole: false,
    };
    ask(env, name, &hit).await
}

/// `hit` in the bucket named `name` (its `RateLimiter` object).
async fn ask(env: &Env, name: &str, hit: &Hit) -> ApiResult<Verdict> {
    let stub = env
        .durable_object("RATE_LIMITER")?
        .id_from_name(name)?
        .get_stub()?;
    crate::plumbing::call_do(&stub, "/hit", hit).await
}

/// 429 `RATE_LIMITED` saying `message`, with the verdict's wait as `Retry-After`.
fn rate_limited(message: impl Into<String>, verdict: &Verdict) -> ApiError {
    let mut err = ApiError::new(Code::RateLimited, message);
    err.retry_after = Some(verdict.retry_after);
    err
}

/// Takes `cost` tokens from the bucket named `name` (0: only asks).
async fn hit(env: &Env, name: &str, limit: u32, cost: u32) -> ApiResult<Verdict> {
    bucket_step(env, name, limit, cost, 0, 0).await
}

/// Gives one token back to the bucket named `name`.
async fn refund(env: &Env, name: &str, limit: u32) -> ApiResult<()> {
    bucket_step(env, name, limit, 0, 1, 0).await.map(|_| ())
}

/// Makes the revocation of key `id` effective on its next request.
pub async fn revoke(env: &Env, id: &str) -> ApiResult<()> {
    let stub = env.durable_object("RATE_LIMITER")?.id_from_name(id)?.get_stub()?;
    let _: bool = crate::plumbing::call_do(&stub, "/revoke", &()).await?;
    Ok(())
}

/// The client's IP as Cloudflare reports it (`unknown` when absent, e.g. behind no proxy).
pub fn client_ip(req: &Request) -> String {
    req.headers()
        .get("cf-connecting-ip")
        .ok()
        .flatten()
        .filter(|ip| ip.len() <= 64)
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The rate-limit key of a client address: an IPv4 address as it is; an IPv6 address by its /64 prefix (one
/// subscriber holds a whole /64, 2^64 addresses: keyed by address, each would have a bucket of its own); an
/// IPv4-mapped IPv6 address as its IPv4 address. Anything else (`unknown`) as it is.
pub fn client_key(ip: &str) -> String {
    client_key_in(ip, 64)
}

/// [`client_key`] with an IPv6 client named by its `/prefix` (1 to 128).
pub fn client_key_in(ip: &str, prefix: u32) -> String {
    match ip.trim().parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.to_string(),
        Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let prefix = prefix.clamp(1, 128);
                let mask = u128::MAX << (128 - prefix);
                format!("{}/{prefix}", Ipv6Addr::from(u128::from(v6) & mask))
            }
        },
        Err(_) => ip.to_owned(),
    }
}

/// [`client_key`] of the request's client.
fn client_bucket(req: &Request) -> String {
    client_key(&client_ip(req))
}

/// Takes one request from the client IP's bucket (a `RateLimiter` object named `ip:<address>`, an IPv6 client by
/// its /64: [`client_key`]) for the public
/// routes; `limit` is the requests per minute (0 turns the limit off), `what` names the
/// routes in the 429 message. Requests without `CF-Connecting-IP` (only possible outside Cloudflare) share a bucket.
///
/// # Errors
/// 429 `RATE_LIMITED` with `Retry-After`.
pub async fn limit_client(req: &Request, env: &Env, limit: u32, what: &str) -> ApiResult<()> {
    limit_client_in(req, env, IP_BUCKET, limit, what, Taking::EachRequest).await
}

/// The bucket of [`limit_client`]: the public routes' requests per client address.
pub const IP_BUCKET: &str = "ip";

/// How a request takes its token from its client's bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taking {
    /// One `RateLimiter` call per request: exact at every moment (the admin routes, the quieter public ones).
    EachRequest,
    /// Tokens leased ([`Leases`]): a client that keeps coming takes its tokens from its bucket a lease at a time (up
    /// to [`crate::ratelimit::max_lease`], 8 at 128 a minute and more) and spends them in this isolate without a
    /// `RateLimiter` call: one call per lease instead of one per request. Never more requests than the bucket
    /// allows; a client seen once is asked for exactly as with [`Taking::EachRequest`]. For the busy anonymous routes.
    Leases,
    /// This many tokens in one `RateLimiter` call: a request that does the work of several (a multi-query's further
    /// queries), exact like [`Taking::EachRequest`].
    Several(u32),
}

thread_local! {
    /// This isolate's leased tokens ([`Taking::Leases`]).
    static LEASES: core::cell::RefCell<Leases> = core::cell::RefCell::default();
}

/// [`limit_client`] in a bucket of its own: `<bucket>:<address>`, for routes whose limit must not be shared with
/// the others'.
///
/// # Errors
/// 429 `RATE_LIMITED` with `Retry-After`.
pub async fn limit_client_in(
    req: &Request,
    env: &Env,
    bucket: &str,
    limit: u32,
    what: &str,
    taking: Taking,
) -> ApiResult<()> {
    if limit == 0 {
        return Ok(());
    }
    let key = format!("{bucket}:{}", client_bucket(req));
    let verdict = match taking {
        Taking::EachRequest => hit(env, &key, limit, 1).await?,
        Taking::Several(0) => return Ok(()),
        Taking::Several(cost) => hit(env, &key, limit, cost).await?,
        Taking::Leases => {
            let now_ms = Date::now().as_millis() as f64;
            let Some((want, refund)) = LEASES.with_borrow_mut(|leases| leases.spend(&key, limit, now_ms))
            else {
                return Ok(());
            };
            let verdict = bucket_step(env, &key, limit, 0, refund, want.max(1)).await?;
            LEASES.with_borrow_mut(|leases| leases.granted(&key, &verdict, now_ms));
            verdict
        }
    };
    if verdict.allowed {
        return Ok(());
    }
    Err(rate_limited(
        format!("{what} are limited to {limit} requests per minute per client address"),
        &verdict,
    ))
}

/// The bucket of [`spend_upload_budget`]: the KiB uploaded per client address.
pub const UPLOAD_BUDGET_BUCKET: &str = "upload-bytes";
/// An IPv6 client's upload budget is its /56's (a residential customer's usual assignment): a /64 each would give
/// whoever holds a /48 65,536 budgets; a /56 gives 256.
pub const UPLOAD_BUDGET_IPV6_PREFIX: u32 = 56;

/// Spends `bytes` of the client address's upload budget, `per_hour` bytes an hour (`UPLOAD_BYTES_PER_HOUR`; 0: no
/// budget), counted in KiB in its own `RateLimiter` bucket ([`UPLOAD_BUDGET_BUCKET`], an IPv6 client by its /56:
/// [`UPLOAD_BUDGET_IPV6_PREFIX`]; kept in the object's storage, so that neither an idle object's eviction nor a
/// deployment refills it): an upload is stored only when the budget holds all of it ([`crate::ratelimit::Bucket::spend`]), so a client
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
    let hit = Hit {
        limit,
        now_ms: Date::now().as_millis() as f64,
        cost: kib(u64::try_from(bytes).unwrap_or(u64::MAX)),
        refund: 0,
        lease: 0,
        period_s: 3600,
        whole: true,
    };
    let verdict = ask(env, &name, &hit).await?;
    if verdict.allowed {
        return Ok(());
    }
    Err(rate_limited(
        format!("uploads are limited to {limit} KiB an hour per client address"),
        &verdict,
    ))
}

/// Authenticates an upload: either an API key with the `upload` scope ([`authenticate`]) or, when the operator set
/// `UPLOAD_JWT_SECRET`, the short-lived HS256 token LUKSO's wallet sends ([`crate::upload_token`]): issuer in
/// `UPLOAD_JWT_ISSUERS` (default `extension`), `exp` within `UPLOAD_JWT_SKEW_SECONDS` (default 30). Token uploads
/// are limited per client address (`UPLOAD_JWT_RATE_LIMIT_PER_MINUTE`, default 30): the secret ships inside the
/// wallet's pages, so a token proves the client's build, not a user.
///
/// # Errors
/// As [`authenticate`]; 401 `INVALID_UPLOAD_TOKEN` for a refused token; 429 `RATE_LIMITED`.
pub async fn authenticate_upload(req: &Request, env: &Env, config: &Config) -> ApiResult<()> {
    let secret = config.upload_jwt_secret.as_ref().map(Secret::expose);
    let token = bearer(req)?;
    let (Some(secret), Some(token)) = (secret, token.filter(|t| crate::upload_token::looks_like_jwt(t)))
    else {
        return authenticate(req, env, Scope::Upload).await.map(|_| ());
    };
    let issuers = config.upload_jwt_issuers.get()?;
    let skew = config.upload_jwt_skew.value()?;
    let now = Date::now().as_millis() as f64 / 1000.0;
    crate::upload_token::verify(&token, secret.as_bytes(), issuers, now, f64::from(skew))
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
    let bucket = format!("admin:{}", client_bucket(req));
    let verdict = hit(env, &bucket, limit, 1).await?;
    if !verdict.allowed {
        return Err(rate_limited(
            "too many wrong admin tokens from this address; retry later",
            &verdict,
        ));
    }
    let Ok(Some(given)) = bearer(req) else {
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
    refund(env, &bucket, limit).await?;
    Ok(())
}

fn invalid_admin() -> ApiError {
    ApiError::new(
        Code::InvalidAdminToken,
        "admin routes need `Authorization: Bearer <admin token>`",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_shape_and_hash() {
        let key = format!("{KEY_PREFIX}{}", "ab".repeat(32));
        assert!(well_formed(&key));
        assert!(!well_formed("prk_abc"));
        assert!(!well_formed(&key.replace("prk_", "sk_")));
        assert_eq!(
            hash_secret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn ipv6_clients_are_bucketed_by_their_64() {
        // every address of one /64 shares a bucket, whatever its spelling
        let key = client_key("2001:db8:1:2::1");
        assert_eq!(key, "2001:db8:1:2::/64");
        for same in [
            "2001:db8:1:2:ffff:ffff:ffff:ffff",
            "2001:0db8:0001:0002:abcd:0:0:1",
            " 2001:DB8:1:2::42 ",
        ] {
            assert_eq!(client_key(same), key, "{same}");
        }
        // the next /64 is another client
        assert_eq!(client_key("2001:db8:1:3::1"), "2001:db8:1:3::/64");
        assert_eq!(client_key("::"), "::/64");
        // IPv4 by address, also when mapped into IPv6
        assert_eq!(client_key("203.0.113.7"), "203.0.113.7");
        assert_ne!(client_key("203.0.113.8"), client_key("203.0.113.7"));
        assert_eq!(client_key("::ffff:203.0.113.7"), "203.0.113.7");
        // not an address: as it is
        assert_eq!(client_key("unknown"), "unknown");
        // the upload budget's /56: one budget for a customer's prefix, another for the next /56
        assert_eq!(client_key_in("2001:db8:1:2ff::1", 56), "2001:db8:1:200::/56");
        assert_eq!(
            client_key_in("2001:db8:1:200::9", 56),
            client_key_in("2001:db8:1:2ff::1", 56)
        );
        assert_ne!(
            client_key_in("2001:db8:1:300::1", 56),
            client_key_in("2001:db8:1:2ff::1", 56)
        );
        assert_eq!(client_key_in("203.0.113.7", 56), "203.0.113.7");
        assert_eq!(client_key_in("2001:db8::1", 128), "2001:db8::1/128");
    }
}
