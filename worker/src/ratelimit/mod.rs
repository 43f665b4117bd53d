//! Rate limits and budgets, each a token bucket kept by a `RateLimiter` Durable Object of its own name:
//! - [`bucket`]: the token bucket and the steps on it (pure);
//! - [`leases`]: tokens an isolate leases from a bucket and spends without asking (pure);
//! - [`object`]: the Durable Object, its typed ops ([`LimiterOp`]) and client ([`Limiter`]);
//! - [`client`]: the public routes' limits per client address;
//! - [`upload`]: the upload budget per client address.
//!
//! API keys' own limits and their revocation go through the same objects (see `crate::auth`).

mod bucket;
mod client;
mod leases;
mod object;
mod upload;

pub use self::{
    client::{IP_BUCKET, Taking, client_bucket, limit_client, limit_client_in},
    object::{Limiter, RateLimiter, rate_limited},
    upload::spend_upload_budget,
};
