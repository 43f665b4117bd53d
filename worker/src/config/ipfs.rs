//! The IPFS relay's configuration: gateways, their race, size bounds, the upload budget and the R2 cache's share.

use super::vars::Vars;
use crate::error::{ApiError, ApiResult};

/// IPFS configuration (vars `IPFS_GATEWAYS`, `IPFS_HEDGE_MS`, `IPFS_TIMEOUT_SECONDS`, `IPFS_MAX_BYTES`,
/// `UPLOAD_MAX_BYTES`, `UPLOAD_BYTES_PER_HOUR`, `IPFS_CACHE_MAX_BYTES`, `IPFS_ALLOW_UNVERIFIED`,
/// `IPFS_STREAM_MIN_BYTES`).
#[derive(Debug, Clone)]
pub struct IpfsConfig {
    /// Gateway base URLs (`https://ipfs.io`), raced in this order.
    pub gateways: Vec<String>,
    /// The race's hedge (`IPFS_HEDGE_MS`): each gateway is asked once the one before it has failed or has run this
    /// long without serving the content; 0 asks every gateway at once.
    pub hedge_ms: u64,
    /// Overall timeout for a gateway fetch.
    pub timeout_ms: u64,
    /// Largest content relayed.
    pub max_bytes: usize,
    /// Largest upload.
    pub upload_max_bytes: usize,
    /// Bytes a client address may upload an hour (0: no budget): [`crate::ratelimit::spend_upload_budget`].
    pub upload_bytes_per_hour: u64,
    /// Bytes the relay may keep in R2 for content fetched on anyone's request (`IPFS_CACHE_MAX_BYTES`).
    pub cache_max_bytes: u64,
    /// Whether a gateway that serves no CAR may serve UnixFS content unverified (`IPFS_ALLOW_UNVERIFIED`, default
    /// `false`): such content is never marked immutable nor kept in R2.
    pub allow_unverified: bool,
    /// Relayed content at least this long is answered as it is verified (`IPFS_STREAM_MIN_BYTES`); shorter content
    /// is verified whole first.
    pub stream_min_bytes: u64,
}

/// `IPFS_GATEWAYS`, `IPFS_HEDGE_MS`, `IPFS_TIMEOUT_SECONDS`, `IPFS_MAX_BYTES`, `UPLOAD_MAX_BYTES`,
/// `UPLOAD_BYTES_PER_HOUR`, `IPFS_CACHE_MAX_BYTES`, `IPFS_ALLOW_UNVERIFIED`, `IPFS_STREAM_MIN_BYTES`.
pub(super) fn parse(v: &Vars) -> ApiResult<IpfsConfig> {
    let gateways: Vec<String> = v
        .get("IPFS_GATEWAYS")
        .unwrap_or_default()
        .split([',', ' ', '\n'])
        .map(|g| g.trim().trim_end_matches('/').to_owned())
        .filter(|g| !g.is_empty())
        .collect();
    if gateways
        .iter()
        .any(|g| !(g.starts_with("https://") || g.starts_with("http://")))
    {
        return Err(ApiError::config(
            "IPFS_GATEWAYS must be http(s) URLs separated by commas",
        ));
    }
    Ok(IpfsConfig {
        gateways,
        hedge_ms: v.number("IPFS_HEDGE_MS")?,
        timeout_ms: v.number::<u64>("IPFS_TIMEOUT_SECONDS")? * 1000,
        max_bytes: usize::try_from(v.number::<u64>("IPFS_MAX_BYTES")?).unwrap_or(usize::MAX),
        upload_max_bytes: usize::try_from(v.number::<u64>("UPLOAD_MAX_BYTES")?).unwrap_or(usize::MAX),
        upload_bytes_per_hour: v.number("UPLOAD_BYTES_PER_HOUR")?,
        cache_max_bytes: v.number("IPFS_CACHE_MAX_BYTES")?,
        allow_unverified: v.flag("IPFS_ALLOW_UNVERIFIED")?,
        stream_min_bytes: v.number("IPFS_STREAM_MIN_BYTES")?,
    })
}
