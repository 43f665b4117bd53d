//! Strict parsing of `0x`-prefixed hex strings and addresses (decoding is done by `alloy_primitives::hex`).

use alloy_primitives::{Address, FixedBytes, hex};

use crate::{Error, Result};

/// Parses a `0x`-prefixed hex string of any even length (either case).
///
/// # Errors
/// [`Error::InvalidHex`] when the prefix is missing, the number of digits is odd or a character is not hex.
pub fn parse_hex(field: &str, s: &str) -> Result<Vec<u8>> {
    let digits = strip_prefix(field, s)?;
    hex::decode(digits).map_err(|e| Error::InvalidHex {
        field: field.to_owned(),
        reason: e.to_string(),
    })
}

/// Parses a `0x`-prefixed hex string of exactly `N` bytes.
///
/// # Errors
/// [`Error::InvalidHex`] or [`Error::InvalidLength`].
pub fn parse_fixed<const N: usize>(field: &str, s: &str) -> Result<FixedBytes<N>> {
    let bytes = parse_hex(field, s)?;
    if bytes.len() != N {
        return Err(Error::InvalidLength {
            field: field.to_owned(),
            expected: N,
            got: bytes.len(),
        });
    }
    Ok(FixedBytes::from_slice(&bytes))
}

/// Parses an address. All-lower-case and all-upper-case hex are accepted as is; mixed case must be a valid
/// EIP-55 checksum.
///
/// # Errors
/// [`Error::InvalidAddress`].
pub fn parse_address(field: &str, s: &str) -> Result<Address> {
    let invalid = |reason: &str| Error::InvalidAddress {
        field: field.to_owned(),
        value: s.to_owned(),
        reason: reason.to_owned(),
    };
    let digits = s.strip_prefix("0x").ok_or_else(|| invalid("missing 0x prefix"))?;
    if digits.len() != 40 {
        return Err(invalid(&format!("expected 40 hex digits, got {}", digits.len())));
    }
    let bytes = hex::decode(digits).map_err(|_| invalid("not hex"))?;
    let address = Address::from_slice(&bytes);
    let has_upper = digits.bytes().any(|b| b.is_ascii_uppercase());
    let has_lower = digits.bytes().any(|b| b.is_ascii_lowercase());
    if has_upper && has_lower && address.to_checksum(None)[2..] != *digits {
        return Err(invalid("wrong EIP-55 checksum"));
    }
    Ok(address)
}

/// Lower-case `0x` hex of `bytes`.
#[must_use]
pub fn to_hex(bytes: impl AsRef<[u8]>) -> String {
    hex::encode_prefixed(bytes)
}

fn strip_prefix<'a>(field: &str, s: &'a str) -> Result<&'a str> {
    s.strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or_else(|| Error::InvalidHex {
            field: field.to_owned(),
            reason: "missing 0x prefix".to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_rules() {
        assert_eq!(parse_hex("x", "0x").unwrap(), Vec::<u8>::new());
        assert_eq!(parse_hex("x", "0xABcd").unwrap(), vec![0xab, 0xcd]);
        assert_eq!(parse_hex("x", "abcd").unwrap_err().code(), "INVALID_HEX");
        assert_eq!(parse_hex("x", "0xabc").unwrap_err().code(), "INVALID_HEX");
        assert_eq!(parse_hex("x", "0xzz").unwrap_err().code(), "INVALID_HEX");
        assert_eq!(
            parse_fixed::<2>("x", "0xaabbcc").unwrap_err().code(),
            "INVALID_LENGTH"
        );
    }

    #[test]
    fn address_rules() {
        let good = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
        assert!(parse_address("a", good).is_ok());
        assert!(parse_address("a", &good.to_lowercase()).is_ok());
        assert!(parse_address("a", &format!("0x{}", good[2..].to_uppercase())).is_ok());
        let bad = parse_address("a", "0x70997970c51812DC3A010C7d01b50e0d17dc79C8").unwrap_err();
        assert_eq!(bad.code(), "INVALID_ADDRESS");
        assert!(parse_address("a", "0xcacacacacacacacacacacacacacacacacacaca").is_err());
        assert!(parse_address("a", "0xcafecafecafecafecafecafecafecafecafecafg").is_err());
    }
}
