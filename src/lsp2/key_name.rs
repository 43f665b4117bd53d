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

use alloy_primitives::{B256, U256, b256, keccak256};

use crate::{
    Error, Result,
    hex::{parse_address, parse_hex, write_left, write_right},
};

/// keccak256 of the words of the standard LSP key names, precomputed (checked against keccak256 by a test): the
/// keys dApps encode over and over cost no hashing. Any other word is hashed.
const KNOWN_WORDS: [(&str, B256); 26] = [
    (
        "SupportedStandards",
        b256!("0xeafec4d89fa9619884b6b8913562645556254905436c3dc94cedcaf399eb63b2"),
    ),
    (
        "LSP1UniversalReceiverDelegate",
        b256!("0x0cfc51aec37c55a4d0b1a65c6255c4bf2fbdf6277f3cc0730c45b828b6db8b47"),
    ),
    (
        "LSP3Profile",
        b256!("0x5ef83ad9559033e6e941db7d7c495acdce616347d28e90c7ce47cbfcfcad3bc5"),
    ),
    (
        "LSP4DigitalAsset",
        b256!("0xa4d96624a38f7ac2d8d9a604ecf07c12c77e480c2f633d1dcd00d99c1f348f2e"),
    ),
    (
        "LSP4Metadata",
        b256!("0x9afb95cacc9f95858ec44aa8c3b685511002e30ae54415823f406128b85b238e"),
    ),
    (
        "LSP4TokenName",
        b256!("0xdeba1e292f8ba88238e10ab3c7f88bd4be4fac56cad5194b6ecceaf653468af1"),
    ),
    (
        "LSP4TokenSymbol",
        b256!("0x2f0a68ab07768e01943a599e73362a0e17a63a72e94dd2e384d2c1d4db932756"),
    ),
    (
        "LSP4TokenType",
        b256!("0xe0261fa95db2eb3b5439bd033cda66d56b96f92f243a8228fd87550ed7bdfdb3"),
    ),
    (
        "LSP4Creators[]",
        b256!("0x114bd03b3a46d48759680d81ebb2b414fda7d030a7105a851867accf1c2352e7"),
    ),
    (
        "LSP4CreatorsMap",
        b256!("0x6de85eaf5d982b4e5da05ff01c962e85c94e9d1442aff18b618e62adebbdd1c9"),
    ),
    (
        "LSP5ReceivedAssets[]",
        b256!("0x6460ee3c0aac563ccbf76d6e1d07bada78e3a9514e6382b736ed3f478ab7b90b"),
    ),
    (
        "LSP5ReceivedAssetsMap",
        b256!("0x812c4334633eb816c80deebfa5fb7d2509eb438ca1b6418106442cb5ccc62f6c"),
    ),
    (
        "AddressPermissions",
        b256!("0x4b80742de2bfc4e96c4646a1a3ab0d953cefc439a036841c29ce43fb2653ec7d"),
    ),
    (
        "AddressPermissions[]",
        b256!("0xdf30dba06db6a30e65354d9a64c609861f089545ca58c6b4dbe31a5f338cb0e3"),
    ),
    (
        "Permissions",
        b256!("0x82acb3630321a1f0eba31ed50a758feb535243577c1a79ae55bed8ca03e226ec"),
    ),
    (
        "AllowedCalls",
        b256!("0x393a64c71c7751178e0d0cdf5d4d715d5a8e66bf6295808e62c26a55270b021e"),
    ),
    (
        "AllowedERC725YDataKeys",
        b256!("0x866c29119e9809cabfcb1c27fd8ea98c655fe73a373bd93012e0842cbff2b9fe"),
    ),
    (
        "LSP8TokenIdFormat",
        b256!("0xf675e9361af1c1664c1868cfa3eb97672d6b1a513aa5b81dec34c9ee330e818d"),
    ),
    (
        "LSP8TokenMetadataBaseURI",
        b256!("0x1a7628600c3bac7101f53697f48df381ddc36b9015e7d7c9c5633d1252aa2843"),
    ),
    (
        "LSP8ReferenceContract",
        b256!("0x708e7b881795f2e6b6c2752108c177ec89248458de3bf69d0d43480b3e5034e6"),
    ),
    (
        "LSP9Vault",
        b256!("0x7c0334a14085fefa8b51ae5a40895018882bdb9084a1c4c2dd52ab7d56d177ff"),
    ),
    (
        "LSP10Vaults[]",
        b256!("0x55482936e01da86729a45d2b87a6b1d3bc582bea0ec00e38bdb340e3af6f9f06"),
    ),
    (
        "LSP10VaultsMap",
        b256!("0x192448c3c0f88c7f238c7f70449c270032f9752568e88cc8936ce3a2cb18e3ec"),
    ),
    (
        "LSP12IssuedAssets[]",
        b256!("0x7c8c3416d6cda87cd42c71ea1843df28ac4850354f988d55ee2eaa47b6dc05cd"),
    ),
    (
        "LSP12IssuedAssetsMap",
        b256!("0x74ac2555c10b9349e78f717c46b53fa8d834d189b61bd57dbb8142d635b0604e"),
    ),
    (
        "LSP17Extension",
        b256!("0xcee78b4094da86011096c2ba3c05480b8cd6f45ac6b096862721190431db2bb6"),
    ),
];

/// The standard names whose keys are precomputed, in the order [`known_key`] reads: each is a one-word name, so its
/// data key is its keccak256 (the browser bindings look a name up in a JS `Map` of these before reading it).
#[cfg(any(test, feature = "wasm-lite"))]
pub(crate) fn known_names() -> impl Iterator<Item = &'static str> {
    KNOWN_WORDS.iter().map(|(word, _)| *word)
}

/// The data key of the `index`-th of [`known_names`], as [`encode_key_name`] gives it with no dynamic parts.
#[cfg(any(test, feature = "wasm-lite"))]
pub(crate) fn known_key(index: usize) -> Option<B256> {
    KNOWN_WORDS.get(index).map(|(_, hash)| *hash)
}

/// Whether the `index`-th of [`known_names`] is an Array name (`Name[]`: its key is the length key).
#[cfg(any(test, feature = "wasm-lite"))]
pub(crate) fn known_is_array(index: usize) -> bool {
    KNOWN_WORDS
        .get(index)
        .is_some_and(|(word, _)| is_array_name(word))
}

/// keccak256 of a key-name word.
fn word_hash(word: &str) -> B256 {
    KNOWN_WORDS
        .iter()
        .find(|(w, _)| *w == word)
        .map_or_else(|| keccak256(word.as_bytes()), |(_, h)| *h)
}

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
    // one walk over the words, keeping the first three (a key name is encoded with no allocation); the checks
    // below come in the order of their errors
    let (mut words, mut count, mut empty, mut expected) = ([""; 3], 0usize, false, 0usize);
    // a char predicate, not `split(':')`: names are short, and its memchr set-up costs more than it saves, in time
    // and in wasm size (BENCHMARKS.md#wasm-boundary)
    let colon = |c: char| c == ':';
    for word in name.split(colon) {
        if let Some(w) = words.get_mut(count) {
            *w = word;
        }
        count += 1;
        empty |= word.is_empty();
        expected += usize::from(is_dynamic(word));
    }
    if empty {
        return Err(invalid("empty word between ':' separators"));
    }
    if expected != dynamic_parts.len() {
        return Err(Error::DynamicKeyPartCount {
            name: name.to_owned(),
            expected,
            got: dynamic_parts.len(),
        });
    }
    if is_dynamic(words[0]) {
        return Err(invalid("the first word cannot be a dynamic part"));
    }
    let mut parts = dynamic_parts.iter().map(AsRef::as_ref);
    // the `size` first bytes of the slot of `word` (a slot is at most 20 bytes)
    let mut slot = |word: &str, size: usize| -> Result<std::iter::Take<std::array::IntoIter<u8, 20>>> {
        let mut bytes = [0u8; 20];
        if is_dynamic(word) {
            // count checked above
            let value = parts.next().ok_or_else(|| invalid("missing dynamic part"))?;
            encode_dynamic_part(word, value, bytes.get_mut(..size).unwrap_or_default())?;
        } else {
            write_left(&mut bytes, word_hash(word).iter().copied());
        }
        Ok(bytes.into_iter().take(size))
    };
    let mut key = [0u8; 32];
    match (count, words) {
        (1, [single, ..]) => {
            if single.bytes().any(|b| b == b'<' || b == b'>') {
                return Err(invalid(
                    "'<' and '>' are only allowed around dynamic parts after ':'",
                ));
            }
            key = word_hash(name).0;
        }
        (2, [first, second, _]) => {
            let hash = word_hash(first);
            let parts = hash.iter().take(10).chain(&[0, 0]).copied();
            write_left(&mut key, parts.chain(slot(second, 20)?));
        }
        (3, [first, second, third]) => {
            let hash = word_hash(first);
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
    Ok(array_element_key(word_hash(name), index))
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

/// Writes the dynamic part `value` of type `word` into `slot` (zeroed).
fn encode_dynamic_part(word: &str, value: &str, slot: &mut [u8]) -> Result<()> {
    let kind = word
        .strip_prefix('<')
        .and_then(|w| w.strip_suffix('>'))
        .ok_or_else(|| unknown_type(word))?;
    let bad = |reason: String| Error::InvalidDynamicKeyPart {
        kind: word.to_owned(),
        value: value.to_owned(),
        reason,
    };
    match kind {
        "address" => {
            let address = parse_address("dynamicKeyPart", value).map_err(|e| bad(e.to_string()))?;
            write_left(slot, address.iter().copied());
        }
        "string" => write_left(slot, keccak256(value.as_bytes()).iter().copied()),
        "bool" => match value {
            "true" => write_right(slot, [1]),
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
            write_left(slot, bytes);
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
            write_right(slot, word32.into_iter().skip(32 - bits / 8));
        }
        _ => return Err(unknown_type(word)),
    }
    Ok(())
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
    fn precomputed_word_hashes_are_keccak256() {
        for (word, hash) in KNOWN_WORDS {
            assert_eq!(hash, keccak256(word.as_bytes()), "{word}");
            assert_eq!(word_hash(word), hash);
        }
        assert_eq!(word_hash("MyCustomKey"), keccak256(b"MyCustomKey"));
    }

    #[test]
    fn known_names_are_whole_names_keyed_by_their_hash() {
        // what the browser bindings' look-up relies on: the name's key without reading it
        let mut count = 0;
        for (i, name) in known_names().enumerate() {
            let key = known_key(i).expect("a key per name");
            assert_eq!(key, keccak256(name.as_bytes()), "{name}");
            assert_eq!(encode_key_name::<&str>(name, &[]).expect(name), key, "{name}");
            count += 1;
        }
        assert_eq!(count, KNOWN_WORDS.len());
        assert_eq!(known_key(count), None);
        for (i, name) in known_names().enumerate() {
            assert_eq!(
                known_is_array(i),
                encode_array_element_key(name, 0).is_ok(),
                "{name}"
            );
        }
        assert!(known_is_array(
            known_names().position(|n| n == "AddressPermissions[]").unwrap()
        ));
        assert!(!known_is_array(count));
    }

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
