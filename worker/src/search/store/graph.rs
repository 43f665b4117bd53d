//! The graph: every SQL statement over the relation tables of D1 (`worker/migrations/0008_graph.sql`) — assets,
//! tokens, holds, received and issued assets, creators, follows and the re-checks a reorganization leaves — and the
//! typed [`Fact`]s they are written from. The indexer reads state from chain (a balance, an owner, a list, whether
//! one address follows another) and hands it here as a fact; a fact replaces what the table said, so replaying,
//! reordering or duplicating the events behind the reads never makes a value drift.
//!
//! Conventions: addresses are stored lower-case hex, token ids as bytes32 hex (`''` for an LSP7 asset's rows),
//! amounts as decimal text. A hold or token is only written for an asset the graph knows as that standard (the
//! `EXISTS` clause: a contract that emits LSP7 `Transfer` logs without being an indexed LSP7 asset adds no row). A
//! position that went to zero stays with balance `'0'` and an unfollow leaves a row in `graph_unfollows`, so that a
//! reorganization ([`recheck_from`]) finds every pair a dropped block touched and has it read again.

use alloy_primitives::{Address, B256, U256};
use profile_relayer::erc165::InterfaceId;
use serde::Deserialize;
use serde_json::{Value, json};
use worker::{D1Database, D1PreparedStatement};

use crate::{
    d1::{Param, Statement},
    error::{ApiError, ApiResult},
};

/// `standard` of an LSP7 asset.
pub const LSP7: &str = "LSP7DigitalAsset";
/// `standard` of an LSP8 collection.
pub const LSP8: &str = "LSP8IdentifiableDigitalAsset";

/// An entry of a profile's or an asset's list: the address, the interface id and index its map entry gives
/// (`None`: the map entry is missing or is not `(bytes4, uint128)`), its position in the array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub address: Address,
    pub interface_id: Option<InterfaceId>,
    pub position: u64,
}

/// The scalars of an asset.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssetState {
    pub address: Address,
    /// LSP8 (else LSP7).
    pub lsp8: bool,
    pub name: Option<String>,
    pub symbol: Option<String>,
    /// `LSP4TokenType` (0 token, 1 NFT, 2 collection).
    pub token_type: Option<u8>,
    /// `LSP8TokenIdFormat`.
    pub token_id_format: Option<u8>,
    /// LSP7 `decimals()`.
    pub decimals: Option<u8>,
    pub total_supply: Option<U256>,
    pub owner: Option<Address>,
}

/// What one read from chain says; written as it is (it replaces what the tables said).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// An asset's scalars (with its record).
    Asset(AssetState),
    /// `holder`'s balance of the LSP7 `asset` (`balanceOf`).
    Balance {
        asset: Address,
        holder: Address,
        balance: U256,
    },
    /// An existing LSP8 token and its owner (`tokenOwnerOf`).
    Token {
        asset: Address,
        token_id: B256,
        formatted: Option<String>,
        owner: Address,
    },
    /// An LSP8 token that does not exist (burned, or never minted): its row goes, its last owner's position is 0.
    TokenGone { asset: Address, token_id: B256 },
    /// Whether `follower` follows `followee` (`isFollowing` of the LSP26 registry).
    Follow {
        follower: Address,
        followee: Address,
        following: bool,
    },
    /// A profile's `LSP5ReceivedAssets[]`, whole.
    Received { profile: Address, entries: Vec<Entry> },
    /// A profile's `LSP12IssuedAssets[]`, whole.
    Issued { profile: Address, entries: Vec<Entry> },
    /// An asset's `LSP4Creators[]`, whole.
    Creators { asset: Address, entries: Vec<Entry> },
}

/// An address as the graph stores it: lower-case hex with `0x`.
#[must_use]
pub fn lower(address: &Address) -> String {
    format!("{address:#x}")
}

fn interface(id: Option<&InterfaceId>) -> Value {
    id.map_or(Value::Null, |id| Value::String(id.to_string()))
}

/// The entries as the JSON array the list statements read with `json_each`: `[address, interfaceId, position]`.
fn entries_json(entries: &[Entry]) -> ApiResult<String> {
    let rows: Vec<Value> = entries
        .iter()
        .map(|e| json!([lower(&e.address), interface(e.interface_id.as_ref()), e.position]))
        .collect();
    serde_json::to_string(&rows).map_err(ApiError::internal)
}

/// A list table: its name, the column of the list's owner, the column of its entries.
struct ListTable {
    table: &'static str,
    key: &'static str,
    other: &'static str,
}

const RECEIVED: ListTable = ListTable {
    table: "graph_received",
    key: "profile",
    other: "asset",
};
const ISSUED: ListTable = ListTable {
    table: "graph_issued",
    key: "profile",
    other: "asset",
};
const CREATORS: ListTable = ListTable {
    table: "graph_creators",
    key: "asset",
    other: "creator",
};

/// A whole list replaced: the table's rows of `owner` deleted, the entries inserted (a duplicate address in the
/// array keeps its first position).
fn list(
    db: &D1Database,
    ListTable { table, key, other }: &ListTable,
    chain_id: u64,
    block: u64,
    owner: &Address,
    entries: &[Entry],
) -> ApiResult<Vec<D1PreparedStatement>> {
    let owner = lower(owner);
    Ok(vec![
        db.prepare(format!("DELETE FROM {table} WHERE chain_id = ?1 AND {key} = ?2"))
            .bind_params(&[chain_id.into(), owner.as_str().into()])?,
        db.prepare(format!(
            "INSERT INTO {table} (chain_id, {key}, {other}, interface_id, position, block) SELECT ?1, ?2, \
             json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), ?3 FROM \
             json_each(?4) WHERE true ON CONFLICT DO NOTHING"
        ))
        .bind_params(&[
            chain_id.into(),
            owner.as_str().into(),
            block.into(),
            entries_json(entries)?.into(),
        ])?,
    ])
}

/// The `EXISTS` clause: `?1` chain, `?2` asset, of `standard`.
fn known(standard: &str) -> String {
    format!("EXISTS (SELECT 1 FROM graph_assets WHERE chain_id = ?1 AND id = ?2 AND standard = '{standard}')")
}

/// The statements that write a fact read at (because of an event in) `block`.
pub fn statements(
    db: &D1Database,
    chain_id: u64,
    block: u64,
    fact: &Fact,
) -> ApiResult<Vec<D1PreparedStatement>> {
    match fact {
        Fact::Asset(a) => asset(db, chain_id, block, a),
        Fact::Balance {
            asset,
            holder,
            balance,
        } => Ok(vec![
            db.prepare(format!(
                "INSERT INTO graph_holds (chain_id, asset, token_id, holder, balance, block) SELECT ?1, ?2, '', ?3, \
                 ?4, ?5 WHERE {} ON CONFLICT (chain_id, asset, token_id, holder) DO UPDATE SET balance = \
                 excluded.balance, block = excluded.block",
                known(LSP7)
            ))
            .bind_params(&[
                chain_id.into(),
                lower(asset).into(),
                lower(holder).into(),
                balance.to_string().into(),
                block.into(),
            ])?,
        ]),
        Fact::Token {
            asset,
            token_id,
            formatted,
            owner,
        } => {
            let (asset, token, owner) = (lower(asset), token_id.to_string(), lower(owner));
            let key = [chain_id.into(), asset.as_str().into(), token.as_str().into()];
            let with_owner = [key.as_slice(), &[owner.as_str().into(), block.into()]].concat();
            Ok(vec![
                db.prepare(format!(
                    "INSERT INTO graph_tokens (chain_id, asset, token_id, formatted_token_id, created_block, block) \
                     SELECT ?1, ?2, ?3, ?4, ?5, ?5 WHERE {} ON CONFLICT (chain_id, asset, token_id) DO UPDATE SET \
                     formatted_token_id = excluded.formatted_token_id, created_block = min(created_block, \
                     excluded.created_block), block = excluded.block",
                    known(LSP8)
                ))
                .bind_params(&[key.as_slice(), &[formatted.as_deref().into(), block.into()]].concat())?,
                db.prepare(
                    "UPDATE graph_holds SET balance = '0', block = ?5 WHERE chain_id = ?1 AND asset = ?2 AND \
                     token_id = ?3 AND holder <> ?4 AND balance <> '0'",
                )
                .bind_params(&with_owner)?,
                db.prepare(format!(
                    "INSERT INTO graph_holds (chain_id, asset, token_id, holder, balance, block) SELECT ?1, ?2, ?3, \
                     ?4, '1', ?5 WHERE {} ON CONFLICT (chain_id, asset, token_id, holder) DO UPDATE SET balance = \
                     '1', block = excluded.block",
                    known(LSP8)
                ))
                .bind_params(&with_owner)?,
            ])
        }
        Fact::TokenGone { asset, token_id } => {
            let (asset, token) = (lower(asset), token_id.to_string());
            let key = [chain_id.into(), asset.as_str().into(), token.as_str().into()];
            Ok(vec![
                db.prepare("DELETE FROM graph_tokens WHERE chain_id = ?1 AND asset = ?2 AND token_id = ?3")
                    .bind_params(&key)?,
                db.prepare(
                    "UPDATE graph_holds SET balance = '0', block = ?4 WHERE chain_id = ?1 AND asset = ?2 AND \
                     token_id = ?3 AND balance <> '0'",
                )
                .bind_params(&key.iter().cloned().chain([block.into()]).collect::<Vec<_>>())?,
            ])
        }
        Fact::Follow {
            follower,
            followee,
            following,
        } => {
            let (into, from) = if *following {
                ("graph_follows", "graph_unfollows")
            } else {
                ("graph_unfollows", "graph_follows")
            };
            let params: [Param<'_>; 4] = [
                chain_id.into(),
                lower(follower).into(),
                lower(followee).into(),
                block.into(),
            ];
            Ok(vec![
                db.prepare(format!(
                    "DELETE FROM {from} WHERE chain_id = ?1 AND follower = ?2 AND followee = ?3"
                ))
                .bind_params(params.get(..3).unwrap_or_default())?,
                db.prepare(format!(
                    "INSERT INTO {into} (chain_id, follower, followee, block) VALUES (?1, ?2, ?3, ?4) ON CONFLICT \
                     (chain_id, follower, followee) DO UPDATE SET block = excluded.block"
                ))
                .bind_params(&params)?,
            ])
        }
        Fact::Received { profile, entries } => list(
            db,
            &RECEIVED,
            chain_id,
            block,
            profile,
            entries,
        ),
        Fact::Issued { profile, entries } => list(
            db,
            &ISSUED,
            chain_id,
            block,
            profile,
            entries,
        ),
        Fact::Creators { asset, entries } => list(
            db,
            &CREATORS,
            chain_id,
            block,
            asset,
            entries,
        ),
    }
}

fn asset(db: &D1Database, chain_id: u64, block: u64, a: &AssetState) -> ApiResult<Vec<D1PreparedStatement>> {
    let id = lower(&a.address);
    let standard = if a.lsp8 { LSP8 } else { LSP7 };
    let owner = a.owner.as_ref().map(lower);
    let supply = a.total_supply.map(|s| s.to_string());
    Ok(vec![
        db.prepare(
            "INSERT INTO graph_assets (chain_id, id, standard, lsp4_token_name, lsp4_token_symbol, lsp4_token_type, \
             lsp8_token_id_format, decimals, total_supply, owner, created_block, block) VALUES (?1, ?2, ?3, ?4, ?5, \
             ?6, ?7, ?8, ?9, ?10, ?11, ?11) ON CONFLICT (chain_id, id) DO UPDATE SET standard = excluded.standard, \
             lsp4_token_name = excluded.lsp4_token_name, lsp4_token_symbol = excluded.lsp4_token_symbol, \
             lsp4_token_type = excluded.lsp4_token_type, lsp8_token_id_format = excluded.lsp8_token_id_format, \
             decimals = excluded.decimals, total_supply = excluded.total_supply, owner = excluded.owner, \
             created_block = min(created_block, excluded.created_block), block = excluded.block",
        )
        .bind_params(&[
            chain_id.into(),
            id.as_str().into(),
            standard.into(),
            a.name.as_deref().into(),
            a.symbol.as_deref().into(),
            a.token_type.map(u64::from).into(),
            a.token_id_format.map(u64::from).into(),
            a.decimals.map(u64::from).into(),
            supply.as_deref().into(),
            owner.as_deref().into(),
            block.into(),
        ])?,
        // an asset of the other standard now: the rows of the one it was go
        db.prepare(format!(
            "DELETE FROM graph_holds WHERE chain_id = ?1 AND asset = ?2 AND token_id {} ''",
            if a.lsp8 { "=" } else { "<>" }
        ))
        .bind_params(&[chain_id.into(), id.as_str().into()])?,
    ])
}

/// The statements that take everything the graph knows of an indexed object out (an address that is no profile or
/// asset any more, a contract refused; `token_id`: one token of a collection): its rows as an asset (scalars,
/// tokens, holds, creators) and as a profile (received and issued assets). Follows are about addresses, not
/// indexed objects, and stay.
pub fn forget(
    db: &D1Database,
    chain_id: u64,
    address: &Address,
    token_id: Option<&B256>,
) -> ApiResult<Vec<D1PreparedStatement>> {
    let id = lower(address);
    if let Some(token) = token_id {
        let token = token.to_string();
        let key = [chain_id.into(), id.as_str().into(), token.as_str().into()];
        return Ok(vec![
            db.prepare("DELETE FROM graph_tokens WHERE chain_id = ?1 AND asset = ?2 AND token_id = ?3")
                .bind_params(&key)?,
            db.prepare("DELETE FROM graph_holds WHERE chain_id = ?1 AND asset = ?2 AND token_id = ?3")
                .bind_params(&key)?,
        ]);
    }
    [
        "DELETE FROM graph_assets WHERE chain_id = ?1 AND id = ?2",
        "DELETE FROM graph_tokens WHERE chain_id = ?1 AND asset = ?2",
        "DELETE FROM graph_holds WHERE chain_id = ?1 AND asset = ?2",
        "DELETE FROM graph_creators WHERE chain_id = ?1 AND asset = ?2",
        "DELETE FROM graph_received WHERE chain_id = ?1 AND profile = ?2",
        "DELETE FROM graph_issued WHERE chain_id = ?1 AND profile = ?2",
    ]
    .iter()
    .map(|sql| {
        db.prepare(*sql)
            .bind_params(&[chain_id.into(), id.as_str().into()])
    })
    .collect()
}

// ---- re-checks after a reorganization ----

/// A pair to read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recheck {
    /// An LSP7 balance: `(asset, holder)`.
    Hold(Address, Address),
    /// An LSP8 token: `(collection, token id)`.
    Token(Address, B256),
    /// A follow: `(follower, followee)`.
    Follow(Address, Address),
}

/// The statements that queue every pair a block from `block` on wrote (holds, tokens, follows and unfollows) for
/// a re-read.
pub fn recheck_from(db: &D1Database, chain_id: u64, block: u64) -> ApiResult<Vec<D1PreparedStatement>> {
    [
        "INSERT OR IGNORE INTO graph_rechecks (chain_id, kind, a, b) SELECT chain_id, 'hold', asset, holder FROM \
         graph_holds WHERE chain_id = ?1 AND token_id = '' AND block >= ?2",
        "INSERT OR IGNORE INTO graph_rechecks (chain_id, kind, a, b) SELECT DISTINCT chain_id, 'token', asset, \
         token_id FROM graph_holds WHERE chain_id = ?1 AND token_id <> '' AND block >= ?2",
        "INSERT OR IGNORE INTO graph_rechecks (chain_id, kind, a, b) SELECT chain_id, 'follow', follower, followee \
         FROM graph_follows WHERE chain_id = ?1 AND block >= ?2",
        "INSERT OR IGNORE INTO graph_rechecks (chain_id, kind, a, b) SELECT chain_id, 'follow', follower, followee \
         FROM graph_unfollows WHERE chain_id = ?1 AND block >= ?2",
    ]
    .iter()
    .map(|sql| db.prepare(*sql).bind_params(&[chain_id.into(), block.into()]))
    .collect()
}

#[derive(Deserialize)]
struct RecheckRow {
    kind: String,
    a: String,
    b: String,
}

fn recheck(row: &RecheckRow) -> Option<Recheck> {
    let a = row.a.parse::<Address>().ok()?;
    match row.kind.as_str() {
        "hold" => Some(Recheck::Hold(a, row.b.parse().ok()?)),
        "token" => Some(Recheck::Token(a, row.b.parse().ok()?)),
        "follow" => Some(Recheck::Follow(a, row.b.parse().ok()?)),
        _ => None,
    }
}

/// Up to `limit` queued re-checks of a chain.
pub async fn rechecks(db: &D1Database, chain_id: u64, limit: u32) -> ApiResult<Vec<Recheck>> {
    let rows: Vec<RecheckRow> = db
        .prepare("SELECT kind, a, b FROM graph_rechecks WHERE chain_id = ?1 LIMIT ?2")
        .bind_params(&[chain_id.into(), limit.into()])?
        .rows()
        .await?;
    Ok(rows.iter().filter_map(recheck).collect())
}

/// The statements that take done re-checks out of the queue.
pub fn rechecked(db: &D1Database, chain_id: u64, done: &[Recheck]) -> ApiResult<Vec<D1PreparedStatement>> {
    done.iter()
        .map(|r| {
            let (kind, a, b) = match r {
                Recheck::Hold(a, b) => ("hold", lower(a), lower(b)),
                Recheck::Token(a, t) => ("token", lower(a), t.to_string()),
                Recheck::Follow(a, b) => ("follow", lower(a), lower(b)),
            };
            db.prepare("DELETE FROM graph_rechecks WHERE chain_id = ?1 AND kind = ?2 AND a = ?3 AND b = ?4")
                .bind_params(&[chain_id.into(), kind.into(), a.into(), b.into()])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use alloy_primitives::address;

    use super::*;

    #[test]
    fn addresses_are_lower_case_with_prefix() {
        let a = address!("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
        assert_eq!(lower(&a), "0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
        assert_eq!(
            B256::repeat_byte(0xab).to_string(),
            format!("0x{}", "ab".repeat(32))
        );
    }

    #[test]
    fn lists_are_json_the_statement_reads() {
        let a = address!("0x00000000000000000000000000000000000000Aa");
        let json = entries_json(&[
            Entry {
                address: a,
                interface_id: Some(InterfaceId::from([0x5c, 0x3e, 0x84, 0xdb])),
                position: 0,
            },
            Entry {
                address: a,
                interface_id: None,
                position: 1,
            },
        ])
        .unwrap_or_default();
        assert_eq!(
            json,
            r#"[["0x00000000000000000000000000000000000000aa","0x5c3e84db",0],["0x00000000000000000000000000000000000000aa",null,1]]"#
        );
    }

    #[test]
    fn rechecks_parse_or_are_left_out() {
        let row = |kind: &str, a: &str, b: &str| RecheckRow {
            kind: kind.to_owned(),
            a: a.to_owned(),
            b: b.to_owned(),
        };
        let a = "0x00000000000000000000000000000000000000aa";
        let t = format!("0x{}", "01".repeat(32));
        assert!(matches!(recheck(&row("hold", a, a)), Some(Recheck::Hold(..))));
        assert!(matches!(recheck(&row("token", a, &t)), Some(Recheck::Token(..))));
        assert!(matches!(recheck(&row("follow", a, a)), Some(Recheck::Follow(..))));
        assert_eq!(recheck(&row("hold", a, &t)), None);
        assert_eq!(recheck(&row("other", a, a)), None);
    }
}
