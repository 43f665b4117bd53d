//! LSP2 VerifiableURI (and the legacy JSONURL / AssetURL layout).
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-2-ERC725YJSONSchema.md#verifiableuri>
//!
//! ```text
//! current: 0x0000 ‖ bytes4 method ‖ uint16 length ‖ data[length] ‖ utf8 URL
//! legacy:  bytes4 method ‖ bytes32 hash ‖ utf8 URL            (first two bytes never 0x0000)
//! ```
//!
//! Unlike erc725.js the decoder is strict: the length field must match the bytes present, keccak methods carry
//! exactly 32 bytes, the URL must be valid UTF-8, and unknown method ids are reported rather than thrown.

use alloy_primitives::{B256, FixedBytes, keccak256};

use crate::{Error, Result};

/// `bytes4(keccak256("keccak256(utf8)"))`.
pub const KECCAK256_UTF8: FixedBytes<4> = FixedBytes([0x6f, 0x35, 0x7c, 0x6a]);
/// `bytes4(keccak256("keccak256(bytes)"))`.
pub const KECCAK256_BYTES: FixedBytes<4> = FixedBytes([0x80, 0x19, 0xf9, 0xb1]);
/// `bytes4(keccak256("ecdsa"))`.
pub const ECDSA: FixedBytes<4> = FixedBytes([0xac, 0x75, 0xa1, 0x0e]);
/// `0x00000000`: the URI is not verifiable.
pub const NO_VERIFICATION: FixedBytes<4> = FixedBytes([0; 4]);

/// A known verification method, or the raw id of an unknown one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VerificationMethod {
    /// `keccak256(utf8)`, `0x6f357c6a`: keccak256 of the UTF-8 bytes of a JSON text.
    Keccak256Utf8,
    /// `keccak256(bytes)`, `0x8019f9b1`: keccak256 of raw bytes.
    Keccak256Bytes,
    /// `ecdsa`, `0xac75a10e`: data is a signer address and the URL of a signature.
    Ecdsa,
    /// `0x00000000`: not verifiable.
    None,
    /// Any other id.
    Unknown(FixedBytes<4>),
}

impl VerificationMethod {
    /// Classifies a 4-byte method id.
    #[must_use]
    pub fn from_id(id: FixedBytes<4>) -> Self {
        match id {
            KECCAK256_UTF8 => Self::Keccak256Utf8,
            KECCAK256_BYTES => Self::Keccak256Bytes,
            ECDSA => Self::Ecdsa,
            NO_VERIFICATION => Self::None,
            other => Self::Unknown(other),
        }
    }

    /// The 4-byte method id.
    #[must_use]
    pub const fn id(self) -> FixedBytes<4> {
        match self {
            Self::Keccak256Utf8 => KECCAK256_UTF8,
            Self::Keccak256Bytes => KECCAK256_BYTES,
            Self::Ecdsa => ECDSA,
            Self::None => NO_VERIFICATION,
            Self::Unknown(id) => id,
        }
    }

    /// The LSP2 method name (`keccak256(utf8)`, …), or `None` for unknown ids and `0x00000000`.
    #[must_use]
    pub const fn name(self) -> Option<&'static str> {
        match self {
            Self::Keccak256Utf8 => Some("keccak256(utf8)"),
            Self::Keccak256Bytes => Some("keccak256(bytes)"),
            Self::Ecdsa => Some("ecdsa"),
            Self::None | Self::Unknown(_) => None,
        }
    }

    const fn is_keccak(self) -> bool {
        matches!(self, Self::Keccak256Utf8 | Self::Keccak256Bytes)
    }
}

/// Which byte layout a value used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UriFormat {
    /// `0x0000 ‖ method ‖ length ‖ data ‖ url`.
    VerifiableUri,
    /// Deprecated JSONURL / AssetURL: `method ‖ hash ‖ url`.
    Legacy,
}

/// A decoded VerifiableURI.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VerifiableUri {
    /// The layout the value was read from (always [`UriFormat::VerifiableUri`] for encoded values).
    pub format: UriFormat,
    /// The 4-byte verification method id.
    pub method: FixedBytes<4>,
    /// The verification data: a 32-byte hash for the keccak methods.
    pub data: Vec<u8>,
    /// The URL (`ipfs://…`, `https://…`, `data:…`).
    pub url: String,
}

/// Content to be hashed into a VerifiableURI.
#[derive(Debug, Clone, Copy)]
pub enum Content<'a> {
    /// A text (usually a JSON document): hashed as its UTF-8 bytes, method `keccak256(utf8)`.
    Text(&'a str),
    /// Raw bytes (an image, a file): method `keccak256(bytes)`.
    Bytes(&'a [u8]),
}

impl VerifiableUri {
    /// The verification method.
    #[must_use]
    pub fn verification_method(&self) -> VerificationMethod {
        VerificationMethod::from_id(self.method)
    }

    /// The 32-byte hash, for the keccak methods.
    #[must_use]
    pub fn hash(&self) -> Option<B256> {
        (self.verification_method().is_keccak() && self.data.len() == 32)
            .then(|| B256::from_slice(&self.data))
    }

    /// Encodes in the current layout (`0x0000 ‖ method ‖ length ‖ data ‖ url`).
    ///
    /// # Errors
    /// [`Error::VerificationDataLength`] if the data is longer than 65,535 bytes or a keccak method does not carry
    /// exactly 32 bytes.
    pub fn encode(&self) -> Result<Vec<u8>> {
        encode_with_method(self.method, &self.data, &self.url)
    }
}

/// Encodes `content` and `url` as a VerifiableURI: `keccak256(utf8)` for text, `keccak256(bytes)` for bytes.
/// Hash exactly the bytes that are uploaded.
///
/// ```
/// use profile_relayer::lsp2::{Content, encode_verifiable_uri};
/// let value = encode_verifiable_uri(Content::Text("{}"), "ipfs://QmX");
/// assert_eq!(&value[..8], &[0, 0, 0x6f, 0x35, 0x7c, 0x6a, 0, 0x20]);
/// ```
#[must_use]
pub fn encode_verifiable_uri(content: Content<'_>, url: &str) -> Vec<u8> {
    let head = verifiable_uri_head(content);
    let mut out = Vec::with_capacity(head.len() + url.len());
    out.extend_from_slice(&head);
    out.extend_from_slice(url.as_bytes());
    out
}

/// The 40 bytes of [`encode_verifiable_uri`]'s value before the URL: `0x0000 ‖ method ‖ 0x0020 ‖ keccak256`.
/// For callers that write the value out piecewise (the wasm bindings hex-encode it without a `Vec`).
#[must_use]
pub fn verifiable_uri_head(content: Content<'_>) -> [u8; 40] {
    let (method, hash) = match content {
        Content::Text(text) => (KECCAK256_UTF8, keccak256(text.as_bytes())),
        Content::Bytes(bytes) => (KECCAK256_BYTES, keccak256(bytes)),
    };
    let [m0, m1, m2, m3] = method.0;
    let mut head = [0u8; 40];
    let (prefix, digest) = head.split_at_mut(8);
    prefix.copy_from_slice(&[0, 0, m0, m1, m2, m3, 0, 32]);
    digest.copy_from_slice(hash.as_slice());
    head
}

/// Encodes a VerifiableURI with an explicit method and verification data, e.g. an unverifiable
/// (`0x00000000`, empty data) LSP8 base URI.
///
/// # Errors
/// [`Error::VerificationDataLength`] if `data` is longer than 65,535 bytes or a keccak method does not carry
/// exactly 32 bytes.
pub fn encode_with_method(method: FixedBytes<4>, data: &[u8], url: &str) -> Result<Vec<u8>> {
    let len = u16::try_from(data.len()).map_err(|_| Error::VerificationDataLength {
        reason: format!(
            "{} bytes of verification data do not fit the uint16 length field",
            data.len()
        ),
    })?;
    if VerificationMethod::from_id(method).is_keccak() && data.len() != 32 {
        return Err(Error::VerificationDataLength {
            reason: format!("keccak256 methods carry a 32-byte hash, got {} bytes", data.len()),
        });
    }
    let mut out = Vec::with_capacity(8 + data.len() + url.len());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(method.as_slice());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(url.as_bytes());
    Ok(out)
}

/// Decodes a VerifiableURI value, in the current or the legacy layout.
///
/// # Errors
/// - [`Error::EmptyVerifiableUri`] for `0x`;
/// - [`Error::TruncatedVerifiableUri`] when the header or the legacy hash is incomplete;
/// - [`Error::VerificationDataLength`] when the length field overruns the value, or a keccak method does not
///   carry exactly 32 bytes;
/// - [`Error::InvalidUrlUtf8`] when the URL is not UTF-8.
pub fn decode_verifiable_uri(value: &[u8]) -> Result<VerifiableUri> {
    match value {
        [] => Err(Error::EmptyVerifiableUri),
        [0, 0, rest @ ..] => {
            let [m0, m1, m2, m3, l0, l1, body @ ..] = rest else {
                return Err(Error::TruncatedVerifiableUri {
                    reason: format!(
                        "{} bytes, the header needs 8 (0x0000 ‖ method ‖ length)",
                        value.len()
                    ),
                });
            };
            let method = FixedBytes([*m0, *m1, *m2, *m3]);
            let len = usize::from(u16::from_be_bytes([*l0, *l1]));
            if len > body.len() {
                return Err(Error::VerificationDataLength {
                    reason: format!("length field says {len} bytes, only {} follow", body.len()),
                });
            }
            if VerificationMethod::from_id(method).is_keccak() && len != 32 {
                return Err(Error::VerificationDataLength {
                    reason: format!("keccak256 methods carry a 32-byte hash, length field says {len}"),
                });
            }
            let (data, url) = body.split_at(len);
            Ok(VerifiableUri {
                format: UriFormat::VerifiableUri,
                method,
                data: data.to_vec(),
                url: utf8(url)?,
            })
        }
        [m0, m1, m2, m3, rest @ ..] if rest.len() >= 32 => {
            let (hash, url) = rest.split_at(32);
            Ok(VerifiableUri {
                format: UriFormat::Legacy,
                method: FixedBytes([*m0, *m1, *m2, *m3]),
                data: hash.to_vec(),
                url: utf8(url)?,
            })
        }
        _ => Err(Error::TruncatedVerifiableUri {
            reason: format!(
                "{} bytes, a legacy JSONURL needs at least 36 (method ‖ hash)",
                value.len()
            ),
        }),
    }
}

/// Checks fetched `content` against a decoded VerifiableURI: keccak256 of the raw bytes must equal the hash.
/// Returns `Ok(false)` on a mismatch.
///
/// # Errors
/// [`Error::UnverifiableMethod`] when the method is not one of the keccak methods.
pub fn verify(uri: &VerifiableUri, content: &[u8]) -> Result<bool> {
    let expected = uri.hash().ok_or_else(|| Error::UnverifiableMethod {
        method: crate::hex::to_hex(uri.method),
    })?;
    Ok(keccak256(content) == expected)
}

fn utf8(bytes: &[u8]) -> Result<String> {
    core::str::from_utf8(bytes)
        .map(str::to_owned)
        .map_err(|e| Error::InvalidUrlUtf8 {
            valid_up_to: e.valid_up_to(),
        })
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn method_ids_are_keccak_of_names() {
        for m in [
            VerificationMethod::Keccak256Utf8,
            VerificationMethod::Keccak256Bytes,
            VerificationMethod::Ecdsa,
        ] {
            let name = m.name().unwrap();
            assert_eq!(&keccak256(name.as_bytes())[..4], m.id().as_slice(), "{name}");
        }
    }

    #[test]
    fn verify_checks_raw_bytes() {
        let value = encode_verifiable_uri(Content::Text("{\"a\":1}"), "ipfs://x");
        let uri = decode_verifiable_uri(&value).unwrap();
        assert!(verify(&uri, b"{\"a\":1}").unwrap());
        assert!(!verify(&uri, b"{\"a\": 1}").unwrap());
        let none =
            decode_verifiable_uri(&encode_with_method(NO_VERIFICATION, &[], "ipfs://x").unwrap()).unwrap();
        assert_eq!(verify(&none, b"x").unwrap_err().code(), "UNVERIFIABLE_METHOD");
    }

    #[test]
    fn head_is_the_value_before_the_url() {
        let bytes = [1u8, 2, 3];
        let head = verifiable_uri_head(Content::Bytes(&bytes));
        let by_method = encode_with_method(KECCAK256_BYTES, keccak256(bytes).as_slice(), "").unwrap();
        assert_eq!(head.as_slice(), by_method);
        let text = verifiable_uri_head(Content::Text("{}"));
        let by_method = encode_with_method(KECCAK256_UTF8, keccak256(b"{}").as_slice(), "").unwrap();
        assert_eq!(text.as_slice(), by_method);
    }

    #[test]
    fn encode_with_method_rejects_bad_data() {
        assert!(encode_with_method(KECCAK256_UTF8, &[1, 2, 3, 4], "x").is_err());
        assert!(encode_with_method(NO_VERIFICATION, &vec![0; 70_000], "x").is_err());
        assert!(encode_with_method(ECDSA, &[7; 20], "x").is_ok());
    }

    proptest! {
        #[test]
        fn roundtrip_text(content in ".*", url in ".*") {
            let value = encode_verifiable_uri(Content::Text(&content), &url);
            let d = decode_verifiable_uri(&value).unwrap();
            prop_assert_eq!(d.format, UriFormat::VerifiableUri);
            prop_assert_eq!(d.verification_method(), VerificationMethod::Keccak256Utf8);
            prop_assert_eq!(&d.url, &url);
            prop_assert!(verify(&d, content.as_bytes()).unwrap());
            prop_assert_eq!(d.encode().unwrap(), value);
        }

        #[test]
        fn roundtrip_any_method(method in any::<[u8; 4]>(), data in proptest::collection::vec(any::<u8>(), 0..80), url in ".*") {
            let method = FixedBytes(method);
            match encode_with_method(method, &data, &url) {
                Ok(value) => {
                    let d = decode_verifiable_uri(&value).unwrap();
                    prop_assert_eq!(d.method, method);
                    prop_assert_eq!(&d.data, &data);
                    prop_assert_eq!(&d.url, &url);
                }
                Err(e) => prop_assert_eq!(e.code(), "VERIFICATION_DATA_LENGTH"),
            }
        }

        // the decoder takes untrusted bytes from chain: it must never panic, and what it accepts re-encodes
        // to the same bytes (current layout) or to method ‖ hash ‖ url (legacy layout)
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
            if let Ok(d) = decode_verifiable_uri(&bytes) {
                match d.format {
                    UriFormat::VerifiableUri => prop_assert_eq!(d.encode().unwrap(), bytes),
                    UriFormat::Legacy => {
                        let mut legacy = d.method.to_vec();
                        legacy.extend_from_slice(&d.data);
                        legacy.extend_from_slice(d.url.as_bytes());
                        prop_assert_eq!(legacy, bytes);
                    }
                }
            }
        }

        #[test]
        fn decode_structured_prefixes(method in any::<[u8; 4]>(), len in any::<u16>(), tail in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut bytes = vec![0, 0];
            bytes.extend_from_slice(&method);
            bytes.extend_from_slice(&len.to_be_bytes());
            bytes.extend_from_slice(&tail);
            let _ = decode_verifiable_uri(&bytes);
        }
    }
}
