//! Reading candidates from chain: ERC165 classification and ERC725Y data, one JSON-RPC batch per candidate.
//! Every answer is checked ([`super::answers`]); a contract that claims `0xffffffff` (which ERC165 forbids) or a
//! made-up interface id claims everything and is refused, like one claiming to be two kinds at once or answering
//! garbage.

use alloy_primitives::{Address, B256, Bytes};
use profile_relayer::{
    erc165::{self, InterfaceId, LSP0, LSP7_IDS, LSP8_IDS, NEVER_CLAIMED},
    erc725y,
    lsp2::{array_element_key, data_keys},
    lsp8,
};
use serde_json::{Value, json};

use super::{
    answers::{Answer, ItemError, Kind, answer, array_length, as_bool, claims, data_values},
    ctx::Ctx,
};
use crate::rpc::RpcError;

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

fn call_params(to: Address, data: Vec<u8>) -> Value {
    json!([{ "to": to, "data": Bytes::from(data) }, "latest"])
}

fn supports(to: Address, id: InterfaceId) -> (&'static str, Value) {
    (
        "eth_call",
        call_params(to, erc165::supports_interface_calldata(id)),
    )
}

fn get_data(to: Address, keys: &[B256]) -> (&'static str, Value) {
    (
        "eth_call",
        call_params(to, erc725y::get_data_batch_calldata(keys)),
    )
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

/// A batch answer over `RPC_MAX_RESPONSE_BYTES`: the contract's answers are megabytes, so it is refused (the
/// rest of the answer was never read).
fn too_large(detail: &str) -> ItemError {
    ItemError::new(
        "ANSWER_TOO_LARGE",
        format!("the contract's answers are too large: {detail}"),
    )
}

fn get<T>(items: &[T], i: usize) -> Result<&T, RpcError> {
    items
        .get(i)
        .ok_or_else(|| RpcError::Decode("batch: missing answer".to_owned()))
}

/// Classifies an address and reads its data: one batch (`eth_getCode`, 5 `supportsInterface`, `getDataBatch`),
/// a second one with the legacy interface ids only for contracts that claim none of the current ones.
/// `Err` only when the node itself fails (the caller tells a dead node from a hostile contract).
pub(crate) async fn read_address(ctx: &Ctx<'_>, address: Address) -> Result<AddressRead, RpcError> {
    let mut calls = vec![("eth_getCode", json!([address, "latest"]))];
    calls.extend(NEVER_CLAIMED.iter().map(|id| supports(address, *id)));
    calls.push(supports(address, LSP0));
    calls.push(supports(address, LSP7_IDS[0]));
    calls.push(supports(address, LSP8_IDS[0]));
    calls.push(get_data(address, &DATA_KEYS));
    let out = match batch(ctx, &calls).await {
        Err(RpcError::TooLarge(detail)) => return Ok(AddressRead::Refused(too_large(&detail))),
        out => out?,
    };
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
    let (never, rest) = answers.split_at(NEVER_CLAIMED.len().min(answers.len()));
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
            let legacy: Vec<(InterfaceId, Kind)> = LSP7_IDS
                .iter()
                .skip(1)
                .map(|id| (*id, Kind::Lsp7))
                .chain(LSP8_IDS.iter().skip(1).map(|id| (*id, Kind::Lsp8)))
                .collect();
            let calls: Vec<_> = legacy.iter().map(|(id, _)| supports(address, *id)).collect();
            let out = match batch(ctx, &calls).await {
                Err(RpcError::TooLarge(detail)) => return Ok(AddressRead::Refused(too_large(&detail))),
                out => out?,
            };
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
    let out = match batch(ctx, &[get_data(address, &keys)]).await {
        Err(RpcError::TooLarge(_)) => return Ok(Vec::new()),
        out => out?,
    };
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
                lsp8::get_data_for_token_id_calldata(token_id, data_keys::LSP4_METADATA),
            ),
        ),
        (
            "eth_call",
            call_params(collection, lsp8::token_owner_of_calldata(token_id)),
        ),
    ];
    let out = match batch(ctx, &calls).await {
        Err(RpcError::TooLarge(detail)) => return Ok(TokenRead::Refused(too_large(&detail))),
        out => out?,
    };
    match answer(get(&out, 2)?)? {
        Answer::Reverted => return Ok(TokenRead::Missing),
        Answer::Data(d) if lsp8::decode_token_owner_of(&d).is_none() => {
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
        Answer::Data(d) => match lsp8::decode_get_data_for_token_id(&d) {
            Some(v) => v,
            None => {
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
