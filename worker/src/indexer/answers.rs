//! Judging what contracts answer, without I/O: an ABI `bool` must be 32 bytes of 0 or 1, `getDataBatch` must
//! answer one value per key, a contract may claim only one of LSP0 / LSP7 / LSP8, an LSP2 array length is read whole.

use alloy_primitives::{Bytes, U256};
use profile_relayer::{erc165, erc725y};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rpc::RpcError;

/// The most `LSP4Creators[]` entries an asset's record keeps (the graph keeps up to
/// [`super::chain::MAX_LIST_ENTRIES`]).
pub(crate) const MAX_CREATORS: usize = 16;

/// What an address is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// Universal Profile.
    #[serde(rename = "LSP0ERC725Account")]
    Profile,
    /// LSP7 asset.
    #[serde(rename = "LSP7DigitalAsset")]
    Lsp7,
    /// LSP8 collection.
    #[serde(rename = "LSP8IdentifiableDigitalAsset")]
    Lsp8,
}

/// Why a candidate cannot be indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ItemError {
    /// Stable code (`CLAIMS_EVERY_INTERFACE`, `MALFORMED_ANSWER`, …).
    pub(crate) code: String,
    /// Human-readable detail.
    pub(crate) message: String,
    /// Whether trying again later may help (timeouts, node errors).
    pub(crate) retryable: bool,
}

impl ItemError {
    pub(crate) fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
            retryable: false,
        }
    }

    pub(crate) fn retryable(code: &str, message: impl Into<String>) -> Self {
        Self {
            retryable: true,
            ..Self::new(code, message)
        }
    }
}

/// One `eth_call` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    Data(Bytes),
    Reverted,
}

pub(crate) fn answer(result: &Result<Value, RpcError>) -> Result<Answer, RpcError> {
    match result {
        Ok(v) => serde_json::from_value::<Bytes>(v.clone())
            .map(Answer::Data)
            .map_err(|e| RpcError::Decode(format!("eth_call: {e}"))),
        Err(RpcError::Node { .. }) => Ok(Answer::Reverted),
        Err(e) => Err(e.clone()),
    }
}

/// An ABI `bool`: `Some(b)`; nothing or a revert: `Some(false)` (no ERC165); anything else: `None` (garbage).
pub(crate) fn as_bool(a: &Answer) -> Option<bool> {
    match a {
        Answer::Reverted => Some(false),
        Answer::Data(d) => erc165::decode_supports_interface_checked(d),
    }
}

/// Decodes a `getDataBatch` answer for `n` keys.
pub(crate) fn data_values(a: &Answer, n: usize) -> Result<Vec<Bytes>, ItemError> {
    match a {
        Answer::Reverted => Err(ItemError::new("GETDATA_REVERTED", "getDataBatch reverted")),
        Answer::Data(d) if d.is_empty() => {
            Err(ItemError::new("GETDATA_EMPTY", "getDataBatch answered nothing"))
        }
        Answer::Data(d) => match erc725y::decode_get_data_batch(d) {
            Some(values) if values.len() == n => Ok(values),
            Some(values) => Err(ItemError::new(
                "MALFORMED_ANSWER",
                format!("getDataBatch answered {} values for {n} keys", values.len()),
            )),
            None => Err(ItemError::new(
                "MALFORMED_ANSWER",
                format!("getDataBatch answered {} bytes that are not bytes[]", d.len()),
            )),
        },
    }
}

/// Which of LSP0 / LSP7 / LSP8 the answers (one per id, in `ids` order) claim.
pub(crate) fn claims(answers: &[Answer], ids: &[Kind]) -> Result<Option<Kind>, ItemError> {
    let mut found: Option<Kind> = None;
    for (a, kind) in answers.iter().zip(ids) {
        match as_bool(a) {
            None => {
                return Err(ItemError::new(
                    "MALFORMED_ANSWER",
                    "supportsInterface answered something that is not an ABI bool",
                ));
            }
            Some(true) if found.is_some_and(|k| k != *kind) => {
                return Err(ItemError::new(
                    "CONFLICTING_INTERFACES",
                    "the contract claims to be more than one of LSP0, LSP7 and LSP8",
                ));
            }
            Some(true) => found = Some(*kind),
            Some(false) => {}
        }
    }
    Ok(found)
}

/// The number of entries an LSP2 array length value announces (uint128, or uint256 from older contracts: above
/// `u128::MAX` it counts as `u128::MAX`); anything else counts as empty.
pub(crate) fn list_length(value: &[u8]) -> u128 {
    match value.len() {
        16 | 32 => u128::try_from(U256::from_be_slice(value)).unwrap_or(u128::MAX),
        _ => 0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use alloy_sol_types::SolCall;

    use super::*;

    fn word(last: u8) -> Answer {
        let mut w = vec![0u8; 32];
        w[31] = last;
        Answer::Data(w.into())
    }

    #[test]
    fn array_lengths() {
        let mut n = [0u8; 16];
        assert_eq!(list_length(&n), 0);
        n[15] = 3;
        assert_eq!(list_length(&n), 3);
        let mut wide = [0u8; 32];
        wide[31] = 2;
        assert_eq!(list_length(&wide), 2);
        assert_eq!(list_length(&[0xff; 16]), u128::MAX);
        assert_eq!(list_length(&[0xff; 32]), u128::MAX);
        assert_eq!(list_length(&[1, 2, 3]), 0);
        assert_eq!(list_length(&[]), 0);
    }

    #[test]
    fn bools_are_strict() {
        assert_eq!(as_bool(&word(1)), Some(true));
        assert_eq!(as_bool(&word(0)), Some(false));
        assert_eq!(as_bool(&word(2)), None);
        assert_eq!(as_bool(&Answer::Data(vec![1u8].into())), None);
        assert_eq!(as_bool(&Answer::Data(Bytes::new())), Some(false));
        assert_eq!(as_bool(&Answer::Reverted), Some(false));
        let mut high = vec![0u8; 32];
        high[0] = 1;
        high[31] = 1;
        assert_eq!(as_bool(&Answer::Data(high.into())), None);
    }

    #[test]
    fn conflicting_and_garbage_claims_are_refused() {
        let kinds = [Kind::Profile, Kind::Lsp7, Kind::Lsp8];
        assert_eq!(
            claims(&[word(1), word(0), word(0)], &kinds),
            Ok(Some(Kind::Profile))
        );
        assert_eq!(claims(&[word(0), word(0), word(0)], &kinds), Ok(None));
        assert_eq!(
            claims(&[word(1), word(1), word(0)], &kinds).unwrap_err().code,
            "CONFLICTING_INTERFACES"
        );
        assert_eq!(
            claims(&[word(7), word(0), word(0)], &kinds).unwrap_err().code,
            "MALFORMED_ANSWER"
        );
    }

    #[test]
    fn get_data_answers_are_checked() {
        let good = profile_relayer::erc725y::getDataBatchCall::abi_encode_returns(&vec![
            Bytes::from(vec![1u8]),
            Bytes::new(),
        ]);
        assert_eq!(
            data_values(&Answer::Data(good.clone().into()), 2).unwrap().len(),
            2
        );
        assert_eq!(
            data_values(&Answer::Data(good.into()), 6).unwrap_err().code,
            "MALFORMED_ANSWER"
        );
        let empty = profile_relayer::erc725y::getDataBatchCall::abi_encode_returns(&Vec::<Bytes>::new());
        assert_eq!(
            data_values(&Answer::Data(empty.into()), 1).unwrap_err().code,
            "MALFORMED_ANSWER"
        );
        assert_eq!(
            data_values(&Answer::Data(vec![0xde, 0xad].into()), 1)
                .unwrap_err()
                .code,
            "MALFORMED_ANSWER"
        );
        assert_eq!(
            data_values(&Answer::Data(Bytes::new()), 1).unwrap_err().code,
            "GETDATA_EMPTY"
        );
        assert_eq!(
            data_values(&Answer::Reverted, 1).unwrap_err().code,
            "GETDATA_REVERTED"
        );
    }
}
