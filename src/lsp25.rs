//! LSP25 ExecuteRelayCall: the message a controller signs so that a relayer can execute a call on its Universal
//! Profile through the KeyManager (gasless transactions).
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-25-ExecuteRelayCall.md>;
//! `@lukso/lsp25-contracts` `LSP25MultiChannelNonce.sol`.
//!
//! ```text
//! encodedMessage = abi.encodePacked(uint256 25, uint256 chainId, uint256 nonce, uint256 validityTimestamps,
//!                                   uint256 msgValue, bytes payload)
//! digest = keccak256(0x19 ‖ 0x00 ‖ keyManager ‖ encodedMessage)      // EIP-191 version 0x00, KeyManager as validator
//! signature = r ‖ s ‖ v over the raw digest (no "\x19Ethereum Signed Message" prefix), low s
//! ```
//!
//! Nonces are `(uint128 channel << 128) | uint128 id`; validity timestamps are `(uint128 start << 128) | uint128 end`.

use alloy_primitives::{Address, B256, Bytes, Signature, U256, keccak256};
use alloy_sol_types::{SolCall, SolValue, sol};

use crate::{Error, Result};

mod nonce;
mod revert;

pub use nonce::{Nonce, ValidityTimestamps, decode_get_nonce, get_nonce_calldata};
pub use revert::{RelayCallError, RelayCallErrors, Revert};

/// `LSP25_VERSION`, the first word of every signed message.
pub const LSP25_VERSION: u64 = 25;

sol! {
    /// LSP25 / LSP6 KeyManager relay entry point.
    #[derive(Debug, PartialEq, Eq)]
    function executeRelayCall(bytes signature, uint256 nonce, uint256 validityTimestamps, bytes payload)
        external payable returns (bytes);

    /// LSP25 / LSP6 KeyManager batch relay entry point.
    #[derive(Debug, PartialEq, Eq)]
    function executeRelayCallBatch(
        bytes[] signatures,
        uint256[] nonces,
        uint256[] validityTimestamps,
        uint256[] values,
        bytes[] payloads
    ) external payable returns (bytes[]);

    /// ERC725Y `setData` on the profile: the usual payload of a relay call.
    #[derive(Debug, PartialEq, Eq)]
    function setData(bytes32 dataKey, bytes dataValue) external payable;

    /// ERC725Y `setDataBatch` on the profile.
    #[derive(Debug, PartialEq, Eq)]
    function setDataBatch(bytes32[] dataKeys, bytes[] dataValues) external payable;

    /// The next nonce of `from` on channel `channelId` (already combined with the channel).
    #[derive(Debug, PartialEq, Eq)]
    function getNonce(address from, uint128 channelId) external view returns (uint256);
}

/// The fields of one relay call that are signed (besides the KeyManager and the chain id).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RelayCall {
    /// `(channel << 128) | id`, from `getNonce(signer, channel)`.
    pub nonce: U256,
    /// `(start << 128) | end`; `0` = always valid.
    pub validity_timestamps: ValidityTimestamps,
    /// `msg.value` the relayer sends with the call (0 for gasless relays).
    pub value: U256,
    /// The call on the profile, e.g. `setData(…)` or `execute(…)`.
    pub payload: Bytes,
}

impl RelayCall {
    /// `abi.encodePacked(uint256 25, uint256 chainId, uint256 nonce, uint256 validityTimestamps,
    /// uint256 msgValue, bytes payload)`: 160 bytes of words, then the payload.
    #[must_use]
    pub fn encoded_message(&self, chain_id: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(160 + self.payload.len());
        self.encode_message_to(chain_id, &mut out);
        out
    }

    /// Appends [`RelayCall::encoded_message`] to `out` (sized by the caller: no growth on the way).
    fn encode_message_to(&self, chain_id: u64, out: &mut Vec<u8>) {
        (
            U256::from(LSP25_VERSION),
            U256::from(chain_id),
            self.nonce,
            self.validity_timestamps.0,
            self.value,
            &self.payload,
        )
            .abi_encode_packed_to(out);
    }

    /// The EIP-191 version 0x00 data: `0x19 ‖ 0x00 ‖ keyManager ‖ encodedMessage`.
    #[must_use]
    pub fn signing_data(&self, key_manager: Address, chain_id: u64) -> Vec<u8> {
        let mut data = Vec::with_capacity(22 + 160 + self.payload.len());
        data.extend_from_slice(&[0x19, 0x00]);
        data.extend_from_slice(key_manager.as_slice());
        self.encode_message_to(chain_id, &mut data);
        data
    }

    /// The digest the controller signs (raw, without the `personal_sign` prefix).
    #[must_use]
    pub fn digest(&self, key_manager: Address, chain_id: u64) -> B256 {
        keccak256(self.signing_data(key_manager, chain_id))
    }

    /// The address that signed this call for `key_manager` on `chain_id`. A signature made for another
    /// KeyManager, chain, nonce or payload recovers to some other address (the KeyManager then reverts with
    /// `InvalidRelayNonce` or `NoPermissionsSet`), so compare the result with the expected controller.
    ///
    /// # Errors
    /// [`Error::InvalidSignature`] when no public key can be recovered.
    pub fn recover_signer(
        &self,
        key_manager: Address,
        chain_id: u64,
        signature: &Signature,
    ) -> Result<Address> {
        recover_prehash(signature, &self.digest(key_manager, chain_id))
    }

    /// `executeRelayCall(signature, nonce, validityTimestamps, payload)` calldata (`v` written as 27/28, as the
    /// KeyManager's ECDSA recovery requires).
    #[must_use]
    pub fn execute_relay_call_calldata(&self, signature: &Signature) -> Vec<u8> {
        executeRelayCallCall {
            signature: Bytes::from(signature.as_bytes()),
            nonce: self.nonce,
            validityTimestamps: self.validity_timestamps.0,
            payload: self.payload.clone(),
        }
        .abi_encode()
    }
}

/// `executeRelayCallBatch(signatures, nonces, validityTimestamps, values, payloads)` calldata. The transaction's
/// `msg.value` must equal the sum of the values.
#[must_use]
pub fn execute_relay_call_batch_calldata(calls: &[(Signature, RelayCall)]) -> Vec<u8> {
    executeRelayCallBatchCall {
        signatures: calls.iter().map(|(s, _)| Bytes::from(s.as_bytes())).collect(),
        nonces: calls.iter().map(|(_, c)| c.nonce).collect(),
        validityTimestamps: calls.iter().map(|(_, c)| c.validity_timestamps.0).collect(),
        values: calls.iter().map(|(_, c)| c.value).collect(),
        payloads: calls.iter().map(|(_, c)| c.payload.clone()).collect(),
    }
    .abi_encode()
}

/// Decodes `executeRelayCall` calldata (e.g. a pending transaction's input) into the signature and the call
/// (`value` is not part of the calldata and is 0).
///
/// # Errors
/// [`Error::InvalidAbi`] for other calldata; [`Error::InvalidSignature`] for a malformed signature.
pub fn decode_execute_relay_call(calldata: &[u8]) -> Result<(Signature, RelayCall)> {
    let call = executeRelayCallCall::abi_decode_validate(calldata).map_err(|e| Error::InvalidAbi {
        expected: "executeRelayCall(bytes,uint256,uint256,bytes)".into(),
        reason: crate::error::abi_reason(&e),
    })?;
    let signature = parse_signature("signature", &call.signature)?;
    Ok((
        signature,
        RelayCall {
            nonce: call.nonce,
            validity_timestamps: ValidityTimestamps(call.validityTimestamps),
            value: U256::ZERO,
            payload: call.payload,
        },
    ))
}

/// `setData(key, value)` calldata for the profile: a relay call's payload (e.g. a new `LSP3Profile` VerifiableURI).
#[must_use]
pub fn set_data_payload(key: B256, value: &[u8]) -> Vec<u8> {
    setDataCall {
        dataKey: key,
        dataValue: Bytes::copy_from_slice(value),
    }
    .abi_encode()
}

/// `setDataBatch(keys, values)` calldata for the profile.
///
/// # Errors
/// [`Error::KeysValuesMismatch`] if the lengths differ (the profile would revert).
pub fn set_data_batch_payload(keys: &[B256], values: &[Bytes]) -> Result<Vec<u8>> {
    if keys.len() != values.len() {
        return Err(Error::KeysValuesMismatch {
            keys: keys.len(),
            values: values.len(),
        });
    }
    Ok(setDataBatchCall {
        dataKeys: keys.to_vec(),
        dataValues: values.to_vec(),
    }
    .abi_encode())
}

/// Parses a 65-byte `r ‖ s ‖ v` signature. `v` may be 27/28 or 0/1; a high `s` (the malleable twin of a valid
/// signature, which the KeyManager's OpenZeppelin ECDSA rejects) and `r` or `s` outside `1..n` are refused.
///
/// # Errors
/// [`Error::InvalidLength`] unless 65 bytes; [`Error::InvalidSignature`] otherwise.
pub fn parse_signature(field: &str, bytes: &[u8]) -> Result<Signature> {
    let invalid = |reason: &str| Error::InvalidSignature {
        field: field.to_owned(),
        reason: reason.to_owned(),
    };
    let raw: &[u8; 65] = bytes.try_into().map_err(|_| Error::InvalidLength {
        field: field.to_owned(),
        expected: 65,
        got: bytes.len(),
    })?;
    if !matches!(raw.get(64), Some(0 | 1 | 27 | 28)) {
        return Err(invalid("v must be 27, 28, 0 or 1"));
    }
    let signature = Signature::from_raw_array(raw).map_err(|e| invalid(&e.to_string()))?;
    if signature.normalize_s().is_some() {
        return Err(invalid(
            "s is in the upper half of the curve order (malleable signature)",
        ));
    }
    signature
        .to_k256()
        .map_err(|_| invalid("r and s must be between 1 and the curve order"))?;
    Ok(signature)
}

/// The address whose key made `signature` over the 32-byte `prehash`.
///
/// # Errors
/// [`Error::InvalidSignature`] when no public key can be recovered.
pub fn recover_prehash(signature: &Signature, prehash: &B256) -> Result<Address> {
    signature
        .recover_address_from_prehash(prehash)
        .map_err(|e| Error::InvalidSignature {
            field: "signature".into(),
            reason: format!("no signer can be recovered: {e}"),
        })
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::hex::to_hex;
    use alloy_sol_types::SolError;
    use proptest::prelude::*;

    proptest! {
        // signatures and calldata come from the internet: no input may panic
        #[test]
        fn signature_parsing_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..70)) {
            if let Ok(sig) = parse_signature("signature", &bytes) {
                prop_assert!(sig.normalize_s().is_none());
                let _ = recover_prehash(&sig, &B256::ZERO);
            }
        }


        #[test]
        fn relay_call_decoding_never_panics(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = decode_execute_relay_call(&data);
        }
    }

    #[test]
    fn selectors_match_the_reference() {
        assert_eq!(hex(executeRelayCallCall::SELECTOR), "0x4c8a4e74");
        assert_eq!(hex(executeRelayCallBatchCall::SELECTOR), "0xa20856a5");
        assert_eq!(hex(getNonceCall::SELECTOR), "0xb44581d9");
        assert_eq!(hex(RelayCallErrors::InvalidRelayNonce::SELECTOR), "0xc9bd9eb9");
    }

    fn hex(b: impl AsRef<[u8]>) -> String {
        to_hex(b)
    }

    #[test]
    fn signature_rules() {
        // hardhat #1 signature of R1 (lukso-encodings.md §7.2)
        let good = alloy_primitives::hex::decode("07b936951b32a04e8e5a29c1ca077c6225caec4aaa6fc510063b6f6c3e935b852ef268a1c79c9f289f99e44022995c8dd983929cea58f78b61b94c188db0749d1c").unwrap();
        let sig = parse_signature("signature", &good).unwrap();
        let mut zero_one = good.clone();
        zero_one[64] = 1;
        assert_eq!(parse_signature("signature", &zero_one).unwrap(), sig);
        assert_eq!(sig.as_bytes().to_vec(), good);
        for v in [2u8, 26, 29, 35, 37, 255] {
            let mut bad = good.clone();
            bad[64] = v;
            assert_eq!(
                parse_signature("signature", &bad).unwrap_err().code(),
                "INVALID_SIGNATURE"
            );
        }
        // the malleable twin (n - s, flipped v) recovers the same key, but the KeyManager rejects it
        let n = U256::from_str_radix(
            "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
            16,
        )
        .unwrap();
        let high = Signature::new(sig.r(), n - sig.s(), !sig.v());
        assert_eq!(high.normalize_s(), Some(sig));
        assert_eq!(
            parse_signature("signature", &high.as_bytes()).unwrap_err().code(),
            "INVALID_SIGNATURE"
        );
        let mut zero_r = good.clone();
        zero_r[..32].fill(0);
        assert_eq!(
            parse_signature("signature", &zero_r).unwrap_err().code(),
            "INVALID_SIGNATURE"
        );
        assert_eq!(
            parse_signature("signature", &good[..64]).unwrap_err().code(),
            "INVALID_LENGTH"
        );
    }

    #[test]
    fn set_data_payloads() {
        let key: B256 = "0x5ef83ad9559033e6e941db7d7c495acdce616347d28e90c7ce47cbfcfcad3bc5"
            .parse()
            .unwrap();
        let one = set_data_payload(key, &[0xc0, 0xff, 0xee]);
        // the selector and head of the LSP15 spec's example `abi`
        assert_eq!(
            to_hex(&one[..36]),
            "0x7f23690c5ef83ad9559033e6e941db7d7c495acdce616347d28e90c7ce47cbfcfcad3bc5"
        );
        assert_eq!(one.len(), 4 + 32 * 4);
        assert_eq!(&one[100..103], &[0xc0, 0xff, 0xee]);
        let batch = set_data_batch_payload(&[key], &[Bytes::from(vec![0xc0])]).unwrap();
        assert_eq!(&batch[..4], &[0x97, 0x90, 0x24, 0x21]);
        let e = set_data_batch_payload(&[key], &[]).unwrap_err();
        assert_eq!(e.code(), "KEYS_VALUES_MISMATCH");
    }
}
