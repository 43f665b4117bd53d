//! Revert data of a relay call, decoded: the custom errors of LSP25, LSP6, LSP20 and the Universal Profile, which
//! the KeyManager bubbles up, `Error(string)` and `Panic(uint256)`, each mapped to a service error.

use alloy_primitives::{Bytes, U256};
use alloy_sol_types::{ContractError, SolInterface, sol};

use super::RelayCall;
use crate::{Error, hex::to_hex};

sol! {
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
    use alloy_primitives::Address;
    use alloy_sol_types::SolError;
    use proptest::prelude::*;

    use super::*;
    use crate::lsp25::ValidityTimestamps;

    fn hex(b: impl AsRef<[u8]>) -> String {
        to_hex(b)
    }

    proptest! {
        // revert data comes from the chain: no input may panic
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
}
