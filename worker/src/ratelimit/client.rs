//! The public routes' limits per client address: a `RateLimiter` bucket per `<bucket>:<client>`, the client being
//! its IPv4 address or its IPv6 /64 ([`client_key`]), taken per request or from a lease held by the isolate.

use std::net::{IpAddr, Ipv6Addr};

use worker::{Env, Request};

use super::{
    leases::Leases,
    object::{Limiter, rate_limited},
};
use crate::error::ApiResult;

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
pub fn client_bucket(req: &Request) -> String {
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
    /// to [`super::leases::max_lease`], 8 at 128 a minute and more) and spends them in this isolate without a
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
        Taking::EachRequest => Limiter::named(env, &key)?.take(limit, 1).await?,
        Taking::Several(0) => return Ok(()),
        Taking::Several(cost) => Limiter::named(env, &key)?.take(limit, cost).await?,
        Taking::Leases => {
            let now_ms = crate::plumbing::now_ms() as f64;
            let Some((want, refund)) = LEASES.with_borrow_mut(|leases| leases.spend(&key, limit, now_ms))
            else {
                return Ok(());
            };
            let verdict = Limiter::named(env, &key)?.lease(limit, want, refund).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
