//! Reading candidates from chain: ERC165 classification and ERC725Y data, one JSON-RPC batch per candidate.
//! Every answer is checked ([`super::answers`]); a contract that claims `0xffffffff` (which ERC165 forbids) or a
//! made-up interface id claims everything and is refused, like one claiming to be two kinds at once or answering
//! garbage.

use alloy_primitives::{Address, B256, Bytes, U256};
use profile_relayer::{
    erc165::{self, InterfaceId, LSP0, LSP7_IDS, LSP8_IDS, NEVER_CLAIMED},
    erc725y,
    lsp2::{array_element_key, data_keys},
    lsp7, lsp8,
};
use serde_json::{Value, json};

use super::{
    answers::{Answer, ItemError, Kind, answer, as_bool, claims, data_values, list_length},
    ctx::Ctx,
};
use crate::{rpc::RpcError, search::store::graph::Entry};

/// The keys read from every classified address, in this order.
pub(crate) const DATA_KEYS: [B256; 9] = [
    data_keys::LSP3_PROFILE,
    data_keys::LSP4_METADATA,
    data_keys::LSP4_TOKEN_NAME,
    data_keys::LSP4_TOKEN_SYMBOL,
    data_keys::LSP4_TOKEN_TYPE,
    data_keys::LSP8_TOKEN_ID_FORMAT,
    data_keys::LSP4_CREATORS_ARRAY,
    data_keys::LSP5_RECEIVED_ASSETS_ARRAY,
    data_keys::LSP12_ISSUED_ASSETS_ARRAY,
];

/// The most entries of one LSP2 array of addresses (`LSP5ReceivedAssets[]`, `LSP12IssuedAssets[]`,
/// `LSP4Creators[]`) read per read of its contract; a longer array is read this far and reported
/// ([`List::announced`]).
pub(crate) const MAX_LIST_ENTRIES: u64 = 512;

/// An LSP2 array of addresses and the map that gives each entry's interface id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListKey {
    pub(crate) name: &'static str,
    array: B256,
    map: [u8; 12],
}

/// `LSP5ReceivedAssets[]` + `LSP5ReceivedAssetsMap:<address>`.
pub(crate) const RECEIVED: ListKey = ListKey {
    name: "LSP5ReceivedAssets[]",
    array: data_keys::LSP5_RECEIVED_ASSETS_ARRAY,
    map: data_keys::LSP5_RECEIVED_ASSETS_MAP_PREFIX,
};
/// `LSP12IssuedAssets[]` + `LSP12IssuedAssetsMap:<address>`.
pub(crate) const ISSUED: ListKey = ListKey {
    name: "LSP12IssuedAssets[]",
    array: data_keys::LSP12_ISSUED_ASSETS_ARRAY,
    map: data_keys::LSP12_ISSUED_ASSETS_MAP_PREFIX,
};
/// `LSP4Creators[]` + `LSP4CreatorsMap:<address>`.
pub(crate) const CREATORS: ListKey = ListKey {
    name: "LSP4Creators[]",
    array: data_keys::LSP4_CREATORS_ARRAY,
    map: data_keys::LSP4_CREATORS_MAP_PREFIX,
};

/// An array as read: its address entries (at most [`MAX_LIST_ENTRIES`]; an element that is not an address is
/// left out) and, when it is longer than that, the length it announced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct List {
    pub(crate) entries: Vec<Entry>,
    pub(crate) announced: Option<u128>,
}

/// What else an address's reads gave: its arrays (a profile's received and issued assets, an asset's creators)
/// and an asset's calls (`owner()`, `totalSupply()`, LSP7 `decimals()`; `None` when reverted or malformed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Relations {
    pub(crate) lists: Vec<(ListKey, List)>,
    pub(crate) owner: Option<Address>,
    pub(crate) total_supply: Option<U256>,
    pub(crate) decimals: Option<u8>,
}

impl Relations {
    /// The list read for `key` (empty when it was not read).
    pub(crate) fn list(&self, key: ListKey) -> List {
        self.lists
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    }
}

/// An address read from chain.
#[derive(Debug)]
pub(crate) enum AddressRead {
    /// No code: nothing to index.
    NotContract,
    /// A contract, but no profile or asset.
    Other,
    /// A profile or asset with its values for [`DATA_KEYS`] and its relations.
    Lsp(Kind, Vec<Bytes>, Box<Relations>),
    /// A contract that misbehaves.
    Refused(ItemError),
}

/// An LSP8 token read from chain.
#[derive(Debug)]
pub(crate) enum TokenRead {
    /// `tokenOwnerOf` reverts: the token does not exist (any more).
    Missing,
    /// `LSP8TokenIdFormat`, `LSP8TokenMetadataBaseURI`, the token's own `LSP4Metadata` and its owner.
    Data {
        owner: Address,
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
    let values = match data_values(get(data, 0)?, DATA_KEYS.len()) {
        Ok(values) => values,
        Err(e) => return Ok(AddressRead::Refused(e)),
    };
    let length = |i: usize| values.get(i).map(|v| v.to_vec()).unwrap_or_default();
    let (lists, calls) = if kind == Kind::Profile {
        (vec![(RECEIVED, length(7)), (ISSUED, length(8))], Vec::new())
    } else {
        let mut calls = vec![
            ("eth_call", call_params(address, erc165::owner_calldata())),
            ("eth_call", call_params(address, lsp7::total_supply_calldata())),
        ];
        if kind == Kind::Lsp7 {
            calls.push(("eth_call", call_params(address, lsp7::decimals_calldata())));
        }
        (vec![(CREATORS, length(6))], calls)
    };
    let (lists, answers) = match read_lists(ctx, address, &lists, calls).await {
        Err(RpcError::TooLarge(detail)) => return Ok(AddressRead::Refused(too_large(&detail))),
        out => out?,
    };
    let data = |i: usize| match answers.get(i) {
        Some(Answer::Data(d)) => Some(d.clone()),
        _ => None,
    };
    let relations = Relations {
        lists,
        owner: data(0).and_then(|d| erc165::decode_owner(&d)),
        total_supply: data(1).and_then(|d| lsp7::decode_total_supply(&d)),
        decimals: data(2).and_then(|d| lsp7::decode_decimals(&d)),
    };
    Ok(AddressRead::Lsp(kind, values, Box::new(relations)))
}

/// Reads LSP2 arrays of addresses with their map entries, and `calls` along: the calls and the arrays' elements
/// in one batch, the map entries of the addresses found in a second one (only when there are any). Tolerant: an
/// element that is not an address is left out, an answer that does not decode gives an empty list (the contract
/// is still indexed), a map entry that is not `(bytes4, uint128)` gives no interface id. `Err(TooLarge)` when the
/// contract's answers pass `RPC_MAX_RESPONSE_BYTES`.
async fn read_lists(
    ctx: &Ctx<'_>,
    address: Address,
    lists: &[(ListKey, Vec<u8>)],
    mut calls: Vec<(&'static str, Value)>,
) -> Result<(Vec<(ListKey, List)>, Vec<Answer>), RpcError> {
    let n_calls = calls.len();
    let mut read: Vec<(ListKey, List, u64)> = Vec::new();
    for (key, length) in lists {
        let announced = list_length(length);
        let n = u64::try_from(announced).unwrap_or(u64::MAX).min(MAX_LIST_ENTRIES);
        let list = List {
            entries: Vec::new(),
            announced: (announced > u128::from(MAX_LIST_ENTRIES)).then_some(announced),
        };
        if n > 0 {
            let keys: Vec<B256> = (0..n)
                .map(|i| array_element_key(key.array, u128::from(i)))
                .collect();
            calls.push(get_data(address, &keys));
        }
        read.push((*key, list, n));
    }
    if calls.is_empty() {
        return Ok((read.into_iter().map(|(k, l, _)| (k, l)).collect(), Vec::new()));
    }
    let out = batch(ctx, &calls).await?;
    let answers = out.iter().map(answer).collect::<Result<Vec<_>, _>>()?;
    let (call_answers, element_answers) = answers.split_at(n_calls.min(answers.len()));
    let mut elements = element_answers.iter();
    for (_, list, n) in &mut read {
        if *n == 0 {
            continue;
        }
        let Some(values) = elements.next().and_then(|a| data_values(a, *n as usize).ok()) else {
            continue;
        };
        list.entries = values
            .iter()
            .zip(0u64..)
            .filter(|(v, _)| v.len() == 20)
            .map(|(v, position)| Entry {
                address: Address::from_slice(v),
                interface_id: None,
                position,
            })
            .collect();
    }
    let maps: Vec<(usize, Vec<B256>)> = read
        .iter()
        .enumerate()
        .filter(|(_, (_, list, _))| !list.entries.is_empty())
        .map(|(i, (key, list, _))| {
            let keys = list
                .entries
                .iter()
                .map(|e| data_keys::address_mapping(key.map, e.address))
                .collect();
            (i, keys)
        })
        .collect();
    if !maps.is_empty() {
        let calls: Vec<_> = maps.iter().map(|(_, keys)| get_data(address, keys)).collect();
        let out = batch(ctx, &calls).await?;
        for ((i, keys), result) in maps.iter().zip(&out) {
            let Ok(values) = answer(result).map(|a| data_values(&a, keys.len())) else {
                continue;
            };
            let (Ok(values), Some((_, list, _))) = (values, read.get_mut(*i)) else {
                continue;
            };
            for (entry, value) in list.entries.iter_mut().zip(&values) {
                entry.interface_id = data_keys::decode_interface_index(value).map(|(id, _)| id);
            }
        }
    }
    Ok((
        read.into_iter().map(|(k, l, _)| (k, l)).collect(),
        call_answers.to_vec(),
    ))
}

/// `balanceOf(holder)` of each `(asset, holder)`, and `isFollowing(follower, followee)` of the LSP26 registry for
/// each follow pair: one batch for all. Each answer: `Ok(Some(value))`, `Ok(None)` when the call reverted, or the
/// contract's misbehaviour (an answer that is not the ABI type; answers too large for `RPC_MAX_RESPONSE_BYTES`
/// refuse the whole batch: [`PairRead::TooLarge`]).
pub(crate) async fn read_pairs(
    ctx: &Ctx<'_>,
    balances: &[(Address, Address)],
    follows: &[(Address, Address)],
    registry: Address,
) -> Result<PairRead, RpcError> {
    let calls: Vec<_> = balances
        .iter()
        .map(|(asset, holder)| {
            (
                "eth_call",
                call_params(*asset, lsp7::balance_of_calldata(*holder)),
            )
        })
        .chain(follows.iter().map(|(follower, followee)| {
            (
                "eth_call",
                call_params(
                    registry,
                    profile_relayer::lsp26::is_following_calldata(*follower, *followee),
                ),
            )
        }))
        .collect();
    if calls.is_empty() {
        return Ok(PairRead::Read {
            balances: Vec::new(),
            follows: Vec::new(),
        });
    }
    let out = match batch(ctx, &calls).await {
        Err(RpcError::TooLarge(detail)) => return Ok(PairRead::TooLarge(detail)),
        out => out?,
    };
    let answers = out.iter().map(answer).collect::<Result<Vec<_>, _>>()?;
    let (b, f) = answers.split_at(balances.len().min(answers.len()));
    Ok(PairRead::Read {
        balances: b.iter().map(|a| decoded(a, lsp7::decode_balance_of)).collect(),
        follows: f
            .iter()
            .map(|a| decoded(a, profile_relayer::lsp26::decode_is_following))
            .collect(),
    })
}

/// A call's answer judged: `Ok(None)` when it reverted, `Ok(Some(value))` when it decodes, else
/// `MALFORMED_ANSWER`.
fn decoded<T>(a: &Answer, decode: impl Fn(&[u8]) -> Option<T>) -> Result<Option<T>, ItemError> {
    match a {
        Answer::Reverted => Ok(None),
        Answer::Data(d) => decode(d)
            .map(Some)
            .ok_or_else(|| ItemError::new("MALFORMED_ANSWER", "the answer is not the call's ABI type")),
    }
}

/// A pair's answer: the value (`None`: the call reverted) or the contract's misbehaviour.
pub(crate) type PairAnswer<T> = Result<Option<T>, ItemError>;

/// What [`read_pairs`] gives: an answer per balance and per follow pair, in order.
#[derive(Debug)]
pub(crate) enum PairRead {
    Read {
        balances: Vec<PairAnswer<U256>>,
        follows: Vec<PairAnswer<bool>>,
    },
    /// The batch's answers were too large (the detail).
    TooLarge(String),
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
    let owner = match answer(get(&out, 2)?)? {
        Answer::Reverted => return Ok(TokenRead::Missing),
        Answer::Data(d) => match lsp8::decode_token_owner_of(&d) {
            Some(owner) => owner,
            None => {
                return Ok(TokenRead::Refused(ItemError::new(
                    "MALFORMED_ANSWER",
                    "tokenOwnerOf answered something that is not an address",
                )));
            }
        },
    };
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
        owner,
        format: values.next().unwrap_or_default(),
        base_uri: values.next().unwrap_or_default(),
        metadata,
    })
}
