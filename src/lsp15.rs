//! LSP15 Transaction Relay Service: the signed quota request (`POST /quota`).
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-15-TransactionRelayServiceAPI.md>; LUKSO docs
//! `lsp15-transaction-relayer-api.md` and `relayer-api.md`. Two signing schemes are documented, both
//! `personal_sign` (EIP-191 version 0x45, `"\x19Ethereum Signed Message:\n" ‖ len ‖ message`):
//!
//! - [`QuotaScheme::Packed`] (LSP15 spec, docs standards page, LUKSO's mock relayer): the message is the 32 raw bytes
//!   `keccak256(abi.encodePacked(address profile, uint256 timestamp))`;
//! - [`QuotaScheme::Text`] (`relayer-api.md`, 2026): the message is the UTF-8 text `"<profile as given>:<timestamp>"`.
//!
//! A valid signature recovers to *some* address under either scheme, so a service recovers both candidates and
//! accepts the one that holds permissions on the profile.

use alloy_primitives::{Address, B256, Signature, U256, eip191_hash_message, keccak256};
use alloy_sol_types::SolValue;

use crate::{Result, lsp25::recover_prehash};

/// How a quota request is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuotaScheme {
    /// `personal_sign(keccak256(abi.encodePacked(address, uint256)))` over the 32 raw bytes.
    Packed,
    /// `personal_sign("<address>:<timestamp>")` over the UTF-8 text.
    Text,
}

impl QuotaScheme {
    /// Both schemes, the primary (`Packed`) first.
    pub const ALL: [Self; 2] = [Self::Packed, Self::Text];

    /// `"packed"` or `"text"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Packed => "packed",
            Self::Text => "text",
        }
    }

    /// Parses `"packed"` or `"text"`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "packed" => Some(Self::Packed),
            "text" => Some(Self::Text),
            _ => None,
        }
    }
}

/// `keccak256(abi.encodePacked(address profile, uint256 timestamp))`: the 32 bytes signed in [`QuotaScheme::Packed`].
#[must_use]
pub fn packed_quota_message(profile: Address, timestamp: u64) -> B256 {
    keccak256((profile, U256::from(timestamp)).abi_encode_packed())
}

/// `"<profile>:<timestamp>"`, the text signed in [`QuotaScheme::Text`]. `profile` is the address exactly as the
/// request gives it (checksummed and lower-case spellings are different messages).
#[must_use]
pub fn text_quota_message(profile: &str, timestamp: u64) -> String {
    format!("{profile}:{timestamp}")
}

/// The message bytes `personal_sign` receives under `scheme` (before the EIP-191 prefix).
#[must_use]
pub fn quota_message(
    scheme: QuotaScheme,
    profile: Address,
    profile_as_given: &str,
    timestamp: u64,
) -> Vec<u8> {
    match scheme {
        QuotaScheme::Packed => packed_quota_message(profile, timestamp).to_vec(),
        QuotaScheme::Text => text_quota_message(profile_as_given, timestamp).into_bytes(),
    }
}

/// The EIP-191 hash the wallet signs under `scheme`.
#[must_use]
pub fn quota_signing_hash(
    scheme: QuotaScheme,
    profile: Address,
    profile_as_given: &str,
    timestamp: u64,
) -> B256 {
    eip191_hash_message(quota_message(scheme, profile, profile_as_given, timestamp))
}

/// The address that signed a quota request under `scheme`.
///
/// # Errors
/// [`crate::Error::InvalidSignature`] when no public key can be recovered.
pub fn recover_quota_signer(
    scheme: QuotaScheme,
    profile: Address,
    profile_as_given: &str,
    timestamp: u64,
    signature: &Signature,
) -> Result<Address> {
    recover_prehash(
        signature,
        &quota_signing_hash(scheme, profile, profile_as_given, timestamp),
    )
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn schemes_parse() {
        for s in QuotaScheme::ALL {
            assert_eq!(QuotaScheme::parse(s.as_str()), Some(s));
        }
        assert_eq!(QuotaScheme::parse("Packed"), None);
    }

    #[test]
    fn text_message_keeps_the_spelling() {
        assert_eq!(
            text_quota_message("0xBB645D97B0c7D101ca0d73131e521fe89B463BFD", 1_656_408_193),
            "0xBB645D97B0c7D101ca0d73131e521fe89B463BFD:1656408193"
        );
    }
}
