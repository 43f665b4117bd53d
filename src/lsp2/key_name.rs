//! ERC725Y data keys from LSP2 key names.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-2-ERC725YJSONSchema.md#keytype>
//!
//! | keyType | key |
//! |---|---|
//! | Singleton `Name` | `keccak256("Name")` |
//! | Array `Name[]` | length key `keccak256("Name[]")`; element `i`: `bytes16(keccak256("Name[]")) ‖ uint128(i)` |
//! | Mapping `A:B` | `bytes10(keccak256(A)) ‖ 0x0000 ‖ bytes20(B)` |
//! | MappingWithGrouping `A:B:C` | `bytes6(keccak256(A)) ‖ bytes4(B) ‖ 0x0000 ‖ bytes20(C)` |
//!
//! `B` and `C` are static words (hashed) or dynamic parts `<address>`, `<bytesN>`, `<uintN>`, `<bool>`,
//! `<string>`, `<bytes32>`: addresses and `bytesN` are right-padded / right-cut to the slot, `uintN` and `bool`
//! left-padded / left-cut (right-most bytes kept), `<string>` hashed like a static word (as erc725.js does).

use alloy_primitives::{B256, U256, keccak256};

use crate::{
    Error, Result,
    hex::{parse_address, parse_hex, write_left, write_right},
};

/// Encodes an LSP2 key name, filling its `<type>` parts from `dynamic_parts` in order.
///
/// An Array name (`Name[]`) gives its **length** key; use [`encode_array_element_key`] for elements.
///
/// ```
/// use profile_relayer::lsp2::encode_key_name;
/// let key = encode_key_name(
///     "AddressPermissions:Permissions:<address>",
///     &["0xcafecafecafecafecafecafecafecafecafecafe"],
/// )?;
/// assert_eq!(key.to_string(), "0x4b80742de2bf82acb3630000cafecafecafecafecafecafecafecafecafecafe");
/// # Ok::<(), profile_relayer::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidKeyName`], [`Error::DynamicKeyPartCount`] or [`Error::InvalidDynamicKeyPart`].
pub fn encode_key_name<S: AsRef<str>>(name: &str, dynamic_parts: &[S]) -> Result<B256> {
    let invalid = |reason: &str| Error::InvalidKeyName {
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    if name.is_empty() {
        return Err(invalid("empty name"));
    }
    let words: Vec<&str> = name.split(':').collect();
    if words.iter().any(|w| w.is_empty()) {
        return Err(invalid("empty word between ':' separators"));
    }
    let expected = words.iter().filter(|w| is_dynamic(w)).count();
    if expected != dynamic_parts.len() {
        return Err(Error::DynamicKeyPartCount {
            name: name.to_owned(),
            expected,
            got: dynamic_parts.len(),
        });
    }
    if words.first().is_some_and(|w| is_dynamic(w)) {
        return Err(invalid("the first word cannot be a dynamic part"));
    }
    let mut parts = dynamic_parts.iter().map(AsRef::as_ref);
    let mut slot = |word: &str, size: usize| -> Result<Vec<u8>> {
        if is_dynamic(word) {
            // count checked above
            let value = parts.next().ok_or_else(|| invalid("missing dynamic part"))?;
            encode_dynamic_part(word, value, size)
        } else {
            Ok(keccak256(word.as_bytes()).iter().take(size).copied().collect())
        }
    };
    let mut key = [0u8; 32];
    match words.as_slice() {
        [single] => {
            if single.contains(['<', '>']) {
                return Err(invalid(
                    "'<' and '>' are only allowed around dynamic parts after ':'",
                ));
            }
            key = keccak256(name.as_bytes()).0;
        }
        [first, second] => {
            let hash = keccak256(first.as_bytes());
            let parts = hash.iter().take(10).chain(&[0, 0]).copied();
            write_left(&mut key, parts.chain(slot(second, 20)?));
        }
        [first, second, third] => {
            let hash = keccak256(first.as_bytes());
            let parts = hash.iter().take(6).copied().chain(slot(second, 4)?);
            write_left(&mut key, parts.chain([0, 0]).chain(slot(third, 20)?));
        }
        _ => return Err(invalid("more than three ':'-separated words")),
    }
    Ok(B256::from(key))
}

/// The key of element `index` of an Array: `bytes16(keccak256(name)) ‖ uint128(index)`.
///
/// ```
/// use profile_relayer::lsp2::encode_array_element_key;
/// let key = encode_array_element_key("AddressPermissions[]", 1)?;
/// assert_eq!(key.to_string(), "0xdf30dba06db6a30e65354d9a64c6098600000000000000000000000000000001");
/// # Ok::<(), profile_relayer::Error>(())
/// ```
///
/// # Errors
/// [`Error::NotAnArrayKey`] unless `name` is of the form `Name[]`.
pub fn encode_array_element_key(name: &str, index: u128) -> Result<B256> {
    if !is_array_name(name) {
        return Err(Error::NotAnArrayKey {
            name: name.to_owned(),
        });
    }
    Ok(array_element_key(keccak256(name.as_bytes()), index))
}

/// The element key for an Array whose length key is `length_key`.
#[must_use]
pub fn array_element_key(length_key: B256, index: u128) -> B256 {
    let mut key = [0u8; 32];
    write_left(
        &mut key,
        length_key.iter().take(16).copied().chain(index.to_be_bytes()),
    );
    B256::from(key)
}

/// The value of an Array length key: uint128, 16 bytes big-endian.
#[must_use]
pub fn encode_array_length(len: u128) -> [u8; 16] {
    len.to_be_bytes()
}

fn is_array_name(name: &str) -> bool {
    name.len() > 2 && name.ends_with("[]") && !name.contains([':', '<', '>'])
}

fn is_dynamic(word: &str) -> bool {
    word.starts_with('<') && word.ends_with('>')
}

fn encode_dynamic_part(word: &str, value: &str, size: usize) -> Result<Vec<u8>> {
    let kind = word
        .strip_prefix('<')
        .and_then(|w| w.strip_suffix('>'))
        .ok_or_else(|| unknown_type(word))?;
    let bad = |reason: String| Error::InvalidDynamicKeyPart {
        kind: word.to_owned(),
        value: value.to_owned(),
        reason,
    };
    let mut slot = vec![0u8; size];
    match kind {
        "address" => {
            let address = parse_address("dynamicKeyPart", value).map_err(|e| bad(e.to_string()))?;
            write_left(&mut slot, address.iter().copied());
        }
        "string" => write_left(&mut slot, keccak256(value.as_bytes()).iter().copied()),
        "bool" => match value {
            "true" => write_right(&mut slot, [1]),
            "false" => {}
            _ => return Err(bad("expected \"true\" or \"false\"".to_owned())),
        },
        _ if let Some(width) = kind.strip_prefix("bytes") => {
            let n = type_width(width, 1, 32, 1).ok_or_else(|| unknown_type(word))?;
            let bytes = parse_hex("dynamicKeyPart", value).map_err(|e| bad(e.to_string()))?;
            if bytes.len() > n {
                return Err(bad(format!("{} bytes do not fit bytes{n}", bytes.len())));
            }
            // right-padded to N, then right-padded / right-cut to the slot
            write_left(&mut slot, bytes);
        }
        _ if let Some(width) = kind.strip_prefix("uint") => {
            let bits = type_width(width, 8, 256, 8).ok_or_else(|| unknown_type(word))?;
            let n = parse_uint(value)
                .ok_or_else(|| bad("expected a decimal or 0x-hex unsigned integer".into()))?;
            if n.bit_len() > bits {
                return Err(bad(format!("does not fit uint{bits}")));
            }
            // the value as uint<bits> (bits/8 bytes), left-padded / left-cut to the slot
            let word32 = n.to_be_bytes::<32>();
            write_right(&mut slot, word32.into_iter().skip(32 - bits / 8));
        }
        _ => return Err(unknown_type(word)),
    }
    Ok(slot)
}

fn unknown_type(word: &str) -> Error {
    Error::InvalidKeyName {
        name: word.to_owned(),
        reason: "unsupported dynamic part type (use <address>, <bytesN>, <uintN>, <bool> or <string>)"
            .to_owned(),
    }
}

fn type_width(digits: &str, min: usize, max: usize, step: usize) -> Option<usize> {
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: usize = digits.parse().ok()?;
    (min..=max).contains(&n).then_some(n).filter(|n| n % step == 0)
}

fn parse_uint(value: &str) -> Option<U256> {
    if let Some(hex) = value.strip_prefix("0x") {
        if hex.is_empty() {
            return None;
        }
        U256::from_str_radix(hex, 16).ok()
    } else if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        U256::from_str_radix(value, 10).ok()
    } else {
        None
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_malformed_names() {
        for name in [
            "",
            ":",
            "A::B",
            "A:B:C:D",
            "<address>",
            "A<b>",
            "A:<int8>",
            "A:<bytes0>",
            "A:<uint7>",
        ] {
            let parts: &[&str] =
                if name.contains("<int8>") || name.contains("bytes0") || name.contains("uint7") {
                    &["1"]
                } else {
                    &[]
                };
            assert!(encode_key_name(name, parts).is_err(), "{name}");
        }
    }

    #[test]
    fn uint_parts_accept_hex() {
        let dec = encode_key_name("MyKeyName:<uint32>", &["4081242941"]).unwrap();
        let hex = encode_key_name("MyKeyName:<uint32>", &["0xf342d33d"]).unwrap();
        assert_eq!(dec, hex);
    }

    proptest! {
        #[test]
        fn array_element_keys_share_the_prefix(name in "[A-Za-z0-9]{1,20}", index in any::<u128>()) {
            let array = format!("{name}[]");
            let length_key = encode_key_name::<&str>(&array, &[]).unwrap();
            let element = encode_array_element_key(&array, index).unwrap();
            prop_assert_eq!(&element[..16], &length_key[..16]);
            prop_assert_eq!(u128::from_be_bytes(element[16..].try_into().unwrap()), index);
        }

        #[test]
        fn address_mapping_ends_with_the_address(addr in any::<[u8; 20]>()) {
            let hex = crate::hex::to_hex(addr);
            let key = encode_key_name("LSP5ReceivedAssetsMap:<address>", &[hex.as_str()]).unwrap();
            prop_assert_eq!(&key[12..], &addr[..]);
            prop_assert_eq!(&key[10..12], &[0u8, 0][..]);
        }

        #[test]
        fn never_panics(name in ".{0,40}", parts in proptest::collection::vec(".{0,70}", 0..4)) {
            let _ = encode_key_name(&name, &parts);
            let _ = encode_array_element_key(&name, 7);
        }
    }
}
