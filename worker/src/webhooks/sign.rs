//! Standard Webhooks (<https://www.standardwebhooks.com>) signing, pure: the secret's format (`whsec_` + base64 of
//! the key) and the `webhook-signature` header, `v1,` + base64(HMAC-SHA256(key, `id.timestamp.body`)), by the
//! `hmac` and `sha2` crates.

use base64::{Engine, engine::general_purpose::STANDARD};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The prefix of a secret as answered.
pub const SECRET_PREFIX: &str = "whsec_";

/// Bytes of a generated key (the spec asks 24 to 64).
pub const KEY_BYTES: usize = 32;

/// A secret as answered once to the admin: `whsec_` + base64 of `key`.
pub fn encode_secret(key: &[u8]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

/// The key of a secret (with or without its prefix); `None` when it is not base64.
pub fn decode_secret(secret: &str) -> Option<Vec<u8>> {
    let b64 = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    STANDARD.decode(b64).ok().filter(|k| !k.is_empty())
}

/// A fresh key from the platform's CSPRNG (`crypto.getRandomValues` in the Worker).
///
/// # Errors
/// When the CSPRNG fails.
pub fn new_key() -> Result<[u8; KEY_BYTES], getrandom::Error> {
    let mut key = [0u8; KEY_BYTES];
    getrandom::fill(&mut key)?;
    Ok(key)
}

/// The `webhook-signature` header of `body` sent as message `id` at `timestamp` (Unix seconds).
pub fn sign(key: &[u8], id: &str, timestamp: u64, body: &str) -> String {
    // HMAC takes keys of any length: `new_from_slice` cannot fail for it
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The test vector of the Standard Webhooks reference libraries (`standard-webhooks/standard-webhooks`,
    /// `libraries/*` tests; the same one Svix publishes).
    #[test]
    fn signs_like_the_standard_webhooks_test_vector() {
        let key = decode_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let signature = sign(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        // any change of id, timestamp or body changes it
        assert_ne!(
            sign(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_331,
                r#"{"test": 2432232314}"#
            ),
            signature
        );
        assert_ne!(
            sign(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJel",
                1_614_265_330,
                r#"{"test": 2432232314}"#
            ),
            signature
        );
        assert_ne!(
            sign(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                r#"{"test": 2432232315}"#
            ),
            signature
        );
    }

    #[test]
    fn secrets_round_trip() {
        let key = new_key().unwrap();
        let secret = encode_secret(&key);
        assert!(secret.starts_with("whsec_"));
        assert_eq!(secret.len(), 6 + 44);
        assert_eq!(decode_secret(&secret).unwrap(), key.to_vec());
        assert_ne!(new_key().unwrap(), key);
        assert_eq!(decode_secret("whsec_not base64!"), None);
        assert_eq!(decode_secret("whsec_"), None);
    }
}
