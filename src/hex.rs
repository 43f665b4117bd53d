//! Strict parsing of `0x`-prefixed hex strings, addresses and uint256 numbers (decoding is done by
//! `alloy_primitives::hex` and `ruint`).

use alloy_primitives::{Address, FixedBytes, U256, hex};

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

/// Parses a uint256 given as a decimal string (`"42"`) or as `0x` hex of any number of digits (`"0x0"`,
/// `"0x2a"`). No sign, no whitespace, no `_` separators; leading zeros are allowed.
///
/// # Errors
/// [`Error::InvalidNumber`] when the text is empty, has other characters or is above 2^256 - 1.
pub fn parse_uint256(field: &str, s: &str) -> Result<U256> {
    let invalid = |reason: &str| Error::InvalidNumber {
        field: field.to_owned(),
        value: s.chars().take(80).collect(),
        reason: reason.to_owned(),
    };
    let (digits, radix, valid): (&str, u64, fn(&u8) -> bool) =
        match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(hex) => (hex, 16, u8::is_ascii_hexdigit),
            None => (s, 10, u8::is_ascii_digit),
        };
    if digits.is_empty() {
        return Err(invalid("no digits"));
    }
    if !digits.as_bytes().iter().all(valid) {
        return Err(invalid(if radix == 16 {
            "expected hex digits after 0x"
        } else {
            "expected a decimal integer or 0x hex"
        }));
    }
    U256::from_str_radix(digits, radix).map_err(|_| invalid("larger than 2^256 - 1"))
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
    fn uint256_rules() {
        assert_eq!(parse_uint256("n", "0").unwrap(), U256::ZERO);
        assert_eq!(parse_uint256("n", "0x0").unwrap(), U256::ZERO);
        assert_eq!(parse_uint256("n", "0x2A").unwrap(), U256::from(42));
        assert_eq!(parse_uint256("n", "0042").unwrap(), U256::from(42));
        assert_eq!(
            parse_uint256("n", &format!("0x{}", "f".repeat(64))).unwrap(),
            U256::MAX
        );
        assert_eq!(parse_uint256("n", &U256::MAX.to_string()).unwrap(), U256::MAX);
        for bad in ["", "0x", "-1", "+1", " 1", "1_000", "0x1_0", "1.5", "1e3", "0xg"] {
            assert_eq!(
                parse_uint256("n", bad).unwrap_err().code(),
                "INVALID_NUMBER",
                "{bad}"
            );
        }
        assert!(parse_uint256("n", &format!("0x1{}", "0".repeat(64))).is_err());
        assert!(
            parse_uint256(
                "n",
                "115792089237316195423570985008687907853269984665640564039457584007913129639936"
            )
            .is_err()
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
