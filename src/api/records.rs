//! Lookup and search records: what `GET /v1/:chainId/address/:address[/:tokenId]` answers and what the search
//! indexes hold, in the shape the clients of LUKSO's `api.universalprofile.cloud` read (the wallet's
//! `IndexedProfile` / `IndexedAsset` types, 2024): `LSPStandard` and the legacy `type`, the `LSP4Token*` fields,
//! `LSP4Creators`, the `has*` flags clients filter on, absolute image URLs (`""` where there is none),
//! `updatedAtBlock` and `lastUpdatedAt`. The service's own fields (`kind`, `metadataStatus`, …) are kept beside them.

use alloy_primitives::{Address, B256};
use serde::{Deserialize, Serialize};

mod build;

pub use build::{Stamp, first_image_url, public_image_url};

pub use super::calendar::iso8601;

use crate::{
    lsp3::Lsp3Profile,
    lsp4::{Lsp4Metadata, TokenType},
    lsp8::TokenIdFormat,
    metadata::Link,
};

/// `LSPStandard` / `type` of a profile record, as the incumbent's clients compare it (`STANDARDS.LSP3`).
pub const PROFILE_STANDARD: &str = "LSP3Profile";
/// `LSPStandard` / `type` of an address without code.
pub const EOA_STANDARD: &str = "EOA";
/// `LSPStandard` / `type` of a contract that is neither a profile nor an asset.
pub const UNKNOWN_STANDARD: &str = "UnknownContract";
/// The longest `data:` image URL copied into a record; longer ones give `""`.
pub const MAX_DATA_URL: usize = 4096;

/// How the metadata behind the record's VerifiableURI was fetched and parsed.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetadataInfo {
    /// `none`, `invalid_uri`, `fetch_failed`, `verified`, `hash_mismatch` or `unverifiable`.
    #[serde(rename = "metadataStatus")]
    pub status: String,
    /// The URL in the VerifiableURI (or the token's base URI + id).
    #[serde(rename = "metadataUrl")]
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub url: Option<String>,
    /// Why the fetch failed (`FETCH_TIMEOUT`, `HTTP_404`, …).
    #[serde(rename = "metadataError")]
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub error: Option<String>,
    /// JSON paths of the entries dropped because they did not parse (`links[1]`, `images[0][2]`, …).
    #[serde(rename = "metadataDropped", default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub dropped: Vec<String>,
    /// The fetched JSON as text, kept when the parse was lossy (size-capped: absent when larger).
    #[serde(rename = "metadataRaw", default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub raw: Option<String>,
    /// Set when the stored record lost part of the metadata to the indexer's size caps (a field cut, entries
    /// left out, or the raw JSON too large to keep).
    #[serde(
        rename = "metadataTruncated",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub truncated: bool,
}

/// What every record starts with: who it is.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordHeader {
    /// The address (EIP-55); a token's is `<collection>:<tokenId>`.
    #[serde(rename = "objectID")]
    pub object_id: String,
    /// The address (EIP-55); a token's is its collection's.
    pub address: String,
    /// The chain.
    pub chain_id: u64,
    /// `LSP0ERC725Account`, `LSP7DigitalAsset`, `LSP8IdentifiableDigitalAsset` or `LSP8Token`.
    pub kind: String,
    /// `LSP3Profile`, `LSP7DigitalAsset` or `LSP8IdentifiableDigitalAsset` (tokens too).
    #[serde(rename = "LSPStandard")]
    pub lsp_standard: String,
    /// The incumbent's legacy field: `LSP3Profile`, `LSP7DigitalAsset` or `LSP8DigitalAsset` (collections and
    /// tokens).
    #[serde(rename = "type")]
    pub record_type: String,
}

/// What every record ends with (before its [`MetadataInfo`]): when it was read.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordStamp {
    /// The block the record was read at.
    pub indexed_block: u64,
    /// The block the record was read at (the incumbent's name).
    pub updated_at_block: u64,
    /// When the record was written, unix seconds.
    pub updated_at: u64,
    /// When the record was written, ISO 8601 (UTC).
    pub last_updated_at: String,
}

/// A Universal Profile (`<prefix>_universal_profiles`).
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileRecord {
    /// Who the record is.
    #[serde(flatten)]
    pub header: RecordHeader,
    /// `LSP3Profile.name`.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub name: Option<String>,
    /// `LSP3Profile.description`.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub description: Option<String>,
    /// `LSP3Profile.tags`.
    pub tags: Vec<String>,
    /// `LSP3Profile.links`.
    #[cfg_attr(feature = "wasm", tsify(type = "{ title: string; url: string }[]"))]
    pub links: Vec<Link>,
    /// The first profile image, absolute; `""` when there is none.
    pub profile_image_url: String,
    /// The first background image, absolute; `""` when there is none.
    pub background_image_url: String,
    /// A non-empty name.
    pub has_profile_name: bool,
    /// A non-empty description.
    pub has_profile_description: bool,
    /// At least one link.
    pub has_profile_links: bool,
    /// At least one tag.
    pub has_profile_tags: bool,
    /// `profileImageUrl` is not empty.
    pub has_profile_image: bool,
    /// `backgroundImageUrl` is not empty.
    pub has_background_image: bool,
    /// The metadata as parsed (what did not parse is left out, see `metadataDropped`).
    #[serde(rename = "LSP3Profile", default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional, type = "Record<string, unknown>"))]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")
    )]
    pub lsp3_profile: Option<Lsp3Profile>,
    /// When the record was read.
    #[serde(flatten)]
    pub stamp: RecordStamp,
    /// Metadata fetch and parse outcome.
    #[serde(flatten)]
    pub metadata: MetadataInfo,
}

/// What an asset's ERC725Y data says (read from chain).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssetData {
    /// `LSP4TokenName`.
    pub name: Option<String>,
    /// `LSP4TokenSymbol`.
    pub symbol: Option<String>,
    /// `LSP4TokenType`, when set to a known value.
    pub token_type: Option<TokenType>,
    /// `LSP8TokenIdFormat`, when set to a known value.
    pub token_id_format: Option<TokenIdFormat>,
    /// `LSP4Creators[]`.
    pub creators: Vec<Address>,
}

/// An LSP7 asset or LSP8 collection (`<prefix>_assets`).
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssetRecord {
    /// Who the record is.
    #[serde(flatten)]
    pub header: RecordHeader,
    /// `LSP4TokenName`, else the metadata's name.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub name: Option<String>,
    /// `LSP4TokenSymbol`.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub symbol: Option<String>,
    /// `LSP4TokenName` as on chain.
    #[serde(rename = "LSP4TokenName")]
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub lsp4_token_name: Option<String>,
    /// `LSP4TokenSymbol` as on chain.
    #[serde(rename = "LSP4TokenSymbol")]
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub lsp4_token_symbol: Option<String>,
    /// `LSP4TokenType` as on chain, by name (`TOKEN` 0, `NFT` 1, `COLLECTION` 2), as the wallet compares it.
    #[serde(rename = "LSP4TokenType")]
    #[cfg_attr(feature = "wasm", tsify(type = "\"TOKEN\" | \"NFT\" | \"COLLECTION\" | null"))]
    pub lsp4_token_type: Option<TokenType>,
    /// The same as `LSP4TokenType` (the service's first name for it).
    #[cfg_attr(feature = "wasm", tsify(type = "\"TOKEN\" | \"NFT\" | \"COLLECTION\" | null"))]
    pub token_type: Option<TokenType>,
    /// `LSP4Creators[]` (EIP-55).
    #[serde(rename = "LSP4Creators")]
    pub lsp4_creators: Vec<String>,
    /// `LSP8TokenIdFormat` (collections).
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub token_id_format: Option<TokenIdFormat>,
    /// `LSP4Metadata.description`.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub description: Option<String>,
    /// `LSP4Metadata.links`.
    #[cfg_attr(feature = "wasm", tsify(type = "{ title: string; url: string }[]"))]
    pub links: Vec<Link>,
    /// The icon, absolute; `""` when there is none.
    pub icon_url: String,
    /// The first image, absolute; `""` when there is none.
    pub image_url: String,
    /// `LSP4TokenName` is set.
    pub has_token_name: bool,
    /// `LSP4TokenSymbol` is set.
    pub has_token_symbol: bool,
    /// `LSP4TokenType` is set (to a known value).
    pub has_token_type: bool,
    /// `imageUrl` is not empty.
    pub has_asset_image: bool,
    /// `iconUrl` is not empty.
    pub has_icon_image: bool,
    /// The metadata as parsed (what did not parse is left out, see `metadataDropped`).
    #[serde(rename = "LSP4Metadata", default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional, type = "Record<string, unknown>"))]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")
    )]
    pub lsp4_metadata: Option<Lsp4Metadata>,
    /// When the record was read.
    #[serde(flatten)]
    pub stamp: RecordStamp,
    /// Metadata fetch and parse outcome.
    #[serde(flatten)]
    pub metadata: MetadataInfo,
    /// LSP8 collections, in lookup answers: the first 100 indexed tokens (never stored with the record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub tokens: Option<Vec<TokenSummary>>,
}

/// One token of a collection, as a lookup of the collection lists it.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenSummary {
    /// The token id (bytes32 hex).
    pub token_id: String,
    /// Its name, if its metadata has one.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub name: Option<String>,
    /// Its image, absolute; `""` when there is none.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub image_url: Option<String>,
}

/// One LSP8 token (`<prefix>_assets`, objectID `<collection>:<tokenId>`).
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenRecord {
    /// Who the record is.
    #[serde(flatten)]
    pub header: RecordHeader,
    /// The token id (bytes32).
    #[cfg_attr(feature = "wasm", tsify(type = "Hex"))]
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Hash"))]
    pub token_id: B256,
    /// The collection's `LSP8TokenIdFormat`.
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub token_id_format: TokenIdFormat,
    /// The token id written in that format.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub token_id_text: Option<String>,
    /// `LSP4Metadata.name`.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub name: Option<String>,
    /// `LSP4Metadata.description`.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub description: Option<String>,
    /// The icon, absolute; `""` when there is none.
    pub icon_url: String,
    /// The first image, absolute; `""` when there is none.
    pub image_url: String,
    /// `imageUrl` is not empty.
    pub has_asset_image: bool,
    /// `iconUrl` is not empty.
    pub has_icon_image: bool,
    /// The metadata as parsed.
    #[serde(rename = "LSP4Metadata", default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional, type = "Record<string, unknown>"))]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")
    )]
    pub lsp4_metadata: Option<Lsp4Metadata>,
    /// When the record was read.
    #[serde(flatten)]
    pub stamp: RecordStamp,
    /// Metadata fetch and parse outcome.
    #[serde(flatten)]
    pub metadata: MetadataInfo,
}

/// The answer for an address that holds no profile or asset: `LSPStandard` / `type` `EOA` (no code) or
/// `UnknownContract`, the incumbent's "not indexed" marker, with status 200.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotIndexed {
    /// The address (EIP-55).
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub address: String,
    /// The chain.
    pub chain_id: u64,
    /// `EOA` or `UnknownContract`.
    #[serde(rename = "LSPStandard")]
    #[cfg_attr(feature = "wasm", tsify(type = "\"EOA\" | \"UnknownContract\""))]
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["EOA", "UnknownContract"])))]
    pub lsp_standard: String,
    /// The same as `LSPStandard`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "wasm", tsify(type = "\"EOA\" | \"UnknownContract\""))]
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["EOA", "UnknownContract"])))]
    pub record_type: String,
    /// Always `false`.
    #[cfg_attr(feature = "schema", schemars(extend("const" = false)))]
    pub indexed: bool,
    /// When the address was read from chain, ISO 8601 (UTC).
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::DateTime"))]
    pub last_updated_at: String,
    /// Set when the address is a contract the indexer refuses (it misbehaved when read): why. Such a contract is
    /// answered like any unknown contract, so that clients written for the incumbent treat it as one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub unindexable: Option<Refusal>,
}

/// Why the indexer refused a contract: the error it recorded.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// What the contract did (`CALL_REVERTED`, `CLAIMS_EVERY_INTERFACE`, …).
    pub code: String,
    /// The detail.
    pub message: String,
}

impl NotIndexed {
    /// The answer for `address`: `contract` tells an unknown contract from an address without code.
    #[must_use]
    pub fn new(address: Address, chain_id: u64, contract: bool, checked_at: u64) -> Self {
        let standard = if contract { UNKNOWN_STANDARD } else { EOA_STANDARD };
        Self {
            address: address.to_checksum(None),
            chain_id,
            lsp_standard: standard.to_owned(),
            record_type: standard.to_owned(),
            indexed: false,
            last_updated_at: iso8601(checked_at),
            unindexable: None,
        }
    }

    /// The answer for a contract the indexer refuses, with its recorded error.
    #[must_use]
    pub fn refused(address: Address, chain_id: u64, refusal: Refusal, checked_at: u64) -> Self {
        Self {
            unindexable: Some(refusal),
            ..Self::new(address, chain_id, true, checked_at)
        }
    }
}

/// One entry of `GET /v1/:chainId/stats`: `[assets, profiles]`, as the wallet destructures it.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "IndexEntry"))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStats {
    /// The index name.
    pub name: String,
    /// Records in it.
    pub entries: u64,
}

/// Where the indexer stands: `GET /v1/:chainId/indexer`.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Stats"))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexerStatus {
    /// The chain.
    pub chain_id: u64,
    /// Entries per index (assets, then profiles).
    #[cfg_attr(feature = "schema", schemars(length(min = 2, max = 2)))]
    pub indexes: Vec<IndexStats>,
    /// Candidates recorded as unindexable.
    pub unindexable: u64,
    /// The last block completely indexed.
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub last_indexed_block: Option<u64>,
    /// The chain head (`null` when the node did not answer).
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub head_block: Option<u64>,
    /// `headBlock - lastIndexedBlock`.
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub lag: Option<u64>,
}
