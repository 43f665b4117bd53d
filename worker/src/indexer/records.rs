//! Turning reads into records: one candidate (an address, or an LSP8 token) read, classified and built into the
//! record the index stores, or into the error or retry that takes its place. Written by [`super::writer`] (a
//! run: [`super::run`]).

use alloy_primitives::{Address, B256};
use profile_relayer::{
    api::records::{AssetData, AssetRecord, MetadataInfo, ProfileRecord, Stamp, TokenRecord},
    lsp3::Lsp3ProfileJson,
    lsp4::{Lsp4Metadata, Lsp4MetadataJson, TokenType},
    lsp8::{TokenIdFormat, decode_token_id, token_metadata_url},
    metadata::{Lenient, raw_json},
};
use serde_json::Value;

use super::{
    answers::{ItemError, Kind, MAX_CREATORS},
    chain::{self, AddressRead, CREATORS, ISSUED, List, ListKey, MAX_LIST_ENTRIES, RECEIVED, TokenRead},
    ctx::{Ctx, now},
    metadata::{Fetched, fetch_metadata, fetch_url},
};
use crate::{
    rpc::RpcError,
    search::{
        caps::MAX_RAW_BYTES,
        store::{
            Record, Stored,
            graph::{AssetState, Fact},
        },
    },
};

/// The longest name, symbol or description kept from chain data.
pub(super) const MAX_TEXT: usize = 1024;

/// A note on a part of the graph an object's reads could not give whole: recorded in `unindexable` under
/// `object_id` (`<address>:<what>`, never a record's id) while `problem` is `Some((code, message))`, forgotten when
/// a later read gives it whole (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) object_id: String,
    pub(crate) address: Address,
    pub(crate) problem: Option<(&'static str, String)>,
}

/// What a read says for the graph ([`crate::search::store::graph`]): its facts, and its notes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Graph {
    pub(crate) facts: Vec<Fact>,
    pub(crate) notes: Vec<Note>,
}

/// The note on a list as read: whole, or cut at [`MAX_LIST_ENTRIES`].
fn list_note(address: Address, key: ListKey, list: &List) -> Note {
    Note {
        object_id: format!("{}:{}", address.to_checksum(None), key.name),
        address,
        problem: list.announced.map(|n| {
            (
                "LIST_TRUNCATED",
                format!(
                    "{} announces {n} entries; the graph holds the first {MAX_LIST_ENTRIES}",
                    key.name
                ),
            )
        }),
    }
}

/// What processing one candidate gave.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A record to write (and a retry to schedule when its metadata could not be fetched), with its graph.
    Record {
        index: String,
        kind: Option<Kind>,
        record: Box<Stored>,
        retry: Option<String>,
        graph: Graph,
    },
    /// Graph facts only (a balance, a follow), read because of an event in `block`.
    Graph { graph: Graph, block: u64 },
    /// An LSP8 token that does not exist (any more): nothing to index, its graph rows updated.
    Gone { graph: Graph, block: u64 },
    /// The candidate misbehaves: recorded in `unindexable`.
    Error {
        object_id: String,
        address: Address,
        token_id: Option<B256>,
        error: ItemError,
        block: u64,
    },
    /// An address that is neither a profile nor an asset (`contract`: it has code). Nothing is written.
    NotIndexed { contract: bool },
    /// Nothing to write (token burned, nothing read).
    Skip,
}

impl Outcome {
    pub(crate) const fn kind(&self) -> Option<Kind> {
        match self {
            Self::Record { kind, .. } => *kind,
            _ => None,
        }
    }

    /// The outcome for a candidate whose reads failed although the node answers (a call that times out).
    pub(crate) fn failed(address: Address, token_id: Option<B256>, block: u64, e: &RpcError) -> Self {
        Self::Error {
            object_id: object_id(address, token_id),
            address,
            token_id,
            error: ItemError::retryable("CALL_FAILED", format!("{e:?}")),
            block,
        }
    }
}

pub(crate) fn object_id(address: Address, token_id: Option<B256>) -> String {
    match token_id {
        Some(t) => format!("{}:{t}", address.to_checksum(None)),
        None => address.to_checksum(None),
    }
}

fn text(bytes: &[u8]) -> Option<String> {
    (!bytes.is_empty()).then(|| String::from_utf8_lossy(bytes).chars().take(MAX_TEXT).collect())
}

/// Parses fetched metadata tolerantly with `parse`; the outcome's status, what was dropped and (when lossy) the
/// raw JSON go into the record's [`MetadataInfo`].
fn parse_metadata<T>(
    fetched: &Fetched,
    parse: impl FnOnce(Value) -> profile_relayer::Result<Lenient<T>>,
) -> (Option<T>, MetadataInfo) {
    let mut info = MetadataInfo {
        status: fetched.status.to_owned(),
        url: fetched.url.clone(),
        error: fetched.error.as_ref().map(|e| e.code.clone()),
        ..MetadataInfo::default()
    };
    let Some(json) = &fetched.json else {
        return (None, info);
    };
    let (value, lossy) = match parse(json.clone()) {
        Ok(parsed) => {
            let lossy = !parsed.dropped.is_empty();
            info.dropped = parsed.dropped;
            (Some(parsed.value), lossy)
        }
        Err(_) => (None, true),
    };
    if lossy {
        info.raw = raw_json(json, MAX_RAW_BYTES);
        info.truncated = info.raw.is_none();
    }
    (value, info)
}

fn lsp4(fetched: &Fetched) -> (Option<Lsp4Metadata>, MetadataInfo) {
    let (m, info) = parse_metadata(fetched, Lsp4MetadataJson::from_value_lenient);
    (m.map(|m| m.metadata), info)
}

fn retry_reason(fetched: &Fetched) -> Option<String> {
    fetched
        .error
        .as_ref()
        .filter(|e| e.retryable)
        .map(|e| e.code.clone())
}

/// Reads, classifies and builds the record of one address.
pub(crate) async fn process_address(
    ctx: &Ctx<'_>,
    address: Address,
    block: u64,
) -> Result<Outcome, RpcError> {
    let (kind, values, relations) = match chain::read_address(ctx, address).await? {
        AddressRead::NotContract => return Ok(Outcome::NotIndexed { contract: false }),
        AddressRead::Other => return Ok(Outcome::NotIndexed { contract: true }),
        AddressRead::Refused(error) => {
            return Ok(Outcome::Error {
                object_id: object_id(address, None),
                address,
                token_id: None,
                error,
                block,
            });
        }
        AddressRead::Lsp(kind, values, relations) => (kind, values, relations),
    };
    let mut graph = Graph::default();
    let value = |i: usize| values.get(i).cloned().unwrap_or_default();
    let stamp = Stamp {
        chain_id: ctx.config.chain_id,
        block,
        now: now(),
    };
    let (index, fetched, record) = if kind == Kind::Profile {
        for key in [RECEIVED, ISSUED] {
            let list = relations.list(key);
            graph.notes.push(list_note(address, key, &list));
            graph.facts.push(if key == RECEIVED {
                Fact::Received {
                    profile: address,
                    entries: list.entries,
                }
            } else {
                Fact::Issued {
                    profile: address,
                    entries: list.entries,
                }
            });
        }
        let fetched = fetch_metadata(ctx, &value(0)).await;
        let (profile, info) = parse_metadata(&fetched, Lsp3ProfileJson::from_value_lenient);
        let record = ProfileRecord::new(
            address,
            stamp,
            profile.map(|p| p.profile),
            info,
            &ctx.public_base_url,
        );
        (ctx.profiles.clone(), fetched, Record::Profile(record))
    } else {
        let fetched = fetch_metadata(ctx, &value(1)).await;
        let (metadata, info) = lsp4(&fetched);
        let creators = relations.list(CREATORS);
        let data = AssetData {
            name: text(&value(2)),
            symbol: text(&value(3)),
            token_type: TokenType::from_value(&value(4)).ok(),
            token_id_format: TokenIdFormat::from_value(&value(5)).ok(),
            creators: creators
                .entries
                .iter()
                .take(MAX_CREATORS)
                .map(|e| e.address)
                .collect(),
        };
        graph.facts.push(Fact::Asset(AssetState {
            address,
            lsp8: kind == Kind::Lsp8,
            name: data.name.clone(),
            symbol: data.symbol.clone(),
            token_type: data.token_type.map(TokenType::value),
            token_id_format: data.token_id_format.map(TokenIdFormat::value),
            decimals: relations.decimals,
            total_supply: relations.total_supply,
            owner: relations.owner,
        }));
        graph.notes.push(list_note(address, CREATORS, &creators));
        graph.facts.push(Fact::Creators {
            asset: address,
            entries: creators.entries,
        });
        let record = AssetRecord::new(
            address,
            kind == Kind::Lsp8,
            stamp,
            data,
            metadata,
            info,
            &ctx.public_base_url,
        );
        (ctx.assets.clone(), fetched, Record::Asset(record))
    };
    Ok(Outcome::Record {
        index,
        kind: Some(kind),
        retry: retry_reason(&fetched),
        record: Box::new(Stored::new(record)),
        graph,
    })
}

/// Reads and builds the record of one LSP8 token. A token that does not exist gives [`Outcome::Skip`].
pub(crate) async fn process_token(
    ctx: &Ctx<'_>,
    address: Address,
    token_id: B256,
    block: u64,
) -> Result<Outcome, RpcError> {
    let (owner, format_value, base_uri, per_token) = match chain::read_token(ctx, address, token_id).await? {
        TokenRead::Missing => {
            return Ok(Outcome::Gone {
                graph: Graph {
                    facts: vec![Fact::TokenGone {
                        asset: address,
                        token_id,
                    }],
                    notes: Vec::new(),
                },
                block,
            });
        }
        TokenRead::Refused(error) => {
            return Ok(Outcome::Error {
                object_id: object_id(address, Some(token_id)),
                address,
                token_id: Some(token_id),
                error,
                block,
            });
        }
        TokenRead::Data {
            owner,
            format,
            base_uri,
            metadata,
        } => (owner, format, base_uri, metadata),
    };
    let format = TokenIdFormat::from_value(&format_value).unwrap_or(TokenIdFormat::Number);
    let mut fetched = fetch_metadata(ctx, &per_token).await;
    if fetched.status == "none"
        && let Some(url) = token_metadata_url(&base_uri, format, token_id)
    {
        fetched = match fetch_url(ctx, &url).await {
            Ok(bytes) => Fetched {
                status: "unverifiable",
                url: Some(url),
                json: serde_json::from_slice(&bytes).ok(),
                error: None,
            },
            Err(error) => Fetched {
                status: "fetch_failed",
                url: Some(url),
                json: None,
                error: Some(error),
            },
        };
    }
    let stamp = Stamp {
        chain_id: ctx.config.chain_id,
        block,
        now: now(),
    };
    let (metadata, info) = lsp4(&fetched);
    let record = Box::new(Stored::new(Record::Token(TokenRecord::new(
        address,
        token_id,
        format,
        stamp,
        metadata,
        info,
        &ctx.public_base_url,
    ))));
    let graph = Graph {
        facts: vec![Fact::Token {
            asset: address,
            token_id,
            formatted: decode_token_id(format, token_id).ok(),
            owner,
        }],
        notes: Vec::new(),
    };
    Ok(Outcome::Record {
        index: ctx.assets.clone(),
        kind: None,
        retry: retry_reason(&fetched),
        record,
        graph,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fetched(json: Value) -> Fetched {
        Fetched {
            status: "verified",
            url: Some("ipfs://x".to_owned()),
            json: Some(json),
            error: None,
        }
    }

    #[test]
    fn raw_json_is_kept_whole_or_flagged() {
        // lossy (a link that does not parse) and small: kept
        let small = json!({ "LSP3Profile": { "name": "a", "links": [{ "url": 1 }] } });
        let (_, info) = parse_metadata(&fetched(small.clone()), Lsp3ProfileJson::from_value_lenient);
        assert_eq!(info.raw, serde_json::to_string(&small).ok());
        assert!(!info.truncated);
        // lossy and larger than MAX_RAW_BYTES: left out, and the record says so
        let large = json!({ "LSP3Profile": { "name": "a", "description": "d".repeat(MAX_RAW_BYTES), "links": [{ "url": 1 }] } });
        let (profile, info) = parse_metadata(&fetched(large), Lsp3ProfileJson::from_value_lenient);
        assert_eq!(info.raw, None);
        assert!(info.truncated);
        assert_eq!(profile.and_then(|p| p.profile.name).as_deref(), Some("a"));
        // the flag survives into the stored record, which the caps keep small
        let mut record = serde_json::to_value(&info).unwrap_or_default();
        crate::search::caps::cap(&mut record);
        assert_eq!(record["metadataTruncated"], true);
        // clean: nothing kept, nothing flagged
        let clean = json!({ "LSP3Profile": { "name": "a" } });
        let (_, info) = parse_metadata(&fetched(clean), Lsp3ProfileJson::from_value_lenient);
        assert_eq!((info.raw, info.truncated), (None, false));
    }
}
