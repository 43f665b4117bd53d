//! The short-lived upload token LUKSO's wallet sends to `POST /api/v0/add`: a JWT (JWS compact serialization)
//! signed with HS256 under a secret shared with the operator (`UPLOAD_JWT_SECRET`), with an issuer (`iss`, checked
//! against `UPLOAD_JWT_ISSUERS`) and an expiry (`exp`, seconds — the wallet writes fractional seconds, so numbers are
//! read as `f64`). Pure: the caller gives the clock.
//!
//! Only HS256 is accepted (the header's `alg` must say so: no `none`, no algorithm chosen by the token), the MAC is
//! compared in constant time by `hmac`'s `verify_slice`, and the token's size is bounded before anything is decoded.
//! The secret ships inside the wallet's pages, so a valid token proves the client's build, not a user: uploads made
//! with one are rate-limited per client address like the other key-less routes.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

/// Largest token read (the wallet's are ≈ 150 characters).
pub const MAX_TOKEN_BYTES: usize = 2048;

/// Why a token was refused (the text is the error message's; it never contains the token or the secret).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not three base64url parts with a JSON header and claims, or too long.
    Malformed,
    /// The header names another algorithm than HS256.
    Algorithm,
    /// The signature does not verify under the secret.
    Signature,
    /// `exp` is missing or has passed (beyond the allowed skew).
    Expired,
    /// `iat` lies in the future (beyond the allowed skew).
    IssuedInFuture,
    /// `iss` is missing or not allowed.
    Issuer,
}

impl Refusal {
    /// The reason, for the error message.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::Malformed => "the upload token is not a well-formed JWT",
            Self::Algorithm => "the upload token must be signed with HS256",
            Self::Signature => "the upload token's signature does not verify",
            Self::Expired => "the upload token has expired (or has no exp)",
            Self::IssuedInFuture => "the upload token is issued in the future",
            Self::Issuer => "the upload token's issuer is not allowed",
        }
    }
}

#[derive(Deserialize)]
struct Header {
    alg: String,
}

#[derive(Deserialize)]
struct Claims {
    iss: Option<String>,
    exp: Option<f64>,
    iat: Option<f64>,
}

/// Whether `token` has the shape of a JWT (three dot-separated parts), as opposed to an API key.
pub fn looks_like_jwt(token: &str) -> bool {
    token.bytes().filter(|b| *b == b'.').count() == 2
}

/// Verifies `token` under `secret` at `now` (unix seconds, fractional), allowing `skew` seconds of clock
/// difference; `issuers` lists the accepted `iss` values. Returns the issuer.
///
/// # Errors
/// The [`Refusal`].
pub fn verify(
    token: &str,
    secret: &[u8],
    issuers: &[String],
    now: f64,
    skew: f64,
) -> Result<String, Refusal> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(Refusal::Malformed);
    }
    let mut parts = token.split('.');
    let (Some(header), Some(claims), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refusal::Malformed);
    };
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| Refusal::Malformed);
    let header: Header = serde_json::from_slice(&decode(header)?).map_err(|_| Refusal::Malformed)?;
    if header.alg != "HS256" {
        return Err(Refusal::Algorithm);
    }
    let signature = decode(signature)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).map_err(|_| Refusal::Signature)?;
    let signed_len = token.len() - signature_text_len(token);
    mac.update(token.as_bytes().get(..signed_len).ok_or(Refusal::Malformed)?);
    mac.verify_slice(&signature).map_err(|_| Refusal::Signature)?;
    let claims: Claims = serde_json::from_slice(&decode(claims)?).map_err(|_| Refusal::Malformed)?;
    match claims.exp {
        Some(exp) if exp.is_finite() && exp + skew > now => {}
        _ => return Err(Refusal::Expired),
    }
    if claims.iat.is_some_and(|iat| !iat.is_finite() || iat - skew > now) {
        return Err(Refusal::IssuedInFuture);
    }
    match claims.iss {
        Some(iss) if issuers.contains(&iss) => Ok(iss),
        _ => Err(Refusal::Issuer),
    }
}

/// The length of the signature part and the dot before it.
fn signature_text_len(token: &str) -> usize {
    token.rfind('.').map_or(0, |dot| token.len() - dot)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The reference token: the wallet's library (`@tsndr/cloudflare-worker-jwt` 2.5.4), secret
    /// `test-shared-secret`, `Date.now()` = 1700000000123 (`../shared/reference/genuine-profiles-and-uploads.md` §6).
    const WALLET: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJleHRlbnNpb24iLCJpYXQiOjE3MDAwMDAwMDAuMTIzLCJleHAiOjE3MDAwMDAxMjAuMTIzfQ.85vS7tz7TuQkVjuyTgKVVK7nNafoA_vYds0oyCDT5mA";
    const SECRET: &[u8] = b"test-shared-secret";

    fn issuers() -> Vec<String> {
        vec!["extension".to_owned()]
    }

    #[test]
    fn the_wallets_token_verifies_within_its_lifetime() {
        assert!(looks_like_jwt(WALLET));
        assert!(!looks_like_jwt("prk_00"));
        assert_eq!(
            verify(WALLET, SECRET, &issuers(), 1_700_000_000.5, 30.0),
            Ok("extension".to_owned())
        );
        // fractional exp 1700000120.123, 30 s of skew
        assert!(verify(WALLET, SECRET, &issuers(), 1_700_000_150.0, 30.0).is_ok());
        assert_eq!(
            verify(WALLET, SECRET, &issuers(), 1_700_000_150.2, 30.0),
            Err(Refusal::Expired)
        );
        // issued 2 minutes ahead of this clock
        assert_eq!(
            verify(WALLET, SECRET, &issuers(), 1_699_999_800.0, 30.0),
            Err(Refusal::IssuedInFuture)
        );
    }

    #[test]
    fn forged_and_foreign_tokens_are_refused() {
        let now = 1_700_000_001.0;
        assert_eq!(
            verify(WALLET, b"another-secret", &issuers(), now, 30.0),
            Err(Refusal::Signature)
        );
        assert_eq!(
            verify(WALLET, SECRET, &["wallet".to_owned()], now, 30.0),
            Err(Refusal::Issuer)
        );
        // alg none, with the signature dropped
        let (_, rest) = WALLET.split_once('.').unwrap();
        let claims = rest.split('.').next().unwrap();
        let none = format!(
            "{}.{claims}.",
            URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#)
        );
        assert_eq!(
            verify(&none, SECRET, &issuers(), now, 30.0),
            Err(Refusal::Algorithm)
        );
        // claims changed under the same signature
        let changed = WALLET.replacen(
            claims,
            &URL_SAFE_NO_PAD.encode(br#"{"iss":"extension","exp":9e9}"#),
            1,
        );
        assert_eq!(
            verify(&changed, SECRET, &issuers(), now, 30.0),
            Err(Refusal::Signature)
        );
        for bad in ["", "a.b", "a.b.c.d", "!.!.!", &"a".repeat(MAX_TOKEN_BYTES + 1)] {
            assert_eq!(
                verify(bad, SECRET, &issuers(), now, 30.0),
                Err(Refusal::Malformed),
                "{bad}"
            );
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn any_text_is_judged_without_panicking(token in ".{0,300}") {
            let _ = verify(&token, SECRET, &issuers(), 1.0, 30.0);
        }
    }
}
