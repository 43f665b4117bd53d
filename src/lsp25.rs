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
use alloy_sol_types::{ContractError, SolCall, SolInterface, SolValue, sol};

use crate::{Error, Result, hex::to_hex};

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

    /// Custom errors a relay call can revert with: LSP25 and LSP6 (`@lukso/lsp6-contracts` `LSP6Errors.sol`,
    /// `@lukso/lsp25-contracts` `LSP25Errors.sol`), LSP20, and the Universal Profile's own (ERC725X/Y, LSP0,
    /// LSP14, LSP17), which the KeyManager bubbles up.
    #[sol(all_derives)]
    interface RelayCallErrors {
        // LSP25
        error InvalidRelayNonce(address signer, uint256 invalidNonce, bytes signature);
        error RelayCallBeforeStartTime();
        error RelayCallExpired();
        // LSP6
        error NoPermissionsSet(address from);
        error NotAuthorised(address from, string permission);
        error NotAllowedCall(address from, address to, bytes4 selector);
        error NotAllowedERC725YDataKey(address from, bytes32 disallowedKey);
        error NotRecognisedPermissionKey(bytes32 dataKey);
        error InvalidLSP6Target();
        error InvalidERC725Function(bytes4 invalidFunction);
        error InvalidEncodedAllowedCalls(bytes allowedCallsValue);
        error NoERC725YDataKeysAllowed(address from);
        error NoCallsAllowed(address from);
        error InvalidEncodedAllowedERC725YDataKeys(bytes value, string context);
        error InvalidWhitelistedCall(address from);
        error BatchExecuteRelayCallParamsLengthMismatch();
        error BatchExecuteParamsLengthMismatch();
        error LSP6BatchInsufficientValueSent(uint256 totalValues, uint256 msgValue);
        error LSP6BatchExcessiveValueSent(uint256 totalValues, uint256 msgValue);
        error DelegateCallDisallowedViaKeyManager();
        error InvalidPayload(bytes payload);
        error CallingKeyManagerNotAllowed();
        error KeyManagerCannotBeSetAsExtensionForLSP20Functions();
        error InvalidDataValuesForDataKeys(bytes32 dataKey, bytes dataValue);
        // LSP20
        error LSP20CallVerificationFailed(bool postCall, bytes4 returnedStatus);
        error LSP20CallingVerifierFailed(bool postCall);
        error LSP20EOACannotVerifyCall(address logicVerifier);
        // ERC725X / ERC725Y (the profile)
        error ERC725X_InsufficientBalance(uint256 balance, uint256 value);
        error ERC725X_UnknownOperationType(uint256 operationTypeProvided);
        error ERC725X_MsgValueDisallowedInStaticCall();
        error ERC725X_MsgValueDisallowedInDelegateCall();
        error ERC725X_CreateOperationsRequireEmptyRecipientAddress();
        error ERC725X_ContractDeploymentFailed();
        error ERC725X_NoContractBytecodeProvided();
        error ERC725X_ExecuteParametersLengthMismatch();
        error ERC725X_ExecuteParametersEmptyArray();
        error ERC725Y_MsgValueDisallowed();
        error ERC725Y_DataKeysValuesLengthMismatch();
        error ERC725Y_DataKeysValuesEmptyArray();
        // LSP0 / LSP14 / LSP17 (the profile)
        error LSP14CallerNotPendingOwner(address caller);
        error LSP14MustAcceptOwnershipInSeparateTransaction();
        error LSP14NotInRenounceOwnershipInterval(uint256 renounceOwnershipStart, uint256 renounceOwnershipEnd);
        error LSP14CannotTransferOwnershipToSelf();
        error NoExtensionFoundForFunctionSelector(bytes4 functionSelector);
        error OwnableCallerNotTheOwner(address callerAddress);
    }
}

pub use self::RelayCallErrors::RelayCallErrorsErrors as RelayCallError;

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
        (
            U256::from(LSP25_VERSION),
            U256::from(chain_id),
            self.nonce,
            self.validity_timestamps.0,
            self.value,
            &self.payload,
        )
            .abi_encode_packed()
    }

    /// The EIP-191 version 0x00 data: `0x19 ‖ 0x00 ‖ keyManager ‖ encodedMessage`.
    #[must_use]
    pub fn signing_data(&self, key_manager: Address, chain_id: u64) -> Vec<u8> {
        let message = self.encoded_message(chain_id);
        let mut data = Vec::with_capacity(22 + message.len());
        data.extend_from_slice(&[0x19, 0x00]);
        data.extend_from_slice(key_manager.as_slice());
        data.extend_from_slice(&message);
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
        reason: e.to_string(),
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
            reason: e.to_string(),
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

/// Revert data of a relay call, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revert {
    /// A known LSP6 / LSP20 / LSP25 / profile custom error.
    Custom(RelayCallError),
    /// `Error(string)` (e.g. OpenZeppelin's `"ECDSA: invalid signature"`).
    Message(String),
    /// `Panic(uint256)` with its code.
    Panic(U256),
    /// Empty revert data (out of gas, or a bare `revert()`).
    Empty,
    /// Unknown selector, or data that does not decode as the error its selector names.
    Unknown(Bytes),
}

impl Revert {
    /// Decodes revert data. Never fails: unrecognised data is [`Revert::Unknown`].
    #[must_use]
    pub fn decode(data: &[u8]) -> Self {
        if data.is_empty() {
            return Self::Empty;
        }
        match ContractError::<RelayCallError>::abi_decode(data) {
            Ok(ContractError::CustomError(e)) => Self::Custom(e),
            Ok(ContractError::Revert(r)) => Self::Message(r.reason),
            Ok(ContractError::Panic(p)) => Self::Panic(p.code),
            Err(_) => Self::Unknown(Bytes::copy_from_slice(data)),
        }
    }

    /// The error's name: the custom error's name, `"Error"`, `"Panic"`, `""` (empty) or `"unknown"`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Custom(e) => RelayCallError::name_by_selector(e.selector()).unwrap_or("unknown"),
            Self::Message(_) => "Error",
            Self::Panic(_) => "Panic",
            Self::Empty => "",
            Self::Unknown(_) => "unknown",
        }
    }

    /// A one-line human-readable description, e.g. `NotAuthorised(from: 0x…, permission: "SETDATA")`.
    #[must_use]
    pub fn describe(&self) -> String {
        use RelayCallError as E;
        match self {
            Self::Custom(E::InvalidRelayNonce(e)) => format!(
                "InvalidRelayNonce(signer: {}, invalidNonce: {}, signature: {})",
                e.signer.to_checksum(None),
                to_hex(e.invalidNonce.to_be_bytes::<32>()),
                e.signature
            ),
            Self::Custom(E::NotAuthorised(e)) => format!(
                "NotAuthorised(from: {}, permission: {})",
                e.from.to_checksum(None),
                crate::Quoted(&e.permission)
            ),
            Self::Custom(E::NoPermissionsSet(e)) => {
                format!("NoPermissionsSet(from: {})", e.from.to_checksum(None))
            }
            Self::Custom(E::NotAllowedCall(e)) => format!(
                "NotAllowedCall(from: {}, to: {}, selector: {})",
                e.from.to_checksum(None),
                e.to.to_checksum(None),
                e.selector
            ),
            Self::Custom(E::NotAllowedERC725YDataKey(e)) => format!(
                "NotAllowedERC725YDataKey(from: {}, disallowedKey: {})",
                e.from.to_checksum(None),
                e.disallowedKey
            ),
            Self::Custom(e) => format!("{e:?}"),
            Self::Message(m) => format!("Error({})", crate::Quoted(m)),
            Self::Panic(code) => format!("Panic({})", to_hex(code.to_be_bytes_trimmed_vec())),
            Self::Empty => "revert without data (out of gas or a bare revert)".to_owned(),
            Self::Unknown(data) => format!("unknown revert data {}", abbreviate(data)),
        }
    }

    /// The service error for a relay call that reverts (e.g. in `eth_call` before sending):
    /// `INVALID_RELAY_NONCE`, `NOT_AUTHORISED` (403), `RELAY_CALL_NOT_YET_VALID`, `RELAY_CALL_EXPIRED`
    /// (`now` is the block time used), or `RELAY_CALL_REVERTED` with the description.
    #[must_use]
    pub fn to_error(&self, now: u64, call: &RelayCall) -> Error {
        use RelayCallError as E;
        match self {
            Self::Custom(E::InvalidRelayNonce(e)) => Error::InvalidRelayNonce {
                signer: e.signer.to_checksum(None),
                nonce: to_hex(call.nonce.to_be_bytes::<32>()),
            },
            Self::Custom(
                E::NotAuthorised(_)
                | E::NoPermissionsSet(_)
                | E::NotAllowedCall(_)
                | E::NotAllowedERC725YDataKey(_)
                | E::NoCallsAllowed(_)
                | E::NoERC725YDataKeysAllowed(_)
                | E::InvalidWhitelistedCall(_)
                | E::CallingKeyManagerNotAllowed(_)
                | E::DelegateCallDisallowedViaKeyManager(_),
            ) => Error::NotAuthorised(self.describe()),
            Self::Custom(E::RelayCallBeforeStartTime(_)) => Error::RelayCallNotYetValid {
                start: call.validity_timestamps.start(),
                now,
            },
            Self::Custom(E::RelayCallExpired(_)) => Error::RelayCallExpired {
                end: call.validity_timestamps.end(),
                now,
            },
            _ => Error::RelayCallReverted(self.describe()),
        }
    }
}

fn abbreviate(data: &[u8]) -> String {
    let hex = to_hex(data);
    if hex.len() > 74 {
        format!("{}… ({} bytes)", hex.get(..74).unwrap_or(&hex), data.len())
    } else {
        hex
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use alloy_sol_types::SolError;
    use proptest::prelude::*;

    proptest! {
        // revert data and signatures come from the chain and the internet: no input may panic
        #[test]
        fn revert_decoding_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            let r = Revert::decode(&data);
            let _ = r.describe();
            let _ = r.to_error(0, &RelayCall::default());
        }

        #[test]
        fn known_selectors_with_arbitrary_tails_never_panic(
            i in 0..RelayCallError::SELECTORS.len(),
            tail in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            let mut data = RelayCallError::SELECTORS[i].to_vec();
            data.extend_from_slice(&tail);
            let r = Revert::decode(&data);
            prop_assert!(matches!(r, Revert::Custom(_) | Revert::Unknown(_)));
            let _ = r.describe();
        }

        #[test]
        fn signature_parsing_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..70)) {
            if let Ok(sig) = parse_signature("signature", &bytes) {
                prop_assert!(sig.normalize_s().is_none());
                let _ = recover_prehash(&sig, &B256::ZERO);
            }
        }

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
    fn reverts_decode_to_names_and_errors() {
        let signer: Address = "0xd6dbc5383ab74b920cbd67604a8aff6b7387ced1".parse().unwrap();
        let data = RelayCallError::InvalidRelayNonce(RelayCallErrors::InvalidRelayNonce {
            signer,
            invalidNonce: U256::ZERO,
            signature: Bytes::from(vec![1; 65]),
        })
        .abi_encode();
        assert_eq!(hex(&data[..4]), "0xc9bd9eb9");
        let r = Revert::decode(&data);
        assert_eq!(r.name(), "InvalidRelayNonce");
        let e = r.to_error(0, &RelayCall::default());
        assert_eq!(e.code(), "INVALID_RELAY_NONCE");
        assert!(e.to_string().contains(&signer.to_checksum(None)), "{e}");

        let data = RelayCallError::NotAuthorised(RelayCallErrors::NotAuthorised {
            from: signer,
            permission: "SETDATA".into(),
        })
        .abi_encode();
        let r = Revert::decode(&data);
        assert_eq!(r.name(), "NotAuthorised");
        assert!(r.describe().contains("\"SETDATA\""));
        assert_eq!(r.to_error(0, &RelayCall::default()).http_status(), 403);

        let expired = Revert::decode(&RelayCallErrors::RelayCallExpired::SELECTOR);
        assert_eq!(expired.name(), "RelayCallExpired");
        let call = RelayCall {
            validity_timestamps: ValidityTimestamps::new(1, 2),
            ..RelayCall::default()
        };
        assert_eq!(
            expired.to_error(3, &call),
            Error::RelayCallExpired { end: 2, now: 3 }
        );

        // Error(string) and Panic(uint256)
        let revert = alloy_sol_types::Revert::from("ECDSA: invalid signature").abi_encode();
        assert_eq!(
            Revert::decode(&revert),
            Revert::Message("ECDSA: invalid signature".into())
        );
        let panic = alloy_sol_types::Panic::from(0x11).abi_encode();
        assert_eq!(Revert::decode(&panic).describe(), "Panic(0x11)");
        assert_eq!(Revert::decode(&[]), Revert::Empty);
        assert_eq!(Revert::decode(&[1, 2, 3, 4]).name(), "unknown");
        // known selector, truncated arguments
        assert_eq!(Revert::decode(&data[..40]).name(), "unknown");
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
