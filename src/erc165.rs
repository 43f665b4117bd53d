//! ERC165 interface ids of the LUKSO standards and the `supportsInterface` call.
//!
//! Spec: <https://eips.ethereum.org/EIPS/eip-165>; ids: `@lukso/lsp-smart-contracts` `INTERFACE_IDS` (current
//! values) and the ids earlier releases answer, which an indexer meets on chain.

use alloy_primitives::{Address, FixedBytes};
use alloy_sol_types::{SolCall, sol};

sol! {
    /// ERC165.
    function supportsInterface(bytes4 interfaceId) external view returns (bool);
    /// ERC173 / LSP14: the owner of a profile (its KeyManager).
    function owner() external view returns (address);
    /// ERC173 / LSP14: the owner changed (an indexer re-reads `owner()`).
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
}

/// `topic0` of [`OwnershipTransferred`].
pub const OWNERSHIP_TRANSFERRED_TOPIC: alloy_primitives::B256 =
    <OwnershipTransferred as alloy_sol_types::SolEvent>::SIGNATURE_HASH;

/// A 4-byte interface id.
pub type InterfaceId = FixedBytes<4>;

/// `LSP0ERC725Account` (Universal Profile).
pub const LSP0: InterfaceId = FixedBytes([0x24, 0x87, 0x1b, 0x3d]);
/// `LSP6KeyManager`.
pub const LSP6: InterfaceId = FixedBytes([0x23, 0xf3, 0x4c, 0x62]);
/// `LSP25ExecuteRelayCall`.
pub const LSP25: InterfaceId = FixedBytes([0x5a, 0xc7, 0x99, 0x08]);
/// `LSP7DigitalAsset`: current, 0.14, 0.12, then 0.11 … 0.6.
pub const LSP7_IDS: [InterfaceId; 7] = [
    FixedBytes([0xc5, 0x2d, 0x60, 0x08]),
    FixedBytes([0xb3, 0xc4, 0x92, 0x8f]),
    FixedBytes([0xda, 0xa7, 0x46, 0xb7]),
    FixedBytes([0x05, 0x51, 0x95, 0x12]),
    FixedBytes([0xda, 0x1f, 0x85, 0xe4]),
    FixedBytes([0x5f, 0xca, 0xac, 0x27]),
    FixedBytes([0xe3, 0x3f, 0x65, 0xc3]),
];
/// `LSP8IdentifiableDigitalAsset`: current, 0.13, 0.12, then 0.11 … 0.6.
pub const LSP8_IDS: [InterfaceId; 6] = [
    FixedBytes([0x3a, 0x27, 0x17, 0x06]),
    FixedBytes([0xec, 0xad, 0x9f, 0x75]),
    FixedBytes([0x30, 0xdc, 0x52, 0x78]),
    FixedBytes([0x1a, 0xe9, 0xba, 0x1f]),
    FixedBytes([0x62, 0x2e, 0x7a, 0x01]),
    FixedBytes([0x49, 0x39, 0x91, 0x45]),
];
/// An id no contract may claim (ERC165 requires `supportsInterface(0xffffffff) == false`): a contract answering
/// `true` claims everything and is not trusted.
pub const INVALID_ID: InterfaceId = FixedBytes([0xff, 0xff, 0xff, 0xff]);
/// A made-up id no standard has: a contract answering `true` claims whatever it is asked.
pub const MADE_UP_ID: InterfaceId = FixedBytes([0x5e, 0xed, 0xc0, 0xde]);
/// Ids no honest ERC165 contract claims: an indexer asks them first and refuses a contract claiming either.
pub const NEVER_CLAIMED: [InterfaceId; 2] = [INVALID_ID, MADE_UP_ID];

/// `supportsInterface(id)` calldata.
#[must_use]
pub fn supports_interface_calldata(id: InterfaceId) -> Vec<u8> {
    supportsInterfaceCall { interfaceId: id }.abi_encode()
}

/// Reads a `supportsInterface` answer strictly: exactly one ABI word holding 0 or 1; anything else is `false`.
#[must_use]
pub fn decode_supports_interface(return_data: &[u8]) -> bool {
    supportsInterfaceCall::abi_decode_returns_validate(return_data).unwrap_or(false)
}

/// Reads a `supportsInterface` answer: `Some` for exactly one ABI word holding 0 or 1 (and `Some(false)` for no
/// answer at all, as a contract without the function gives), `None` for anything else (a contract answering
/// garbage, trailing bytes included).
#[must_use]
pub fn decode_supports_interface_checked(return_data: &[u8]) -> Option<bool> {
    match return_data.len() {
        0 => Some(false),
        32 => supportsInterfaceCall::abi_decode_returns_validate(return_data).ok(),
        _ => None,
    }
}

/// `owner()` calldata.
#[must_use]
pub fn owner_calldata() -> Vec<u8> {
    ownerCall {}.abi_encode()
}

/// Reads an `owner()` answer (`None` when it is not one ABI-encoded address).
#[must_use]
pub fn decode_owner(return_data: &[u8]) -> Option<Address> {
    ownerCall::abi_decode_returns_validate(return_data).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::hex;

    #[test]
    fn ownership_topic_is_erc173s() {
        assert_eq!(
            hex::encode(OWNERSHIP_TRANSFERRED_TOPIC),
            "8be0079c531659141344cd1fd0a4f28419497f9722a3daafe3b4186f6b6457e0"
        );
    }

    #[test]
    fn checked_answers_tell_garbage_from_false() {
        let word = |b: u8| {
            let mut w = [0u8; 32];
            w[31] = b;
            w
        };
        assert_eq!(decode_supports_interface_checked(&word(1)), Some(true));
        assert_eq!(decode_supports_interface_checked(&word(0)), Some(false));
        assert_eq!(decode_supports_interface_checked(&[]), Some(false));
        assert_eq!(decode_supports_interface_checked(&word(2)), None);
        assert_eq!(decode_supports_interface_checked(&[0u8; 31]), None);
        assert_eq!(decode_supports_interface_checked(&[0u8; 64]), None);
        assert!(!NEVER_CLAIMED.contains(&LSP0));
    }

    #[test]
    fn calls_and_answers() {
        assert_eq!(
            hex::encode(supports_interface_calldata(LSP0)),
            "01ffc9a724871b3d00000000000000000000000000000000000000000000000000000000"
        );
        let mut word = [0u8; 32];
        assert!(!decode_supports_interface(&word));
        word[31] = 1;
        assert!(decode_supports_interface(&word));
        word[31] = 2;
        assert!(!decode_supports_interface(&word));
        assert!(!decode_supports_interface(&[]));
        assert!(!decode_supports_interface(&[1]));
        assert_eq!(hex::encode(owner_calldata()), "8da5cb5b");
        let mut answer = [0u8; 32];
        answer[12..].copy_from_slice(&[0xab; 20]);
        assert_eq!(decode_owner(&answer), Some(Address::repeat_byte(0xab)));
        answer[0] = 1;
        assert_eq!(decode_owner(&answer), None);
    }
}
