//! LSP8 Identifiable Digital Asset: token id formats and bytes32 token ids.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-8-IdentifiableDigitalAsset.md#lsp8tokenidformat>

use alloy_primitives::{Address, B256, Bytes, U256};
use alloy_sol_types::{SolCall, sol};
use serde::{Deserialize, Serialize};

use crate::{
    Error, Result,
    hex::{parse_address, parse_hex, to_hex, write_left, write_right},
    lsp4::uint256_value,
};

sol! {
    /// LSP8: a data value of one token.
    function getDataForTokenId(bytes32 tokenId, bytes32 dataKey) external view returns (bytes dataValue);
    /// LSP8: the owner of a token (reverts for a token that does not exist).
    function tokenOwnerOf(bytes32 tokenId) external view returns (address);
    /// LSP8: a token moved (minted, transferred, burnt); the token id is the third indexed topic.
    event Transfer(
        address operator,
        address indexed from,
        address indexed to,
        bytes32 indexed tokenId,
        bool force,
        bytes data
    );
    /// LSP8: a data value of one token changed (its metadata, after mint too).
    event TokenIdDataChanged(bytes32 indexed tokenId, bytes32 indexed dataKey, bytes dataValue);
}

/// `topic0` of LSP8 [`Transfer`].
pub const TRANSFER_TOPIC: B256 = <Transfer as alloy_sol_types::SolEvent>::SIGNATURE_HASH;
/// `topic0` of [`TokenIdDataChanged`].
pub const TOKEN_ID_DATA_CHANGED_TOPIC: B256 =
    <TokenIdDataChanged as alloy_sol_types::SolEvent>::SIGNATURE_HASH;

/// `getDataForTokenId(tokenId, key)` calldata.
#[must_use]
pub fn get_data_for_token_id_calldata(token_id: B256, key: B256) -> Vec<u8> {
    getDataForTokenIdCall {
        tokenId: token_id,
        dataKey: key,
    }
    .abi_encode()
}

/// Reads a `getDataForTokenId` answer (`None` when it is not ABI-encoded `bytes`).
#[must_use]
pub fn decode_get_data_for_token_id(return_data: &[u8]) -> Option<Bytes> {
    getDataForTokenIdCall::abi_decode_returns_validate(return_data).ok()
}

/// `tokenOwnerOf(tokenId)` calldata.
#[must_use]
pub fn token_owner_of_calldata(token_id: B256) -> Vec<u8> {
    tokenOwnerOfCall { tokenId: token_id }.abi_encode()
}

/// Reads a `tokenOwnerOf` answer (`None` when it is not one ABI-encoded address).
#[must_use]
pub fn decode_token_owner_of(return_data: &[u8]) -> Option<Address> {
    tokenOwnerOfCall::abi_decode_returns_validate(return_data).ok()
}

/// The metadata URL of a token from the collection's `LSP8TokenMetadataBaseURI` value (a VerifiableURI): the
/// base URL followed by the token id as the format writes it, hex formats (unique id, hashes) without `0x` as in
/// the spec's example. `None` when the value is no VerifiableURI or the id does not decode in `format`.
#[must_use]
pub fn token_metadata_url(base_uri_value: &[u8], format: TokenIdFormat, token_id: B256) -> Option<String> {
    let base = crate::lsp2::decode_verifiable_uri(base_uri_value).ok()?;
    let id = decode_token_id(format, token_id).ok()?;
    let suffix = match format.base() {
        TokenIdFormat::UniqueId | TokenIdFormat::Hash => id.strip_prefix("0x").unwrap_or(&id).to_owned(),
        _ => id,
    };
    Some(format!("{}{suffix}", base.url))
}

/// `LSP8TokenIdFormat` (uint256).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TokenIdFormat {
    /// 0: a uint256 number.
    Number,
    /// 1: a UTF-8 string of at most 32 bytes, right-padded.
    String,
    /// 2: an address, left-padded.
    Address,
    /// 3: unique bytes, right-padded.
    UniqueId,
    /// 4: a bytes32 hash.
    Hash,
    /// 100: mixed, default number; each token's format is in `getDataForTokenId`.
    MixedDefaultNumber,
    /// 101: mixed, default string.
    MixedDefaultString,
    /// 102: mixed, default address.
    MixedDefaultAddress,
    /// 103: mixed, default unique id.
    MixedDefaultUniqueId,
    /// 104: mixed, default hash.
    MixedDefaultHash,
}

impl TokenIdFormat {
    const ALL: [Self; 10] = [
        Self::Number,
        Self::String,
        Self::Address,
        Self::UniqueId,
        Self::Hash,
        Self::MixedDefaultNumber,
        Self::MixedDefaultString,
        Self::MixedDefaultAddress,
        Self::MixedDefaultUniqueId,
        Self::MixedDefaultHash,
    ];

    /// The integer value.
    #[must_use]
    pub const fn value(self) -> u8 {
        match self {
            Self::Number => 0,
            Self::String => 1,
            Self::Address => 2,
            Self::UniqueId => 3,
            Self::Hash => 4,
            Self::MixedDefaultNumber => 100,
            Self::MixedDefaultString => 101,
            Self::MixedDefaultAddress => 102,
            Self::MixedDefaultUniqueId => 103,
            Self::MixedDefaultHash => 104,
        }
    }

    /// The format a token id is written in (the default one for the mixed formats).
    #[must_use]
    pub const fn base(self) -> Self {
        match self {
            Self::MixedDefaultNumber => Self::Number,
            Self::MixedDefaultString => Self::String,
            Self::MixedDefaultAddress => Self::Address,
            Self::MixedDefaultUniqueId => Self::UniqueId,
            Self::MixedDefaultHash => Self::Hash,
            other => other,
        }
    }

    /// Looks a format up by its integer value.
    ///
    /// # Errors
    /// [`Error::UnknownEnumValue`].
    pub fn from_u64(n: u64) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|f| u64::from(f.value()) == n)
            .ok_or_else(|| Error::UnknownEnumValue {
                kind: "LSP8TokenIdFormat".into(),
                value: n.to_string(),
            })
    }

    /// Reads the ERC725Y value (32 bytes, uint256).
    ///
    /// # Errors
    /// [`Error::InvalidLength`] or [`Error::UnknownEnumValue`].
    pub fn from_value(value: &[u8]) -> Result<Self> {
        let n = uint256_value("LSP8TokenIdFormat", value)?;
        u64::try_from(n)
            .map_err(|_| Error::UnknownEnumValue {
                kind: "LSP8TokenIdFormat".into(),
                value: n.to_string(),
            })
            .and_then(Self::from_u64)
    }

    /// The 32-byte ERC725Y value.
    #[must_use]
    pub fn to_bytes32(self) -> B256 {
        B256::from(U256::from(self.value()))
    }
}

/// Encodes a token id as bytes32 in `format`: a decimal (or `0x`) number, a string, an address, unique bytes
/// (hex) or a 32-byte hash (hex).
///
/// # Errors
/// [`Error::InvalidTokenId`].
pub fn encode_token_id(format: TokenIdFormat, value: &str) -> Result<B256> {
    let bad = |reason: String| invalid_token_id(format, value, reason);
    let mut out = [0u8; 32];
    match format.base() {
        TokenIdFormat::Number => {
            let n = if let Some(hex) = value.strip_prefix("0x") {
                U256::from_str_radix(hex, 16).map_err(|e| bad(e.to_string()))?
            } else if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
                // below 2^64: the last 8 bytes, with no 256-bit integer on the way (what
                // dApps pass in loops; the U256 was a measurable part of the call: BENCHMARKS.md#wasm-boundary)
                if let Ok(n) = value.parse::<u64>() {
                    write_right(&mut out, n.to_be_bytes());
                    return Ok(B256::from(out));
                }
                crate::hex::decimal_u256(value).ok_or_else(|| bad("larger than 2^256 - 1".into()))?
            } else {
                return Err(bad("expected a decimal or 0x-hex unsigned integer".into()));
            };
            return Ok(B256::from(n));
        }
        TokenIdFormat::String => {
            if value.len() > 32 {
                return Err(bad(format!("{} UTF-8 bytes, at most 32", value.len())));
            }
            write_left(&mut out, value.bytes());
        }
        TokenIdFormat::Address => {
            let a = parse_address("tokenId", value).map_err(|e| bad(e.to_string()))?;
            write_right(&mut out, a.into_array());
        }
        TokenIdFormat::UniqueId | TokenIdFormat::Hash => {
            let bytes = parse_hex("tokenId", value).map_err(|e| bad(e.to_string()))?;
            let exact = format.base() == TokenIdFormat::Hash;
            if bytes.len() > 32 || (exact && bytes.len() != 32) {
                return Err(bad(format!(
                    "{} bytes, {} 32",
                    bytes.len(),
                    if exact { "need" } else { "at most" }
                )));
            }
            write_left(&mut out, bytes);
        }
        // base() only returns the five plain formats
        _ => return Err(bad("not a plain token id format".into())),
    }
    Ok(B256::from(out))
}

/// [`Error::InvalidTokenId`] for `value` in `format` (out of line: the SDK's `encodeTokenId` is a hot call, and its
/// size-built entry inlined the error's formatting into it).
#[cold]
#[inline(never)]
fn invalid_token_id(format: TokenIdFormat, value: &str, reason: String) -> Error {
    Error::InvalidTokenId {
        format: format!("{:?}", format.base()),
        value: value.to_owned(),
        reason,
    }
}

/// A token id as text in `format`: decimal number, string (trailing zero bytes removed), lower-case address or
/// `0x` hex.
///
/// # Errors
/// [`Error::InvalidTokenId`] when the bytes cannot be in that format (a string that is not UTF-8, an address with
/// non-zero padding).
pub fn decode_token_id(format: TokenIdFormat, token_id: B256) -> Result<String> {
    let bad = |reason: &str| Error::InvalidTokenId {
        format: format!("{:?}", format.base()),
        value: token_id.to_string(),
        reason: reason.to_owned(),
    };
    match format.base() {
        TokenIdFormat::Number => Ok(U256::from_be_bytes(token_id.0).to_string()),
        TokenIdFormat::String => {
            let end = token_id.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
            core::str::from_utf8(token_id.get(..end).unwrap_or_default())
                .map(str::to_owned)
                .map_err(|_| bad("not UTF-8"))
        }
        TokenIdFormat::Address => {
            let (padding, address) = token_id.split_at(12);
            if padding.iter().any(|b| *b != 0) {
                return Err(bad("the 12 padding bytes are not zero"));
            }
            Ok(to_hex(address))
        }
        _ => Ok(token_id.to_string()),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn token_data_topic() {
        assert_eq!(
            TOKEN_ID_DATA_CHANGED_TOPIC.to_string(),
            "0xa6e4251f855f750545fe414f120db91c76b88def14d120969e5bb2d3f05debbb"
        );
    }

    #[test]
    fn metadata_urls_from_the_base_uri() {
        let base = crate::lsp2::encode_verifiable_uri(
            crate::lsp2::Content::Bytes(b"{}"),
            "https://example.org/meta/",
        );
        let number = encode_token_id(TokenIdFormat::Number, "42").unwrap();
        assert_eq!(
            token_metadata_url(&base, TokenIdFormat::Number, number).as_deref(),
            Some("https://example.org/meta/42")
        );
        let unique = B256::repeat_byte(0xab);
        assert_eq!(
            token_metadata_url(&base, TokenIdFormat::UniqueId, unique),
            Some(format!("https://example.org/meta/{}", "ab".repeat(32)))
        );
        assert_eq!(token_metadata_url(&[], TokenIdFormat::Number, number), None);
    }

    #[test]
    fn token_calls_and_checked_answers() {
        let id = B256::repeat_byte(1);
        assert_eq!(
            alloy_primitives::hex::encode(&token_owner_of_calldata(id)[..4]),
            "217b2270"
        );
        assert_eq!(
            alloy_primitives::hex::encode(&get_data_for_token_id_calldata(id, B256::ZERO)[..4]),
            "16e023b3"
        );
        let owner = Address::repeat_byte(0xaa);
        let answer = tokenOwnerOfCall::abi_encode_returns(&owner);
        assert_eq!(decode_token_owner_of(&answer), Some(owner));
        // a word with dirty high bytes is no address
        assert_eq!(decode_token_owner_of(&[0xff; 32]), None);
        let value = getDataForTokenIdCall::abi_encode_returns(&Bytes::from(vec![9u8]));
        assert_eq!(decode_get_data_for_token_id(&value), Some(Bytes::from(vec![9u8])));
        assert_eq!(decode_get_data_for_token_id(&[0u8; 3]), None);
    }

    #[test]
    fn spec_examples() {
        let cases = [
            (
                TokenIdFormat::Number,
                "5",
                "0x0000000000000000000000000000000000000000000000000000000000000005",
            ),
            (
                TokenIdFormat::String,
                "my-nft",
                "0x6d792d6e66740000000000000000000000000000000000000000000000000000",
            ),
            (
                TokenIdFormat::Address,
                "0x8ae2dD3E422530b5c2FC1061e6b5f43f5677033f",
                "0x0000000000000000000000008ae2dd3e422530b5c2fc1061e6b5f43f5677033f",
            ),
            (
                TokenIdFormat::UniqueId,
                "0xaabbccddee",
                "0xaabbccddee000000000000000000000000000000000000000000000000000000",
            ),
            (
                TokenIdFormat::MixedDefaultHash,
                "0x262a8c3566f2abe9247c206cf8d622e0a44ac99a7d54c23e212de32181cf185f",
                "0x262a8c3566f2abe9247c206cf8d622e0a44ac99a7d54c23e212de32181cf185f",
            ),
        ];
        for (format, input, expected) in cases {
            assert_eq!(
                encode_token_id(format, input).unwrap().to_string(),
                expected,
                "{format:?}"
            );
        }
        assert!(encode_token_id(TokenIdFormat::String, &"x".repeat(33)).is_err());
        assert!(encode_token_id(TokenIdFormat::Hash, "0xaabb").is_err());
        assert!(encode_token_id(TokenIdFormat::Number, "-1").is_err());
        assert_eq!(
            TokenIdFormat::from_value(TokenIdFormat::MixedDefaultAddress.to_bytes32().as_slice()).unwrap(),
            TokenIdFormat::MixedDefaultAddress
        );
        assert!(TokenIdFormat::from_u64(5).is_err());
        assert!(TokenIdFormat::from_value(&[0xff; 32]).is_err());
    }

    proptest! {
        #[test]
        fn number_roundtrip(n in any::<u128>()) {
            let id = encode_token_id(TokenIdFormat::Number, &n.to_string()).unwrap();
            prop_assert_eq!(decode_token_id(TokenIdFormat::Number, id).unwrap(), n.to_string());
        }

        #[test]
        fn number_is_its_uint256(big in any::<u128>(), small in any::<u64>(), zeros in 0usize..30) {
            // below 2^64 the word is written from a u64 (leading zeros included), above it from the U256
            for n in [big.to_string(), small.to_string(), u64::MAX.to_string(), (u128::from(u64::MAX) + 1).to_string()] {
                let digits = format!("{}{n}", "0".repeat(zeros));
                let expected = B256::from(U256::from_str_radix(&digits, 10).unwrap());
                prop_assert_eq!(encode_token_id(TokenIdFormat::Number, &digits).unwrap(), expected);
            }
        }

        #[test]
        fn string_roundtrip(s in "[a-zA-Z0-9 _-]{0,32}") {
            let id = encode_token_id(TokenIdFormat::String, &s).unwrap();
            prop_assert_eq!(decode_token_id(TokenIdFormat::String, id).unwrap(), s);
        }

        #[test]
        fn encode_never_panics(value in ".{0,80}", hexish in "(0x){0,2}[0-9a-fA-F]{0,70}", f in 0u64..5) {
            let format = TokenIdFormat::from_u64(f).unwrap();
            for v in [value.as_str(), hexish.as_str()] {
                if let Ok(id) = encode_token_id(format, v) {
                    // whatever was accepted decodes again
                    let _ = decode_token_id(format, id);
                }
            }
        }

        #[test]
        fn decode_never_panics(bytes in any::<[u8; 32]>(), f in 0u64..5) {
            let _ = decode_token_id(TokenIdFormat::from_u64(f).unwrap(), B256::from(bytes));
        }
    }
}
