//! The query of an image request (`method`, `data`, `width`, `dpr`): parsing, the target width and the `x-verified`
//! answer. Pure: no I/O.

use alloy_primitives::{B256, keccak256};
use profile_relayer::lsp2::VerificationMethod;

use crate::error::{ApiError, ApiResult, Code};

/// Largest accepted `width` parameter.
pub const MAX_WIDTH_PARAM: u32 = 10_000;
/// Largest accepted `dpr` parameter.
pub const MAX_DPR: f64 = 5.0;
/// Widest image produced: `width × dpr` above it is served at this width.
pub const MAX_OUTPUT_WIDTH: u32 = 4096;

/// What the query asks to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// Nothing (no `method`, or `0x00000000`).
    None,
    /// keccak256 of the bytes must equal this hash.
    Keccak256(B256),
    /// A method whose data the bytes alone cannot check (`ecdsa`): answered `x-verified: false`.
    Unverifiable,
}

/// The query of an image request.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageQuery {
    /// Verification asked for.
    pub verification: Verification,
    /// `width` in CSS pixels.
    pub width: Option<u32>,
    /// Device pixel ratio (1 when absent).
    pub dpr: f64,
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(Code::InvalidParameter, message)
}

fn parse_method(method: &str) -> ApiResult<VerificationMethod> {
    let by_name = [
        VerificationMethod::Keccak256Bytes,
        VerificationMethod::Keccak256Utf8,
        VerificationMethod::Ecdsa,
    ]
    .into_iter()
    .find(|m| m.name().is_some_and(|n| n.eq_ignore_ascii_case(method)));
    if let Some(m) = by_name {
        return Ok(m);
    }
    let id = method
        .strip_prefix("0x")
        .or_else(|| method.strip_prefix("0X"))
        .filter(|h| h.len() == 8)
        .and_then(|h| alloy_primitives::hex::decode(h).ok())
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .ok_or_else(|| {
            invalid(format!(
                "method {method:?} is not an LSP2 verification method (keccak256(bytes), keccak256(utf8), or a \
                 4-byte id such as 0x8019f9b1)"
            ))
        })?;
    match VerificationMethod::from_id(id.into()) {
        VerificationMethod::Unknown(id) => Err(invalid(format!(
            "method {id} is not a known LSP2 verification method"
        ))),
        known => Ok(known),
    }
}

fn parse_hash(data: &str) -> ApiResult<B256> {
    let hex = data
        .strip_prefix("0x")
        .or_else(|| data.strip_prefix("0X"))
        .unwrap_or(data);
    alloy_primitives::hex::decode(hex)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .map(B256::from)
        .ok_or_else(|| invalid("data must be the 32-byte hash of the image (0x + 64 hex digits)"))
}

impl ImageQuery {
    /// Parses the query parameters (`method`, `data`, `width`, `dpr`; others are ignored).
    ///
    /// # Errors
    /// 400 `INVALID_PARAMETER` for a malformed, empty or out-of-range value, an unknown method, or `data` that is
    /// neither a 32-byte hash nor `0x`. A hash method without a hash (`data` absent or `0x`, what the wallet sends
    /// for images without one) is not an error: it answers `x-verified: false`.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> ApiResult<Self> {
        let (mut method, mut data, mut width, mut dpr) = (None, None, None, None);
        for (key, value) in pairs {
            let slot = match key {
                "method" => &mut method,
                "data" => &mut data,
                "width" => &mut width,
                "dpr" => &mut dpr,
                _ => continue,
            };
            if slot.is_some() {
                return Err(invalid(format!("{key} is given more than once")));
            }
            *slot = Some(value.trim());
        }
        let method = method.map(parse_method).transpose()?;
        // `0x`: no hash
        let hash = data
            .filter(|d| !matches!(*d, "0x" | "0X"))
            .map(parse_hash)
            .transpose()?;
        let verification = match (method, hash) {
            (None | Some(VerificationMethod::None), _) => Verification::None,
            (Some(VerificationMethod::Keccak256Bytes | VerificationMethod::Keccak256Utf8), Some(h)) => {
                Verification::Keccak256(h)
            }
            (Some(_), _) => Verification::Unverifiable,
        };
        let width = width
            .map(|w| {
                w.parse::<u32>()
                    .ok()
                    .filter(|w| (1..=MAX_WIDTH_PARAM).contains(w))
                    .ok_or_else(|| invalid(format!("width must be an integer from 1 to {MAX_WIDTH_PARAM}")))
            })
            .transpose()?;
        let dpr = dpr
            .map(|d| {
                d.parse::<f64>()
                    .ok()
                    .filter(|d| d.is_finite() && *d > 0.0 && *d <= MAX_DPR)
                    .ok_or_else(|| invalid(format!("dpr must be a number above 0 and at most {MAX_DPR}")))
            })
            .transpose()?
            .unwrap_or(1.0);
        Ok(Self {
            verification,
            width,
            dpr,
        })
    }

    /// The width to produce in pixels: `width × dpr` rounded, at least 1, at most [`MAX_OUTPUT_WIDTH`]; `None`
    /// without `width`.
    #[must_use]
    pub fn target_width(&self) -> Option<u32> {
        let product = f64::from(self.width?) * self.dpr;
        // both factors are bounded: the product is a small positive number
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let pixels = product.round().clamp(1.0, f64::from(MAX_OUTPUT_WIDTH)) as u32;
        Some(pixels)
    }

    /// `x-verified` for content whose keccak256 is `hash`; `None` when nothing was asked.
    #[must_use]
    pub fn verified(&self, hash: B256) -> Option<bool> {
        match self.verification {
            Verification::None => None,
            Verification::Keccak256(expected) => Some(expected == hash),
            Verification::Unverifiable => Some(false),
        }
    }
}

/// keccak256 of the source bytes (what `keccak256(bytes)` and `keccak256(utf8)` verification compare).
#[must_use]
pub fn content_hash(bytes: &[u8]) -> B256 {
    keccak256(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    fn query(q: &str) -> ApiResult<ImageQuery> {
        let pairs: Vec<(&str, &str)> = q
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        ImageQuery::parse(pairs)
    }

    #[test]
    fn queries() {
        let hash = format!("0x{}", "ab".repeat(32));
        let q = query(&format!("method=keccak256(bytes)&data={hash}&width=100&dpr=2")).unwrap();
        assert_eq!(q.verification, Verification::Keccak256(B256::repeat_byte(0xab)));
        assert_eq!(q.target_width(), Some(200));
        for m in ["0x8019f9b1", "0x6f357c6a", "KECCAK256(UTF8)", "0X8019F9B1"] {
            let q = query(&format!("method={m}&data={hash}")).unwrap();
            assert_eq!(
                q.verification,
                Verification::Keccak256(B256::repeat_byte(0xab)),
                "{m}"
            );
            assert_eq!(q.target_width(), None);
        }
        // what the wallet sends for images without verification
        assert_eq!(
            query("method=0x00000000&data=0x").unwrap().verification,
            Verification::None
        );
        assert_eq!(query("").unwrap().verification, Verification::None);
        for unverifiable in [
            "method=ecdsa",
            "method=keccak256(bytes)",
            "method=0x8019f9b1&data=0x",
        ] {
            assert_eq!(
                query(unverifiable).unwrap().verification,
                Verification::Unverifiable,
                "{unverifiable}"
            );
        }
        assert_eq!(query("width=10&dpr=1.25").unwrap().target_width(), Some(13));
        assert_eq!(
            query("width=10000&dpr=5").unwrap().target_width(),
            Some(MAX_OUTPUT_WIDTH)
        );
        assert_eq!(query("width=1&dpr=0.1").unwrap().target_width(), Some(1));
        assert_eq!(query("other=1&height=5").unwrap().width, None);
        for bad in [
            "width=",
            "dpr=",
            "method=",
            "data=",
            "data=__main__",
            "method=ecdsa&data=0x01",
            "width=0",
            "width=-1",
            "width=10001",
            "width=1e3",
            "width=100?width=100",
            "width=99999999999999999999",
            "dpr=0",
            "dpr=-1",
            "dpr=5.5",
            "dpr=NaN",
            "dpr=inf",
            "width=1&width=2",
            "method=sha256",
            "method=0xdeadbeef&data=0x",
            "method=0x8019f9",
            "method=keccak256(bytes)&data=0x1234",
            "method=keccak256(bytes)&data=0xzz",
        ] {
            let e = query(bad).unwrap_err();
            assert_eq!((e.status, e.code), (400, "INVALID_PARAMETER"), "{bad}");
        }
    }

    #[test]
    fn verification_compares_keccak_of_the_source() {
        let bytes = b"some image bytes";
        let right = format!("{}", keccak256(bytes));
        let q = query(&format!("method=keccak256(bytes)&data={right}")).unwrap();
        assert_eq!(q.verified(content_hash(bytes)), Some(true));
        assert_eq!(q.verified(content_hash(b"other bytes")), Some(false));
        assert_eq!(query("").unwrap().verified(content_hash(bytes)), None);
        assert_eq!(
            query("method=ecdsa").unwrap().verified(content_hash(bytes)),
            Some(false)
        );
    }
}
