//! The JSON shape of each response type, as its serde derive writes it: what the wasm clients check every answer
//! against before handing it to the caller, so an answer that is not the documented type is an
//! `INVALID_RESPONSE`, never a silently wrong object.
//!
//! The clients read answers this way instead of deserializing them with serde: a serde deserializer for JS values
//! and the types' generated visitors weigh many times a shape table and [`Shape::check`] (BENCHMARKS.md#wasm-size). A
//! test per type (below) serializes full samples with serde and checks that the shape accepts them and lists
//! exactly the fields they have, so a field added to a type without its shape fails the tests.
//!
//! The checker itself is [`crate::json_shape`] (a leaf the spec modules use too); unknown fields are allowed.

use super::{
    DeployResponse, ExecuteResponse, ProfileStatus, Quota, QuotaResponse, RegisterResponse, SearchBoth,
    SearchResult, TransactionStatus, UploadAnswer,
    records::{AssetRecord, IndexStats, IndexerStatus, NotIndexed, ProfileRecord, TokenRecord},
};

pub use crate::json_shape::{Field, JsonRead, Mismatch, Shape, field, is_safe_uint, optional};

// ---- the shapes of the response types the clients read ----

const N_STR: Shape = Shape::Nullable(&Shape::Str);
const N_UINT: Shape = Shape::Nullable(&Shape::Uint);
const N_HASH: Shape = Shape::Nullable(&Shape::Hash);
const STRS: Shape = Shape::Array(&Shape::Str);
const TOKEN_TYPE: Shape = Shape::Nullable(&Shape::Enum(&["TOKEN", "NFT", "COLLECTION"]));
const LINKS: Shape = Shape::Array(&Shape::Struct(&[&[
    field("title", Shape::Str),
    field("url", Shape::Str),
]]));

/// What every record starts with.
const RECORD_HEAD: &[Field] = &[
    field("objectID", Shape::Str),
    field("address", Shape::Str),
    field("chainId", Shape::Uint),
    field("kind", Shape::Str),
    field("LSPStandard", Shape::Str),
    field("type", Shape::Str),
];

/// What every record ends with: the block / time stamps and the flattened `MetadataInfo`.
const RECORD_TAIL: &[Field] = &[
    field("indexedBlock", Shape::Uint),
    field("updatedAtBlock", Shape::Uint),
    field("updatedAt", Shape::Uint),
    field("lastUpdatedAt", Shape::Str),
    field("metadataStatus", Shape::Str),
    field("metadataUrl", N_STR),
    field("metadataError", N_STR),
    optional("metadataDropped", STRS),
    optional("metadataRaw", Shape::Str),
    optional("metadataTruncated", Shape::Bool),
];

impl Quota {
    /// The JSON shape of a `Quota`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("total", Shape::Uint),
        field("used", Shape::Uint),
        field("remaining", Shape::Uint),
        field("unit", Shape::Enum(&["gas"])),
        field("resetDate", Shape::Uint),
    ]]);
}

impl DeployResponse {
    /// The JSON shape of a `DeployResponse`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("universalProfileAddress", Shape::Address),
        field("keyManagerAddress", Shape::Address),
        field("transactionHash", N_HASH),
    ]]);
}

impl RegisterResponse {
    /// The JSON shape of a `RegisterResponse`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("universalProfileAddress", Shape::Address),
        field("newlyRegistered", Shape::Bool),
        field("quota", Quota::SHAPE),
    ]]);
}

impl ProfileStatus {
    /// The JSON shape of a `ProfileStatus`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("universalProfileAddress", Shape::Address),
        field("deployed", Shape::Bool),
        field("registered", Shape::Bool),
        field("pendingTransaction", N_HASH),
        field("deploymentTransaction", N_HASH),
        field("registeredAt", N_UINT),
        field("quota", Shape::Nullable(&Quota::SHAPE)),
    ]]);
}

impl UploadAnswer {
    /// The JSON shape of an `UploadAnswer`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("Name", Shape::Str),
        field("Hash", Shape::Str),
        field("Size", Shape::Str),
        field("IpfsHash", Shape::Str),
        field("PinSize", Shape::Uint),
        field("Timestamp", Shape::Str),
    ]]);
}

impl QuotaResponse {
    /// The JSON shape of a `QuotaResponse`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("quota", Shape::Uint),
        field("unit", Shape::Enum(&["gas", "lyx", "transactionCount"])),
        optional("totalQuota", Shape::Uint),
        optional("resetDate", Shape::Uint),
    ]]);
}

const TRANSACTION_STATE: Shape = Shape::Enum(&["pending", "mined", "reverted", "replaced", "dropped"]);

impl ExecuteResponse {
    /// The JSON shape of an `ExecuteResponse`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("transactionHash", Shape::Hash),
        optional("gasUsed", Shape::Uint),
        optional("status", TRANSACTION_STATE),
        optional("quota", QuotaResponse::SHAPE),
    ]]);
}

impl TransactionStatus {
    /// The JSON shape of a `TransactionStatus`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("hash", Shape::Hash),
        field("kind", Shape::Enum(&["deploy", "execute"])),
        field("profile", Shape::Address),
        field("status", TRANSACTION_STATE),
        field("replacedBy", N_HASH),
        field("blockNumber", N_UINT),
        field("gasUsed", N_UINT),
        field("charged", N_UINT),
    ]]);
}

impl ProfileRecord {
    /// The JSON shape of a `ProfileRecord`.
    pub const SHAPE: Shape = Shape::Struct(&[
        RECORD_HEAD,
        &[
            field("name", N_STR),
            field("description", N_STR),
            field("tags", STRS),
            field("links", LINKS),
            field("profileImageUrl", Shape::Str),
            field("backgroundImageUrl", Shape::Str),
            field("hasProfileName", Shape::Bool),
            field("hasProfileDescription", Shape::Bool),
            field("hasProfileLinks", Shape::Bool),
            field("hasProfileTags", Shape::Bool),
            field("hasProfileImage", Shape::Bool),
            field("hasBackgroundImage", Shape::Bool),
            optional("LSP3Profile", Shape::Object),
        ],
        RECORD_TAIL,
    ]);
}

impl AssetRecord {
    /// The JSON shape of an `AssetRecord`.
    pub const SHAPE: Shape = Shape::Struct(&[
        RECORD_HEAD,
        &[
            field("name", N_STR),
            field("symbol", N_STR),
            field("LSP4TokenName", N_STR),
            field("LSP4TokenSymbol", N_STR),
            field("LSP4TokenType", TOKEN_TYPE),
            field("tokenType", TOKEN_TYPE),
            field("LSP4Creators", STRS),
            field("tokenIdFormat", N_STR),
            field("description", N_STR),
            field("links", LINKS),
            field("iconUrl", Shape::Str),
            field("imageUrl", Shape::Str),
            field("hasTokenName", Shape::Bool),
            field("hasTokenSymbol", Shape::Bool),
            field("hasTokenType", Shape::Bool),
            field("hasAssetImage", Shape::Bool),
            field("hasIconImage", Shape::Bool),
            optional("LSP4Metadata", Shape::Object),
            optional(
                "tokens",
                Shape::Array(&Shape::Struct(&[&[
                    field("tokenId", Shape::Str),
                    field("name", N_STR),
                    field("imageUrl", N_STR),
                ]])),
            ),
        ],
        RECORD_TAIL,
    ]);
}

impl TokenRecord {
    /// The JSON shape of a `TokenRecord`.
    pub const SHAPE: Shape = Shape::Struct(&[
        RECORD_HEAD,
        &[
            field("tokenId", Shape::Hash),
            field("tokenIdFormat", Shape::Str),
            field("tokenIdText", N_STR),
            field("name", N_STR),
            field("description", N_STR),
            field("iconUrl", Shape::Str),
            field("imageUrl", Shape::Str),
            field("hasAssetImage", Shape::Bool),
            field("hasIconImage", Shape::Bool),
            optional("LSP4Metadata", Shape::Object),
        ],
        RECORD_TAIL,
    ]);
}

impl NotIndexed {
    /// The JSON shape of a `NotIndexed` answer.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("address", Shape::Str),
        field("chainId", Shape::Uint),
        field("LSPStandard", Shape::Enum(&["EOA", "UnknownContract"])),
        field("type", Shape::Enum(&["EOA", "UnknownContract"])),
        field("indexed", Shape::Bool),
        field("lastUpdatedAt", Shape::Str),
        optional(
            "unindexable",
            Shape::Struct(&[&[field("code", Shape::Str), field("message", Shape::Str)]]),
        ),
    ]]);
}

impl IndexStats {
    /// The JSON shape of an `IndexStats`.
    pub const SHAPE: Shape = Shape::Struct(&[&[field("name", Shape::Str), field("entries", Shape::Uint)]]);
}

impl IndexerStatus {
    /// The JSON shape of an `IndexerStatus`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("chainId", Shape::Uint),
        field("indexes", Shape::Array(&IndexStats::SHAPE)),
        field("unindexable", Shape::Uint),
        field("lastIndexedBlock", N_UINT),
        field("headBlock", N_UINT),
        field("lag", N_UINT),
    ]]);
}

/// Any index record: a profile, an asset or an LSP8 token.
pub const RECORD: Shape = Shape::OneOf(&[ProfileRecord::SHAPE, AssetRecord::SHAPE, TokenRecord::SHAPE]);

/// What `GET /v1/:chainId/address/:address` answers: a record, or `NotIndexed`.
pub const LOOKUP: Shape = Shape::OneOf(&[
    ProfileRecord::SHAPE,
    AssetRecord::SHAPE,
    TokenRecord::SHAPE,
    NotIndexed::SHAPE,
]);

/// `GET /v1/:chainId/stats`: the assets index, then the profiles index.
pub const STATS: Shape = Shape::Tuple(&[IndexStats::SHAPE, IndexStats::SHAPE]);

impl SearchResult {
    /// The JSON shape of a `SearchResult`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("hits", Shape::Array(&RECORD)),
        field("nbHits", Shape::Uint),
        field("page", Shape::Uint),
        field("nbPages", Shape::Uint),
        field("hitsPerPage", Shape::Uint),
        field("processingTimeMS", Shape::Uint),
        field("query", Shape::Str),
        field("params", Shape::Str),
        field("index", Shape::Str),
    ]]);
}

impl SearchBoth {
    /// The JSON shape of a `SearchBoth`.
    pub const SHAPE: Shape = Shape::Struct(&[&[
        field("profiles", SearchResult::SHAPE),
        field("assets", SearchResult::SHAPE),
    ]]);
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error(shape: &Shape, value: &serde_json::Value) -> String {
        shape.check(value).unwrap_err().to_string()
    }

    #[test]
    fn each_kind_of_difference_is_found_with_its_path() {
        let ok = json!({ "quota": 5, "unit": "gas", "resetDate": 1, "extra": "allowed" });
        QuotaResponse::SHAPE.check(&ok).unwrap();
        let cases = [
            (json!({ "unit": "gas" }), "quota: expected a field"),
            (
                json!({ "quota": -1, "unit": "gas" }),
                "quota: expected a non-negative integer",
            ),
            (
                json!({ "quota": 1.5, "unit": "gas" }),
                "quota: expected a non-negative integer",
            ),
            (
                json!({ "quota": 9_007_199_254_740_992_u64, "unit": "gas" }),
                "quota: expected a non-negative integer",
            ),
            (
                json!({ "quota": 1, "unit": "wei" }),
                "unit: expected one of the documented values",
            ),
            (
                json!({ "quota": 1, "unit": "gas", "totalQuota": null }),
                "totalQuota: expected a non-negative integer",
            ),
            (json!([1]), "the body: expected an object"),
        ];
        for (value, want) in cases {
            assert_eq!(error(&QuotaResponse::SHAPE, &value), want, "{value}");
        }
        let status = json!({
            "universalProfileAddress": "0xBB645D97B0c7D101ca0d73131e521fe89B463BFD", "deployed": true,
            "registered": true, "pendingTransaction": null, "deploymentTransaction": "0x12",
            "registeredAt": null, "quota": null,
        });
        assert_eq!(
            error(&ProfileStatus::SHAPE, &status),
            "deploymentTransaction: expected 32 bytes of 0x hex"
        );
        let bad_checksum = json!({ "universalProfileAddress": "0xbB645D97B0c7D101ca0d73131e521fe89B463BFD" });
        assert_eq!(
            error(&ProfileStatus::SHAPE, &bad_checksum),
            "universalProfileAddress: expected an address"
        );
        let stats = json!([{ "name": "a", "entries": 1 }, { "name": "p", "entries": "2" }]);
        assert_eq!(
            error(&STATS, &stats),
            "[1].entries: expected a non-negative integer"
        );
        assert_eq!(
            error(&STATS, &json!([{ "name": "a", "entries": 1 }])),
            "the body: expected an array of the documented length"
        );
        let search = json!({ "profiles": { "hits": [{}] } });
        assert_eq!(
            error(&SearchBoth::SHAPE, &search),
            "profiles.hits[0].objectID: expected a field"
        );
    }
}
