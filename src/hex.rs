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
    // `hex::decode` would strip a second `0x` itself: only hex digits may follow the one prefix
    if let Some(bad) = digits.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(Error::InvalidHex {
            field: field.to_owned(),
            reason: format!("invalid character '{}'", bad.escape_default()),
        });
    }
    hex::decode(digits).map_err(|e| Error::InvalidHex {
        field: field.to_owned(),
        reason: crate::error::hex_reason(&e),
    })
}

/// Parses a `0x`-prefixed hex string of exactly `N` bytes.
///
/// # Errors
/// [`Error::InvalidHex`] or [`Error::InvalidLength`].
pub fn parse_fixed<const N: usize>(field: &str, s: &str) -> Result<FixedBytes<N>> {
    let bytes = parse_hex(field, s)?;
    let got = bytes.len();
    <[u8; N]>::try_from(bytes)
        .map(FixedBytes::from)
        .map_err(|_| Error::InvalidLength {
            field: field.to_owned(),
            expected: N,
            got,
        })
}

/// Parses an address. All-lower-case and all-upper-case hex are accepted as is; mixed case must be a valid
/// EIP-55 checksum.
///
/// # Errors
/// [`Error::InvalidAddress`].
pub fn parse_address(field: &str, s: &str) -> Result<Address> {
    parse_address_checking(field, s, true)
}

/// [`parse_address`], with the EIP-55 check of a mixed-case address only when `checksum` (the browser bindings
/// skip it for the exact texts that passed it before).
pub(crate) fn parse_address_checking(field: &str, s: &str, checksum: bool) -> Result<Address> {
    let invalid = |reason: &str| Error::InvalidAddress {
        field: field.to_owned(),
        value: s.to_owned(),
        reason: reason.to_owned(),
    };
    let digits = s.strip_prefix("0x").ok_or_else(|| invalid("missing 0x prefix"))?;
    if digits.len() != 40 {
        return Err(invalid(&format!("expected 40 hex digits, got {}", digits.len())));
    }
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid("not hex"));
    }
    let bytes: [u8; 20] = hex::decode_to_array(digits).map_err(|_| invalid("not hex"))?;
    let address = Address::from(bytes);
    let has_upper = digits.bytes().any(|b| b.is_ascii_uppercase());
    let has_lower = digits.bytes().any(|b| b.is_ascii_lowercase());
    if checksum && has_upper && has_lower && address.to_checksum(None).get(2..) != Some(digits) {
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
    if radix == 10 {
        return decimal_u256(digits).ok_or_else(|| invalid("larger than 2^256 - 1"));
    }
    U256::from_str_radix(digits, radix).map_err(|_| invalid("larger than 2^256 - 1"))
}

/// The value of a non-empty string of ASCII decimal digits (checked by the caller); `None` above 2^256 - 1. Up to
/// 19 digits (always below 2^64) by the standard library's `u64` parser, faster than `ruint`'s chunked one
/// (BENCHMARKS.md#wasm-boundary).
pub(crate) fn decimal_u256(digits: &str) -> Option<U256> {
    if digits.len() <= 19 {
        return digits.parse::<u64>().ok().map(U256::from);
    }
    U256::from_str_radix(digits, 10).ok()
}

/// Lower-case `0x` hex of `bytes`.
#[must_use]
pub fn to_hex(bytes: impl AsRef<[u8]>) -> String {
    hex::encode_prefixed(bytes)
}

/// Writes `src` from the start of `dst`, as far as both go.
pub(crate) fn write_left(dst: &mut [u8], src: impl IntoIterator<Item = u8>) {
    dst.iter_mut().zip(src).for_each(|(d, s)| *d = s);
}

/// Writes the last bytes of `src` (an exact-size iterator) right-aligned into `dst`: the right-most bytes are
/// kept when `src` is longer.
pub(crate) fn write_right<I>(dst: &mut [u8], src: I)
where
    I: IntoIterator<Item = u8>,
    I::IntoIter: DoubleEndedIterator,
{
    dst.iter_mut()
        .rev()
        .zip(src.into_iter().rev())
        .for_each(|(d, s)| *d = s);
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
        // a doubled prefix is not hex (decoders that strip `0x` themselves once read it as 19 bytes)
        let doubled = format!("0x0x{}", "ab".repeat(19));
        assert_eq!(
            parse_address("a", &doubled).unwrap_err().code(),
            "INVALID_ADDRESS"
        );
        assert_eq!(parse_hex("x", "0x0xab").unwrap_err().code(), "INVALID_HEX");
        let word = format!("0x0x{}", "ab".repeat(31));
        assert_eq!(parse_fixed::<32>("x", &word).unwrap_err().code(), "INVALID_HEX");
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        // the u64 fast path and ruint agree on every digit string, leading zeros and overflow included
        #[test]
        fn decimals_as_ruint_reads_them(digits in "[0-9]{1,80}") {
            prop_assert_eq!(decimal_u256(&digits), U256::from_str_radix(&digits, 10).ok());
        }

        // arbitrary text, and text shaped like hex with stray prefixes, never panics and never yields a value of
        // the wrong size
        #[test]
        fn parsers_never_panic(s in ".{0,90}", digits in "(0[xX])?(0x)?[0-9a-fA-FxX]{0,70}") {
            for input in [s.as_str(), digits.as_str()] {
                if let Ok(bytes) = parse_hex("x", input) {
                    prop_assert_eq!(bytes.len() * 2 + 2, input.len());
                }
                let _ = parse_address("a", input);
                let _ = parse_fixed::<32>("w", input);
            }
        }

        #[test]
        fn addresses_roundtrip(bytes in any::<[u8; 20]>()) {
            let address = Address::from(bytes);
            prop_assert_eq!(parse_address("a", &address.to_checksum(None)).unwrap(), address);
            prop_assert_eq!(parse_address("a", &to_hex(bytes)).unwrap(), address);
            let doubled = format!("0x0x{}", to_hex(bytes).get(4..).unwrap_or_default());
            prop_assert!(parse_address("a", &doubled).is_err());
        }

        #[test]
        fn hex_roundtrips(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(parse_hex("x", &to_hex(&bytes)).unwrap(), bytes);
        }
    }
}
