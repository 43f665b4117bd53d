//! LSP25 nonces (`(uint128 channel << 128) | uint128 id`, read with `getNonce`) and validity timestamps
//! (`(uint128 start << 128) | uint128 end`).

use alloy_primitives::{Address, U256};
use alloy_sol_types::SolCall;

use super::getNonceCall;
use crate::{Error, Result};

/// An LSP25 nonce: `(uint128 channel << 128) | uint128 id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Nonce(pub U256);

impl Nonce {
    /// The nonce `id` of `channel`.
    #[must_use]
    pub fn new(channel: u128, id: u128) -> Self {
        Self((U256::from(channel) << 128) | U256::from(id))
    }

    /// The channel (high 128 bits). Calls on different channels do not wait for each other.
    #[must_use]
    pub fn channel(&self) -> u128 {
        high_u128(self.0)
    }

    /// The position within the channel (low 128 bits).
    #[must_use]
    pub fn id(&self) -> u128 {
        low_u128(self.0)
    }
}

/// `getNonce(signer, channel)` calldata for the KeyManager.
#[must_use]
pub fn get_nonce_calldata(signer: Address, channel: u128) -> Vec<u8> {
    getNonceCall {
        from: signer,
        channelId: channel,
    }
    .abi_encode()
}

/// Decodes the return data of `getNonce`.
///
/// # Errors
/// [`Error::InvalidAbi`] unless it is exactly one uint256 word.
pub fn decode_get_nonce(return_data: &[u8]) -> Result<Nonce> {
    getNonceCall::abi_decode_returns_validate(return_data)
        .map(Nonce)
        .map_err(|e| Error::InvalidAbi {
            expected: "uint256".into(),
            reason: crate::error::abi_reason(&e),
        })
}

/// LSP25 validity timestamps: `(uint128 start << 128) | uint128 end`, unix seconds. `0` means always valid,
/// `end = 0` means no expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ValidityTimestamps(pub U256);

impl ValidityTimestamps {
    /// Always valid.
    pub const ALWAYS: Self = Self(U256::ZERO);

    /// Valid from `start` to `end` inclusive (`end = 0`: no expiry).
    #[must_use]
    pub fn new(start: u128, end: u128) -> Self {
        Self((U256::from(start) << 128) | U256::from(end))
    }

    /// The first valid second (high 128 bits).
    #[must_use]
    pub fn start(&self) -> u128 {
        high_u128(self.0)
    }

    /// The last valid second (low 128 bits); 0 = no expiry.
    #[must_use]
    pub fn end(&self) -> u128 {
        low_u128(self.0)
    }

    /// Whether a block with timestamp `now` accepts the call (as `LSP25MultiChannelNonce._verifyValidityTimestamps`:
    /// `0` passes; otherwise `now >= start`, and `now <= end` unless `end` is 0).
    #[must_use]
    pub fn admits(&self, now: u64) -> bool {
        self.check(now).is_ok()
    }

    /// As [`ValidityTimestamps::admits`], with the reason.
    ///
    /// # Errors
    /// [`Error::RelayCallNotYetValid`] or [`Error::RelayCallExpired`].
    pub fn check(&self, now: u64) -> Result<()> {
        if self.0.is_zero() {
            return Ok(());
        }
        let (start, end) = (self.start(), self.end());
        if u128::from(now) < start {
            return Err(Error::RelayCallNotYetValid { start, now });
        }
        if end != 0 && u128::from(now) > end {
            return Err(Error::RelayCallExpired { end, now });
        }
        Ok(())
    }
}

fn high_u128(v: U256) -> u128 {
    let [_, _, hi0, hi1] = v.into_limbs();
    (u128::from(hi1) << 64) | u128::from(hi0)
}

fn low_u128(v: U256) -> u128 {
    let [lo0, lo1, _, _] = v.into_limbs();
    (u128::from(lo1) << 64) | u128::from(lo0)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::hex::to_hex as hex;

    proptest! {
        #[test]
        fn nonce_and_validity_split_into_halves(a in any::<u128>(), b in any::<u128>(), now in any::<u64>()) {
            let n = Nonce::new(a, b);
            prop_assert_eq!((n.channel(), n.id()), (a, b));
            let v = ValidityTimestamps::new(a, b);
            prop_assert_eq!((v.start(), v.end()), (a, b));
            let t = u128::from(now);
            let expected = (a == 0 && b == 0) || (t >= a && (b == 0 || t <= b));
            prop_assert_eq!(v.admits(now), expected);
        }

        #[test]
        fn get_nonce_return_decoding_never_panics(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = decode_get_nonce(&data);
        }
    }

    #[test]
    fn validity_window_edges() {
        let v = ValidityTimestamps::new(100, 200);
        assert!(!v.admits(99));
        assert!(v.admits(100));
        assert!(v.admits(200));
        assert!(!v.admits(201));
        assert_eq!(v.check(99).unwrap_err().code(), "RELAY_CALL_NOT_YET_VALID");
        assert_eq!(v.check(201).unwrap_err().code(), "RELAY_CALL_EXPIRED");
        let open = ValidityTimestamps::new(100, 0);
        assert!(open.admits(u64::MAX) && !open.admits(99));
        assert!(ValidityTimestamps::ALWAYS.admits(0));
        // end only: valid from 0 up to end
        assert!(ValidityTimestamps::new(0, 5).admits(0) && !ValidityTimestamps::new(0, 5).admits(6));
    }

    #[test]
    fn get_nonce_round_trip() {
        let signer: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8".parse().unwrap();
        let data = get_nonce_calldata(signer, 5);
        assert_eq!(
            hex(&data),
            "0xb44581d900000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c80000000000000000000000000000000000000000000000000000000000000005"
        );
        let word = Nonce::new(5, 1).0.to_be_bytes::<32>();
        let n = decode_get_nonce(&word).unwrap();
        assert_eq!((n.channel(), n.id()), (5, 1));
        assert_eq!(decode_get_nonce(&word[1..]).unwrap_err().code(), "INVALID_ABI");
    }
}
