//! Reading candidates from chain: ERC165 classification and ERC725Y data, one JSON-RPC batch per candidate.
//! Every answer is checked: an ABI `bool` must be 32 bytes of 0 or 1, `getDataBatch` must answer one value per key.
//! A contract that claims `0xffffffff` (which ERC165 forbids) or a made-up interface id claims everything and is
//! refused, like one claiming to be two kinds at once or answering garbage.

use alloy_primitives::{Address, B256, Bytes, U256};
use alloy_sol_types::{SolCall, sol};
use profile_relayer::lsp2::{array_element_key, data_keys};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Ctx;
use crate::rpc::RpcError;

sol! {
    function supportsInterface(bytes4 interfaceId) external view returns (bool);
    function getDataBatch(bytes32[] dataKeys) external view returns (bytes[] dataValues);
    function getDataForTokenId(bytes32 tokenId, bytes32 dataKey) external view returns (bytes dataValue);
    function tokenOwnerOf(bytes32 tokenId) external view returns (address);
}

const LSP0: [u8; 4] = [0x24, 0x87, 0x1b, 0x3d];
/// LSP7 ids: current, 0.14, 0.12, then 0.11 … 0.6 (lukso-encodings §5.4).
const LSP7_IDS: [[u8; 4]; 7] = [
    [0xc5, 0x2d, 0x60, 0x08],
    [0xb3, 0xc4, 0x92, 0x8f],
    [0xda, 0xa7, 0x46, 0xb7],
    [0x05, 0x51, 0x95, 0x12],
    [0xda, 0x1f, 0x85, 0xe4],
    [0x5f, 0xca, 0xac, 0x27],
    [0xe3, 0x3f, 0x65, 0xc3],
];
/// LSP8 ids: current, 0.13, 0.12, then 0.11 … 0.6.
const LSP8_IDS: [[u8; 4]; 6] = [
    [0x3a, 0x27, 0x17, 0x06],
    [0xec, 0xad, 0x9f, 0x75],
    [0x30, 0xdc, 0x52, 0x78],
    [0x1a, 0xe9, 0xba, 0x1f],
    [0x62, 0x2e, 0x7a, 0x01],
    [0x49, 0x39, 0x91, 0x45],
];
/// Ids no honest ERC165 contract supports: the one ERC165 reserves, and a made-up one.
const NEVER: [[u8; 4]; 2] = [[0xff, 0xff, 0xff, 0xff], [0x5e, 0xed, 0xc0, 0xde]];

/// The keys read from every classified address, in this order.
pub(crate) const DATA_KEYS: [B256; 7] = [
    data_keys::LSP3_PROFILE,
    data_keys::LSP4_METADATA,
    data_keys::LSP4_TOKEN_NAME,
    data_keys::LSP4_TOKEN_SYMBOL,
    data_keys::LSP4_TOKEN_TYPE,
    data_keys::LSP8_TOKEN_ID_FORMAT,
    data_keys::LSP4_CREATORS_ARRAY,
];

/// The most `LSP4Creators[]` entries read per asset.
pub(crate) const MAX_CREATORS: u64 = 16;

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

/// An address read from chain.
#[derive(Debug)]
pub(crate) enum AddressRead {
    /// No code: nothing to index.
    NotContract,
    /// A contract, but no profile or asset.
    Other,
    /// A profile or asset with its values for [`DATA_KEYS`] and (assets) its `LSP4Creators[]`.
    Lsp(Kind, Vec<Bytes>, Vec<Address>),
    /// A contract that misbehaves.
    Refused(ItemError),
}

/// An LSP8 token read from chain.
#[derive(Debug)]
pub(crate) enum TokenRead {
    /// `tokenOwnerOf` reverts: the token does not exist (any more).
    Missing,
    /// `LSP8TokenIdFormat`, `LSP8TokenMetadataBaseURI` and the token's own `LSP4Metadata`.
    Data {
        format: Bytes,
        base_uri: Bytes,
        metadata: Bytes,
    },
    /// The collection misbehaves.
    Refused(ItemError),
}

/// One `eth_call` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    Data(Bytes),
    Reverted,
}

fn answer(result: &Result<Value, RpcError>) -> Result<Answer, RpcError> {
    match result {
        Ok(v) => serde_json::from_value::<Bytes>(v.clone())
            .map(Answer::Data)
            .map_err(|e| RpcError::Decode(format!("eth_call: {e}"))),
        Err(RpcError::Node { .. }) => Ok(Answer::Reverted),
        Err(e) => Err(e.clone()),
    }
}

/// An ABI `bool`: `Some(b)`; nothing or a revert: `Some(false)` (no ERC165); anything else: `None` (garbage).
fn as_bool(a: &Answer) -> Option<bool> {
    match a {
        Answer::Reverted => Some(false),
        Answer::Data(d) if d.is_empty() => Some(false),
        Answer::Data(d) => {
            let (head, last) = d.split_at(d.len().checked_sub(1)?);
            (d.len() == 32 && head.iter().all(|b| *b == 0) && *last.first()? <= 1).then(|| last == [1])
        }
    }
}

fn call_params(to: Address, data: Vec<u8>) -> Value {
    json!([{ "to": to, "data": Bytes::from(data) }, "latest"])
}

fn supports(to: Address, id: [u8; 4]) -> (&'static str, Value) {
    let data = supportsInterfaceCall {
        interfaceId: id.into(),
    }
    .abi_encode();
    ("eth_call", call_params(to, data))
}

fn get_data(to: Address, keys: &[B256]) -> (&'static str, Value) {
    let data = getDataBatchCall {
        dataKeys: keys.to_vec(),
    }
    .abi_encode();
    ("eth_call", call_params(to, data))
}

/// Sends a batch, counting it against the budget.
async fn batch(
    ctx: &Ctx<'_>,
    calls: &[(&'static str, Value)],
) -> Result<Vec<Result<Value, RpcError>>, RpcError> {
    ctx.budget.spend(1);
    let out = ctx.rpc.batch(calls).await?;
    if out.len() != calls.len() {
        return Err(RpcError::Decode("batch: wrong number of answers".to_owned()));
    }
    Ok(out)
}

fn get<T>(items: &[T], i: usize) -> Result<&T, RpcError> {
    items
        .get(i)
        .ok_or_else(|| RpcError::Decode("batch: missing answer".to_owned()))
}

/// Decodes a `getDataBatch` answer for `n` keys.
fn data_values(a: &Answer, n: usize) -> Result<Vec<Bytes>, ItemError> {
    match a {
        Answer::Reverted => Err(ItemError::new("GETDATA_REVERTED", "getDataBatch reverted")),
        Answer::Data(d) if d.is_empty() => {
            Err(ItemError::new("GETDATA_EMPTY", "getDataBatch answered nothing"))
        }
        Answer::Data(d) => match getDataBatchCall::abi_decode_returns_validate(d) {
            Ok(values) if values.len() == n => Ok(values),
            Ok(values) => Err(ItemError::new(
                "MALFORMED_ANSWER",
                format!("getDataBatch answered {} values for {n} keys", values.len()),
            )),
            Err(_) => Err(ItemError::new(
                "MALFORMED_ANSWER",
                format!("getDataBatch answered {} bytes that are not bytes[]", d.len()),
            )),
        },
    }
}

/// Which of LSP0 / LSP7 / LSP8 the answers (one per id, in `ids` order) claim.
fn claims(answers: &[Answer], ids: &[Kind]) -> Result<Option<Kind>, ItemError> {
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

/// Classifies an address and reads its data: one batch (`eth_getCode`, 5 `supportsInterface`, `getDataBatch`),
/// a second one with the legacy interface ids only for contracts that claim none of the current ones.
/// `Err` only when the node itself fails (the caller tells a dead node from a hostile contract).
pub(crate) async fn read_address(ctx: &Ctx<'_>, address: Address) -> Result<AddressRead, RpcError> {
    let mut calls = vec![("eth_getCode", json!([address, "latest"]))];
    calls.extend(NEVER.iter().map(|id| supports(address, *id)));
    calls.push(supports(address, LSP0));
    calls.push(supports(address, LSP7_IDS[0]));
    calls.push(supports(address, LSP8_IDS[0]));
    calls.push(get_data(address, &DATA_KEYS));
    let out = batch(ctx, &calls).await?;
    let code: Bytes = serde_json::from_value(get(&out, 0)?.clone()?)
        .map_err(|e| RpcError::Decode(format!("eth_getCode: {e}")))?;
    if code.is_empty() {
        return Ok(AddressRead::NotContract);
    }
    let answers = out
        .get(1..)
        .unwrap_or_default()
        .iter()
        .map(answer)
        .collect::<Result<Vec<_>, _>>()?;
    let (never, rest) = answers.split_at(NEVER.len().min(answers.len()));
    for a in never {
        match as_bool(a) {
            Some(false) => {}
            Some(true) => {
                return Ok(AddressRead::Refused(ItemError::new(
                    "CLAIMS_EVERY_INTERFACE",
                    "supportsInterface(0xffffffff) or a made-up interface id answered true",
                )));
            }
            None => {
                return Ok(AddressRead::Refused(ItemError::new(
                    "MALFORMED_ANSWER",
                    "supportsInterface answered something that is not an ABI bool",
                )));
            }
        }
    }
    let (current, data) = rest.split_at(3.min(rest.len()));
    let kind = match claims(current, &[Kind::Profile, Kind::Lsp7, Kind::Lsp8]) {
        Err(e) => return Ok(AddressRead::Refused(e)),
        Ok(Some(k)) => Some(k),
        Ok(None) => {
            let legacy: Vec<([u8; 4], Kind)> = LSP7_IDS
                .iter()
                .skip(1)
                .map(|id| (*id, Kind::Lsp7))
                .chain(LSP8_IDS.iter().skip(1).map(|id| (*id, Kind::Lsp8)))
                .collect();
            let calls: Vec<_> = legacy.iter().map(|(id, _)| supports(address, *id)).collect();
            let out = batch(ctx, &calls).await?;
            let answers = out.iter().map(answer).collect::<Result<Vec<_>, _>>()?;
            let kinds: Vec<Kind> = legacy.iter().map(|(_, k)| *k).collect();
            match claims(&answers, &kinds) {
                Err(e) => return Ok(AddressRead::Refused(e)),
                Ok(k) => k,
            }
        }
    };
    let Some(kind) = kind else {
        let reverted = current.iter().all(|a| *a == Answer::Reverted);
        return Ok(if reverted {
            AddressRead::Refused(ItemError::new("CALL_REVERTED", "supportsInterface reverted"))
        } else {
            AddressRead::Other
        });
    };
    match data_values(get(data, 0)?, DATA_KEYS.len()) {
        Ok(values) => {
            let creators = match (kind, values.get(6)) {
                (Kind::Lsp7 | Kind::Lsp8, Some(length)) => read_creators(ctx, address, length).await?,
                _ => Vec::new(),
            };
            Ok(AddressRead::Lsp(kind, values, creators))
        }
        Err(e) => Ok(AddressRead::Refused(e)),
    }
}

/// The number of entries an LSP2 array length value announces (uint128, or uint256 from older contracts),
/// capped at [`MAX_CREATORS`]; anything else counts as empty.
fn array_length(value: &[u8]) -> u64 {
    match value.len() {
        16 | 32 => u64::try_from(U256::from_be_slice(value)).map_or(MAX_CREATORS, |n| n.min(MAX_CREATORS)),
        _ => 0,
    }
}

/// Reads `LSP4Creators[]`: one more batch when the array is not empty. Tolerant: an entry that is not an address
/// is left out, and an answer that does not decode gives no creators (the asset is still indexed).
async fn read_creators(ctx: &Ctx<'_>, address: Address, length: &[u8]) -> Result<Vec<Address>, RpcError> {
    let n = array_length(length);
    if n == 0 {
        return Ok(Vec::new());
    }
    let keys: Vec<B256> = (0..n)
        .map(|i| array_element_key(data_keys::LSP4_CREATORS_ARRAY, u128::from(i)))
        .collect();
    let out = batch(ctx, &[get_data(address, &keys)]).await?;
    let values = match data_values(&answer(get(&out, 0)?)?, keys.len()) {
        Ok(values) => values,
        Err(_) => return Ok(Vec::new()),
    };
    Ok(values
        .iter()
        .filter(|v| v.len() == 20)
        .map(|v| Address::from_slice(v))
        .collect())
}

/// Reads an LSP8 token: its existence (`tokenOwnerOf`), the collection's format and base URI, its metadata.
pub(crate) async fn read_token(
    ctx: &Ctx<'_>,
    collection: Address,
    token_id: B256,
) -> Result<TokenRead, RpcError> {
    let calls = [
        get_data(
            collection,
            &[
                data_keys::LSP8_TOKEN_ID_FORMAT,
                data_keys::LSP8_TOKEN_METADATA_BASE_URI,
            ],
        ),
        (
            "eth_call",
            call_params(
                collection,
                getDataForTokenIdCall {
                    tokenId: token_id,
                    dataKey: data_keys::LSP4_METADATA,
                }
                .abi_encode(),
            ),
        ),
        (
            "eth_call",
            call_params(collection, tokenOwnerOfCall { tokenId: token_id }.abi_encode()),
        ),
    ];
    let out = batch(ctx, &calls).await?;
    match answer(get(&out, 2)?)? {
        Answer::Reverted => return Ok(TokenRead::Missing),
        Answer::Data(d) if tokenOwnerOfCall::abi_decode_returns_validate(&d).is_err() => {
            return Ok(TokenRead::Refused(ItemError::new(
                "MALFORMED_ANSWER",
                "tokenOwnerOf answered something that is not an address",
            )));
        }
        Answer::Data(_) => {}
    }
    let values = match data_values(&answer(get(&out, 0)?)?, 2) {
        Ok(v) => v,
        Err(e) => return Ok(TokenRead::Refused(e)),
    };
    // collections older than getDataForTokenId revert: no per-token metadata
    let metadata = match answer(get(&out, 1)?)? {
        Answer::Reverted => Bytes::new(),
        Answer::Data(d) if d.is_empty() => Bytes::new(),
        Answer::Data(d) => match getDataForTokenIdCall::abi_decode_returns_validate(&d) {
            Ok(v) => v,
            Err(_) => {
                return Ok(TokenRead::Refused(ItemError::new(
                    "MALFORMED_ANSWER",
                    "getDataForTokenId answered something that is not bytes",
                )));
            }
        },
    };
    let mut values = values.into_iter();
    Ok(TokenRead::Data {
        format: values.next().unwrap_or_default(),
        base_uri: values.next().unwrap_or_default(),
        metadata,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn word(last: u8) -> Answer {
        let mut w = vec![0u8; 32];
        w[31] = last;
        Answer::Data(w.into())
    }

    #[test]
    fn creator_array_lengths() {
        let mut n = [0u8; 16];
        assert_eq!(array_length(&n), 0);
        n[15] = 3;
        assert_eq!(array_length(&n), 3);
        let mut wide = [0u8; 32];
        wide[31] = 2;
        assert_eq!(array_length(&wide), 2);
        assert_eq!(array_length(&[0xff; 16]), MAX_CREATORS);
        assert_eq!(array_length(&[1, 2, 3]), 0);
        assert_eq!(array_length(&[]), 0);
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
        let good = getDataBatchCall::abi_encode_returns(&vec![Bytes::from(vec![1u8]), Bytes::new()]);
        assert_eq!(
            data_values(&Answer::Data(good.clone().into()), 2).unwrap().len(),
            2
        );
        assert_eq!(
            data_values(&Answer::Data(good.into()), 6).unwrap_err().code,
            "MALFORMED_ANSWER"
        );
        let empty = getDataBatchCall::abi_encode_returns(&Vec::<Bytes>::new());
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
