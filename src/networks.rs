//! Chain ids and the canonical LUKSO contract addresses (identical on mainnet and testnet: every contract was
//! deployed through Nick's CREATE2 factory).

use alloy_primitives::{Address, address};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The LSP23 LinkedContractsFactory.
pub const LSP23_FACTORY: Address = address!("0x2300000A84D25dF63081feAa37ba6b62C4c89a30");
/// UniversalProfileInitPostDeploymentModule.
pub const POST_DEPLOYMENT_MODULE: Address = address!("0x000000000066093407b6704B89793beFfD0D8F00");

/// The contracts an LSP23 Universal Profile deployment uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lsp23Constants {
    /// LSP23 LinkedContractsFactory.
    pub factory: Address,
    /// UniversalProfileInit implementation (primary contract).
    pub universal_profile_init: Address,
    /// LSP6KeyManagerInit implementation (secondary contract).
    pub key_manager_init: Address,
    /// UniversalProfileInitPostDeploymentModule.
    pub post_deployment_module: Address,
    /// LSP1UniversalReceiverDelegateUP given to relayer-created profiles.
    pub universal_receiver_delegate: Address,
}

impl Lsp23Constants {
    /// The v0.14.0 implementations used by LUKSO today (the docs' prediction formula).
    pub const V0_14_0: Self = Self {
        factory: LSP23_FACTORY,
        universal_profile_init: address!("0x3024D38EA2434BA6635003Dc1BDC0daB5882ED4F"),
        key_manager_init: address!("0x2Fe3AeD98684E7351aD2D408A43cE09a738BF8a4"),
        post_deployment_module: POST_DEPLOYMENT_MODULE,
        universal_receiver_delegate: address!("0x7870C5B8BC9572A8001C3f96f7ff59961B23500D"),
    };

    /// The legacy v0.12.1 implementations (seen in older relayer `create2-parameters`).
    pub const V0_12_1: Self = Self {
        factory: LSP23_FACTORY,
        universal_profile_init: address!("0x52c90985AF970D4E0DC26Cb5D052505278aF32A9"),
        key_manager_init: address!("0xa75684d7D048704a2DB851D05Ba0c3cbe226264C"),
        post_deployment_module: POST_DEPLOYMENT_MODULE,
        universal_receiver_delegate: address!("0xA5467dfe7019bF2C7C5F7A707711B9d4cAD118c8"),
    };
}

/// A LUKSO network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// LUKSO mainnet, chain id 42.
    Mainnet,
    /// LUKSO testnet, chain id 4201.
    Testnet,
}

impl Network {
    /// Both networks.
    pub const ALL: [Self; 2] = [Self::Mainnet, Self::Testnet];

    /// The EIP-155 chain id.
    #[must_use]
    pub const fn chain_id(self) -> u64 {
        match self {
            Self::Mainnet => 42,
            Self::Testnet => 4201,
        }
    }

    /// `"mainnet"` or `"testnet"`, as used in index names (`prod_mainnet_assets`, …).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Mainnet => "mainnet",
            Self::Testnet => "testnet",
        }
    }

    /// The LSP23 constants with the v0.14.0 implementations.
    #[must_use]
    pub const fn constants(self) -> Lsp23Constants {
        Lsp23Constants::V0_14_0
    }

    /// Looks a network up by chain id.
    ///
    /// # Errors
    /// [`Error::UnknownNetwork`].
    pub fn from_chain_id(chain_id: u64) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|n| n.chain_id() == chain_id)
            .ok_or_else(|| Error::UnknownNetwork(chain_id.to_string()))
    }

    /// Looks a network up by name (`mainnet`, `testnet`) or chain id, decimal or hex (`42`, `0x2a`, `4201`,
    /// `0x1069`; see [`parse_chain_id`]).
    ///
    /// # Errors
    /// [`Error::UnknownNetwork`].
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "mainnet" => Ok(Self::Mainnet),
            "testnet" => Ok(Self::Testnet),
            _ => parse_chain_id(s)
                .and_then(Self::from_chain_id)
                .map_err(|_| Error::UnknownNetwork(s.to_owned())),
        }
    }
}

/// Longest chain id text looked at: `0x` and 64 hex digits (a uint256 written in full).
const MAX_CHAIN_ID_TEXT: usize = 66;

/// Parses a chain id written in decimal (`42`) or hex with a `0x` / `0X` prefix (`0x2a`, `0x2A`, `0x002a`), as
/// clients write them in URLs and configuration (EIP-155 ids; LUKSO's own wallet sends `0x2a`).
///
/// Refused: empty text, a bare `0x`, a doubled prefix (`0x0x2a`), signs, whitespace, any other character,
/// decimal leading zeros (`042`, which some tools read as octal), values above `u64::MAX` and 0 (no chain).
///
/// # Errors
/// [`Error::InvalidNumber`] naming the field `chainId`.
pub fn parse_chain_id(s: &str) -> Result<u64> {
    let invalid = |reason: &str| Error::InvalidNumber {
        field: "chainId".to_owned(),
        value: s.chars().take(MAX_CHAIN_ID_TEXT + 2).collect(),
        reason: reason.to_owned(),
    };
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (s, 10),
    };
    if digits.is_empty() {
        return Err(invalid(if radix == 16 {
            "no hex digits after 0x"
        } else {
            "a chain id is a decimal number or 0x and hex digits"
        }));
    }
    if s.len() > MAX_CHAIN_ID_TEXT {
        return Err(invalid("too long"));
    }
    let digit = |b: u8| {
        if radix == 16 {
            b.is_ascii_hexdigit()
        } else {
            b.is_ascii_digit()
        }
    };
    if !digits.bytes().all(digit) {
        return Err(invalid(if radix == 16 {
            "0x must be followed by hex digits only"
        } else {
            "a chain id is a decimal number or 0x and hex digits"
        }));
    }
    if radix == 10 && digits.len() > 1 && digits.starts_with('0') {
        return Err(invalid("a decimal chain id has no leading zeros"));
    }
    // every byte is a digit of the radix: the only failure left is overflow
    let id = u64::from_str_radix(digits, radix).map_err(|_| invalid("larger than 18446744073709551615"))?;
    if id == 0 {
        return Err(invalid("chain id 0 names no chain"));
    }
    Ok(id)
}

/// A chain id as `0x`-prefixed lowercase hex without leading zeros (`42` → `0x2a`).
#[must_use]
pub fn chain_id_hex(chain_id: u64) -> String {
    format!("{chain_id:#x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_ids_in_decimal_and_hex() {
        let ok: &[(&str, u64)] = &[
            ("42", 42),
            ("0x2a", 42),
            ("0x2A", 42),
            ("0X2a", 42),
            ("0x002a", 42),
            ("4201", 4201),
            ("0x1069", 4201),
            ("1", 1),
            ("0x1", 1),
            ("18446744073709551615", u64::MAX),
            ("0xffffffffffffffff", u64::MAX),
            (
                "0x0000000000000000000000000000000000000000000000000000000000000001",
                1,
            ),
        ];
        for (text, id) in ok {
            assert_eq!(parse_chain_id(text).ok(), Some(*id), "{text}");
        }
        let refused = [
            "",
            "0x",
            "0X",
            "0x0x2a",
            "0xx2a",
            "x2a",
            "2a",
            "+42",
            "-42",
            "0x-2a",
            "0x+2a",
            " 42",
            "42 ",
            "4 2",
            "0x 2a",
            "\t42",
            "042",
            "00",
            "0",
            "0x0",
            "0x00",
            "18446744073709551616",
            "0x10000000000000000",
            "99999999999999999999999",
            "4.2",
            "4e1",
            "42n",
            "0b101010",
            "0o52",
            "mainnet",
            "٤٢",
            "４２",
        ];
        for text in refused {
            let e = parse_chain_id(text).expect_err(text);
            assert_eq!(e.code(), "INVALID_NUMBER", "{text}");
            assert!(e.to_string().starts_with("chainId: "), "{e}");
        }
        // a huge text is refused without being echoed in full
        let long = format!("0x{}", "0".repeat(10_000));
        assert!(parse_chain_id(&long).unwrap_err().to_string().len() < 200);
        assert_eq!(chain_id_hex(42), "0x2a");
        assert_eq!(chain_id_hex(4201), "0x1069");
    }

    #[test]
    fn networks_by_name_or_id() {
        for text in ["mainnet", "42", "0x2a", "0x2A"] {
            assert_eq!(Network::parse(text).ok(), Some(Network::Mainnet), "{text}");
        }
        for text in ["testnet", "4201", "0x1069"] {
            assert_eq!(Network::parse(text).ok(), Some(Network::Testnet), "{text}");
        }
        for text in ["", "0x", "1", "042", "Mainnet", " 42"] {
            assert_eq!(
                Network::parse(text).unwrap_err().code(),
                "UNKNOWN_NETWORK",
                "{text}"
            );
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn every_id_round_trips_in_every_form(id in 1u64..) {
            prop_assert_eq!(parse_chain_id(&id.to_string()).ok(), Some(id));
            prop_assert_eq!(parse_chain_id(&chain_id_hex(id)).ok(), Some(id));
            prop_assert_eq!(parse_chain_id(&format!("0X{id:X}")).ok(), Some(id));
            prop_assert_eq!(parse_chain_id(&format!("0x{id:016x}")).ok(), Some(id));
        }

        #[test]
        fn decorated_ids_are_refused(id in 1u64.., pad in "[ \t\n+-]|0x|0X") {
            for text in [id.to_string(), chain_id_hex(id)] {
                let before = format!("{pad}{text}");
                let after = format!("{text}{pad}");
                // `0x` before decimal digits is no decoration: it makes them a hex id (`0x1` is 1)
                if !pad.eq_ignore_ascii_case("0x") || text.starts_with("0x") {
                    prop_assert!(parse_chain_id(&before).is_err(), "{}", before);
                }
                prop_assert!(parse_chain_id(&after).is_err(), "{}", after);
            }
        }

        // arbitrary text never panics; whatever parses is the value written in one of the accepted forms
        #[test]
        fn parser_never_panics(s in ".{0,80}", shaped in "(0[xX])?(0x)?[0-9a-fA-FxX+ -]{0,70}") {
            for text in [s, shaped] {
                if let Ok(id) = parse_chain_id(&text) {
                    let canonical = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"))
                        .map_or(Ok(id), |hex| u64::from_str_radix(hex, 16));
                    prop_assert_eq!(canonical, Ok(id));
                    prop_assert!(id > 0);
                    prop_assert!(text == id.to_string() || text.len() > 2);
                }
            }
        }
    }
}
