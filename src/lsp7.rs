//! LSP7 Digital Asset: the `Transfer` event an indexer finds assets and holders by, and the reads of balances,
//! supply and decimals.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-7-DigitalAsset.md>; interface ids:
//! [`crate::erc165::LSP7_IDS`].

use alloy_primitives::{Address, B256, U256};
use alloy_sol_types::{SolCall, sol};

sol! {
    /// LSP7: tokens moved (minted, transferred, burnt).
    event Transfer(
        address indexed operator,
        address indexed from,
        address indexed to,
        uint256 amount,
        bool force,
        bytes data
    );
}

/// `topic0` of LSP7 [`Transfer`].
pub const TRANSFER_TOPIC: B256 = <Transfer as alloy_sol_types::SolEvent>::SIGNATURE_HASH;

sol! {
    /// LSP7 (and LSP8): how many tokens `tokenOwner` holds.
    function balanceOf(address tokenOwner) external view returns (uint256);
    /// LSP7 (and LSP8): the tokens in existence.
    function totalSupply() external view returns (uint256);
    /// LSP7: the decimals of an amount (0 for a non-divisible asset).
    function decimals() external view returns (uint8);
}

/// `balanceOf(holder)` calldata (LSP8 has the same function).
#[must_use]
pub fn balance_of_calldata(holder: Address) -> Vec<u8> {
    balanceOfCall { tokenOwner: holder }.abi_encode()
}

/// Reads a `balanceOf` answer (`None` when it is not one ABI-encoded `uint256`).
#[must_use]
pub fn decode_balance_of(return_data: &[u8]) -> Option<U256> {
    balanceOfCall::abi_decode_returns_validate(return_data).ok()
}

/// `totalSupply()` calldata (LSP8 has the same function).
#[must_use]
pub fn total_supply_calldata() -> Vec<u8> {
    totalSupplyCall {}.abi_encode()
}

/// Reads a `totalSupply` answer (`None` when it is not one ABI-encoded `uint256`).
#[must_use]
pub fn decode_total_supply(return_data: &[u8]) -> Option<U256> {
    totalSupplyCall::abi_decode_returns_validate(return_data).ok()
}

/// `decimals()` calldata.
#[must_use]
pub fn decimals_calldata() -> Vec<u8> {
    decimalsCall {}.abi_encode()
}

/// Reads a `decimals` answer (`None` when it is not one ABI-encoded `uint8`: a word above 255 is refused).
#[must_use]
pub fn decode_decimals(return_data: &[u8]) -> Option<u8> {
    decimalsCall::abi_decode_returns_validate(return_data).ok()
}

/// The `(from, to)` of an LSP7 [`Transfer`] log from its topics (operator, from, to are indexed), `None` when the
/// log does not have the event's four topics.
#[must_use]
pub fn transfer_parties(topics: &[B256]) -> Option<(Address, Address)> {
    match topics {
        [t0, _, from, to] if *t0 == TRANSFER_TOPIC => {
            Some((Address::from_word(*from), Address::from_word(*to)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use alloy_primitives::{address, hex};

    use super::*;

    #[test]
    fn calls_and_answers() {
        let holder = address!("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
        let call = balance_of_calldata(holder);
        assert_eq!(hex::encode(&call[..4]), "70a08231");
        assert_eq!(&call[16..], holder.as_slice());
        assert_eq!(hex::encode(total_supply_calldata()), "18160ddd");
        assert_eq!(hex::encode(decimals_calldata()), "313ce567");
        let mut word = [0u8; 32];
        word[31] = 18;
        assert_eq!(decode_decimals(&word), Some(18));
        assert_eq!(decode_balance_of(&word), Some(U256::from(18)));
        word[30] = 1;
        assert_eq!(decode_decimals(&word), None, "a uint8 above 255");
        assert_eq!(decode_total_supply(&[0u8; 31]), None);
        assert_eq!(decode_total_supply(&[0xffu8; 32]), Some(U256::MAX));
        let (from, to) = (address!("0x00000000000000000000000000000000000000aa"), holder);
        let topics = [TRANSFER_TOPIC, B256::ZERO, from.into_word(), to.into_word()];
        assert_eq!(transfer_parties(&topics), Some((from, to)));
        assert_eq!(transfer_parties(&topics[..3]), None);
        assert_eq!(
            transfer_parties(&[B256::ZERO, B256::ZERO, from.into_word(), to.into_word()]),
            None
        );
    }
}
