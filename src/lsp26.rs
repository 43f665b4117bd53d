//! LSP26 Follower System: the registry's events an indexer follows and the read that settles who follows whom.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-26-FollowerSystem.md>. The events have no indexed
//! parameters: logs are found by the registry's address and the event's `topic0`, and both addresses are read
//! from the log's data.

use alloy_primitives::{Address, B256, address};
use alloy_sol_types::{SolCall, SolEvent, sol};

sol! {
    /// `follower` started following `addr`.
    event Follow(address follower, address addr);
    /// `unfollower` stopped following `addr`.
    event Unfollow(address unfollower, address addr);
    /// Whether `follower` follows `addr`.
    function isFollowing(address follower, address addr) external view returns (bool);
}

/// The follower registry LUKSO deployed (the LIP's address; the same on mainnet and testnet).
pub const REGISTRY: Address = address!("0xf01103E5a9909Fc0DBe8166dA7085e0285daDDcA");

/// `topic0` of [`Follow`].
pub const FOLLOW_TOPIC: B256 = Follow::SIGNATURE_HASH;
/// `topic0` of [`Unfollow`].
pub const UNFOLLOW_TOPIC: B256 = Unfollow::SIGNATURE_HASH;

/// The `(follower, followee)` a `Follow` or `Unfollow` log names, from its topics and data; `None` for any other
/// log, or data that is not the event's two ABI-encoded addresses.
#[must_use]
pub fn decode_log(topics: &[B256], data: &[u8]) -> Option<(Address, Address)> {
    match topics {
        [t0] if *t0 == FOLLOW_TOPIC => Follow::abi_decode_data_validate(data).ok(),
        [t0] if *t0 == UNFOLLOW_TOPIC => Unfollow::abi_decode_data_validate(data).ok(),
        _ => None,
    }
}

/// `isFollowing(follower, addr)` calldata.
#[must_use]
pub fn is_following_calldata(follower: Address, followee: Address) -> Vec<u8> {
    isFollowingCall {
        follower,
        addr: followee,
    }
    .abi_encode()
}

/// Reads an `isFollowing` answer (`None` when it is not one ABI-encoded `bool`).
#[must_use]
pub fn decode_is_following(return_data: &[u8]) -> Option<bool> {
    isFollowingCall::abi_decode_returns_validate(return_data).ok()
}

#[cfg(test)]
mod tests {
    use alloy_primitives::b256;

    use super::*;

    #[test]
    fn topics_are_the_lips() {
        assert_eq!(
            FOLLOW_TOPIC,
            b256!("0xbccc71dc7842b86291138666aa18e133ee6d41aa71e6d7c650debad1a0576635")
        );
        assert_eq!(
            UNFOLLOW_TOPIC,
            b256!("0x083700fd0d85112c9d8c5823585c7542e8fadb693c9902e5bc590ab367f7a15e")
        );
    }

    #[test]
    fn logs_and_calls() {
        let (a, b) = (
            address!("0x00000000000000000000000000000000000000aa"),
            address!("0x00000000000000000000000000000000000000bb"),
        );
        let data = [a.into_word().0, b.into_word().0].concat();
        assert_eq!(decode_log(&[FOLLOW_TOPIC], &data), Some((a, b)));
        assert_eq!(decode_log(&[UNFOLLOW_TOPIC], &data), Some((a, b)));
        // another event, indexed topics, short or dirty data
        assert_eq!(decode_log(&[B256::ZERO], &data), None);
        assert_eq!(decode_log(&[FOLLOW_TOPIC, B256::ZERO], &data), None);
        assert_eq!(decode_log(&[FOLLOW_TOPIC], &data[..63]), None);
        let mut dirty = data.clone();
        dirty[0] = 1;
        assert_eq!(
            decode_log(&[FOLLOW_TOPIC], &dirty),
            None,
            "an address word with high bits"
        );
        let call = is_following_calldata(a, b);
        assert_eq!(call.len(), 68);
        assert_eq!(&call[4..], data.as_slice());
        let mut word = [0u8; 32];
        assert_eq!(decode_is_following(&word), Some(false));
        word[31] = 1;
        assert_eq!(decode_is_following(&word), Some(true));
        word[31] = 2;
        assert_eq!(decode_is_following(&word), None);
    }
}
