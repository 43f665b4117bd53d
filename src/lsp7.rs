//! LSP7 Digital Asset: the `Transfer` event an indexer finds assets by.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-7-DigitalAsset.md>; interface ids:
//! [`crate::erc165::LSP7_IDS`].

use alloy_primitives::B256;
use alloy_sol_types::sol;

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
